"""The judge: answers, encoded as they cross from learner code, against expected values."""

from __future__ import annotations

import base64
import json
import math
import sys
from typing import Any

import pytest

from pytest_lessons.core import kinds
from pytest_lessons.core.compare import (
    Numbers,
    agrees,
    compare,
    compare_outputs,
    compare_values,
    nested,
    read_numbers,
    size_one_positions,
    spent,
    split_outputs,
)
from pytest_lessons.core.words import fmt_index, fmt_number
from pytest_lessons.isolation.answers import TAG, encode


def judge(answer: Any, expected: Any = ((1, 2.5), (3, 4)), rtol: float = 1e-4, atol: float = 1e-4):
    """Encode *answer* as the child does, send it through JSON, and compare."""
    wire = json.loads(json.dumps(encode(answer)))
    expected = json.loads(json.dumps(expected))
    return compare(expected, wire, rtol, atol)


def test_a_right_answer_passes_within_tolerance() -> None:
    result = judge([[1.00005, 2.5], [3, 4.0]])
    assert result.passed and result.problem == ""


def test_four_decimal_expected_values_accept_the_exact_answer() -> None:
    assert judge([[3.0, 29.866142]], [[3, 29.8661]]).passed


def test_ints_and_floats_compare_as_numbers_and_tuples_as_lists() -> None:
    assert judge(((1.0, 2.5), (3.0, 4)), [[1, 2.5], [3, 4]]).passed


def test_a_number_expected_and_returned() -> None:
    assert judge(5.0, 5).passed
    assert judge([5.0], 5).problem == "shape"


def test_values_outside_tolerance_are_counted_with_the_worst_gap() -> None:
    result = judge([[1, 2.5], [30, 4.1]])
    assert not result.passed and result.problem == "values"
    assert result.mismatched == 2 and result.total == 4
    assert result.worst is not None and result.worst.index == (1, 0)
    assert result.worst.got == 30 and result.worst.expected == 3
    assert [m.index for m in result.rows] == [(1, 0), (1, 1)]
    assert math.isclose(result.allowed, 1e-4 + 1e-4 * 3)
    assert "2 of 4 values differ" in result.headline


def test_the_table_lists_at_most_five_rows() -> None:
    expected = [[0] * 4] * 3
    result = judge([[1] * 4] * 3, expected)
    assert result.mismatched == 12 and len(result.rows) == 5


@pytest.mark.parametrize(
    ("answer", "code", "words"),
    [
        (None, "none", "`return`"),
        ((x for x in [1]), "generator", "returned a generator"),
        ({"a": 1}, "object", "returned a dict"),
        ("1, 2", "object", "returned the string '1, 2'"),
        ([[1, 2.5], [3, "4"]], "text", "holds '4' at [1, 1]"),
        ([[1, 2.5], [3, True]], "bool", "not True or False: your answer holds True at [1, 1]"),
        ([[1, 2.5], [3, None]], "inner_none", "holds None at [1, 1]"),
        ([[1, 2.5], [3]], "ragged", "row [1] has 1 value but row [0] has 2"),
        ([[1, 2.5], 3], "ragged", "[1] is a number but [0] is a row of 2"),
        ([1, 2.5, 3, 4], "shape", "Return shape [2, 2]: your answer has shape [4]"),
        ([[1, 2.5, 3, 4]], "shape", "right number of values, grouped differently"),
        ([[[1, 2.5], [3, 4]]], "shape", "extra dimension of size 1 at position 0 with .squeeze(0)"),
        (
            [[[1, 2.5], [3, 4]], [[1, 2.5], [3, 4]]],
            "shape",
            "has 3 dimensions; the expected one has 2",
        ),
        ([1, 2.5], "shape", "Return shape [2, 2]: your answer has shape [2]"),
        ([[1, float("nan")], [3, 4]], "nonfinite", "holds NaN at [0, 1]"),
        ([[1, float("inf")], [3, float("-inf")]], "nonfinite", "inf at [0, 1] (and 1 more place)"),
    ],
)
def test_each_wrong_kind_of_answer_has_its_own_words(answer: Any, code: str, words: str) -> None:
    result = judge(answer)
    assert not result.passed
    assert result.problem == code
    assert words in result.headline + " ".join(result.notes)


