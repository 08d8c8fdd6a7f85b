"""What every report reads from a list of results, computed in one place: the exercises in
course order, the results in a stable order, totals, the one-sentence summary, the mistake
table, and one grouping of results by exercise (:func:`by_exercise`: by path, in course
order) for the reporters that go exercise by exercise.

Made from :class:`~pytest_lessons.core.results.CaseResult` lists only, so one run and a merge
of shards agree. This module imports neither pytest nor torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_lessons.core import course
from pytest_lessons.core.results import CaseResult, FaultKind, Status, fault_detail
from pytest_lessons.core.summary import course_order


def exercise_order(results: Sequence[CaseResult], recorded: Sequence[str] = ()) -> list[str]:
    """The exercises of *results* (their slugs) in their course's order: as *recorded* (by a
    shard's json report, where a merge may run without the course), else as the
    ``course.toml`` beside the lessons lists them, then any other exercise by path."""
    paths: dict[str, str] = {}
    for r in results:
        slug, path = str(r.exercise), str(r.path)
        if slug not in paths or path < paths[slug]:
            paths[slug] = path
    return _order_of(paths, recorded)


def _order_of(paths: dict[str, str], recorded: Sequence[str]) -> list[str]:
    """:func:`exercise_order` of the exercises *paths* names, each with its first path."""
    if recorded:
        known = {slug: n for n, slug in enumerate(recorded)}
        return sorted(paths, key=lambda e: (known.get(e, len(known)), paths[e], e))
    try:
        courses = course.of(Path(p) for p in sorted(set(paths.values())) if p)
    except course.CourseError:
        # A broken course.toml stops a run before this; in a merge it is no reason to stop.
        courses = []
    place = course_order(courses)
    return sorted(paths, key=lambda e: (place(Path(paths[e])), e))


def ordered(results: Sequence[CaseResult], order: Sequence[str] = ()) -> list[CaseResult]:
    """Results in a stable order, whatever order they ran in: by learner, then the exercises
    in their course's order (:func:`exercise_order`; *order* as recorded, if given), then
    case."""
    rank = {slug: n for n, slug in enumerate(exercise_order(results, order))}
    return sorted(
        results, key=lambda r: (str(r.learner), rank[str(r.exercise)], str(r.path), int(r.case))
    )


@dataclass(frozen=True)
class Exercise:
    """One exercise's results (its ``exercise.toml``, every learner's cases)."""

    slug: str
    path: str
    results: tuple[CaseResult, ...]
    """By learner, then case."""

    @property
    def title(self) -> str:
        """The exercise's title for people (its slug when it has none)."""
        return self.results[0].title or self.slug


def by_exercise(results: Sequence[CaseResult], order: Sequence[str] = ()) -> list[Exercise]:
    """*results* grouped by exercise (by its ``exercise.toml`` path), the exercises in course
    order (:func:`exercise_order`; *order* as a shard recorded it, if given), each one's
    results by learner, then case."""
    groups: dict[str, list[CaseResult]] = {}
    for r in sorted(results, key=lambda r: (r.path, r.learner, r.case)):
        groups.setdefault(r.path, []).append(r)
    rank = {slug: n for n, slug in enumerate(exercise_order(results, order))}
    found = [Exercise(rs[0].exercise, path, tuple(rs)) for path, rs in groups.items()]
    return sorted(found, key=lambda e: (rank[e.slug], e.path))


