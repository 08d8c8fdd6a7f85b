"""The extension's state in one kernel (:class:`Lessons`): where the course is, which lesson
a name means, the run settings and sandbox of a cell, and the runner whose worker grades
cells outside the kernel."""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pytest_lessons.core import course, datafiles, model, settings, summary
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.frontend import choose_sandbox, shown_path
from pytest_lessons.core.grader import Grader
from pytest_lessons.core.results import CaseResult
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.runner import Runner, make_runner
from pytest_lessons.notebook.display import Feedback, Text
from pytest_lessons.notebook.pytest_files import PytestCache, cache_of, pytest_root

#: The environment variable naming the course folder, for a notebook outside the course.
COURSE_ENV = "PYTEST_LESSONS_COURSE"

#: How the learner's code is named in the texts of a cell's grading.
CELL = "your cell"


class NotebookError(Exception):
    """A problem the learner can fix (an unknown lesson, no course found): shown as a short
    message, never as a traceback."""


# --- finding lessons ---------------------------------------------------------------------


def find_course(start: Path) -> Path | None:
    """The course folder nearest *start*: the first of *start* and its parents that holds a
    ``course.toml``, or an ``exercises/course.toml``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        for candidate in (folder, folder / "exercises"):
            if (candidate / course.COURSE_FILE).is_file():
                return candidate
    return None


@dataclass(frozen=True)
class Lesson:
    """A lesson found by name or path: its ``exercise.toml`` and its course, if any."""

    path: Path
    course: course.Course | None

    @property
    def folder(self) -> Path:
        return self.path.parent


def find_lesson(name: str, cwd: Path, course_folder: Path | None) -> Lesson:
    """The lesson *name* (a lesson folder's name, or a path to its folder or its
    ``exercise.toml``), looked up in *course_folder* or the course nearest *cwd*."""
    given = Path(name).expanduser()
    if not given.is_absolute():
        given = cwd / given
    for candidate in (given, given / model.EXERCISE_FILE):
        if candidate.name == model.EXERCISE_FILE and candidate.is_file():
            path = candidate.resolve()
            return Lesson(path, _course_of(path))
    folder = course_folder or find_course(cwd)
    if folder is not None:
        candidate = folder / name / model.EXERCISE_FILE
        if candidate.is_file():
            path = candidate.resolve()
            return Lesson(path, _course_of(path))
    where = f"the course in {folder}" if folder is not None else f"{cwd} or its parents"
    known = ""
    if folder is not None:
        names = sorted(p.parent.name for p in folder.glob(f"*/{model.EXERCISE_FILE}"))
        if names:
            known = f" Its lessons: {', '.join(names)}."
    raise NotebookError(
        f"Name a lesson of the course, or give the path of its folder: there is no lesson "
        f"{name!r} in {where}.{known} `%lesson_course PATH` says where the course is."
    )


def _course_of(path: Path) -> course.Course | None:
    try:
        return course.find(path)
    except course.CourseError as error:
        raise NotebookError(str(error)) from None


def magic_words(line: str, name: str) -> str:
    """A line of the ``lessons`` summary with its pytest command as the notebook's magic."""
    return (
        line.replace(f"`pytest {name} --lesson-hints`", f"`%lesson_hints {name}`")
        .replace(
            f"`pytest {name} --lesson-solution=show-anyway`",
            f"`%lesson_solution {name} show-anyway`",
        )
        .replace("--lesson-solution=show-anyway", f"%lesson_solution {name} show-anyway")
    )


def split_line(line: str) -> list[str]:
    """A magic's line as its words, quoted ones kept whole (a path with spaces)."""
    try:
        return shlex.split(line, posix=os.name != "nt")
    except ValueError:
        return line.split()


# --- the extension's state in one kernel ---------------------------------------------------