def test_deeper_raggedness_names_the_first_ragged_row() -> None:
    result = judge([[[1, 2], [3, 4]], [[1, 2], [3]]], [[[1, 2], [3, 4]], [[1, 2], [3, 4]]])
    assert result.problem == "ragged"
    assert "row [1, 1] has 1 value but row [1, 0] has 2" in result.headline


def test_a_tensor_answer_asks_for_tolist_and_says_its_values_are_right() -> None:
    torch = pytest.importorskip("torch")
    result = judge(torch.tensor([[1, 2.5], [3, 4]], dtype=torch.float64))
    assert result.problem == "tensor"
    assert ".tolist()" in result.headline
    assert "torch.float64, shape [2, 2]" in result.headline
    assert "values are right" in " ".join(result.notes)


def test_a_list_of_tensors_names_where_the_tensor_is() -> None:
    torch = pytest.importorskip("torch")
    result = judge([torch.tensor([1.0, 2.5]), torch.tensor([3.0, 4.0])])
    assert result.problem == "inner_object"
    assert "holds a torch.Tensor at [0]" in result.headline
    assert ".tolist() on the whole tensor" in result.headline


def test_a_numpy_answer_asks_for_tolist() -> None:
    numpy = pytest.importorskip("numpy")
    result = judge(numpy.array([[1, 2.5], [3, 4]]))
    assert result.problem == "ndarray"
    assert ".tolist()" in result.headline and "values are right" in " ".join(result.notes)
    assert judge(numpy.float64(2.0), 2).problem == "object"


def test_subclasses_of_plain_types_are_not_trusted() -> None:
    class Always(float):
        def __eq__(self, other: object) -> bool:
            return True

    class Rows(list):
        pass

    assert judge(Always(7.0), 5).problem == "object"
    assert judge(Rows([[1, 2.5], [3, 4]])).problem == "object"


def test_large_answers_travel_packed_and_compare_exactly() -> None:
    big = [[float(i * 1000 + j) for j in range(1000)] for i in range(100)]
    wire = encode(big)
    assert wire["$"] == "dense" and wire["shape"] == [100, 1000]
    wrong = [row[:] for row in big]
    wrong[42][7] += 100
    result = compare(big, json.loads(json.dumps(encode(wrong))), 1e-4, 1e-4)
    assert result.mismatched == 1 and result.worst is not None
    assert result.worst.index == (42, 7)


def test_the_judge_compares_in_float64() -> None:
    assert judge([2**60 + 1], [2**60], rtol=0, atol=0).passed
    assert not judge([1 + 2**-40], [1], rtol=0, atol=0).passed


def test_fmt_index() -> None:
    assert fmt_index((0, 1)) == "[0, 1]"


def test_vectorised_and_plain_comparison_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    import random

    from pytest_lessons.core import compare as judge_module

    rng = random.Random(7)
    inf, nan = float("inf"), float("nan")
    want = [rng.uniform(-5, 5) for _ in range(2000)] + [inf, -inf, inf, 0.0, 3.0, 2.0]
    got = [w + rng.choice([0.0, 1e-5, -1e-3, 5e-4, 1.0]) for w in want[:2000]]
    got += [inf, inf, nan, -0.0, 3, nan]
    results = []
    for threshold in (0, 10**9):
        monkeypatch.setattr(judge_module, "VECTOR_FROM", threshold)
        results.append(judge_module.outside(got, want, 1e-4, 1e-4))
    assert results[0] == results[1]
    assert 2001 in results[0] and 2000 not in results[0] and 2003 not in results[0]


def test_an_integer_too_large_for_a_float_is_a_mismatch_not_a_crash() -> None:
    result = judge([[10**400, 2.5], [3, 4]])
    assert result.problem == "nonfinite" and result.mismatched == 1


# --- several outputs ------------------------------------------------------------------------

NAMES = ("out", "k_cache", "v_cache")
SEVERAL = {"out": [1.0, 2.0], "k_cache": [[1.0], [2.0]], "v_cache": 3.0}


def outputs(answer: Any, rtol: float = 1e-4, atol: float = 1e-4):
    wire = json.loads(json.dumps(encode(answer)))
    return compare_outputs(SEVERAL, wire, NAMES, rtol, atol)


