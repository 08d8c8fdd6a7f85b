"""Gradient cases (issue 25, item 3): what a learner and an author see.

The core with a fake runner shows the jobs a gradient lesson makes (the learner's, the
reference's forward) and the words only gradients need; one real run per isolation mode, with
the sandbox on, shows the child drawing the upstream gradient, taking autograd's gradients and
running gradcheck.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.results import Status

from helpers import grader, said

BY_HAND = """
[exercise]
title = "Scale backward"
inputs = [
    { name = "x", pass = "tensor", dtype = "float64", grad = true },
    { name = "w", pass = "tensor", dtype = "float64", grad = true },
]

[gradients]
upstream = "dY"
upstream_shape = "x.shape"
forward = "forward"
upstream_seed = 4

[[case]]
x = [1.0, 2.0]
w = [3.0, 4.0]
expected = { from = "reference" }
"""

AUTOGRAD = """
[exercise]
title = "Square"
inputs = [{ name = "x", pass = "tensor", dtype = "float64", grad = true }]
outputs = [{ kind = "tensor[float64]" }]

[gradients]
gradcheck = true

[[case]]
x = [1.0, -2.0, 0.5]
expected = { from = "reference" }
"""


def tensor(values: list[float]) -> dict[str, Any]:
    return {
        "$": "tensor",
        "type": "torch.Tensor",
        "shape": [len(values)],
        "dtype": "torch.float64",
        "values": values,
    }


def tuple_of(*items: Any) -> dict[str, Any]:
    return {"$": "tuple", "type": "tuple", "items": list(items)}


def lesson(tmp_path: Path, toml: str) -> model.Exercise:
    folder = tmp_path / "lesson"
    folder.mkdir(exist_ok=True)
    (folder / "reference.py").write_text("")
    (folder / "exercise.toml").write_text(toml)
    return model.load(folder / "exercise.toml")


def test_by_hand_the_reference_forward_gives_named_gradients_and_a_failure_names_one(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, BY_HAND)
    assert exercise.outputs == ("grad of x", "grad of w")
    assert exercise.kinds == ("tensor[float64]", "tensor[float64]")
    right = tuple_of(tensor([0.3, 0.8]), tensor([0.1, 0.4]))
    wrong_w = tuple_of(tensor([0.3, 0.8]), tensor([0.1, 0.9]))
    grade, runner = grader(
        {
            ("reference.py", "forward"): lambda *a: right,
            ("solution.py", "solve"): lambda *a: wrong_w,
        }
    )
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    reference, learner = runner.jobs
    # The reference's job is autograd of its forward on x and w; the learner's is the backward,
    # given one more argument the child draws (here a placeholder), and nothing of the answer.
    assert (reference.entry, len(reference.inputs)) == ("forward", 2)
    assert reference.gradients == {
        "seed": 4,
        "count": 2,
        "upstream": {"index": 2, "shape": {"like": 0}, "dtype": "float64"},
        "mode": "autograd",
        "grad": [0, 1],
        "observe": "grads",
    }
    assert (learner.entry, learner.inputs[2], learner.gradients["mode"]) == (
        "solve",
        None,
        "by_hand",
    )
    assert "expected" not in json.dumps(learner.request())
    assert graded.status == Status.FAILED
    assert graded.result.headline.startswith("In grad of w (value 2 of 2): ")
    assert "[1]" in graded.text and "0.4" in graded.text and "0.9" in graded.text
    # The learner is shown how the upstream gradient was made: in the inputs and the call.
    assert "dY = <drawn by the grader: torch.randn, seed 4>" in graded.text
    assert graded.result.call.endswith(
        "dY=torch.randn(x.shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64))"
    )
    # A right answer passes.
    grade, _ = grader(
        {("reference.py", "forward"): lambda *a: right, ("solution.py", "solve"): lambda *a: right}
    )
    assert grade.grade(Attempt(exercise, exercise.cases[0])).passed


def test_autograd_words_a_gradient_autograd_never_reached_a_failed_gradcheck_and_its_reference(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, AUTOGRAD)
    assert exercise.outputs == ("output", "grad of x", "gradcheck")
    out, grad = tensor([1.0, 4.0, 0.25]), tensor([0.2, -1.0, 0.5])
    right = tuple_of(out, grad, "passed")
    answers = {
        "detached": tuple_of(out, None, "passed"),
        "gradcheck": tuple_of(out, grad, "grad of x at [1]"),
    }
    for name, answer in answers.items():
        grade, runner = grader(
            {
                ("reference.py", "solve"): lambda *a: right,
                ("solution.py", "solve"): lambda *a, answer=answer: answer,
            }
        )
        graded = grade.grade(Attempt(exercise, exercise.cases[0]))
        assert runner.jobs[0].gradients == runner.jobs[1].gradients  # the same request
        assert runner.jobs[1].gradients["gradcheck"] is True
        assert graded.status == Status.FAILED, name
        if name == "detached":
            assert graded.result.headline.startswith(
                "In grad of x (value 2 of 3): keep x in the autograd graph: after backward, "
                "x.grad is None"
            )
        else:
            assert graded.result.headline.startswith(
                "In gradcheck (value 3 of 3): make your backward's gradient of x agree with your "
                "forward: torch.autograd.gradcheck, in float64, finds it differs from the finite "
                "differences of your forward (most at x[1])."
            )
    # A reference that fails its own gradcheck is the lesson's failure, told to the author.
    bad = tuple_of(out, grad, "grad of x at [0]")
    grade, _ = grader(
        {("reference.py", "solve"): lambda *a: bad, ("solution.py", "solve"): lambda *a: right}
    )
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.status == Status.INTERNAL
    assert "reference.py on case 1: the reference fails gradcheck: grad of x at [0]." in (
        graded.result.lesson_error
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ('dtype = "float64", grad = true', None),
        ('dtype = "float32", grad = true', "is only meaningful in float64"),
        ("grad = true", 'grad = true needs pass = "tensor" and a floating dtype'),
    ],
)
def test_a_lesson_that_asks_for_gradcheck_outside_float64_is_told_why(
    tmp_path: Path, change: str, words: str | None
) -> None:
    toml = AUTOGRAD.replace('dtype = "float64", grad = true', change)
    if words is None:
        assert lesson(tmp_path, toml).gradients is not None
        return
    with pytest.raises(model.ExerciseError, match=words):
        lesson(tmp_path, toml)


REAL = """
[exercise]
title = "Cube as an autograd Function"
inputs = [{ name = "x", pass = "tensor", dtype = "float64", grad = true }]
outputs = [{ kind = "tensor[float64]" }]
rtol = 1e-6
atol = 1e-6
timeout = 60

