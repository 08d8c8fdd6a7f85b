"""The one door to "is this right" (:mod:`pytest_lessons.core.judge`) and the kinds of expected
value behind it (:mod:`pytest_lessons.core.kinds`), driven directly and through the grader with
the fake runner.

The last tests plug a tiny ``Exact`` kind (strings, compared exactly) into the factory: not a
format feature, the proof that a kind is local work (CONTRIBUTING, "a kind of expected value").
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import export, judge, kinds
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Comparison, Problem, compare
from pytest_lessons.core.detectors import WATCH_OUT, Diagnosis
from pytest_lessons.core.results import Status
from pytest_lessons.core.texts import Context, describe_mismatch
from pytest_lessons.isolation.outcome import RETURNED, Outcome, OutcomeKind

from helpers import grader, lesson

TWO_OUTPUTS = """
[exercise]
title = "Sum and count"
inputs = ["x"]
outputs = ["total", "n"]

[[case]]
name = "a row"
x = [1, 2]
expected = { total = 3, n = 2 }
"""

SHIFTED_IDS = """
[exercise]
title = "Shift every id"
inputs = ["x"]
outputs = [{ kind = "list[int]" }]

[[case]]
x = [2, 3]
expected = [3, 4]
"""


def test_the_door_judges_one_value_as_compare_does_and_several_outputs_by_name(
    tmp_path: Path,
) -> None:
    one = lesson(tmp_path)
    for answer in ([2, 4], [2, 5], None, [[2, 4]], "24"):
        assert judge.judge(one, [2, 4], answer, 1e-4, 1e-4) == compare([2, 4], answer, 1e-4, 1e-4)
    two = lesson(tmp_path, TWO_OUTPUTS)
    assert judge.judge(two, {"total": 3, "n": 2}, [3, 2], 1e-4, 1e-4).passed
    wrong = judge.judge(two, {"total": 3, "n": 2}, [3, 5], 1e-4, 1e-4)
    assert (wrong.problem, wrong.part, wrong.part_index, wrong.parts) == ("values", "n", 1, 2)
    assert wrong.where == "n (value 2 of 2)"
    assert wrong.headline.startswith("In n (value 2 of 2): Check your calculation")
    # A generated case's expected value is the reference's tuple, as the worker encodes it.
    assert judge.judge(two, [3, 2], [3, 2], 1e-4, 1e-4).passed


def test_the_texts_name_the_wrong_output_from_the_comparison_not_its_headline(
    tmp_path: Path,
) -> None:
    two = lesson(tmp_path, TWO_OUTPUTS)
    wrong = judge.judge(two, {"total": 3, "n": 2}, [3, 5], 1e-4, 1e-4)
    ctx = Context("sum", "solve", Path("solution.py"), {"x": [1, 2]}, 1.0, 512.0)
    said = Diagnosis(id="m", headline="Watch out: count once.", rank=WATCH_OUT, kind="watch_out")
    # A headline that no longer starts "In n (value 2 of 2): " changes nothing.
    reworded = replace(wrong, headline="Something else entirely: n is off.")
    for comparison in (wrong, reworded):
        failure = describe_mismatch(comparison, ctx, said)
        assert failure.headline == "Watch out, in n (value 2 of 2): count once."


def test_a_reference_answer_is_usable_when_it_is_a_value_of_its_kind(tmp_path: Path) -> None:
    one, two = lesson(tmp_path), lesson(_folder(tmp_path / "b"), TWO_OUTPUTS)
    assert judge.usable_reference(one, [[1.0, 2.0]]) and judge.usable_reference(one, 3)
    for answer in (None, "text", [[1], [2, 3]], [True], {"$": "tensor", "type": "torch.Tensor"}):
        assert not judge.usable_reference(one, answer)
    assert judge.usable_reference(two, [3, 2])
    assert not judge.usable_reference(two, [3]) and not judge.usable_reference(two, [3, None])
    assert judge.plain_answer(two, [3, 2.5]) == {"total": 3.0, "n": 2.5}
    assert export.plain_answer is judge.plain_answer  # where the lesson check found it
    assert judge.same_answer(one, [1.0, float("nan")], [1.0, float("nan")], 1e-4, 1e-4)
    assert not judge.same_answer(two, [1, 2], [1], 1e-4, 1e-4)
    assert not judge.same_answer(two, [1], [1, 2], 1e-4, 1e-4)
    assert judge.same_answer(two, [1, 2], [1, 2.00001], 1e-4, 1e-4)
    assert not judge.same_answer(two, [1, 2], [1, 3], 1e-4, 1e-4)
    numeric = kinds.NUMERIC
    for value in (3, 2.5, [], [[1, 2], [3, 4]], [[1.0], [2]], {"$": "dense"}):
        assert numeric.accepts(value), value
    for value in (True, [True], "x", None, [[1], [2, 3]], {"$": "tensor"}, {"a": 1}):
        assert not numeric.accepts(value), value


def test_the_problem_codes_and_outcome_kinds_read_and_print_as_their_words() -> None:
    verdict = compare([1, 2], [1, 2, 3], 1e-4, 1e-4)
    assert verdict.problem is Problem.SHAPE and verdict.problem == "shape"
    assert f"returned {verdict.problem}" == "returned shape" and str(Problem.PASSED) == ""
    assert json.dumps({"p": Problem.RAGGED, "k": RETURNED}) == '{"p": "ragged", "k": "returned"}'
    outcome = Outcome("returned", answer=1)
    assert outcome.kind is OutcomeKind.RETURNED and f"{outcome.kind}" == "returned"
    assert Outcome.from_dict(outcome.to_dict()) == outcome
    assert kinds.named("numeric") is kinds.NUMERIC and kinds.kind_for("x") is kinds.NUMERIC
    assert kinds.expected_problem("x") == "must be a number or a nested list of numbers"
    with pytest.raises(KeyError):
        kinds.named("exact")


class Exact:
    """A sketch of a kind: a string, right only when equal."""

    name = "exact"
    offers_evidence = False

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str)

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, str) else "must be a string"

    def compare(self, expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
        if answer == expected:
            return Comparison(True, Problem.PASSED, "", expected_shape=(), kind=self.name)
        at = next(
            (i for i, (a, b) in enumerate(zip(str(answer), expected)) if a != b),
            min(len(str(answer)), len(expected)),
        )
        headline = f"Return the text {expected!r}: yours differs at character {at}."
        return Comparison(False, Problem.VALUES, headline, expected_shape=(), kind=self.name)

    def same(self, a: Any, b: Any, rtol: float, atol: float) -> bool:
        return bool(a == b)

    def usable(self, answer: Any) -> bool:
        return isinstance(answer, str)

    def plain(self, answer: Any) -> Any:
        return answer

    def facts(self, comparison: Comparison) -> list[tuple[str, str]]:
        return [("compared", "exactly, as text")]

    def listing(self, comparison: Comparison) -> tuple[list[tuple[str, ...]], int]:
        return [], 0


@pytest.fixture
def exact(monkeypatch: pytest.MonkeyPatch) -> Exact:
    kind = Exact()
    monkeypatch.setattr(kinds, "KINDS", (kind,))
    return kind


GREET = """
[exercise]
title = "Greet"
inputs = ["who"]