def test_several_outputs_pass_when_each_is_right() -> None:
    result = outputs(([1.0, 2.0], [[1.0], [2.0]], 3.0))
    assert result.passed and result.problem == "" and result.headline == ""
    assert result.expected_shape == (2,) and result.total == 2
    assert result.expected is not None and list(result.expected.flat) == [1.0, 2.0]
    assert outputs(([1.0, 2.00001], [[1.0], [2.0]], 3.0)).passed  # within tolerance
    assert not outputs(([1.0, 2.00001], [[1.0], [2.0]], 3.0), 0, 0).passed


@pytest.mark.parametrize(
    ("answer", "name", "index"),
    [
        (([9.0, 2.0], [[1.0], [2.0]], 3.0), "out", 0),
        (([1.0, 2.0], [[1.0], [9.0]], 3.0), "k_cache", 1),
        (([1.0, 2.0], [[1.0], [2.0]], 9.0), "v_cache", 2),
        (([9.0, 9.0], [[9.0], [9.0]], 9.0), "out", 0),
    ],
)
def test_the_first_wrong_output_speaks_for_the_answer(answer: Any, name: str, index: int) -> None:
    result = outputs(answer)
    alone = compare(SEVERAL[name], json.loads(json.dumps(encode(answer[index]))), 1e-4, 1e-4)
    assert not result.passed
    assert result.headline == f"In {name} (value {index + 1} of 3): {alone.headline}"
    assert (result.part, result.part_index) == (name, index)
    assert result.problem == alone.problem and result.mismatched == alone.mismatched


@pytest.mark.parametrize(
    ("answer", "what"),
    [
        (([1.0, 2.0], [[1.0], [2.0]]), "2 values"),
        ([[1.0, 2.0]], "1 value"),
        ([1.0, 2.0, 3.0, 4.0], "4 values"),
        ([[1.0, 2.0], [3.0, 4.0]], "2 values"),
        (None, "None"),
        (3.0, "a float"),
        ({"a": 1}, "a dict"),
        ("text", "a str"),
    ],
)
def test_a_wrong_count_of_outputs_says_how_many_and_in_which_order(answer: Any, what: str) -> None:
    result = outputs(answer)
    assert not result.passed and result.problem == "outputs"
    assert result.headline == (
        "Return 3 values, in this order: out, k_cache, v_cache (for example "
        f"`return out, k_cache, v_cache`). solve returned {what}."
    )
    assert result.expected_shape == (2,) and result.total == 2
    assert result.expected is not None and result.part_index == -1


def test_split_outputs_unpacks_a_packed_answer_of_the_right_count() -> None:
    packed = json.loads(json.dumps(encode([[1.0, 2.0], [3.0, 4.0]])))
    assert packed["$"] == "dense"
    assert split_outputs(packed, 2) == [[1.0, 2.0], [3.0, 4.0]]
    assert split_outputs(packed, 3) is None
    assert split_outputs([1, [2]], 2) == [1, [2]]
    assert split_outputs((1, 2), 2) is None  # answers arrive as lists; a tuple is not one
    assert split_outputs({"$": "object", "type": "x"}, 1) is None


def test_nested_turns_numbers_back_into_lists() -> None:
    assert nested(Numbers((2, 3), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])) == [
        [1.0, 2.0, 3.0],
        [4.0, 5.0, 6.0],
    ]
    assert nested(Numbers((), [7.0])) == 7.0
    assert nested(Numbers((3,), [1.0, 2.0, 3.0])) == [1.0, 2.0, 3.0]
    assert nested(Numbers((2, 1, 2), [1.0, 2.0, 3.0, 4.0])) == [[[1.0, 2.0]], [[3.0, 4.0]]]


NONFINITE_WHY = (
    ", where the expected answer is a finite number. NaN often comes from 0/0 or from a "
    "softmax over a row that is all -inf; inf from dividing by zero or exp() of a large number."
)
BLOCK = [[[1], [2]], [[1], [2]]]


