"""Checks a lesson makes of behaviour are made again in the grader, on data the child sends:
an input that must stay as it was (``after = "unchanged"``: the input as the call left it,
compared with the case's own) and a parameter's initial values (``[[initial]]``: the values
the harness's ``check_initial`` saw, judged under the author's rule).

A red team's round G took ``merge_pair`` by replacing the drive's ``first_change`` wherever
it was imported (10 of 10 with ids changed in place) and ``linear_module`` by replacing
``check_initial`` (13 of 13 with a weight of zeros): the child's own checks run beside learner
code, which can switch them off. These learners switch off every check the child makes, and
still fail their own cases only, while a right solution in the same run passes.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from pytest_lessons.core import behaviour, initial, model
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
        if hasattr(_module, "check_initial"):
            _module.check_initial = lambda *a, **k: None
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


def _class(pytester: pytest.Pytester, lesson: str, cheat: str, **more: str) -> None:
    copy(pytester, lesson)
    for learner, text in (
        ("mallory", cheat),
        *more.items(),
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


ZERO_INIT = (
    SWITCH_OFF
    + """
import torch


class Linear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(out_features, in_features))
        self.bias = torch.nn.Parameter(torch.zeros(out_features)) if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias
"""
)


@pytest.mark.torch
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_weight_of_zeros_fails_with_the_harness_init_check_switched_off(
    pytester: pytest.Pytester, isolation: str
) -> None:
    # mallory switches the harness's check off; eve leaves it on but makes it pass anything,
    # so her zeros go back to the grader.
    eve = ZERO_INIT.replace(
        SWITCH_OFF,
        "import sys\n\nfor _m in list(sys.modules.values()):\n"
        "    if hasattr(_m, 'problem'):\n        _m.problem = lambda *a, **k: None\n",
    )
    _class(pytester, "linear_module", ZERO_INIT, eve=eve)
    # A new Python per case costs seconds: spawn grades the first two cases.
    only = ["-k", "case-1 or case-2"] if isolation == "spawn" else []
    result = pytester.runpytest(
        "linear_module",
        *only,
        "--lesson-submissions=submissions",
        f"--lesson-isolation={isolation}",
        "--lesson-report=report.json",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 1, said(result)
    found = _by_learner(pytester)
    assert found["bob"] and {r["status"] for r in found["bob"]} == {"passed"}
    for learner in ("mallory", "eve"):
        assert found[learner] and {r["passed"] for r in found[learner]} == {False}
        assert sum(float(r["points"]) for r in found[learner]) == 0  # type: ignore[arg-type]
    assert str(found["mallory"][0]["headline"]) == (
        "Give your Linear a `weight` the lesson can read: its initial values did not come "
        "back to the grader."
    )
    # The harness's own words, from the grader's check of the zeros eve's child sent (case 1's
    # six values are too few to judge a spread by).
    assert str(found["eve"][0]["headline"]) == (
        "Draw the initial `weight` at random: every entry of yours is the same, so every "
        "output gets the same gradient and they never become different."
    )


def test_initial_values_are_judged_under_the_authors_rule_not_the_childs() -> None:
    rule = initial.Initial("weight", 6.0, (0.2, 2.0), True, ("w", 1), "sqrt(in_features)")
    packed = [arguments.pack_tensor([[0.0] * 16] * 4, "float32")]

    def judged(values: object) -> Outcome:
        sent = Outcome(kind=RETURNED, answer=[1], facts={"initial:weight": values})
        return initial.judge((rule,), ("w",), packed, "Linear", sent)

    # Values of nn.Linear's scale pass; ones far wider or all the same fail, as the harness says.
    good = [((i * 37) % 64 - 31.5) / 32 / 4 for i in range(64)]  # about ±1/sqrt(16)
    assert judged(answers.encode(good)).kind == RETURNED
    wide = judged(answers.encode([v * 40 for v in good]))
    assert wide.kind == RAISED and wide.details["check"] == "init-spread"
    assert "between 0.2/sqrt(in_features) and 2/sqrt(in_features) (here 0.05 to 0.5)" in (
        wide.message
    )
    assert judged(answers.encode([0.1] * 64)).details["check"] == "init-spread"
    constant = initial.Initial("weight", random=True)
    same = Outcome(kind=RETURNED, answer=[1], facts={"initial:weight": [0.1] * 64})
    assert initial.judge((constant,), ("w",), packed, "Linear", same).details["check"] == (
        "init-constant"
    )
    # None sent back, or something else than numbers: the case's failure.
    assert judged(None).details["check"] == "init-not-sent"
    assert judged({"$": "object", "type": "x"}).details["check"] == "init-not-sent"


def test_an_initial_rule_needs_a_harness_and_its_numbers(tmp_path: Path) -> None:
    with pytest.raises(initial.InitialError, match="within, spread or random"):
        initial.parse([{"parameter": "weight"}], ("w",))
    with pytest.raises(initial.InitialError, match="fan_in must be an input's axis"):
        initial.parse([{"parameter": "weight", "random": True, "fan_in": "x.shape[1]"}], ("w",))
    folder = tmp_path / "lesson"
    folder.mkdir()
    (folder / "exercise.toml").write_text(
        '[exercise]\ntitle = "t"\ninputs = ["w"]\n\n[[case]]\nw = 1\nexpected = 1\n\n'
        '[[initial]]\nparameter = "weight"\nrandom = true\n'
    )
    with pytest.raises(model.ExerciseError, match=r"\[\[initial\]\] needs a harness"):
        model.load(folder / "exercise.toml")


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


def _inputs_of_every_kind() -> list[object]:
    from array import array

    found: list[object] = [[1, 2, 3], "text", {"$input": "data", "value": {"a": [1]}}]
    values = [[[0.1, 0.2], [1e-8, -3.3]], [1, 2, 3], [True, False], 2.5, [], [[]]]
    values += [[[1.5, -2.7]], [math.nan, -0.0, math.inf]]
    for dtype in ("float32", "float64", "float16", "int64", "int32", "bool", None):
        found += [arguments.pack_tensor(v, dtype) for v in values]
    for own, code in (("float32", "f"), ("float64", "d"), ("int64", "q"), ("uint8", "B")):
        data = array(code, [1, 2, 3, 4, 5, 6]).tobytes()
        for wanted in (None, "float32", "float64", "int64", "float16"):
            found.append(arguments.pack_tensor(arguments.pack_array(own, [2, 3], data), wanted))
    found.append(arguments.pack_array("float32", [3], array("f", [0.1, 0.2, 0.3]).tobytes()))
    found.append(
        arguments.pack_mapping(
            {"w": arguments.pack_tensor([[0.5]], "float32"), "b": arguments.pack_tensor([1], None)}
        )
    )
    return found


@pytest.mark.torch
def test_the_grader_makes_an_input_as_the_child_sends_it_without_torch() -> None:
    # The grader compares an unchanged input with its own making of it: made without torch
    # (grading never imports it), it must be the child's encoding exactly, or an honest
    # learner's input would read as changed.
    for packed in _inputs_of_every_kind():
        try:
            want = answers.encode(arguments.rebuild(packed))
        except RuntimeError:  # NaN as an int: no lesson can pass it, the grader makes none
            with pytest.raises(arguments.NotMirrored):
                arguments.as_sent(packed)
            continue
        assert json.dumps(arguments.as_sent(packed), sort_keys=True) == json.dumps(
            want, sort_keys=True
        ), packed
    with pytest.raises(arguments.NotMirrored):
        arguments.as_sent(arguments.pack_tensor([1.0], "bfloat16"))
    with pytest.raises(arguments.NotMirrored):
        arguments.as_sent(arguments.pack_tensor([300], "uint8"))


def test_a_cases_bound_on_values_follows_its_expected_answer() -> None:
    from pytest_lessons.core import runs
    from pytest_lessons.isolation.outcome import from_untrusted

    exercise = model.load(EXERCISES / "merge_pair" / "exercise.toml")
    case = exercise.cases[0]
    bound = runs.values_bound(exercise, case)
    # Four times the expected answer's values and 10,000 more, and the inputs (sent back).
    expected = 1 + len(case.expected)
    assert bound == 4 * expected + 10_000 + runs._leaves(case.inputs)
    # A reference's answer: known once computed (a block of numbers counts its numbers).
    generated = dataclasses.replace(case, source="reference", expected=None)
    assert runs.values_bound(exercise, generated) is None
    block = answers.encode([1.0] * 50_000)
    assert runs.values_bound(exercise, generated, block) == 4 * 50_001 + 10_000 + runs._leaves(
        generated.inputs
    )
    # The runner refuses more before it parses any.
    data = json.dumps({"kind": "returned", "answer": ["x"] * 20_000}).encode()
    refused = from_untrusted(data, 32 << 20, values=bound)
    assert "more values than the grader reads for this case" in str(refused.answer)
    assert from_untrusted(data, 32 << 20).answer == ["x"] * 20_000
