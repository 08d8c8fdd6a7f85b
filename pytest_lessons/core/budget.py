"""A lesson's work budget (``[budget]`` in ``exercise.toml``): what it says, and the cases it adds.

A budget bounds the work the learner's function does, counted inside the child that runs it
(:mod:`pytest_lessons.isolation.work`), never timed: the same code gives the same figures on
any machine. Two forms, each a case of its own, whose inputs ``[generate]`` draws at the sizes
the budget names and whose expected value the reference computes (so its values are graded
too)::

    [budget]
    sizes = { n = 32, d = 8 }         # the "work budget" case's axis sizes
    elements = "2x reference"         # at most twice what the reference does on that case
    operations = "10x reference"
    advice = "Compute every pair at once with broadcasting"
    watch_outs = ["python-loop"]      # mistakes whose answers are right but slow

    [budget.growth]                   # the "work growth" case
    axis = "past"
    sizes = [64, 1024]                # the axis at these two sizes, the others at [budget] sizes
    flops = "20x"                     # the work at 1024 at most 20x the work at 64

The measures are :data:`MEASURES`. The verdict is :mod:`pytest_lessons.core.efficiency`'s.

A budget is a check of honest code, not a wall against hostile code: its figures are counted in
the process that runs learner code, which can take the counter off torch's stack, change its
counts or write the result itself, so code over its budget can pass. Nothing the grader can
measure from outside replaces the count: the child's CPU time (its ``rusage``, a cgroup's) is
the kernel's and cannot be forged, but it is a time, not a count of the operations the budget
bounds: it differs from one machine and one load to the next, and on a budget case's inputs it
is mostly the child's own start. So a run that must hold against such code counts budget cases
as feedback (``--lesson-work-budgets=feedback``, :func:`worth`): still graded and shown, with
their result in every report, worth 0 points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pytest_lessons.core import generate
from pytest_lessons.core.settings import WORK_BUDGET_CHOICES

#: What a budget may bound, with the words for a figure of each.
MEASURES = {
    "flops": "floating-point operations",
    "elements": "element operations",
    "operations": "torch operations",
}
#: The keys of ``[budget]`` and of ``[budget.growth]``, with what each means (the schema's words).
BUDGET_KEYS = {
    "sizes": "Axis name -> size: the work budget case's inputs are drawn at these sizes "
    "(default: each [generate] axis at its largest).",
    **{
        m: f'The most {words} allowed, as a multiple of the reference\'s: "2x reference".'
        for m, words in MEASURES.items()
    },
    "advice": "What to do when the budget is exceeded, leading the failure's headline.",
    "watch_outs": "Ids of watch-outs whose mistakes give right answers with too much work: "
    "the one whose figures are nearest the learner's is named.",
    "points": "What each budget case is worth (default 1).",
    "growth": "A growth budget: how much the work may grow as one axis grows.",
}
GROWTH_KEYS = {
    "axis": "The [generate] axis that grows.",
    "sizes": "[smaller, larger]: the axis's two sizes (the other axes at [budget] sizes).",
    **{
        m: f'The most the {words} may grow from the smaller size to the larger: "4x".'
        for m, words in MEASURES.items()
    },
}
_REFERENCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x\s+reference\s*$")
_TIMES = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x\s*$")
#: A watch-out's mistake is named for a learner's excess when its figures are within this
#: factor of the learner's on every bounded measure.
NEAR = 4.0


#: The ``work_budgets`` run setting's values: budget cases carry their points, or are feedback.
POINTS, FEEDBACK = WORK_BUDGET_CHOICES
#: What the learner reads under an over-budget failure in a run that counts budgets as feedback.
FEEDBACK_NOTE = (
    "This run counts work budgets as feedback: this case scores no points either way "
    "(--lesson-work-budgets=feedback)."
)


@dataclass(frozen=True)
class Limit:
    """One bound: the learner's *measure* at most *times* the reference's (or, in a growth
    budget, at most *times* its own figure at the smaller size)."""

    measure: str
    times: float


@dataclass(frozen=True)
class CaseWork:
    """What a budget case counts and bounds (on :attr:`pytest_lessons.core.model.Case.work`)."""

    limits: tuple[Limit, ...]
    sizes: dict[str, int]
    """The case's axis sizes."""
    advice: str = ""
    watch_outs: tuple[str, ...] = ()
    axis: str = ""
    """A growth case: the axis that grows (empty: the case is bounded by the reference)."""
    smaller_size: int = 0
    smaller: dict[str, Any] | None = None
    """A growth case: its inputs at the smaller size (by name, as TOML data)."""
    reference: dict[str, Any] | None = None
    """The reference's figures frozen into a learner's copy (which has no reference); None:
    counted from the reference when the case runs."""

    @property
    def growth(self) -> bool:
        return bool(self.axis)