@pytest.mark.parametrize(
    ("answer", "expected", "headline"),
    [
        ([[1, 2.5], [3, "4"]], None, "Return numbers, not text: your answer holds '4' at [1, 1]."),
        (
            ["x" * 50, 1],
            [1, 2],
            "Return numbers, not text: your answer holds 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... "
            "at [0].",
        ),
        (
            ["x" * 38, 1],
            [1, 2],
            f"Return numbers, not text: your answer holds {'x' * 38!r} at [0].",
        ),
        (
            [[1, 2.5], [3, True]],
            None,
            "Return numbers, not True or False: your answer holds True at [1, 1].",
        ),
        ([[1, 2.5], [3, None]], None, "Fill in every value: your answer holds None at [1, 1]."),
        (
            [[1, 2.5], [3, 4, 5]],
            None,
            "Make every row the same length: row [1] has 3 values but row [0] has 2.",
        ),
        (
            [[[1], [2]], [[1], [2, 3]]],
            BLOCK,
            "Make every row the same length: row [1, 1] has 2 values but row [1, 0] has 1.",
        ),
        (
            [[[1], [2]], [[1], [2]], [[1, 0], [2]]],
            [*BLOCK, [[1], [2]]],
            "Make every row the same length: row [2, 1] has 1 value but row [2, 0] has 2.",
        ),
        (
            [[[1], [2]], [[1], 2]],
            BLOCK,
            "Make every row the same length: [1, 1] is a number but [1, 0] is a row of 1.",
        ),
        (
            [3, [1, 2.5]],
            [1, 2],
            "Make every row the same length: [1] is a row of 2 but [0] is a number.",
        ),
        (
            [[1, 2.5], [[3], [4]]],
            None,
            "Make every row the same length: [1] is a block of shape [2, 1] but [0] is a row of 2.",
        ),
        (
            [[1, float("nan")], [3, 4]],
            None,
            f"Find where NaN comes from: your answer holds NaN at [0, 1]{NONFINITE_WHY}",
        ),
        (
            [[1, float("inf")], [3, float("-inf")]],
            None,
            f"Find where inf comes from: your answer holds inf at [0, 1] (and 1 more place){NONFINITE_WHY}",
        ),
        (
            [[1, float("-inf")], [float("nan"), float("inf")]],
            None,
            f"Find where -inf comes from: your answer holds -inf at [0, 1] (and 2 more places){NONFINITE_WHY}",
        ),
        (
            [[1, 2.5], [3, -(10**400)]],
            None,
            f"Find where -inf comes from: your answer holds -inf at [1, 1]{NONFINITE_WHY}",
        ),
        (
            [[1, 2.5], [3, {1}]],
            None,
            "Return only numbers and lists: your answer holds a set at [1, 1].",
        ),
    ],
)
def test_each_wrong_answer_has_its_exact_headline(
    answer: Any, expected: Any, headline: str
) -> None:
    result = judge(answer) if expected is None else judge(answer, expected)
    assert not result.passed and result.headline == headline


def test_a_huge_integer_is_infinite_on_its_side() -> None:
    result = judge([[1, 2.5], [3, 10**400]])
    assert result.problem == "nonfinite" and result.worst is not None
    assert result.worst.got == math.inf
    low = judge([[1, 2.5], [3, -(10**400)]])
    assert low.worst is not None and low.worst.got == -math.inf


def test_an_infinite_expected_value_must_be_met_exactly() -> None:
    assert judge([1.0, float("inf")], [1.0, float("inf")]).passed
    result = judge([1.0, 1e308], [1.0, float("inf")])
    assert not result.passed and result.problem == "values"
    assert fmt_number(float("inf")) == "inf" and fmt_number(float("nan")) == "nan"


def test_shape_notes_count_dimensions_and_values_exactly() -> None:
    other_count = judge([1, 2, 3], [[1, 2], [3, 4]])
    assert other_count.notes == ("Your answer has 1 dimension; the expected one has 2.",)
    same_count = judge([[1, 2, 3, 4]], [[1, 2], [3, 4]])
    assert same_count.notes == (
        "It holds the right number of values, grouped differently: check the sizes you reshape to.",
    )


def test_text_in_an_answer_is_shortened_past_40_characters() -> None:
    forty = "x" * 38  # its repr, quotes included, is 40 characters
    assert f"holds {forty!r} at [0]" in judge([forty, 1], [1, 2]).headline
    longer = "x" * 39
    assert "holds '" + "x" * 36 + "... at [0]" in judge([longer, 1], [1, 2]).headline


def test_rows_that_arrived_packed_one_by_one_are_read_in_order() -> None:
    rows = [encode([1.0, 2.0]), encode([3.0, 4.0])]
    assert all(row["$"] == "dense" for row in rows)
    assert compare([[1, 2], [3, 4]], rows, 1e-4, 1e-4).passed
    wrong = compare([[1, 2], [3, 5]], rows, 1e-4, 1e-4)
    assert wrong.mismatched == 1 and wrong.worst is not None and wrong.worst.index == (1, 1)
    empty = compare([[1]], [[]], 1e-4, 1e-4)
    assert empty.headline == "Return shape [1, 1]: your answer has shape [1, 0]."


