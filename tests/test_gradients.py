"""Gradient cases (issue 25, item 3): what a learner and an author see.

The core with a fake runner shows the jobs a gradient lesson makes (the learner's, the
reference's forward) and the words only gradients need; one real run per isolation mode, with
the sandbox on, shows the child drawing the upstream gradient, taking autograd's gradients and
running gradcheck.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import gradients, model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.gradients import EPS
from pytest_lessons.core.results import Status

from helpers import grader, said
from helpers.lessons import ROOT

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


def probed(
    forward: Callable[[float], float], slope: Callable[[float], float], x: list[float]
) -> Any:
    """What the child returns for gradcheck of an elementwise *forward* on *x*, whose
    backward's derivative is *slope*: the forward a step up and down at each element, and
    the Jacobian's rows (diagonal)."""
    n = len(x)
    moved = [
        [[forward(v + (step if j == t else 0.0)) for j, v in enumerate(x)] for t in range(n)]
        for step in (EPS, -EPS)
    ]
    jacobian = [[slope(x[r]) if r == t else 0.0 for t in range(n)] for r in range(n)]
    return tuple_of(tuple_of(moved[0], moved[1], jacobian))


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
    x = [1.0, -2.0, 0.5]
    out, grad = tensor([v * v for v in x]), tensor([0.2, -1.0, 0.5])
    square = probed(lambda v: v * v, lambda v: 2 * v, x)
    right = tuple_of(out, grad, square)
    # The child's gradcheck part is data; the verdict is the grader's. A backward off at x[1]:
    off = probed(lambda v: v * v, lambda v: 2 * v + (1.0 if v == -2.0 else 0.0), x)
    answers = {
        "detached": tuple_of(out, None, square),
        "gradcheck": tuple_of(out, grad, off),
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
        assert runner.jobs[1].gradients["gradcheck"] == {
            "eps": 1e-06,
            "rows": 4096,
            "entries": 65536,
        }
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
    bad = tuple_of(out, grad, probed(lambda v: v * v, lambda v: 3 * v, x))
    grade, _ = grader(
        {("reference.py", "solve"): lambda *a: bad, ("solution.py", "solve"): lambda *a: right}
    )
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.status == Status.INTERNAL
    assert "reference.py on case 1: the reference fails gradcheck: grad of x at [1]." in (
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


# --- gradcheck's verdict is the grader's (attack A20, issue 35) --------------------------------

GELU = ROOT / "exercises" / "gelu_function"

#: A Function whose forward computes in float32 and casts back: values and gradients pass the
#: tolerance, and only gradcheck's finite differences tell.
FLOAT32_GELU = """
import math, torch

class GELU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x.float()
        return (y * (1 + torch.erf(y / math.sqrt(2))) / 2).double()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        y = x.float()
        phi = torch.exp(-y * y / 2) / math.sqrt(2 * math.pi)
        return (g.float() * ((1 + torch.erf(y / math.sqrt(2))) / 2 + y * phi)).double()

def solve(x):
    return GELU.apply(x)
"""

#: What attack A20 added to it: the child's gradcheck, replaced at import.
NO_GRADCHECK = """
import torch.autograd, torch.autograd.gradcheck as _module

def _always(*a, **k):
    return True

torch.autograd.gradcheck = _always
_module.gradcheck = _always
"""


@pytest.mark.torch
def test_a_solution_that_replaces_gradcheck_fails_as_its_honest_mistake_does(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(GELU, pytester.path / "gelu_function")
    solution = pytester.path / "gelu_function" / "solution.py"
    texts = []
    for code in (FLOAT32_GELU, FLOAT32_GELU + NO_GRADCHECK):
        solution.write_text(code)
        result = pytester.runpytest("gelu_function", "-p", "no:cacheprovider")
        result.assert_outcomes(failed=8)
        texts.append(result.stdout.lines[:-1])  # all but the run's time
    assert texts[0] == texts[1]
    assert "0 of 8 points" in said(result)
    assert "Watch out, in gradcheck (value 3 of 3): keep the forward in x's dtype, float64" in said(
        result
    )
    solution.write_text((GELU / "reference.py").read_text() + NO_GRADCHECK)
    pytester.runpytest("gelu_function", "-p", "no:cacheprovider").assert_outcomes(passed=8)


#: Learner code that changes what the child sends for gradcheck (its module is in the child's
#: memory, as every function is): each is that learner's failure, in these words.
FORGERIES = {
    # autograd's own gradients replaced: zeros for every input
    "autograd": (
        "import torch\n"
        "torch.autograd.grad = lambda outputs, inputs, **k: tuple(torch.zeros_like(i) for i in "
        "inputs)\n",
        "In grad of x (value 2 of 3):",
    ),
    # the child's data: a verdict where numbers belong
    "verdict": (
        "import pytest_lessons.isolation.gradients as g\ng.probes = lambda *a, **k: 'passed'\n",
        "the check could not read its forward and backward there",
    ),
    # a Jacobian consistent with nothing: numbers of the right shape, made up
    "made up": (
        "import pytest_lessons.isolation.gradients as g\n"
        "g.probes = lambda f, a, i, c: ((([[0.5] * 3] * 3), ([[0.25] * 3] * 3), "
        "([[7.0] * 3] * 3)),)\n",
        "make your backward's gradient of x agree with your forward",
    ),
    # forward and backward that agree with each other, but not with the graded output
    "consistent": (
        "import pytest_lessons.isolation.gradients as g\n"
        "g.probes = lambda f, a, i, c: ((([[0.0] * 3] * 3), ([[0.0] * 3] * 3), "
        "([[0.0] * 3] * 3)),)\n",
        "its outputs a step of 1e-06 from the inputs disagree with its output at them",
    ),
    # the wrong shapes
    "shapes": (
        "import pytest_lessons.isolation.gradients as g\n"
        "g.probes = lambda f, a, i, c: (([[0.0]], [[0.0]], [[0.0]]),)\n",
        "the check could not read its forward and backward there",
    ),
}


@pytest.mark.torch
def test_learner_code_that_forges_the_childs_gradcheck_data_fails_its_case(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "cube").mkdir()
    (pytester.path / "cube" / "exercise.toml").write_text(REAL)
    (pytester.path / "cube" / "reference.py").write_text(cube())
    for name, (forge, words) in FORGERIES.items():
        # A float32 forward forged to pass, and the right one: neither passes forged.
        for forward in ("(x.float() ** 3).double()", "x ** 3"):
            (pytester.path / "cube" / "solution.py").write_text(cube(forward=forward) + forge)
            result = pytester.runpytest("cube", "-p", "no:cacheprovider")
            result.assert_outcomes(failed=1)
            assert words in said(result), (name, forward)


def test_the_grader_reads_the_childs_data_and_no_data_ever_passes_but_consistent_numbers() -> None:
    spec = gradients.GradientSpec(grads=("x",), gradcheck=True)
    names = ("output", "grad of x", "gradcheck")
    x = [1.0, -2.0, 0.5]
    out, grad = tensor([v**3 for v in x]), tensor([3 * v * v for v in x])

    def verdict(data: Any, output: Any = out, grad: Any = grad) -> Any:
        return gradients.checked(spec, names, tuple_of(output, grad, data))["items"][2]

    right = probed(lambda v: v**3, lambda v: 3 * v * v, x)
    assert verdict(right) == "passed"
    (moved_up, moved_down, jacobian) = right["items"][0]["items"]
    nan = float("nan")
    malformed = [
        None,
        "passed",
        "grad of x at [0]",
        True,
        7,
        [],
        {},
        {"$": "tuple", "items": "passed"},
        tuple_of(),
        tuple_of(right["items"][0], right["items"][0]),  # one input too many
        tuple_of(tuple_of(moved_up, moved_down)),  # no Jacobian
        tuple_of(tuple_of(moved_up, moved_down, jacobian[:2])),  # a row short
        tuple_of(tuple_of(moved_up, moved_down, [row[:2] for row in jacobian])),
        tuple_of(tuple_of(moved_up, moved_down, [[1.0, "a", 0.0]] * 3)),
        tuple_of(tuple_of(moved_up, moved_down, [[None] * 3] * 3)),
        tuple_of(tuple_of(moved_up, moved_down, {"$": "dense", "shape": [3, 3], "float64le": ""})),
        tuple_of(tuple_of(moved_up, moved_down, [[nan] * 3] * 3)),
        tuple_of(tuple_of(moved_up, moved_down, [[float("inf")] * 3] * 3)),
        tuple_of(tuple_of([[nan] * 3] * 3, [[nan] * 3] * 3, jacobian)),
        tuple_of(tuple_of([[1e308] * 3] * 3, [[-1e308] * 3] * 3, jacobian)),
        tuple_of(tuple_of([[0.0] * 3] * 3, [[0.0] * 3] * 3, [[0.0] * 3] * 3)),
    ]
    for data in malformed:
        assert verdict(data) != "passed", data
    # The shapes come from the parts the judge compares with the reference's: a grad or an
    # output that is not a tensor leaves nothing to check.
    for output, gradient in ((out, None), (None, grad), ({"$": "tensor", "shape": [3]}, grad)):
        assert verdict(right, output, gradient) == gradients.UNCHECKED
    # What learner code raised there is shown; a verdict the child writes is not taken.
    assert verdict("raises TypeError: no") == "raises TypeError: no"
    assert verdict("passed") == gradients.UNCHECKED
    # The answer of another shape is left to the judge.
    assert gradients.checked(spec, names, tuple_of(out, grad)) == tuple_of(out, grad)


def test_the_child_and_the_grader_probe_the_same_elements() -> None:
    from pytest_lessons.isolation import gradients as child

    for count in (*range(0, 40), 4095, 4096, 4097, 10_000, 123_457):
        for limit in (1, 2, 7, 16, 4096):
            probed_here = gradients.spread(count, limit)
            assert probed_here == child.spread(count, limit)
            assert len(probed_here) == min(count, limit)
            assert probed_here == sorted(set(probed_here))
            assert all(0 <= i < count for i in probed_here)