def worth(points: float, work: CaseWork | None, mode: str) -> float:
    """What a case of *points* is worth in a run that counts budget cases as *mode*
    (``points`` or ``feedback``): a budget case (*work* given) is worth 0 as feedback, every
    other case its *points*. The case is graded and reported either way."""
    return 0.0 if work is not None and mode == FEEDBACK else points


class BudgetError(ValueError):
    """``[budget]`` cannot be used; the message says which key and why."""


def _limits(table: dict[str, Any], pattern: re.Pattern[str], where: str, form: str) -> list[Limit]:
    limits = []
    for measure in MEASURES:
        if measure not in table:
            continue
        value = table[measure]
        match = pattern.match(value) if isinstance(value, str) else None
        if match is None or float(match.group(1)) <= 0:
            raise BudgetError(f'{where}.{measure} must read like "{form}"')
        limits.append(Limit(measure, float(match.group(1))))
    return limits


def _sizes(value: Any, axes: dict[str, tuple[int, int]], where: str) -> dict[str, int]:
    sizes = {name: high for name, (_, high) in axes.items()}
    if value is None:
        return sizes
    if not isinstance(value, dict):
        raise BudgetError(f"{where} must be a table: axis name = size")
    for name, size in value.items():
        if name not in axes:
            raise BudgetError(f'{where} names unknown axis "{name}"')
        if type(size) is not int or not 1 <= size <= generate.SIZE_CEILING:
            raise BudgetError(f"{where}.{name} must be a size from 1 to {generate.SIZE_CEILING}")
        sizes[name] = size
    return sizes


def cases(
    raw: Any, spec: generate.GenerateSpec | None, watch_outs: set[str]
) -> list[tuple[str, dict[str, Any], CaseWork, float]]:
    """The cases ``[budget]`` adds: (name, inputs, what it counts, points) each. Raises
    :class:`BudgetError`."""
    if not isinstance(raw, dict):
        raise BudgetError("budget must be a table")
    for key in raw:
        if key not in BUDGET_KEYS:
            raise BudgetError(f'budget: unknown key "{key}"')
    if spec is None:
        raise BudgetError(
            "[budget] needs [generate], whose axes and inputs it draws its cases from"
        )
    sizes = _sizes(raw.get("sizes"), spec.axes, "budget.sizes")
    advice = raw.get("advice", "")
    if not isinstance(advice, str):
        raise BudgetError("budget.advice must be a string")
    named = raw.get("watch_outs", [])
    if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
        raise BudgetError("budget.watch_outs must be a list of watch-out ids")
    for name in named:
        if name not in watch_outs:
            raise BudgetError(f'budget.watch_outs names no watch-out "{name}"')
    points = raw.get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0:
        raise BudgetError("budget.points must be a number, 0 or more")
    limits = _limits(raw, _REFERENCE, "budget", "2x reference")
    growth = raw.get("growth")
    if not limits and growth is None:
        raise BudgetError(
            "[budget] bounds nothing: give " + ", ".join(MEASURES) + ' ("2x reference") or growth'
        )
    advice, told = advice.strip(), tuple(named)
    made: list[tuple[str, dict[str, Any], CaseWork, float]] = []
    if limits:
        _fits(spec, sizes, "budget.sizes")
        inputs = generate.draw_at(spec, sizes, "budget")
        made.append(("work budget", inputs, CaseWork(tuple(limits), sizes, advice, told), points))
    if growth is not None:
        if not isinstance(growth, dict):
            raise BudgetError("budget.growth must be a table")
        for key in growth:
            if key not in GROWTH_KEYS:
                raise BudgetError(f'budget.growth: unknown key "{key}"')
        axis = growth.get("axis")
        if axis not in spec.axes:
            raise BudgetError("budget.growth.axis must name a [generate] axis")
        pair = growth.get("sizes")
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(type(s) is int for s in pair)
            or not 1 <= pair[0] < pair[1] <= generate.SIZE_CEILING
        ):
            raise BudgetError(
                "budget.growth.sizes must be [smaller, larger], sizes up to "
                f"{generate.SIZE_CEILING}"
            )
        grown = _limits(growth, _TIMES, "budget.growth", "4x")
        if not grown:
            raise BudgetError("budget.growth bounds nothing: give " + ", ".join(MEASURES))
        small, large = {**sizes, axis: pair[0]}, {**sizes, axis: pair[1]}
        _fits(spec, large, "budget.growth.sizes")
        work = CaseWork(
            tuple(grown),
            large,
            axis=axis,
            smaller_size=pair[0],
            smaller=generate.draw_at(spec, small, "growth-smaller"),
            advice=advice,
            watch_outs=told,
        )
        made.append(("work growth", generate.draw_at(spec, large, "growth"), work, points))
    return made


