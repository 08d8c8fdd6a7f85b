"""Watch-outs at the edges of issue 24, through the grading core and its fake runner: a
learner's answer of the wrong type (a tensor for a list, floats for ints) still gets the
watch-out its values show, after the type to return; a mistake that raises on some inputs is
proven where it returns, and the lesson check tells the author where it raises. One pytester
run shows a learner what the terminal shows (a course lesson, real torch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import authoring
from pytest_lessons.core.results import Status
from pytest_lessons.isolation.outcome import Frame, Outcome

from helpers import copy, grade_all, grader, lesson, said

SHIFT = """
[exercise]
title = "Shift every id"
inputs = ["x"]
outputs = [{ kind = "list[int]" }]

[[case]]
x = [3, 4]
expected = [4, 5]

[[case]]
x = [5, 6, 7]
expected = [6, 7, 8]

[[case]]
name = "empty"
x = []
expected = []

[[watch_out]]
id = "plus-two"
mistake = "plus_two"
message = "add 1 to each id, not 2."

[[watch_out]]
id = "from-first"
mistake = "from_first"
message = "shift each id by 1, not by the first id."
"""


def tensor(values: list[int]) -> dict[str, Any]:
    shape = [len(values)]
    return {
        "$": "tensor",
        "type": "torch.Tensor",
        "dtype": "torch.int64",
        "shape": shape,
        "values": values,
    }


def plus_two(x: list[int]) -> list[int]:
    return [v + 2 for v in x]


def from_first(x: list[int]) -> Any:
    if not x:  # x[0] on an empty list: the mistake's own IndexError
        where = Frame("mistakes.py", 3, "from_first", "first = x[0]")
        return Outcome(
            "raised", error_type="IndexError", message="list index out of range", frames=(where,)
        )
    return [v + x[0] for v in x]


def test_an_answer_of_the_wrong_type_gets_its_watch_out_then_the_type(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, SHIFT, **{"mistakes.py": ""})
    mistakes = {("mistakes.py", "plus_two"): plus_two, ("mistakes.py", "from_first"): from_first}
    answers = {
        "a tensor": lambda x: tensor(plus_two(x)),
        "floats": lambda x: [float(v) for v in plus_two(x)],
    }
    for what, answer in answers.items():
        grade, _ = grader({("solution.py", "solve"): answer, **mistakes})
        (first, text), (second, _), (empty, _) = grade_all(exercise, grade)
        assert (first.diagnosis, second.diagnosis) == ("plus-two", "plus-two"), what
        got = "a torch.Tensor (int64, shape [2])" if what == "a tensor" else "a float at [0]"
        assert text.startswith(
            f"Watch out: add 1 to each id, not 2.\n  Return a list of ints: got {got}.\n"
        ), text
        # On the empty case the mistake gives the right answer: nothing to match there.
        assert empty.diagnosis is None and empty.status == (
            Status.FAILED if what == "a tensor" else Status.PASSED
        )
    # Values that are no mistake's get no watch-out, whatever their type; nor do floats that
    # only come near a mistake's ints (ints compare exactly).
    for answer in (lambda x: tensor([v + 3 for v in x]), lambda x: [v + 2.001 for v in x]):
        grade, _ = grader({("solution.py", "solve"): answer, **mistakes})
        assert [r.diagnosis for r, _ in grade_all(exercise, grade)] == [None, None, None]


def test_a_mistake_that_raises_is_proven_where_it_returns_and_named_where_it_raises(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, SHIFT, **{"mistakes.py": "", "solution.py": ""})
    code = {
        ("reference.py", "solve"): lambda x: [v + 1 for v in x],
        ("solution.py", "solve"): lambda x: Outcome("raised", error_type="NotImplementedError"),
        ("mistakes.py", "plus_two"): plus_two,
        ("mistakes.py", "from_first"): from_first,
    }
    check = authoring.LessonCheck(grader(code)[0], exercise)
    assert check.problems() == []
    assert check.notes == [
        "double: watch-out from-first (mistake from_first) raises on case 3, as the "
        "code it tells of would: from_first raised IndexError at line 3 of mistakes.py: list "
        "index out of range. Its watch-out is proven on cases 1, 2."
    ]
    # A learner whose code makes the mistake gets its watch-out where it returns.
    grade, _ = grader({**code, ("solution.py", "solve"): from_first})
    results = [r for r, _ in grade_all(exercise, grade)]
    assert [r.diagnosis for r in results[:2]] == ["from-first", "from-first"]
    assert results[2].status == Status.ERROR and "IndexError" in results[2].headline
    # A mistake that raises wherever it is wrong can never be caught: that stays a problem.
    code[("mistakes.py", "from_first")] = lambda x: from_first([])
    (problem,) = authoring.LessonCheck(grader(code)[0], exercise).problems()
    assert problem.startswith(
        "double: watch-out from-first (mistake from_first): on cases 1 to 3 the mistake does "
        "not return an answer: from_first raised IndexError"
    ), problem


NAIVE_ITEM = """
import torch


def solve(logits, targets, ignore_index):
    log_probs = logits - torch.log(torch.exp(logits).sum(dim=-1, keepdim=True))
    keep = targets != ignore_index
    return -log_probs[keep].gather(1, targets[keep].unsqueeze(1)).mean().item()
"""


@pytest.mark.torch
def test_a_learner_returning_a_float_for_a_tensor_is_told_the_mistake_and_the_type(
    pytester: pytest.Pytester,
) -> None:
    # cross_entropy: the naive log-sum-exp, returned with .item(). Where its values are the
    # mistake's (inf at 1000x the scores) the learner reads the watch-out, then the type.
    copy(pytester, "cross_entropy")
    (pytester.path / "cross_entropy" / "solution.py").write_text(NAIVE_ITEM)
    result = pytester.runpytest("cross_entropy")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*case 4 (the same batch at 1000x the scores) __*",
            "Watch out: subtract each row's largest score before exp(): m + log(sum(exp(x - m)))",
            "  equals log(sum(exp(x))), but its exp() never sees more than 0. exp(1000) overflows",
            "  float32 to inf, and the loss becomes inf or nan.",
            "  Return a torch tensor: expected a float32 tensor of shape [], got a float.",
        ],
        consecutive=True,
    )
    # Where the float is right but for its type, the type alone is said.
    result.stdout.fnmatch_lines(
        [
            "*case 1 (worked example: one position, three tokens) __*",
            "Return a torch tensor: expected a float32 tensor of shape [], got a float.",
        ],
        consecutive=True,
    )
    text = said(result)
    assert "watch out: logsumexp-without-max (cases 4, 5)" in text
