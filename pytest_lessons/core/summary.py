"""The ``lessons`` section at the end of a run: each exercise's state, the course's progress,
hints and worked solutions.

It reads only the typed results (``results.CaseResult``) that travel on test reports (so it
works under pytest-xdist), the exercises (their hints and worked solutions, as a front end's
:data:`Find` gives them: pytest's, what its collection read), and pytest's cache (duck-typed:
``get(key, default)`` and ``set(key, value)``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from pytest_lessons.core import model
from pytest_lessons.core.course import Chapter, Course
from pytest_lessons.core.results import FAULT, WATCH_OUT, CaseResult, Status
from pytest_lessons.core.words import case_list, wrap
from pytest_lessons.isolation.text import visible

BAR = 10


#: How the summary finds the exercise of a path: what the front end already read (pytest's
#: collection), so nothing is parsed twice; None for one it cannot read.
Find = Callable[[Path], "model.Exercise | None"]


class Cache(Protocol):
    def get(self, key: str, default: Any) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...


@dataclass
class ExerciseState:
    """One exercise, as far as this run saw it."""

    slug: str
    path: Path
    total: int
    seen: set[int] = field(default_factory=set)
    passed: set[int] = field(default_factory=set)
    broken: str = ""
    mistakes: dict[str, list[int]] = field(default_factory=dict)
    """Watch-out id -> the cases where it fired."""
    faults: dict[str, list[int]] = field(default_factory=dict)
    """A failure's cause that no input changes (see ``texts.fault_key``) -> its cases."""

    @property
    def complete(self) -> bool:
        """Every case of the exercise ran and passed."""
        return not self.broken and self.total > 0 and len(self.passed) == self.total

    @property
    def failing(self) -> bool:
        return bool(self.broken) or self.seen != self.passed

    @property
    def starter(self) -> bool:
        """Every case ran and none got past the starter's ``raise NotImplementedError``: the
        lesson's starter graded as it is (a notebook's untouched cell), which says nothing of
        the learner's work."""
        stub = [c for fault, cases in self.faults.items() if fault.startswith(STUB) for c in cases]
        return not self.broken and bool(self.seen) and set(stub) == self.seen


def collect(
    results: Sequence[CaseResult], order: Callable[[Path], Any] | None = None
) -> list[ExerciseState]:
    """Group per-case results by exercise, in path order (or in *order*'s, given a path)."""
    states: dict[str, ExerciseState] = {}
    for result in results:
        path = result.path
        state = states.setdefault(path, ExerciseState(result.exercise, Path(path), result.cases))
        if result.status == Status.BROKEN:
            state.broken = result.headline or "broken"
            continue
        number = result.case
        state.seen.add(number)
        if result.passed:
            state.passed.add(number)
        elif (reason := result.reason) is not None and reason[0] == WATCH_OUT:
            state.mistakes.setdefault(reason[1], []).append(number)
        elif reason is not None and reason[0] == FAULT:
            state.faults.setdefault(reason[1], []).append(number)
    keys = sorted(states)
    if order is not None:
        keys.sort(key=lambda key: order(Path(key)))
    return [states[key] for key in keys]


def _key(kind: str, state: ExerciseState) -> str:
    digest = hashlib.sha1(str(state.path.resolve()).encode()).hexdigest()[:10]
    return f"lessons/{kind}/{state.slug}-{digest}"


#: The fault key of the starter's stub (see ``texts.fault_key``).
STUB = "raised NotImplementedError"
#: An exercise's remembered state (:func:`state_key`) when its last run graded the starter.
STARTER = "starter"