def _fits(spec: generate.GenerateSpec, sizes: dict[str, int], where: str) -> None:
    total = generate.elements_at(spec, sizes)
    if total > generate.ELEMENTS_CEILING:
        raise BudgetError(
            f"{where}: the inputs would hold {total:,} values, above "
            f"{generate.ELEMENTS_CEILING:,}; lower the sizes"
        )


def job_work(work: CaseWork | None, pack: Any) -> dict[str, Any] | None:
    """What a job of a budget case asks the child to count (``Job.work``); *pack* packs a
    case's inputs for its job. None for any other case."""
    if work is None:
        return None
    if work.smaller is None:
        return {}
    return {"also": pack(work.smaller)}


def frozen_table(work: CaseWork, reference: dict[str, Any]) -> dict[str, Any]:
    """*work* as a case's ``work`` table of a learner's copy, with the reference's figures
    (:meth:`pytest_lessons.core.efficiency.Efficiency.work_of`) frozen in it."""
    suffix = "x" if work.growth else "x reference"
    table: dict[str, Any] = {lim.measure: f"{lim.times:g}{suffix}" for lim in work.limits}
    table["sizes"] = dict(work.sizes)
    if work.advice:
        table["advice"] = work.advice
    if work.watch_outs:
        table["watch_outs"] = list(work.watch_outs)
    if work.growth:
        table.update(axis=work.axis, smaller_size=work.smaller_size, smaller=work.smaller)
    table["reference"] = reference
    return table


def frozen(raw: Any) -> CaseWork:
    """The :class:`CaseWork` of a learner copy's case ``work`` table (:func:`frozen_table`).
    Raises :class:`BudgetError`."""
    if not isinstance(raw, dict) or not isinstance(raw.get("sizes"), dict):
        raise BudgetError("work must be a table written by --lesson-export")
    growth = bool(raw.get("axis"))
    limits = _limits(
        raw, _TIMES if growth else _REFERENCE, "work", "4x" if growth else "2x reference"
    )
    reference = raw.get("reference")
    if not limits or not isinstance(reference, dict) or not isinstance(reference.get("at"), dict):
        raise BudgetError("work must bound a measure and hold the reference's figures")
    return CaseWork(
        tuple(limits),
        {str(k): int(v) for k, v in raw["sizes"].items()},
        str(raw.get("advice", "")),
        tuple(str(w) for w in raw.get("watch_outs", [])),
        axis=str(raw.get("axis", "")),
        smaller_size=int(raw.get("smaller_size", 0)),
        smaller=raw.get("smaller") if growth else None,
        reference=reference,
    )