[gradients]
gradcheck = true
upstream_seed = 1

[[case]]
name = "three points"
x = [[1.0, -2.0, 0.5]]
expected = { from = "reference" }
"""

REAL_BY_HAND = """
[exercise]
title = "Matmul backward"
inputs = [
    { name = "a", pass = "tensor", dtype = "float64", grad = true },
    { name = "b", pass = "tensor", dtype = "float64", grad = true },
]
rtol = 1e-6
atol = 1e-6

[gradients]
upstream = "dY"
upstream_shape = ["a.shape[0]", "b.shape[1]"]
forward = "forward"

[[case]]
name = "square"
a = [[1.0, 2.0], [3.0, 4.0]]
b = [[0.5, -1.0], [2.0, 1.0]]
expected = { from = "reference" }
"""

CUBE = """
import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return {forward}

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return {backward}

def solve(x):
    return Cube.apply(x)
"""


def cube(forward: str = "x ** 3", backward: str = "grad_output * 3 * x ** 2") -> str:
    return CUBE.format(forward=forward, backward=backward)


@pytest.mark.torch
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_real_run_draws_the_upstream_takes_gradients_and_runs_gradcheck(
    pytester: pytest.Pytester, isolation: str
) -> None:
    for name, toml, reference in (
        ("cube", REAL, cube()),
        (
            "matmul",
            REAL_BY_HAND,
            "def forward(a, b):\n    return a @ b\n\n"
            "def solve(a, b, dY):\n    return dY @ b.T, a.T @ dY\n",
        ),
    ):
        (pytester.path / name).mkdir()
        (pytester.path / name / "exercise.toml").write_text(toml)
        (pytester.path / name / "reference.py").write_text(reference)
    # Right only for an upstream gradient of ones; a float32 forward that only gradcheck sees;
    # a transposed gradient of a square matrix, which has the right shape.
    (pytester.path / "cube" / "solution.py").write_text(cube(backward="3 * x ** 2"))
    (pytester.path / "matmul" / "solution.py").write_text(
        "def solve(a, b, dY):\n    return dY @ b.T, dY.T @ a\n"
    )
    run = ["cube", "matmul", f"--lesson-isolation={isolation}", "--lesson-report=r.json"]
    result = pytester.runpytest(*run, "--lesson-report-format=json")
    result.assert_outcomes(failed=2)
    text = said(result)
    assert "In grad of x (value 2 of 3):" in text
    assert "In grad of b (value 2 of 2):" in text and "dY = <drawn by the grader" in text
    report = json.loads((pytester.path / "r.json").read_text())
    assert {r["exercise"]: r["status"] for r in report["results"]} == {
        "cube": "failed",
        "matmul": "failed",
    }
    (pytester.path / "cube" / "solution.py").write_text(cube(forward="(x.float() ** 3).double()"))
    (pytester.path / "matmul" / "solution.py").write_text(
        "def solve(a, b, dY):\n    return dY @ b.T, a.T @ dY\n"
    )
    result = pytester.runpytest(*run)
    result.assert_outcomes(passed=1, failed=1)
    assert (
        "In gradcheck (value 3 of 3): make your backward's gradient of x agree with your forward"
        in said(result)
    )
    (pytester.path / "cube" / "solution.py").write_text(cube())
    pytester.runpytest(*run).assert_outcomes(passed=2)


@pytest.mark.torch
def test_the_upstream_is_the_same_for_every_dtype_and_a_modules_parameters_get_named_gradients() -> (
    None
):
    import torch

    from pytest_lessons.isolation.gradients import draw, named_gradients

    wide, narrow = draw(3, [4, 2]), draw(3, [4, 2], "float32")
    assert narrow.dtype == torch.float32 and torch.equal(wide.float(), narrow)
    assert len(set(wide.flatten().tolist())) == 8  # non-uniform
    layer = torch.nn.Linear(2, 3).double()
    x = torch.ones(4, 2, dtype=torch.float64)
    found = named_gradients(layer(x), dict(layer.named_parameters()), 3)
    upstream = draw(3, [4, 3])
    assert torch.allclose(found["weight"], upstream.T @ x)
    assert torch.allclose(found["bias"], upstream.sum(0))
    assert named_gradients(layer(x).detach(), {"weight": layer.weight}, 3) == {"weight": None}