def progress_lines(
    states: list[ExerciseState],
    courses: Sequence[Course] = (),
    cache: Cache | None = None,
    starters_count: bool = True,
) -> list[str]:
    """One line per exercise, then the course line ``lessons: 1/3 passed [###-------]``; a
    starter graded as it is is not remembered nor counted without *starters_count*.

    A lesson of one of *courses* counts whether this run selected it or not: one it did not
    run counts as passed when its last complete run passed (remembered in *cache*). In a
    course of chapters, each chapter's lessons come under its heading (``chapter 2:
    Tokenization``), and the course line ends with the count of every chapter the run
    touched (``chapter 2: 3/5``)."""
    width = max(len(s.slug) for s in states)
    lines = []
    heading: Chapter | None = None
    for state in states:
        chapter = _chapter(state, courses)
        if chapter is not None and chapter != heading:
            lines.append(f"chapter {chapter.number}: {chapter.title}")
        heading = chapter
        if state.broken:
            status = "exercise.toml is broken"
        elif state.complete:
            status = "passed"
        else:
            status = f"{len(state.passed)} of {state.total} cases"
            if len(state.seen) < state.total:
                status += f" ({len(state.seen)} run)"
            watch = "; ".join(f"{i} ({case_list(c)})" for i, c in state.mistakes.items())
            if watch:
                status += f"   watch out: {watch}"
            for fault, cases in state.faults.items():
                if fault == "not run":
                    status += f"   {case_list(cases)} not run (too many timeouts)"
                elif len(cases) > 1:
                    first, *rest = sorted(cases)
                    status += f"   {case_list(rest)} failed as case {first} did"
        lines.append(f"{state.slug.ljust(width)}   {status}")
    # Without *starters_count* (a notebook, whose cells hold every lesson's starter), a starter
    # graded as it is says nothing new either: the lesson counts as it stood.
    heard = [s for s in states if starters_count or not s.starter]
    for state in heard:
        _remember(state, cache)
    ran = {str(s.path.resolve()): s for s in heard}
    # A run of some passing cases (-k, --lf) says nothing new: what the last full run said holds.
    counted: dict[str, bool] = {
        key: s.complete or (not s.failing and _last_passed(s.path, cache)) for key, s in ran.items()
    }
    for state in states:
        counted.setdefault(str(state.path.resolve()), _last_passed(state.path, cache))
    for course in courses:
        for lesson in course.lessons:
            if str(lesson) not in counted:
                counted[str(lesson)] = _last_passed(lesson, cache)
    done = sum(counted.values())
    filled = round(BAR * done / len(counted))
    line = f"lessons: {done}/{len(counted)} passed [{'#' * filled}{'-' * (BAR - filled)}]"
    touched = [
        chapter
        for chapter in _chapters(courses)
        if chapter.lessons and any(_chapter(state, courses) == chapter for state in states)
    ]
    if touched:
        line += "   " + ", ".join(
            f"chapter {c.number}: {sum(counted[str(lesson)] for lesson in c.lessons)}"
            f"/{len(c.lessons)}"
            for c in touched
        )
    lines.append(line)
    return lines


def _chapters(courses: Sequence[Course]) -> list[Chapter]:
    return [chapter for course in courses for chapter in course.chapters]


def _chapter(state: ExerciseState, courses: Sequence[Course]) -> Chapter | None:
    """The chapter of one of *courses* that holds the state's exercise, if any."""
    for course in courses:
        chapter = course.chapter(state.path)
        if chapter is not None:
            return chapter
    return None


