"""The one door to "is this right": every question the grader, the lesson check and the export ask
about an answer against an expected value goes through here.

- :func:`judge`: an answer against the expected value, one output or several;
- :func:`same_answer`: two answers alike (a mistake's and the learner's, for the watch-outs);
- :func:`usable_reference`: whether the reference's answer on a generated case can serve as the
  expected value (else the lesson failed on the case);
- :func:`plain_answer`: a reference's answer as ``expected`` is written in ``exercise.toml``
  (the learner's copy freezes generated cases with it).

Each question is handed to the kind of the expected value (:mod:`pytest_lessons.core.kinds`);
this module only splits an exercise's several named outputs and asks each output's kind.
"""

from __future__ import annotations

from typing import Any

from pytest_lessons.core import model
from pytest_lessons.core.compare import Comparison, compare_outputs, split_outputs
from pytest_lessons.core.kinds import kind_for
from pytest_lessons.isolation.outcome import TAG


def judge(
    exercise: model.Exercise, expected: Any, answer: Any, rtol: float, atol: float
) -> Comparison:
    """Compare *answer* with *expected*: one value, or the exercise's several named outputs
    (*expected* is then their table, or for a generated case the reference's tuple)."""
    if not exercise.outputs:
        return kind_for(expected).compare(expected, answer, rtol, atol)
    if not isinstance(expected, dict) or TAG in expected:
        parts = split_outputs(expected, len(exercise.outputs)) or []
        expected = dict(zip(exercise.outputs, parts))
    judges = [kind_for(expected.get(name)).compare for name in exercise.outputs]
    return compare_outputs(expected, answer, exercise.outputs, rtol, atol, judges)


def same_answer(exercise: model.Exercise, a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two encoded answers are the same within tolerance, NaN matching NaN (a mistake
    that makes NaN is matched by the same NaN). Raises when an answer is not of its kind."""
    if exercise.outputs:
        first, second = (split_outputs(x, len(exercise.outputs)) for x in (a, b))
        if first is None or second is None:
            return False
        pairs = list(zip(first, second))
    else:
        pairs = [(a, b)]
    return all(kind_for(x).same(x, y, rtol, atol) for x, y in pairs)


def usable_reference(exercise: model.Exercise, answer: Any) -> bool:
    """Whether the reference's encoded *answer* can be a case's expected value: a value of its
    kind, or for several outputs one such value per output."""
    parts = [answer]
    if exercise.outputs:
        parts = split_outputs(answer, len(exercise.outputs)) or []
    return bool(parts) and all(kind_for(part).usable(part) for part in parts)


def plain_answer(exercise: model.Exercise, answer: Any) -> Any:
    """A reference answer (encoded plain data from the worker) as ``expected`` is written in
    ``exercise.toml``: nested lists of numbers, or a table of them for several outputs."""
    if not exercise.outputs:
        return kind_for(answer).plain(answer)
    parts = split_outputs(answer, len(exercise.outputs))
    if parts is None:
        raise ValueError("the reference did not return one value per output")
    return {name: kind_for(part).plain(part) for name, part in zip(exercise.outputs, parts)}
