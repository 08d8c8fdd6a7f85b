"""A smaller failing input for a failing generated case: :class:`Shrinker`.

A generated case's inputs can be large (8 heads of width 64). When the learner's code fails on
one, the shrinker looks for a smaller input on which it fails the same way, by shrinking axes
and rounding values (:func:`pytest_lessons.core.generate.smaller`), and shows it once per
exercise. Each try runs the reference and the learner's code through
:class:`~pytest_lessons.core.runs.Runs`.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Any

from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import nested, read_numbers
from pytest_lessons.core.generate import smaller
from pytest_lessons.core.judge import judge
from pytest_lessons.core.kinds import decode
from pytest_lessons.core.runs import Runs
from pytest_lessons.core.words import abbreviate
from pytest_lessons.isolation.answers import BYTES, DICT, SET, TAG, TUPLE, type_name
from pytest_lessons.isolation.outcome import RAISED, RETURNED, Outcome

#: How many smaller inputs the shrinker may try for one failing generated case (each try runs
#: the reference and the learner's code once).
SHRINK_BUDGET = 30


@dataclass
class Shrinker:
    """Finds smaller failing inputs, running code through *runs*."""

    runs: Runs
    shrunk: dict[tuple[str, str], str] = field(default_factory=dict)
    """(exercise file, learner) -> the case under which a smaller failing input is shown."""

    def smaller_failure(self, attempt: Attempt, outcome: Outcome) -> str:
        """For a failing generated case: a smaller input on which the learner's code fails the
        same way, found by shrinking axes and rounding values; shown once per exercise."""
        exercise, case = attempt.exercise, attempt.case
        if attempt.mine in self.shrunk:
            return f"\n  A smaller input that fails is shown under {self.shrunk[attempt.mine]}.\n"
        spec = exercise.generate
        if spec is None or case.sizes is None:
            return ""
        self.shrunk[attempt.mine] = case.label
        current: tuple[dict[str, int], dict[str, Any]] = (case.sizes, case.inputs)
        found: tuple[str, str] | None = None
        budget = SHRINK_BUDGET
        progress = True
        while progress and budget > 0:
            progress = False
            for sizes, inputs in smaller(spec, *current):
                budget -= 1
                failing = self._fails_alike(attempt, inputs, outcome)
                if failing is not None:
                    current, found, progress = (sizes, inputs), failing, True
                    break
                if budget <= 0:
                    break
        if found is None:
            return ""
        sizes, inputs = current
        expected, yours = found
        described = ", ".join(f"{axis} {size}" for axis, size in sizes.items())
        lines = ["", f"  A smaller input that fails the same way ({described}):"]
        width = max(len(name) for name in inputs)
        lines += [f"    {name.ljust(width)} = {abbreviate(inputs[name])}" for name in inputs]
        lines += [f"    expected  {expected}", f"    yours     {yours}"]
        return "\n".join(lines) + "\n"

    def _fails_alike(
        self, attempt: Attempt, inputs: dict[str, Any], original: Outcome
    ) -> tuple[str, str] | None:
        expected = self.runs.reference_answer(attempt.exercise, inputs)
        if expected is None:
            return None
        exercise = attempt.exercise
        job = self.runs.job(
            exercise,
            attempt.solution,
            attempt.entry,
            inputs,
            beneath=attempt.folder or attempt.solution.parent,
        )
        outcome = self.runs.run(exercise, job)
        shown = abbreviate(_rounded(view(expected)))
        if original.kind == RAISED:
            if outcome.kind == RAISED and outcome.error_type == original.error_type:
                return shown, f"raises {outcome.error_type}"
            return None
        if outcome.kind != RETURNED:
            return None
        case = attempt.case
        verdict = judge(attempt.exercise, expected, outcome.answer, case.rtol, case.atol)
        if verdict.passed or verdict.got is None:
            return None
        return shown, abbreviate(_rounded(view(outcome.answer)))


class _Shown(str):
    """Text shown as is inside a rendered value (its repr is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


def view(answer: Any) -> Any:
    """An encoded answer as nested lists, for display (packed parts unpacked). Our wire
    encoding never reaches a person: a tensor shows its values and type, another object its
    type."""
    if isinstance(answer, list):
        return [view(part) for part in answer]
    if isinstance(answer, dict) and (
        answer.get(TAG) in (TUPLE, DICT, SET, BYTES) or "int64le" in answer
    ):
        with contextlib.suppress(Exception):  # format 2's kinds, as the Python values they are
            return decode(answer)
    try:
        return nested(read_numbers(answer))
    except Exception:
        pass
    if isinstance(answer, dict) and TAG in answer:
        kind = type_name(answer)
        if "values" in answer:
            return _Shown(f"{kind}({abbreviate(_rounded(view(answer['values'])))})")
        return _Shown(f"<a {kind}>")
    return answer


def _rounded(value: Any) -> Any:
    """Values rounded to 4 decimals, for showing a small input's answers at a glance."""
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return round(value, 4) if isinstance(value, float) and math.isfinite(value) else value