class Lessons:
    """Everything the magics share in one kernel: where the course is, and the runner that
    runs learner code (its worker starts the first time a cell is graded, once per kernel,
    and stops with the kernel)."""

    def __init__(self, cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ
        self._cwd = cwd
        self.course_folder: Path | None = None
        given = self.environ.get(COURSE_ENV)
        if given:
            self.course_folder = Path(given).expanduser().resolve()
        self.runner: Runner | None = None
        self.support: sandbox.Support | None = None
        self._policy: sandbox.Policy | None = None
        self._fenced: dict[tuple[str, ...], sandbox.Policy] = {}
        self._exit_hook = False
        self._warned = False
        self._notes: list[str] = []
        """Said once, under the next graded cell (the sandbox being off)."""

    @property
    def cwd(self) -> Path:
        return self._cwd or Path.cwd()

    # - the course

    def set_course(self, path: str) -> Text:
        """``%lesson_course PATH``: the course whose lessons names refer to."""
        folder = Path(path).expanduser()
        folder = (folder if folder.is_absolute() else self.cwd / folder).resolve()
        if folder.is_file():
            folder = folder.parent
        found = find_course(folder)
        if found is not None and (found == folder or found == folder / "exercises"):
            folder = found
        elif not any(folder.glob(f"*/{model.EXERCISE_FILE}")):
            raise NotebookError(
                f"Give the folder of the course (its course.toml, or its lesson folders): "
                f"{folder} holds no lesson."
            )
        self.course_folder = folder
        names = sorted(p.parent.name for p in folder.glob(f"*/{model.EXERCISE_FILE}"))
        return Text([f"lessons: the course in {folder}: {', '.join(names)}"])

    def lesson(self, name: str) -> Lesson:
        name = name.strip()
        if not name:
            raise NotebookError("Name the lesson: for example `%%lesson combine_heads`.")
        return find_lesson(name, self.cwd, self.course_folder)

    def show(self, path: Path | str) -> str:
        return shown_path(path, self.cwd)

    # - running learner code

    def run_settings(self, lesson: Lesson) -> settings.Settings:
        _, options = pytest_root(lesson.folder)
        try:
            resolved = settings.resolve(
                option=lambda name: None,
                ini=lambda name: options.get(f"lesson_{name}"),
                environ=dict(self.environ),
            )
        except settings.SettingError as error:
            raise NotebookError(str(error)) from None
        if resolved.isolation == "off":
            # A cell's code never runs in the kernel: the kernel holds the expected answers.
            mode = settings.default_isolation()
            resolved = settings.Settings(resolved.given, mode, "")
        return resolved

    def _start(self, resolved: settings.Settings) -> Runner:
        """The runner, made and warmed up the first time a cell is graded."""
        if self.runner is None:
            self._policy, self.support = self._sandbox(resolved)
            self._fenced.clear()
            if not self.support.abi and not self._warned:
                self._warned = True
                self._notes.append(
                    f"lessons: sandbox OFF ({self.support.reason}): your cells still run "
                    "isolated, outside this kernel, but can read and change what you can."
                )
            self.runner = make_runner(
                resolved.isolation,
                resolved.value("preload"),
                env=dict(self._policy.env),
            )
            if not self._exit_hook:
                # The kernel's exit (a restart, a shutdown) stops the worker.
                atexit.register(self.close)
                self._exit_hook = True
        self.runner.warm_up()
        return self.runner

    def _sandbox(self, resolved: settings.Settings) -> tuple[sandbox.Policy, sandbox.Support]:
        try:
            support, policy = choose_sandbox(
                resolved, self.environ, "PYTEST_LESSONS_SANDBOX=off was given"
            )
        except sandbox.Unavailable as error:
            raise NotebookError(
                f"The sandbox is required but cannot be had here: {error}."
            ) from None
        except sandbox.NoSuchUser as error:
            raise NotebookError(f"PYTEST_LESSONS_SANDBOX_USER: {error}") from None
        return policy, support

    def policy(self, lesson: Lesson) -> sandbox.Policy:
        """The sandbox around a cell of *lesson*: every lesson of its course and pytest's root
        folder out of reach, as in a pytest run of the course."""
        assert self._policy is not None
        folders = {lesson.folder}
        files = [lesson.path]
        if lesson.course is not None:
            folders |= {path.parent for path in lesson.course.lessons}
            files += lesson.course.lessons
        # The folders of the lessons' input files too (a course's shared fixtures/), which a
        # pytest run fences as it collects.
        for file in files:
            with contextlib.suppress(model.ExerciseError, OSError):
                exercise = model.load(file)
                folders |= datafiles.folders(exercise.folder, exercise.cases)
        checkout, _ = pytest_root(lesson.folder)
        key = (*sorted(str(f) for f in folders), str(checkout))
        if key not in self._fenced:
            self._fenced[key] = self._policy.for_course(sorted(folders), checkout)
        return self._fenced[key]

    def grade(self, name: str, code: str) -> Feedback:
        """``%%lesson NAME``: grade *code* as the lesson's solution, case by case."""
        lesson = self.lesson(name)
        try:
            exercise = model.load(lesson.path)
        except model.ExerciseError as error:
            raise NotebookError(
                f"Tell your instructor: this lesson cannot be graded until its file is "
                f"valid. {error}"
            ) from None
        resolved = self.run_settings(lesson)
        runner = self._start(resolved)
        started = time.perf_counter()
        private = Path(tempfile.mkdtemp(prefix="pytest-lessons-cell-"))
        try:
            cell = private / exercise.solution.name
            cell.write_text(code, encoding="utf-8")
            policy = self.policy(lesson)
            _hand_over(private, cell, policy)

            def show(path: Path | str) -> str:
                return CELL if Path(path) == cell else self.show(path)

            graded = grade_cells(runner, resolved, policy, show, exercise, cell)
        except KeyboardInterrupt:
            # The case's processes must not outlive the cell, nor a half-read answer the
            # next cell: the worker is stopped and starts afresh when next needed.
            self.abort()
            raise
        finally:
            shutil.rmtree(private, ignore_errors=True)
        seconds = time.perf_counter() - started
        return self.feedback(lesson, exercise, graded, seconds)

    def feedback(
        self,
        lesson: Lesson,
        exercise: model.Exercise,
        graded: Sequence[tuple[CaseResult, str]],
        seconds: float = 0.0,
    ) -> Feedback:
        """The cell's output; passes and the lesson's state are remembered in pytest's cache,
        as a pytest run of the lesson remembers them."""
        cache = cache_of(lesson.folder)
        results = [result for result, _ in graded]
        states = summary.collect(results)
        courses = [lesson.course] if lesson.course is not None else []
        # A cell still holding the lesson's starter (a notebook run from the top) leaves the
        # progress earned elsewhere, in solution.py or another cell, as it was.
        progress = summary.progress_lines(states, courses, cache, starters_count=False)
        summary.solution_lines(states, None, cache, self.show, [])
        name = self._name(lesson)
        notes = [
            magic_words(line, name)
            for line in summary.hint_lines(states, None, cache, [name])
            if line
        ]
        notes = [*self._notes, *notes]
        self._notes.clear()
        return Feedback(exercise.slug, graded, progress, notes, seconds)

    def _name(self, lesson: Lesson) -> str:
        """What the learner types to name *lesson* in a magic."""
        folder = self.course_folder or find_course(self.cwd)
        if folder is not None and lesson.folder.parent == folder.resolve():
            return lesson.folder.name
        return self.show(lesson.folder)

    # - hints and the worked solution

    def _state(self, lesson: Lesson, cache: PytestCache) -> summary.ExerciseState:
        """The lesson as the last pytest run or graded cell left it (passed or not)."""
        try:
            exercise = model.load(lesson.path)
        except model.ExerciseError as error:
            raise NotebookError(f"Tell your instructor: {error}") from None
        state = summary.ExerciseState(exercise.slug, lesson.path, len(exercise.cases))
        if cache.get(summary.state_key(lesson.path), "") != "passed":
            state.seen.add(1)  # failing, as far as anyone knows
        return state

    def hints(self, name: str, mode: str = "next") -> Text:
        """``%lesson_hints NAME [all|reset]``: the hints opened so far and the next one, kept
        in pytest's cache as ``--lesson-hints`` keeps them."""
        if mode not in ("next", "all", "reset"):
            raise NotebookError(f"`%lesson_hints NAME {mode}`: say next, all or reset.")
        lesson = self.lesson(name)
        cache = cache_of(lesson.folder)
        state = self._state(lesson, cache)
        if mode == "next" and cache.get(summary.state_key(lesson.path), "") in (
            "",
            summary.STARTER,
        ):
            # Never tried (its cell not run, or run as the starter): a notebook run from the
            # top would open a hint of every lesson.
            return Text(
                [
                    f"Write your code in the `%%lesson {self._name(lesson)}` cell and run it, "
                    "then ask again: a hint opens for a lesson you have tried."
                ]
            )
        lines = summary.hint_lines([state], mode, cache, [self._name(lesson)])
        if not lines:
            if state.failing:
                lines = [f"{state.slug} has no hints."]
            else:
                lines = [
                    f"You have passed {state.slug}: `%lesson_solution {self._name(lesson)}` "
                    "shows its worked solution."
                ]
        return Text([magic_words(line, self._name(lesson)) for line in lines])

    def solution(self, name: str, mode: str = "passed") -> Text:
        """``%lesson_solution NAME [show-anyway]``: the worked solution, once every case of
        the lesson passed (in a cell or a pytest run), as ``--lesson-solution`` gates it."""
        if mode not in ("passed", "show-anyway"):
            raise NotebookError(f"`%lesson_solution NAME {mode}`: say show-anyway or nothing.")
        lesson = self.lesson(name)
        cache = cache_of(lesson.folder)
        state = self._state(lesson, cache)
        lines = summary.solution_lines([state], mode, cache, self.show, [self._name(lesson)])
        return Text([magic_words(line, self._name(lesson)) for line in lines])

    # - processes

    def abort(self) -> None:
        """Stop every process that runs learner code, at once (an interrupted cell)."""
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.abort()

    def close(self) -> None:
        """Stop the worker (the kernel ends, or the extension is unloaded)."""
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()


def _hand_over(private: Path, cell: Path, policy: sandbox.Policy) -> None:
    """Let the user learner code runs as (when the kernel runs as root, as in Colab) read the
    cell's file, and no one else."""
    os.chmod(private, 0o711)
    os.chmod(cell, 0o600)
    if policy.uid is not None and hasattr(os, "chown"):
        os.chown(cell, policy.uid, policy.gid if policy.gid is not None else -1)


def grade_cells(
    runner: Runner,
    resolved: settings.Settings,
    policy: sandbox.Policy,
    show: Callable[[Path | str], str],
    exercise: model.Exercise,
    solution: Path,
) -> list[tuple[CaseResult, str]]:
    """Every case of *exercise* graded with *solution* as the learner's file, in order, by a
    new :class:`~pytest_lessons.core.grader.Grader` (what it remembers, such as which fault was
    already explained, belongs to this one grading): each case's result and its text as the
    terminal shows it."""
    grader = Grader(runner, resolved, sandbox=lambda: policy, show=show)
    graded: dict[int, tuple[CaseResult, str]] = {}
    # Hidden cases last, as pytest runs them: no learner code runs after one, where it could
    # print what it saw of it (the time it took); the results stay in the lesson's order.
    for index, case in sorted(enumerate(exercise.cases), key=lambda pair: pair[1].hidden):
        done = grader.grade(Attempt(exercise, case, solution))
        graded[index] = (done.result, done.text)
    return [graded[index] for index in range(len(exercise.cases))]
