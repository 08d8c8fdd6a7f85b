"""The one door to "is this right": every question the grader, the lesson check and the export ask
about an answer against an expected value goes through here.

- :func:`judge`: an answer against the expected value, one output or several;
- :func:`same_answer`: two answers alike (a mistake's and the learner's, for the watch-outs);
  :func:`same_values`: their values alike whatever holds them (a learner's answer of the
  wrong type);
- :func:`usable_reference`: whether the reference's answer on a generated case can serve as the
  expected value (else the lesson failed on the case);
- :func:`plain_answer`: a reference's answer as ``expected`` is written in ``exercise.toml``
  (the learner's copy freezes generated cases with it).

Each question is handed to the kind of the expected value (:mod:`pytest_lessons.core.kinds`);
this module only splits an exercise's several named outputs and asks each output's kind:
the kind the lesson declares for it (``outputs = [{ kind = "list[int]" }]``), else in a
format-2 lesson the kind its expected value has (:func:`~pytest_lessons.core.kinds.infer`),
else the format-1 factory's (:func:`~pytest_lessons.core.kinds.kind_for`, numbers).
"""

from __future__ import annotations

from typing import Any

from pytest_lessons.core import gradients, model
from pytest_lessons.core.compare import Comparison, compare_outputs, split_outputs
from pytest_lessons.core.kinds import Kind, infer, kind_for, loosely_same, named
from pytest_lessons.isolation.answers import TAG


def output_kind(exercise: model.Exercise, index: int, value: Any) -> Kind:
    """The kind of output *index* (0 for a single value) whose expected value, or a
    reference's or mistake's answer, is *value*."""
    declared = exercise.kinds[index] if index < len(exercise.kinds) else None
    if declared:
        return named(declared)
    if exercise.format >= 2:
        return infer(value)
    return kind_for(value)


def judge(
    exercise: model.Exercise, expected: Any, answer: Any, rtol: float, atol: float
) -> Comparison:
    """Compare *answer* with *expected*: one value, or the exercise's several named outputs
    (*expected* is then their table, or for a generated case the reference's tuple)."""
    if not exercise.outputs:
        return output_kind(exercise, 0, expected).compare(expected, answer, rtol, atol)
    if not isinstance(expected, dict) or TAG in expected:
        parts = split_outputs(expected, len(exercise.outputs)) or []
        expected = dict(zip(exercise.outputs, parts))
    judges = [
        output_kind(exercise, i, expected.get(name)).compare
        for i, name in enumerate(exercise.outputs)
    ]
    return compare_outputs(expected, answer, exercise.outputs, rtol, atol, judges)


def _pairs(exercise: model.Exercise, a: Any, b: Any) -> list[tuple[Any, Any]] | None:
    """The two answers output by output (one pair without declared outputs), or None when
    either does not split into the lesson's outputs."""
    if not exercise.outputs:
        return [(a, b)]
    first, second = (split_outputs(x, len(exercise.outputs)) for x in (a, b))
    if first is None or second is None:
        return None
    return list(zip(first, second))


def same_answer(exercise: model.Exercise, a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two encoded answers are the same within tolerance, NaN matching NaN (a mistake
    that makes NaN is matched by the same NaN). Raises when an answer is not of its kind."""
    pairs = _pairs(exercise, a, b)
    if pairs is None:
        return False
    return all(output_kind(exercise, i, x).same(x, y, rtol, atol) for i, (x, y) in enumerate(pairs))


def same_values(exercise: model.Exercise, a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two encoded answers hold the same values, whatever their types
    (:func:`~pytest_lessons.core.kinds.loosely_same`): a learner's tensor, or floats where
    ints are expected, against a mistake's answer. Floats are matched within the tolerance
    only where the output's kind has one; elsewhere a float must equal the int exactly."""
    pairs = _pairs(exercise, a, b)
    if pairs is None:
        return False
    for i, (x, y) in enumerate(pairs):
        name = output_kind(exercise, i, x).name
        within = "float" in name or name in ("numeric", "tensor")
        if not loosely_same(x, y, rtol if within else 0.0, atol if within else 0.0):
            return False
    return True


def usable_reference(exercise: model.Exercise, answer: Any) -> bool:
    """Whether the reference's encoded *answer* can be a case's expected value: a value of its
    kind, or for several outputs one such value per output."""
    parts = [answer]
    if exercise.outputs:
        parts = split_outputs(answer, len(exercise.outputs)) or []
    spec = exercise.gradients
    if spec is not None and gradients.reference_problem(spec, exercise.outputs, answer):
        return False  # a reference that fails its own gradcheck
    return bool(parts) and all(
        output_kind(exercise, i, part).usable(part) for i, part in enumerate(parts)
    )


def plain_answer(exercise: model.Exercise, answer: Any) -> Any:
    """A reference answer (encoded plain data from the worker) as ``expected`` is written in
    ``exercise.toml``: nested lists of numbers, or a table of them for several outputs."""
    if not exercise.outputs:
        return output_kind(exercise, 0, answer).plain(answer)
    parts = split_outputs(answer, len(exercise.outputs))
    if parts is None:
        raise ValueError("the reference did not return one value per output")
    return {
        name: output_kind(exercise, i, part).plain(part)
        for i, (name, part) in enumerate(zip(exercise.outputs, parts))
    }