def test_rows_of_equal_length_but_different_depth_name_the_first_difference() -> None:
    result = judge([[[1, 2]], [[1]]], [[[1, 2]], [[1, 2]]])
    assert result.headline == (
        "Make every row the same length: row [1, 0] has 1 value but row [0, 0] has 2."
    )
    deeper = judge([[[1, 2], [3, 4]], [[1, 2], [3]]], [[[1, 2], [3, 4]], [[1, 2], [3, 4]]])
    assert deeper.headline == (
        "Make every row the same length: row [1, 1] has 1 value but row [1, 0] has 2."
    )


def test_the_tolerance_rule_is_one_function_on_floats_and_arrays() -> None:
    from pytest_lessons.core.compare import agrees, allowance

    inf, nan = float("inf"), float("nan")
    assert allowance(-2.0, 0.1, 0.5) == pytest.approx(0.7)
    assert agrees(2.69, 2.0, 0.1, 0.5) and not agrees(2.71, 2.0, 0.1, 0.5)
    assert agrees(inf, inf, 1.0, 1.0) and not agrees(1e308, inf, 1.0, 1.0)
    assert not agrees(-inf, inf, 1.0, 1.0) and not agrees(nan, 1.0, 1.0, 1.0)
    numpy = pytest.importorskip("numpy")
    got = numpy.array([2.69, 2.71, inf, 1e308, nan])
    want = numpy.array([2.0, 2.0, inf, inf, 1.0])
    with numpy.errstate(invalid="ignore"):  # inf - inf, as the judge's own call allows
        agreed = agrees(got, want, 0.1, 0.5, numpy).tolist()
    assert agreed == [True, False, True, False, False]


@pytest.mark.torch
def test_a_tensors_values_are_called_right_by_the_cases_own_tolerance() -> None:
    torch = pytest.importorskip("torch")
    close = torch.tensor([1.05, 2.0], dtype=torch.float64)
    loose = judge(close, [1.0, 2.0], rtol=0.0, atol=0.1)
    assert "values are right" in " ".join(loose.notes)
    strict = judge(close, [1.0, 2.0], rtol=0.0, atol=0.01)
    assert "values are right" not in " ".join(strict.notes)
    infinite = judge(torch.tensor([1.0, 5.0]), [1.0, float("inf")])
    assert "values are right" not in " ".join(infinite.notes)


# --- damaged, inner and several-output answers, and the words for sizes of 1 ---------------------


def test_a_damaged_packed_answer_is_refused_in_words() -> None:
    packed = {TAG: "dense", "shape": [3], "float64le": base64.b64encode(b"\0" * 16).decode()}
    verdict = compare([1.0, 2.0, 3.0], packed, 1e-4, 1e-4)
    assert (verdict.passed, verdict.problem) == (False, "object")
    assert verdict.headline == "Return a nested list of numbers: your answer is a damaged answer."


@pytest.mark.parametrize(
    ("inner", "words"),
    [
        ({TAG: "tensor"}, "Return only numbers and lists: your answer holds a tensor at [1]."),
        ((2.0,), "Return only numbers and lists: your answer holds a tuple at [1]."),
        (
            {TAG: "ndarray", "type": "numpy.ndarray"},
            "Return only numbers and lists: your answer holds a numpy.ndarray at [1]. Call "
            ".tolist() on the whole tensor rather than building a list of tensors.",
        ),
    ],
)
def test_an_object_inside_an_answer_is_named_by_its_type(inner: Any, words: str) -> None:
    verdict = compare([1.0, 2.0], [1.0, inner], 1e-4, 1e-4)
    assert (verdict.problem, verdict.headline) == ("inner_object", words)


