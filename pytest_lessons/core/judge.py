"""Whether an answer is right: the grader's one door to :mod:`~pytest_lessons.core.compare`.

The grader (:mod:`~pytest_lessons.core.grader`), the watch-outs, the shrinker and the lesson
check ask here, never ``compare`` itself: an exercise's named outputs are unpacked in one place,
and what "a reference that gives numbers" means is said once.
"""

from __future__ import annotations

from typing import Any

from pytest_lessons.core import diagnose, model
from pytest_lessons.core.compare import (
    Comparison,
    compare,
    compare_outputs,
    read_numbers,
    split_outputs,
)
from pytest_lessons.isolation.outcome import TAG


def judge(
    exercise: model.Exercise, expected: Any, answer: Any, rtol: float, atol: float
) -> Comparison:
    """Compare *answer* with *expected*: one value, or the exercise's several named outputs
    (*expected* is then their table, or for a generated case the reference's tuple)."""
    if not exercise.outputs:
        return compare(expected, answer, rtol, atol)
    if not isinstance(expected, dict) or TAG in expected:
        parts = split_outputs(expected, len(exercise.outputs)) or []
        expected = dict(zip(exercise.outputs, parts))
    return compare_outputs(expected, answer, exercise.outputs, rtol, atol)


def same_answer(exercise: model.Exercise, a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two encoded answers are the same within tolerance, NaN matching NaN (a mistake
    that makes NaN is matched by the same NaN)."""
    if exercise.outputs:
        first, second = (split_outputs(x, len(exercise.outputs)) for x in (a, b))
        if first is None or second is None:
            return False
        pairs = list(zip(first, second))
    else:
        pairs = [(a, b)]
    return all(diagnose.close(read_numbers(x), read_numbers(y), rtol, atol) for x, y in pairs)


def expected_answer(exercise: model.Exercise, answer: Any) -> bool:
    """Whether the reference's *answer* can stand as a generated case's expected value:
    numbers, or for an exercise with named outputs, one block of numbers for each."""
    parts = [answer]
    if exercise.outputs:
        parts = split_outputs(answer, len(exercise.outputs)) or []
    try:
        for part in parts:
            read_numbers(part)
    except Exception:  # the reference returned no numbers
        return False
    return bool(parts)
