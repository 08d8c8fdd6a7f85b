"""What every report reads from a list of results, computed in one place: the exercises in
course order, the results in a stable order, totals, the one-sentence summary, the mistake
table, and one grouping of results by exercise (:func:`by_exercise`: by path, in course
order) for the reporters that go exercise by exercise.

Made from :class:`~pytest_lessons.core.results.CaseResult` lists only, so one run and a merge
of shards agree. This module imports neither pytest nor torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_lessons.core import course
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.summary import course_order


def exercise_order(results: Sequence[CaseResult], recorded: Sequence[str] = ()) -> list[str]:
    """The exercises of *results* (their slugs) in their course's order: as *recorded* (by a
    shard's json report, where a merge may run without the course), else as the
    ``course.toml`` beside the lessons lists them, then any other exercise by path."""
    paths: dict[str, str] = {}
    for r in sorted(results, key=lambda r: str(r.path)):
        paths.setdefault(str(r.exercise), str(r.path))
    if recorded:
        known = {slug: n for n, slug in enumerate(recorded)}
        return sorted(paths, key=lambda e: (known.get(e, len(known)), paths[e], e))
    try:
        courses = course.of(Path(p) for p in dict.fromkeys(paths.values()) if p)
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
    t = totals(results)
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