def state_key(path: Path) -> str:
    """The cache key of an exercise's last state (``passed``, ``failing``, or :data:`STARTER`
    when the starter was graded as it is), shared by every front end that reads or writes
    pytest's cache."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    return f"lessons/state/{path.resolve().parent.name}-{digest}"


def _remember(state: ExerciseState, cache: Cache | None) -> None:
    """Keep whether the exercise passed, when this run says: every case passed, or one failed
    (a selection of passing cases says nothing about the others)."""
    if cache is None:
        return
    if state.complete:
        cache.set(state_key(state.path), "passed")
    elif state.failing:
        # The starter as it is: failing, and not yet tried (a notebook opens no hint for it).
        cache.set(state_key(state.path), STARTER if state.starter else "failing")


def _last_passed(path: Path, cache: Cache | None) -> bool:
    return cache is not None and cache.get(state_key(path), "") == "passed"


def load(path: Path) -> model.Exercise | None:
    """The exercise of *path*, parsed now: the :data:`Find` of a front end that keeps none
    (None when it cannot be read)."""
    try:
        return model.load(path)
    except model.ExerciseError:
        return None


def hint_lines(
    states: list[ExerciseState],
    mode: str | None,
    cache: Cache | None,
    rerun: list[str],
    find: Find = load,
) -> list[str]:
    """With --lesson-hints: the hints opened so far and the next one, for each failing
    exercise. Without: one line saying hints exist. Never how many are left."""
    if mode == "reset":
        # Every exercise of the run, passed or not: a reset is confirmed, never silent.
        lines: list[str] = []
        for state in states:
            exercise = find(state.path)
            if exercise is None or not exercise.hints:
                continue
            if cache is not None:
                cache.set(_key("hints", state), 0)
            lines += ["", f"Hints for {state.slug} are closed again."]
        if not lines:
            lines = ["", "No hints to close: the exercises of this run have none."]
        return lines
    failing = [(s, ex) for s in states if s.failing and (ex := find(s.path)) and ex.hints]
    if not failing:
        return []

    def opened(state: ExerciseState) -> int:
        return int(cache.get(_key("hints", state), 0)) if cache is not None else 0

    command = " ".join(["pytest", *rerun, "--lesson-hints"])
    if mode is None:
        if all(opened(state) >= len(exercise.hints) for state, exercise in failing):
            # Every hint is open already: offering another one would be a false promise.
            return ["", f"Every hint is open: `{command}` shows them again."]
        return ["", f"Stuck? `{command}` opens a hint."]
    lines = []
    for state, exercise in failing:
        key = _key("hints", state)
        before = opened(state)
        show = len(exercise.hints) if mode == "all" else min(before + 1, len(exercise.hints))
        if cache is not None:
            cache.set(key, max(show, before))
        lines += ["", f"Hints for {state.slug}:"]
        for number, hint in enumerate(exercise.hints[:show], 1):
            lines.append(f"Hint {number}: {hint.title}")
            lines += ["    " + line if line else "" for line in hint.text.splitlines()]
        if show >= len(exercise.hints):
            lines.append(
                f"That was the last hint of {state.slug}. The worked solution opens once every "
                "case passes."
            )
    return lines


def solution_lines(
    states: list[ExerciseState],
    mode: str | None,
    cache: Cache | None,
    show: Callable[[Path | str], str],
    rerun: list[str],
    find: Find = load,
) -> list[str]:
    """Record passes; with --lesson-solution, the worked solutions the learner has earned."""
    lines: list[str] = []
    for state in states:
        key = _key("passed", state)
        earned = state.complete or bool(cache.get(key, False) if cache is not None else False)
        if state.complete and cache is not None:
            cache.set(key, True)
        if mode is None:
            continue
        if not earned and mode != "show-anyway":
            command = " ".join(["pytest", *rerun, "--lesson-solution=show-anyway"])
            lines += [
                "",
                f"The worked solution of {state.slug} opens once all its cases pass. "
                f"To see it before that: `{command}`",
            ]
            continue
        exercise = find(state.path)
        if exercise is None:
            continue
        lines += ["", f"Worked solution of {state.slug}"]
        if not earned:
            lines.append(
                f"(You have not passed {state.slug} yet; it is shown because you asked with "
                "--lesson-solution=show-anyway.)"
            )
        for number, step in enumerate(exercise.solution_steps, 1):
            wrapped = wrap(f"{number}. {step}", 84)
            lines += [wrapped[0], *("   " + line for line in wrapped[1:])]
        reference = exercise.reference
        if reference is not None and reference.is_file():
            lines += ["", f"{show(reference)}:", ""]
            lines += [
                "    " + line
                for line in reference.read_text(encoding="utf-8-sig").rstrip().splitlines()
            ]
    return lines


def render(
    results: Sequence[CaseResult],
    show: Callable[[Path | str], str],
    cache: Cache | None,
    hints: str | None,
    solution: str | None,
    rerun: list[str],
    courses: Sequence[Course] = (),
    find: Find = load,
) -> list[str]:
    """Every line of the ``lessons`` section, lessons in their courses' order, each safe to
    print on a terminal: an escape sequence or a control character in any text (a fault's
    key, a folder's name) shows as ``\\x1b`` and never runs (tabs stay). *find* gives each
    exercise's hints and worked solution."""
    states = collect(results, course_order(courses))
    lines = [
        *progress_lines(states, courses, cache),
        *solution_lines(states, solution, cache, show, rerun, find),
        *hint_lines(states, hints, cache, rerun, find),
    ]
    return [visible(line, tabs=True) for line in lines]


def course_order(courses: Sequence[Course]) -> Callable[[Path], tuple[int, int, str]]:
    """A sort key for exercise files: the lessons of each course in its order (courses in the
    order given), then any other exercise by path."""

    def key(path: Path) -> tuple[int, int, str]:
        for number, course in enumerate(courses):
            position = course.position(path)
            if position is not None:
                return number, position, ""
        return len(courses), 0, str(path)

    return key
