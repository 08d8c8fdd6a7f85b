"""An input that must stay as it was (``after = "unchanged"``) is judged in the grader: the child
sends the input as the call left it, and the grader compares it with the case's own.

A red team's round G took ``merge_pair`` by replacing the drive's ``first_change`` wherever
it was imported (10 of 10 with ids changed in place) and ``linear_module``'s check the same
way: the child's own check runs beside learner code, which can switch it off. These learners
switch off every check the child makes, and still fail their cases only, while a right
solution in the same run passes.
"""

from __future__ import annotations

import json
import math

import pytest

from pytest_lessons.core import behaviour
from pytest_lessons.isolation import answers, arguments
from pytest_lessons.isolation.outcome import RAISED, RETURNED, Outcome

from helpers import COMBINE_HEADS, said
from helpers.course import copy

EXERCISES = COMBINE_HEADS.parent

#: Every check the child makes of an input, switched off at import: the drive's comparison,
#: the plan's answer, and the harness helpers wherever a harness imported them.
SWITCH_OFF = """\
import sys

for _name, _module in list(sys.modules.items()):
    if _name.startswith(("pytest_lessons", "lesson_harness")):
        if hasattr(_module, "first_change"):
            _module.first_change = lambda *a, **k: None
        if hasattr(_module, "unchanged"):
            _module.unchanged = lambda *a, **k: None
        _plan = getattr(_module, "Plan", None)
        if _plan is not None and hasattr(_plan, "answer"):
            _plan.answer = lambda self, returned, args: ("answer", returned)
"""

MERGE_IN_PLACE = (
    SWITCH_OFF
    + """

def solve(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if ids[i : i + 2] == list(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    ids.append(new_id)  # the caller's list changed, the answer right
    return out
"""
)


def _class(pytester: pytest.Pytester, lesson: str, cheat: str) -> None:
    copy(pytester, lesson)
    for learner, text in (
        ("mallory", cheat),
        ("bob", (EXERCISES / lesson / "reference.py").read_text()),
    ):
        folder = pytester.path / "submissions" / learner / lesson
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(text)


def _by_learner(pytester: pytest.Pytester) -> dict[str, list[dict[str, object]]]:
    report = json.loads((pytester.path / "report.json").read_text())
    found: dict[str, list[dict[str, object]]] = {}
    for entry in report["results"]:
        found.setdefault(str(entry["learner"]), []).append(entry)
    return found


@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_an_input_changed_in_place_fails_with_every_check_in_the_child_switched_off(
    pytester: pytest.Pytester, isolation: str
) -> None:
    _class(pytester, "merge_pair", MERGE_IN_PLACE)
    result = pytester.runpytest(
        "merge_pair",
        "--lesson-submissions=submissions",
        f"--lesson-isolation={isolation}",
        "--lesson-report=report.json",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 1, said(result)
    found = _by_learner(pytester)
    assert [r["status"] for r in found["bob"]] == ["passed"] * 10
    mallory = found["mallory"]
    assert [r["passed"] for r in mallory] == [False] * 10
    assert sum(float(r["points"]) for r in mallory) == 0  # type: ignore[arg-type]
    assert sum(float(r["max_points"]) for r in mallory) == 10  # type: ignore[arg-type]
    assert str(mallory[0]["headline"]).startswith(
        "Leave the input ids as it was: your code changed it in place"
    )
    hidden = [r for r in mallory if r["hidden"]]
    assert hidden and all("changed its input ids in place" in str(r["message"]) for r in hidden)


LINEAR_IN_PLACE = (
    SWITCH_OFF
    + """
import math

import torch


class Linear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        else:
            self.bias = None

    def forward(self, x):
        x.add_(1.0)  # changed in place, and undone only in the answer
        y = (x - 1.0) @ self.weight.T
        return y if self.bias is None else y + self.bias
"""
)


@pytest.mark.torch
def test_a_harness_lessons_input_changed_in_place_fails_with_its_checks_switched_off(
    pytester: pytest.Pytester,
) -> None:
    # The harness's own unchanged() and the child's comparison switched off: the grader's holds.
    _class(pytester, "linear_module", LINEAR_IN_PLACE)
    result = pytester.runpytest(
        "linear_module",
        "--lesson-submissions=submissions",
        "--lesson-report=report.json",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 1, said(result)
    found = _by_learner(pytester)
    assert {r["status"] for r in found["bob"]} == {"passed"}
    mallory = found["mallory"]
    assert {r["passed"] for r in mallory} == {False}
    first = str(mallory[0]["headline"])
    assert first.startswith(
        "Leave the input x as it was: your code changed it in place (at [0, 0]:"
    )


# --- the grader's comparison, on plain data ----------------------------------------------------


def _returned(after: dict[str, object]) -> Outcome:
    return Outcome(kind=RETURNED, answer=[1], after=after)


PART = {"names": ["ids", "n"], "after": {"ids": "unchanged"}}


def test_the_grader_compares_the_input_sent_back_with_the_cases_own() -> None:
    inputs = [[1.0, float("nan"), -0.0], 3]
    given = answers.encode(arguments.rebuild(inputs[0]))
    # Sent back as it was (NaN and -0.0 included): the outcome is the child's.
    assert behaviour.unchanged(PART, inputs, _returned({"ids": given})).kind == RETURNED
    # Another value, even one that equals it as numbers (0.0 for -0.0): the case's failure.
    changed = behaviour.unchanged(PART, inputs, _returned({"ids": [1.0, math.nan, 0.0]}))
    assert changed.kind == RAISED and changed.details["harness"] == "changed"
    assert changed.details["changed"] == {"input": "ids", "at": [2], "was": "-0.0", "now": "0.0"}
    # Not sent back at all (a child whose report was rewritten): a failure too.
    missing = behaviour.unchanged(PART, inputs, _returned({}))
    assert missing.kind == RAISED and missing.details["changed"]["input"] == "ids"


def test_the_grader_says_where_a_list_of_ints_grew() -> None:
    inputs = [[5, 6, 7], 3]
    grown = answers.encode([5, 6, 7, 8])
    changed = behaviour.unchanged(PART, inputs, _returned({"ids": grown}))
    assert changed.details["changed"] == {
        "input": "ids",
        "at": [],
        "was": "3 items",
        "now": "4 items",
    }


def test_a_statistical_case_and_a_lesson_without_the_rule_are_left_to_the_child() -> None:
    drawing = [[1, 2], arguments.pack_generator(7, {"n": 10, "output": 0})]
    part = {"names": ["ids", "g"], "after": {"ids": "unchanged"}}
    outcome = _returned({})
    assert behaviour.unchanged(part, drawing, outcome) is outcome
    assert behaviour.unchanged(None, [[1, 2]], outcome) is outcome


def test_the_lesson_files_declare_the_rule_for_every_input_their_harness_keeps() -> None:
    # A harness's own unchanged() runs in the child: each lesson that calls it declares the
    # rule too, so the grader compares that input itself.
    for harness in sorted(EXERCISES.glob("*/harness.py")):
        if "unchanged(" not in harness.read_text():
            continue
        toml = (harness.parent / "exercise.toml").read_text()
        assert 'after = "unchanged"' in toml, harness.parent.name