def test_a_tensors_values_are_kept_as_numbers_for_the_diagnosis() -> None:
    for tag in ("tensor", "ndarray"):
        answer = {TAG: tag, "type": "x", "shape": [2], "values": [1.0, 3.0]}
        verdict = compare([1.0, 2.0], answer, 1e-4, 1e-4)
        assert verdict.got == Numbers((2,), [1.0, 3.0]) and verdict.got_shape == (2,)
    unreadable = {TAG: "tensor", "type": "x", "shape": [2], "values": ["a", 1.0]}
    verdict = compare([1.0, 2.0], unreadable, 1e-4, 1e-4)
    assert verdict.got is None and verdict.got_shape is None
    assert compare([1.0, 2.0], {TAG: "tensor", "shape": [2]}, 1e-4, 1e-4).got is None
    assert compare_values(["a", 1.0], read_numbers([1.0, 2.0]), 1e-4, 1e-4) is False


@pytest.mark.parametrize(
    ("want", "got", "words"),
    [
        (
            [[1.0, 2.0]],
            [[[1.0, 2.0]]],
            "Remove the extra dimension of size 1 at position 0 or 1 with .squeeze(0): your "
            "answer has shape [1, 1, 2], the expected one [1, 2].",
        ),
        (
            [[[1.0, 2.0]]],
            [[[[1.0, 2.0]]]],
            "Remove the extra dimension of size 1 at position 0, 1 or 2 with .squeeze(0): your "
            "answer has shape [1, 1, 1, 2], the expected one [1, 1, 2].",
        ),
        (
            [[[1.0, 2.0]]],
            [[1.0, 2.0]],
            "Add the missing dimension of size 1 at position 0 or 1 with .unsqueeze(0): your "
            "answer has shape [1, 2], the expected one [1, 1, 2].",
        ),
        (
            [[1.0], [2.0]],
            [1.0, 2.0],
            "Add the missing dimension of size 1 at position 1 with .unsqueeze(1): your answer "
            "has shape [2], the expected one [2, 1].",
        ),
    ],
)
def test_a_size_of_one_too_many_or_too_few_names_each_place(
    want: Any, got: Any, words: str
) -> None:
    assert compare(want, got, 1e-4, 1e-4).headline == words


def test_size_one_positions_look_both_ways() -> None:
    assert size_one_positions((1, 2), (2,)) == [0]
    assert size_one_positions((2,), (1, 2)) == [0]
    assert size_one_positions((2, 1), (2, 1)) == []
    assert size_one_positions((3,), (1, 2)) == []


def test_an_answer_of_several_outputs_that_is_not_a_list_names_what_it_is() -> None:
    expected = {"a": 1.0, "b": 2.0}
    for answer, what in [
        ({TAG: "cut", "reason": "too large"}, "a cut"),
        ({}, "a value"),
        ({TAG: "tensor", "type": "torch.Tensor"}, "a torch.Tensor"),
        (3.0, "a float"),
    ]:
        verdict = compare_outputs(expected, answer, ["a", "b"], 1e-4, 1e-4)
        assert verdict.passed is False and verdict.problem == "outputs"
        assert verdict.headline.endswith(f"solve returned {what}."), verdict.headline


def test_an_index_in_a_block_with_an_empty_axis() -> None:
    assert Numbers((3, 0), []).index(2) == (2, 0)


TENSOR = {TAG: "tensor", "type": "torch.Tensor", "dtype": "torch.float32", "shape": [2]}
ARRAY = {TAG: "ndarray", "type": "numpy.ndarray", "dtype": "float64", "shape": [2]}
NONE_WORDS = (
    "Return your answer: solve returned None, which usually means it has no `return` line, or "
    "it returns the result of a method that changes a value in place."
)
TOLIST = "Return plain Python numbers: add .tolist() to your result. solve returned a "


