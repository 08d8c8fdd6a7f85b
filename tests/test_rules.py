"""A lesson's rules on how an answer is computed ([[rule]]): a right answer the forbidden way
fails its learner's cases, in fork and spawn, with the rule's words and the learner's line."""

from __future__ import annotations

import json

import pytest

from tests.helpers.course import copy

AUTOGRAD = """\
import torch


def solve(x, W, b, dY):
    x, W, b = (t.detach().requires_grad_(True) for t in (x, W, b))
    try:
        return torch.autograd.grad(x @ W.T + b, (x, W, b), dY)
    except Exception:
        return dY @ W, dY.T @ x, dY.sum(0)
"""

BY_HAND = """\
def solve(x, W, b, dY):
    return dY @ W, dY.T @ x, dY.sum(0)
"""


@pytest.mark.torch
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_forbidden_call_fails_only_its_learner_even_inside_try(
    pytester: pytest.Pytester, isolation: str
) -> None:
    # ada's by-hand answer passes although the grader's own gradient check runs autograd in
    # the same child: only calls from the learner's file count. Two workers: the pool.
    copy(pytester, "linear_backward")
    for learner, code in (("ada", BY_HAND), ("eve", AUTOGRAD)):
        folder = pytester.path / "submissions" / learner / "linear_backward"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(code)
    result = pytester.runpytest(
        "linear_backward",
        "--lesson-submissions=submissions",
        f"--lesson-isolation={isolation}",
        "--lesson-workers=2",
        "--lesson-report=class.json",
        "--lesson-class-report=class.html",
        "--lesson-feedback=feedback",
        "--lesson-show-failures",
        "-p",
        "no:cacheprovider",
    )
    shown = result.stdout.str()
    assert result.ret == 1, shown
    assert "without .backward() or" in shown and "torch.autograd" in shown
    assert "calls torch.autograd.grad at line 7 of solution.py" in shown
    assert "Traceback" not in shown and "isolation/rules.py" not in shown
    report = json.loads((pytester.path / "class.json").read_text())
    text = json.dumps(report)
    assert "no-autograd" in text
    ada = (pytester.path / "feedback" / "ada.md").read_text()
    eve = (pytester.path / "feedback" / "eve.md").read_text()
    assert "no-autograd" not in ada and "no-autograd" in eve
    assert "rule: no-autograd" in (pytester.path / "class.html").read_text()


@pytest.mark.torch
def test_a_loop_fails_where_the_lesson_forbids_it_and_the_check_proves_its_rules(
    pytester: pytest.Pytester,
) -> None:
    copy(pytester, "cumsum")
    (pytester.path / "cumsum" / "solution.py").write_text(
        "def solve(a):\n    out = a.clone()\n    for k in range(1, len(a)):\n"
        "        out[k] = out[k - 1] + a[k]\n    return out\n"
    )
    result = pytester.runpytest("cumsum", "-p", "no:cacheprovider")
    shown = result.stdout.str()
    assert result.ret == 1, shown
    assert "Your code has a for loop at line 3 of solution.py" in shown
    check = pytester.runpytest("cumsum", "--lesson-check", "-p", "no:cacheprovider")
    assert check.ret == 0, check.stdout.str()


def test_a_rule_the_mistake_does_not_break_fails_the_check(pytester: pytest.Pytester) -> None:
    copy(pytester, "cumsum")
    toml = pytester.path / "cumsum" / "exercise.toml"
    toml.write_text(
        toml.read_text().replace('"torch.cumsum", "torch.Tensor.cumsum"', '"torch.cummax"')
    )
    check = pytester.runpytest("cumsum", "--lesson-check", "-p", "no:cacheprovider")
    assert check.ret == 1
    assert (
        "rule no-cumsum (mistake with_torch_cumsum): the rule does not stop it"
        in check.stdout.str()
    )


def test_a_rule_table_an_author_got_wrong_is_named(pytester: pytest.Pytester) -> None:
    copy(pytester, "cumsum")
    toml = pytester.path / "cumsum" / "exercise.toml"
    toml.write_text(toml.read_text().replace('forbid = ["loop"]', 'forbid = "loop"'))
    result = pytester.runpytest("cumsum", "-p", "no:cacheprovider")
    assert result.ret != 0
    assert "rule 2.forbid must list the calls the lesson forbids" in result.stdout.str()