[[case]]
who = "Ada"
expected = "Hello, Ada"
"""

GREET_AND_COUNT = """
[exercise]
title = "Greet and count"
inputs = ["who"]
outputs = ["text", "n"]

[[case]]
who = "Ada"
expected = { text = "Hello, Ada", n = 3 }
"""


def test_a_kind_plugs_in_at_the_factory_alone(tmp_path: Path, exact: Exact) -> None:
    # The lesson loads (the field check asks the kind), the grader judges and words it.
    one = lesson(tmp_path, GREET)
    assert one.cases[0].expected == "Hello, Ada"
    grade, _ = grader({("solution.py", "solve"): lambda who: f"Hello, {who}!"})
    graded = grade.grade(Attempt(one, one.cases[0]))
    assert graded.status == Status.FAILED and graded.diagnosis is None
    assert graded.result.headline == "Return the text 'Hello, Ada': yours differs at character 10."
    assert "compared   exactly, as text" in graded.text and "shape" not in graded.text
    grade, _ = grader({("solution.py", "solve"): lambda who: f"Hello, {who}"})
    assert grade.grade(Attempt(one, one.cases[0])).status == Status.PASSED
    # Several outputs of different kinds: each judged by its own.
    two = lesson(_folder(tmp_path / "b"), GREET_AND_COUNT)
    wrong = judge.judge(two, two.cases[0].expected, ["Hello, Bob", 3], 0, 0)
    assert (wrong.kind, wrong.where) == ("exact", "text (value 1 of 2)")
    assert (
        wrong.headline
        == "In text (value 1 of 2): Return the text 'Hello, Ada': yours differs at character 7."
    )
    assert judge.judge(two, two.cases[0].expected, ["Hello, Ada", 3.00001], 1e-4, 1e-4).passed
    assert judge.usable_reference(two, ["hi", 3]) and judge.plain_answer(two, ["hi", 3]) == {
        "text": "hi",
        "n": 3.0,
    }
    assert judge.same_answer(two, ["hi", 3], ["hi", 3.00001], 1e-4, 1e-4)
    assert not judge.same_answer(two, ["hi", 3], ["ho", 3], 1e-4, 1e-4)
    assert judge.same_answer(one, "hi", "hi", 0, 0) and not judge.same_answer(one, "hi", "ho", 0, 0)
    assert kinds.named("exact") is exact and kinds.expected_problem(3) is None
    assert Outcome(RETURNED, answer="x").kind == "returned"


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def test_same_values_match_answers_whatever_holds_them(tmp_path: Path) -> None:
    # For the watch-outs: a learner's tensor, tuple or floats against a mistake's answer.
    ints = lesson(tmp_path, SHIFTED_IDS, **{"mistakes.py": ""})
    (tmp_path / "v1").mkdir()
    numbers = lesson(tmp_path / "v1", TWO_OUTPUTS)

    def tensor(values: Any, dtype: str = "torch.int64") -> dict[str, Any]:
        return {
            "$": "tensor",
            "type": "torch.Tensor",
            "dtype": dtype,
            "shape": [2],
            "values": values,
        }

    same = judge.same_values
    assert same(ints, [3, 4], tensor([3, 4]), 0.1, 0.1)
    assert same(ints, [3, 4], {"$": "tuple", "type": "tuple", "items": [3.0, 4.0]}, 0.1, 0.1)
    # ints are exact, whatever the tolerance; an int is never a float near it
    assert not same(ints, [3, 4], [3.0, 4.05], 0.1, 0.1)
    assert not same(ints, [3, 4], [3, 5], 0.1, 0.1)
    assert not same(ints, [3, 4], [3, 4, 5], 0.1, 0.1)
    assert not same(ints, [3, 4], tensor(None), 0.1, 0.1)  # a tensor whose values never came
    assert not same(ints, [3, 4], "34", 0.1, 0.1)
    # floats within the tolerance where the kind has one (format 1's numbers), NaN with NaN
    # only, both ends of the edge measured against the learner's value
    assert same(numbers, [3.0, 2], [3.05, 2.0], 0.0, 0.1)
    assert not same(numbers, [3.0, 2], [3.2, 2.0], 0.0, 0.1)
    assert same(numbers, [3.0, 2], [3.0, 2.2], 0.1, 0.0)  # |2 - 2.2| <= 0.1 * 2.2
    assert not same(numbers, [3.0, 2], [3.0, 1.8], 0.1, 0.0)  # 0.2 > 0.1 * 1.8
    nan = float("nan")
    assert same(numbers, [nan, 2], {"$": "tuple", "type": "tuple", "items": [nan, 2.0]}, 0, 0)
    assert same(
        ints,
        [3, 4],
        tensor({"$": "dense", "shape": [2], "int64le": "AwAAAAAAAAAEAAAAAAAAAA=="}),
        0,
        0,
    )
    assert not same(numbers, [nan, 2], [1.0, 2.0], 0.0, 0.0)
    assert not same(numbers, [1.0, 2], [nan, 2.0], 0.0, 0.0)
    assert not same(numbers, [3.0], [3.0, 2.0], 0.0, 0.0)  # not one value per output
    # a declared float kind, or a tensor of a dtype the expected value gives, has a tolerance
    for declared in ("tensor[float32]", "tensor"):
        (tmp_path / declared).mkdir()
        toml = SHIFTED_IDS.replace('"list[int]"', f'"{declared}"').replace("[3, 4]", "[3.0, 4.0]")
        floats = lesson(tmp_path / declared, toml)
        mistake = tensor([3.0, 4.0], "torch.float32")
        assert same(floats, mistake, [3.0, 4.05], 0.0, 0.1), declared
        assert not same(floats, mistake, [3.0, 4.2], 0.0, 0.1), declared
    # mappings by their keys, then each value
    pairs = {"$": "dict", "type": "dict", "items": [["a", 1], ["b", 2.0]]}
    assert kinds.loosely_same(
        pairs, {"$": "dict", "type": "dict", "items": [["b", 2], ["a", 1]]}, 0, 0
    )
    assert not kinds.loosely_same(pairs, {"$": "dict", "type": "dict", "items": [["a", 1]]}, 0, 0)
    assert not kinds.loosely_same(
        pairs, {"$": "dict", "type": "dict", "items": [["a", 1], ["b", 3]]}, 0, 0
    )
    assert not kinds.loosely_same(pairs, [1, 2], 0, 0)
    # Held the same way: a tensor by its dtype, a list or tuple by what it holds; among the
    # mistakes whose values a wrong-typed answer has, this picks the one the learner made.
    eye = [[1, 0], [0, 1]]
    assert kinds.same_type(tensor(eye, "torch.float32"), tensor(eye, "torch.float32"))
    assert not kinds.same_type(tensor(eye, "torch.float32"), tensor(eye, "torch.bool"))
    assert kinds.same_type([[1, 0]], [[0, 1]]) and not kinds.same_type([[1.0]], [[1]])
    assert not kinds.same_type([1, 2], {"$": "tuple", "type": "tuple", "items": [1, 2]})
    assert kinds.same_type([], []) and not kinds.same_type([], "")