@pytest.mark.parametrize(
    ("expected", "answer", "words", "notes"),
    [
        (2.0, None, NONE_WORDS, ()),
        ([1.0, 2.0], None, NONE_WORDS, ()),
        (
            [1.0, 2.0],
            "hi",
            "Return a nested list of shape [2]: solve returned the string 'hi'.",
            (),
        ),
        ([1.0, 2.0], True, "Return a nested list of shape [2]: solve returned True.", ()),
        (2.0, False, "Return a number: solve returned False.", ()),
        (
            [1.0, 2.0],
            {**TENSOR, "values": [1.0, 2.0]},
            TOLIST + "torch.Tensor (torch.float32, shape [2]), and the grader compares a nested "
            "list of shape [2].",
            ("The tensor's values are right; only the type is not.",),
        ),
        (
            [1.0, 2.0],
            {**TENSOR, "shape": [1, 2], "values": [[1.0, 3.0]]},
            TOLIST + "torch.Tensor (torch.float32, shape [1, 2]), and the grader compares a "
            "nested list of shape [2].",
            ("Its shape is [1, 2]; the expected answer's is [2].",),
        ),
        (
            [1.0, 2.0],
            {**ARRAY, "values": [1.0, 2.0]},
            TOLIST + "numpy.ndarray (float64, shape [2]), and the grader compares a nested list "
            "of shape [2].",
            ("The NumPy array's values are right; only the type is not.",),
        ),
        (
            [1.0, 2.0],
            {**ARRAY, "values": [1.0, 3.0]},
            TOLIST + "numpy.ndarray (float64, shape [2]), and the grader compares a nested list "
            "of shape [2].",
            (),
        ),
        (
            [1.0, 2.0],
            {TAG: "cut", "reason": "over 10 MB"},
            "Return a nested list of shape [2]: your answer was not read because it is over 10 MB.",
            (),
        ),
        (
            [1.0, 2.0],
            {TAG: "cut"},
            "Return a nested list of shape [2]: your answer was not read because it is too large.",
            (),
        ),
        (
            [1.0, 2.0],
            {TAG: "object", "type": "list_iterator"},
            "Build a list, for example with list(...) or [... for ...]: solve returned a "
            "list_iterator, which only produces values when asked, and the grader needs a nested "
            "list of shape [2].",
            (),
        ),
        (
            [1.0, 2.0],
            {TAG: "object", "type": "set"},
            "Return a nested list of shape [2]: solve returned a set.",
            (),
        ),
    ],
)
def test_each_answer_that_is_not_numbers_has_its_whole_headline(
    expected: Any, answer: Any, words: str, notes: tuple[str, ...]
) -> None:
    verdict = compare(expected, answer, 1e-4, 1e-4)
    assert (verdict.passed, verdict.headline, verdict.notes) == (False, words, notes)


def test_large_answers_are_judged_without_numpy_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_lessons.core.compare import VECTOR_FROM, outside

    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy raises ImportError
    want = [1.0] * VECTOR_FROM
    assert outside([*want[1:], 2.0], want, 1e-4, 1e-4) == [VECTOR_FROM - 1]


def test_the_judge_keeps_the_tolerance_rule_for_every_special_value() -> None:
    """outside() spells agrees() out for speed: the two must say the same for each pair."""
    from pytest_lessons.core.compare import agrees, outside

    values = [0.0, -0.0, 1.0, 1.00005, 1.5, -1.0, 3, True, math.inf, -math.inf, math.nan, 1e308]
    for rtol, atol in ((1e-4, 1e-4), (0.0, 0.0), (0.0, 0.5), (0.25, 0.0)):
        for got in values:
            for want in values:
                right = bool(agrees(got, want, rtol, atol))
                assert outside([got], [want], rtol, atol) == ([] if right else [0]), (got, want)


def test_large_answers_are_judged_the_same_both_ways() -> None:
    from pytest_lessons.core.compare import VECTOR_FROM, outside

    size = VECTOR_FROM
    want = [1.0] * size
    got = [1.0] * (size - 1) + [2.0]
    assert outside(got, want, 1e-4, 1e-4) == [size - 1]
    assert outside([1.0] * size, want, 1e-4, 1e-4) == []
    # Exactly at the tolerance is right.
    assert outside([1.5, 2.5], [1.0, 2.0], 0.0, 0.5) == []
    assert outside([1.5, 2.5], [1.0, 2.0], 0.25, 0.0) == [0]


@pytest.mark.parametrize(
    ("got", "want"),
    [
        (1.0, 1.0),
        (1.0009, 1.0),
        (1.0011, 1.0),
        (5.0, math.inf),
        (math.inf, math.inf),
        (-math.inf, math.inf),
        (1e-6, 0.0),
        (1e-4, 0.0),
    ],
)
def test_the_lesson_checks_margin_and_the_judge_keep_one_tolerance_rule(
    got: float, want: float
) -> None:
    # The margin --lesson-check prints is the judge's own rule: at most 1 is right. An
    # infinite expected value is matched only by itself, never by a finite answer.
    assert (spent(got, want, 1e-3, 1e-5) <= 1) == bool(agrees(got, want, 1e-3, 1e-5))
    assert kinds.loosely_same(got, want, 1e-3, 1e-5) == bool(agrees(got, want, 1e-3, 1e-5))
