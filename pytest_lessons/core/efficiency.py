"""The verdict of a work budget (:mod:`pytest_lessons.core.budget`) on a case whose values passed.

The learner's figures come back with the learner's outcome (counted in its own child); the
reference's, and those of a watch-out's slow mistake, are counted the same way, each in its own
child run, once per session. This module only compares the plain figures it receives: whether
a run timed out, was not run, or failed in the grader is the runner's and the grader's to
say, never a figure's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pytest_lessons.core import model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.budget import FEEDBACK, FEEDBACK_NOTE, MEASURES, NEAR, CaseWork, Limit
from pytest_lessons.core.detectors import WATCH_OUT, Diagnosis
from pytest_lessons.core.runs import Runs
from pytest_lessons.core.texts import Failure
from pytest_lessons.core.words import wrap
from pytest_lessons.isolation.outcome import RETURNED, Outcome

Figures = dict[str, int]


@dataclass(frozen=True)
class Over:
    """A case over its budget: what the learner reads, and the watch-out it names if any."""

    failure: Failure
    diagnosis: Diagnosis | None = None
    lesson_error: str = ""
    """Set when the lesson's own reference could not be counted (not the learner's fault)."""


def figure(value: float) -> str:
    """A count as a learner reads it: ``5,120``, ``412.3k``, ``12.3M``, ``4.1G``."""
    if value < 10_000:
        return f"{value:,.0f}"
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:,.0f}"  # pragma: no cover


def ratio(mine: float, other: float) -> float:
    """*mine* over *other*, a count of 0 taken as 1 (nothing is as little as work can be)."""
    return max(mine, 1) / max(other, 1)


def times(value: float) -> str:
    return f"{value:.1f}x" if value < 10 else f"{value:,.0f}x"


@dataclass
class Efficiency:
    """Judges budget cases with the figures :class:`~pytest_lessons.core.runs.Runs` brings
    back; caches the reference's and the slow mistakes' figures per session."""

    runs: Runs
    counted: dict[tuple[str, str, str, int], dict[str, Any] | None] = field(default_factory=dict)
    """(exercise file, file, function, case) -> its work report (None: it gave none)."""

    def work_of(self, exercise: model.Exercise, solution: Any, entry: str, case: model.Case) -> Any:
        """The work report of *entry* of the author's *solution* on *case*, counted in its
        own child run; None when it gave none (it raised, or returned no figures)."""
        key = (str(exercise.path), str(solution), entry, case.number)
        if key not in self.counted:
            job = self.runs.job(exercise, solution, entry, case.inputs, work=case.work)
            self.counted[key] = _report(self.runs.runner.run(job))
        return self.counted[key]

    def verdict(self, attempt: Attempt, outcome: Outcome) -> Over | None:
        """None when the attempt's case has no budget or keeps it; else what it exceeded."""
        work = attempt.case.work
        if work is None:
            return None
        exercise, case = attempt.exercise, attempt.case
        reference = work.reference  # frozen in a learner's copy, else counted now
        if reference is None and exercise.reference is not None:
            reference = self.work_of(exercise, exercise.reference, exercise.entry, case)
        if reference is None or (work.growth and "smaller" not in reference):
            text = (
                f"the reference's work could not be counted on {case.label}: check that "
                f"{exercise.entry} in reference.py runs on its inputs at every budget size"
            )
            failure = Failure(
                "Tell your instructor that this case cannot be graded: the lesson itself "
                "failed on it, not your code. It scores no points until the lesson is fixed."
            )
            return Over(failure, lesson_error=text + ".\n")
        mine = _report(outcome)
        entry = attempt.entry
        if mine is not None and work.growth and "error" in mine:
            return Over(
                Failure(
                    f"Make {entry} run on the smaller inputs ({work.axis} = {work.smaller_size}) "
                    "too: the grader counts its work there to check how it grows, and there "
                    f"it raised {mine['error']}."
                )
            )
        if mine is None or (work.growth and "smaller" not in mine):
            return Over(
                Failure(
                    f"Leave the grader's work counter in place: {entry}'s result came back "
                    "without the figures this case counts."
                )
            )
        over = [
            lim
            for lim in work.limits
            if _used(work, lim, mine) > lim.times * _base(work, lim, reference)
        ]
        if not over:
            return None
        diagnosis = self._nearest(attempt, work, mine)
        headline = _headline(work, over[0], entry, mine, reference)
        lines = ["", *_table(work, mine, reference)]
        if diagnosis is not None:
            # The watch-out leads; the figures' sentence, without the generic advice, follows.
            said = headline.split(": ", 1)[1]
            lines = ["", *["  " + line for line in wrap(said[0].upper() + said[1:])], *lines]
            headline = diagnosis.headline
        lines += [
            "",
            *[
                "  " + line
                for line in wrap(
                    "Work is counted, not timed: every torch operation your function runs is "
                    "counted, so the figures are the same on every machine."
                )
            ],
        ]
        if self.runs.settings.value("work_budgets") == FEEDBACK:
            lines += ["", *["  " + line for line in wrap(FEEDBACK_NOTE)]]
        failure = Failure(headline, lines)
        return Over(failure, diagnosis)

    def _nearest(self, attempt: Attempt, work: CaseWork, mine: dict[str, Any]) -> Diagnosis | None:
        """The budget's watch-out whose slow mistake did work nearest the learner's (within
        :data:`~pytest_lessons.core.budget.NEAR` on every bounded measure), if any."""
        exercise = attempt.exercise
        if exercise.mistakes is None or not work.watch_outs:
            return None
        best: tuple[float, model.WatchOut] | None = None
        for watch in exercise.watch_outs:
            if watch.id not in work.watch_outs or not watch.mistake:
                continue
            theirs = self.work_of(exercise, exercise.mistakes, watch.mistake, attempt.case)
            if theirs is None or (work.growth and "smaller" not in theirs):
                continue
            distances = [
                abs(math.log(ratio(_used(work, lim, mine), _used(work, lim, theirs))))
                for lim in work.limits
            ]
            if max(distances) > math.log(NEAR):
                continue
            if best is None or sum(distances) < best[0]:
                best = (sum(distances), watch)
        if best is None:
            return None
        watch = best[1]
        return Diagnosis(watch.id, f"Watch out: {watch.message}", WATCH_OUT, kind="watch_out")