def totals(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Points and counts, public and hidden apart, so no summary overstates what passed."""
    public = [r for r in results if not r.hidden and r.status != Status.BROKEN]
    hidden = [r for r in results if r.hidden]
    return {
        "points": round(sum(r.points for r in results), 6),
        "max_points": round(sum(r.max_points for r in results), 6),
        "public_passed": sum(r.passed for r in public),
        "public": len(public),
        "hidden_passed": sum(r.passed for r in hidden),
        "hidden": len(hidden),
        "broken": sorted({r.exercise for r in results if r.status == Status.BROKEN}),
    }


def summary_text(results: Sequence[CaseResult]) -> str:
    """One honest sentence: points, and public and hidden cases apart."""
    return summary_of(totals(results))


def summary_of(t: dict[str, Any]) -> str:
    """:func:`summary_text` of the class's :func:`totals` *t*."""
    text = (
        f"{t['points']:g} of {t['max_points']:g} points; "
        f"public cases {t['public_passed']} of {t['public']} passed"
    )
    if t["hidden"]:
        text += f", hidden cases {t['hidden_passed']} of {t['hidden']} passed"
    if t["broken"]:
        text += f"; not graded, their exercise.toml is broken: {', '.join(t['broken'])}"
    return text + "."


def mistake_table(results: Sequence[CaseResult]) -> dict[str, dict[str, int]]:
    """Exercise -> watch-out id -> how many learners hit it (each learner counted once)."""
    seen: dict[str, dict[str, set[str]]] = {}
    for r in results:
        if r.diagnosis_kind == "watch_out":
            by_id = seen.setdefault(str(r.exercise), {})
            by_id.setdefault(str(r.diagnosis), set()).add(str(r.learner))
    return {
        exercise: {
            i: len(learners) for i, learners in sorted(ids.items(), key=lambda x: -len(x[1]))
        }
        for exercise, ids in sorted(seen.items())
    }


def with_hidden_faults(results: Sequence[CaseResult]) -> list[CaseResult]:
    """*results*, where a hidden case that gave no answer takes the fault its exercise's public
    cases all share (a missing file, a stub, a syntax error): such a fault is the same for
    every input, and a hidden case's result leaves it out (its key could name the learner's
    line). Only for counting and grouping: no hidden text changes."""
    public: dict[tuple[str, str], set[str]] = {}
    for r in results:
        if not r.hidden:
            public.setdefault((r.learner, r.path), set()).add(r.fault if not r.passed else "")
    out = []
    for r in results:
        faults = public.get((r.learner, r.path), set())
        if r.hidden and r.status == Status.ERROR and not r.fault and len(faults) == 1:
            (fault,) = faults
            if fault:
                r = replace(r, fault=fault)
        out.append(r)
    return out


# --- outcomes, and the class's tally ----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """A kind of result a learner's exercise can show: a bar of the chart."""

    key: str
    """What the bar counts, for sorting and grouping (``watch_out:missing-transpose``)."""
    label: str
    """The bar's words."""
    kind: str
    """One of the class report's ``COLOURS`` keys: ``grader`` for a grader error only (the
    grader itself failed), ``lesson`` for the lesson's own failure, ``check`` for a check of
    its harness that stopped the learner's code."""


def outcome_of(r: CaseResult) -> Outcome:
    """What one failing (or passing) case shows, in the report's words."""
    if r.passed:
        return Outcome("passed", "passed", "passed")
    if r.status == Status.BROKEN:
        return Outcome("broken", "exercise.toml broken", "grader")
    if lesson_failed(r):  # the lesson's own code failed on the case, not the grader
        if r.fault.endswith(" in the harness"):
            return Outcome("lesson:harness", "lesson error: the lesson's harness failed", "lesson")
        return Outcome("lesson", "lesson error: the lesson itself failed", "lesson")
    if r.status == Status.INTERNAL:
        return Outcome("internal", "grader error: the grader itself failed", "grader")
    if r.diagnosis_kind == "watch_out" and r.diagnosis:
        return Outcome(f"watch_out:{r.diagnosis}", f"watch out: {r.diagnosis}", "watch_out")
    if r.diagnosis_kind == "detector" and r.diagnosis:
        return Outcome(f"detector:{r.diagnosis}", f"finding: {r.diagnosis}", "detector")
    if r.diagnosis_kind == "rule" and r.diagnosis:  # a rule on how it is computed, broken
        return Outcome(f"rule:{r.diagnosis}", f"rule: {r.diagnosis}", "raised")
    if r.diagnosis_kind == "check" and r.diagnosis:  # a check of the lesson's harness
        return Outcome(f"check:{r.diagnosis}", f"check: {r.diagnosis}", "check")
    kind = r.fault_kind
    if kind == FaultKind.MISSING_FILE:
        return Outcome("missing", "missing", "missing")
    if kind == FaultKind.TIMEOUT:
        return Outcome("timeout", "timeout", "timeout")
    if kind == FaultKind.NOT_RUN:  # the terminal's words for it
        return Outcome("not-run", "not run (too many timeouts)", "timeout")
    if kind == FaultKind.CHECK:  # a harness check a hidden case's diagnosis leaves out
        check = fault_detail(r.fault)
        return Outcome(f"check:{check}", f"check: {check}", "check")
    if kind == FaultKind.DIED:
        return Outcome("crash", "crash", "crash")
    if kind == FaultKind.NOT_IMPLEMENTED:
        return Outcome("not-implemented", "not implemented", "unloadable")
    if kind == FaultKind.RAISED:
        error = fault_detail(r.fault).split()[0]
        return Outcome(f"raised:{error}", f"raised {error}", "raised")
    if kind == FaultKind.SETUP:
        problem = fault_detail(r.fault).replace("_", " ")
        return Outcome(f"setup:{problem}", f"cannot load: {problem}", "unloadable")
    if kind == FaultKind.RETURNED:
        return Outcome(f"returned:{r.fault}", r.fault, "returned")
    if kind != FaultKind.NONE:
        return Outcome(f"fault:{r.fault}", r.fault, "raised")
    if r.status == Status.ERROR:
        # A hidden case keeps why it gave no answer to itself.
        return Outcome("error", "no answer (hidden case)", "raised")
    return Outcome("wrong", "wrong answer", "wrong")


def lesson_failed(r: CaseResult) -> bool:
    """Whether the lesson's own code (its reference, its harness) failed on the case, so the
    case could not be graded: the author's to fix, not the grader's nor the learner's."""
    if r.passed or not r.lesson_error:
        return False
    return r.status == Status.INTERNAL or r.fault.endswith(" in the harness")


@dataclass
class Bar:
    """A bar of an exercise's chart: an outcome and the learners (in name order) showing it."""

    outcome: Outcome
    learners: list[str]


def sorted_bars(bars: Sequence[Bar]) -> list[Bar]:
    """*bars* as a chart shows them: ``passed`` first, then by how many learners, then label."""
    return sorted(
        bars, key=lambda b: (b.outcome.key != "passed", -len(b.learners), b.outcome.label)
    )


def learner_outcomes(mine: Sequence[CaseResult]) -> list[Outcome]:
    """What one learner's results of one exercise show: nothing when every case passed, else
    each outcome of a failing case once, in case order."""
    if all(r.passed for r in mine):
        return []
    seen: dict[str, Outcome] = {}
    for r in mine:
        if not r.passed:
            outcome = outcome_of(r)
            seen.setdefault(outcome.key, outcome)
    return list(seen.values())


#: The outcome of a learner's exercise whose every case passed.
PASSED = Outcome("passed", "passed", "passed")


def bars_of(results: Sequence[CaseResult]) -> list[Bar]:
    """The bars of *results* (with :func:`with_hidden_faults` applied): each learner under
    each outcome their results show once, or under ``passed``; as :func:`sorted_bars` orders
    them."""
    by_learner: dict[str, list[CaseResult]] = {}
    for r in results:
        by_learner.setdefault(r.learner, []).append(r)
    bars: dict[str, Bar] = {}
    for learner, mine in sorted(by_learner.items()):
        for outcome in learner_outcomes(mine) or [PASSED]:
            bars.setdefault(outcome.key, Bar(outcome, [])).learners.append(learner)
    return sorted_bars(list(bars.values()))


@dataclass
class Mark:
    """One learner's one exercise, as the gradebook and the slowest submissions read it."""

    points: float = 0.0
    """The cases' points, added in the results' order."""
    handed: bool = False
    """Whether some case saw the learner's file."""
    seconds: float = 0.0


@dataclass
class Group:
    """One exercise (its ``exercise.toml`` path) across the class, as the class report and
    the class's terminal lines read it."""

    path: str
    slug: str
    title: str
    """Its title for people (its slug when it has none)."""
    learners: int = 0
    """Learners with a result in it."""
    points: float = 0.0
    """Every learner's points in it, added up."""
    max_points: float = 0.0
    bars: list[Bar] = field(default_factory=list)
    """As :func:`sorted_bars` orders them."""
    cases: list[tuple[float, int, str, int, int]] = field(default_factory=list)
    """(rate, case, label, passed, total) of each case (an exercise.toml broken counts in
    none), lowest rate first."""


@dataclass
class Tally:
    """Everything the gradebook, the class report and the class's terminal lines read of a
    class, without its cases' texts: made from the results (:meth:`of`), or added up from the
    shards' tallies (:mod:`~pytest_lessons.reports.tallyfile`) by a merge that reads no case.

    Both give the same figures: each learner's are added in their results' order, and a
    merge adds class-wide sums only where every order gives the same float (points that are
    multiples of a power of two: :data:`~pytest_lessons.reports.tallyfile.GRAIN`)."""

    learners: list[str]
    """Every learner with a result, in name order."""
    marks: dict[tuple[str, str], Mark]
    """(learner, exercise) -> the learner's mark on it."""
    maximum: dict[str, float]
    """Each exercise's points possible."""
    paths: dict[str, str]
    """Each exercise's first ``exercise.toml`` path (in path order)."""
    totals: dict[str, Any]
    """As :func:`totals` gives them."""
    groups: dict[str, Group]
    """By path."""
    cases: int = 0
    """How many results."""
    passed: int = 0
    """How many of them passed."""

    @classmethod
    def of(cls, results: Sequence[CaseResult]) -> Tally:
        """The tally of *results*: each figure added up in the order the reports always
        added it (the gradebook's in the results' order, an exercise's in learner order)."""
        fixed = with_hidden_faults(results)
        maximum: dict[str, float] = {}
        marks: dict[tuple[str, str], Mark] = {}
        for r in fixed:
            maximum[r.exercise] = maximum.get(r.exercise, 0.0)
            key = (r.learner, r.exercise)
            mark = marks.get(key)
            if mark is None:
                mark = marks[key] = Mark()
            mark.points = mark.points + r.points
            mark.seconds = mark.seconds + r.seconds
            # An exercise counts as handed in as soon as one case saw the learner's file.
            mark.handed = mark.handed or not _not_handed_in(r)
        # Points possible: every case any learner has (each learner has the same ones), so a
        # case missing from one learner's results cannot shrink anyone's maximum.
        cases: dict[tuple[str, int, str], float] = {}
        for r in fixed:
            key3 = (r.exercise, r.case, r.id)
            cases[key3] = max(cases.get(key3, 0.0), r.max_points)
        for (exercise, _, _), most in cases.items():
            maximum[exercise] += most
        paths: dict[str, str] = {}
        for r in fixed:
            if r.exercise not in paths or r.path < paths[r.exercise]:
                paths[r.exercise] = r.path
        groups: dict[str, list[CaseResult]] = {}
        for r in sorted(fixed, key=lambda r: (r.path, r.learner, r.case)):
            groups.setdefault(r.path, []).append(r)
        return cls(
            learners=sorted({r.learner for r in results}),
            marks=marks,
            maximum=maximum,
            paths=paths,
            totals=totals(results),
            groups={path: _group(path, rs) for path, rs in groups.items()},
            cases=len(results),
            passed=sum(r.passed for r in results),
        )

    def order(self, recorded: Sequence[str] = ()) -> list[str]:
        """The exercises in their course's order (:func:`exercise_order`)."""
        return _order_of(self.paths, recorded)

    def in_order(self, recorded: Sequence[str] = ()) -> list[Group]:
        """The exercises' groups in course order (:func:`by_exercise`'s order)."""
        rank = {slug: n for n, slug in enumerate(self.order(recorded))}
        return sorted(self.groups.values(), key=lambda g: (rank[g.slug], g.path))


def _not_handed_in(r: CaseResult) -> bool:
    # formats.not_handed_in, which imports this module.
    return r.fault_kind == FaultKind.MISSING_FILE and r.status == Status.ERROR


def _group(path: str, rs: Sequence[CaseResult]) -> Group:
    """One exercise's group from its results, by learner then case."""
    group = Group(path, rs[0].exercise, rs[0].title or rs[0].exercise)
    group.learners = len({r.learner for r in rs})
    group.points = sum(r.points for r in rs)
    group.max_points = sum(r.max_points for r in rs)
    group.bars = bars_of(rs)
    cases: dict[int, list[CaseResult]] = {}
    for r in rs:
        if r.status != Status.BROKEN:
            cases.setdefault(r.case, []).append(r)
    rows = []
    for number, of_case in cases.items():
        passed = sum(r.passed for r in of_case)
        rows.append((passed / len(of_case), number, of_case[0].label, passed, len(of_case)))
    group.cases = sorted(rows)
    return group