def _report(outcome: Outcome) -> dict[str, Any] | None:
    if outcome.kind != RETURNED:
        return None
    report = outcome.details.get("work")
    return report if isinstance(report, dict) and "at" in report else None


def _used(work: CaseWork, limit: Limit, report: dict[str, Any]) -> float:
    """The figure a limit bounds: the count, or for a growth budget its growth."""
    at = report["at"][limit.measure]
    if not work.growth:
        return float(at)
    return ratio(at, report["smaller"][limit.measure])


def _base(work: CaseWork, limit: Limit, reference: dict[str, Any]) -> float:
    """What the limit's multiple is of: the reference's count, or 1 for a growth budget."""
    return 1.0 if work.growth else float(max(reference["at"][limit.measure], 1))


def _headline(
    work: CaseWork, limit: Limit, entry: str, mine: dict[str, Any], reference: dict[str, Any]
) -> str:
    words = MEASURES[limit.measure]
    advice = work.advice.rstrip(".") or f"Make {entry} do less work"
    if not work.growth:
        return (
            f"{advice}: your {entry} did {figure(mine['at'][limit.measure])} {words}, the "
            f"reference {figure(reference['at'][limit.measure])} (budget "
            f"{limit.times:g}x the reference)."
        )
    low, high = work.smaller_size, work.sizes[work.axis]
    return (
        f"{advice}: as {work.axis} grows from {low} to {high}, your {entry}'s {words} grew "
        f"{times(_used(work, limit, mine))} ({figure(mine['smaller'][limit.measure])} to "
        f"{figure(mine['at'][limit.measure])}), the reference's "
        f"{times(_used(work, limit, reference))} (budget {limit.times:g}x)."
    )


def _table(work: CaseWork, mine: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """The figures of every measure, the learner's beside the reference's."""
    sizes = ", ".join(f"{name} = {size}" for name, size in work.sizes.items())
    bounded = {lim.measure: lim.times for lim in work.limits}
    if work.growth:
        head = f"  Work at {work.axis} = {work.smaller_size} and at {sizes}:"
    else:
        head = f"  Work on this case ({sizes}):"
    rows = [("", "yours", "reference", "budget")]
    for measure, words in MEASURES.items():
        if work.growth:
            yours = f"{figure(mine['smaller'][measure])} -> {figure(mine['at'][measure])}"
            ref = f"{figure(reference['smaller'][measure])} -> {figure(reference['at'][measure])}"
            limit = f"grows {bounded[measure]:g}x" if measure in bounded else ""
        else:
            yours, ref = figure(mine["at"][measure]), figure(reference["at"][measure])
            limit = f"{bounded[measure]:g}x reference" if measure in bounded else ""
        rows.append((words, yours, ref, limit))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return [head] + [
        "    " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows
    ]
