"""Generic detectors and watch-out matching, on synthetic answers made for each."""

from __future__ import annotations

import itertools
import math

import pytest

from pytest_lessons.core.compare import Numbers, read_numbers
from pytest_lessons.core.detectors import (
    GENERIC,
    LAYOUT_TRIES,
    WATCH_OUT,
    Diagnosis,
    Evidence,
    Fitted,
    _permute,
    _splits,
    best,
    close,
    detect,
    fill,
    layout,
    match_watch_outs,
    offset,
    rows,
    scaled,
    shuffled,
    triangle,
)
from pytest_lessons.core.model import DETECTORS, WatchOut


def evidence(got: list, expected: list, inputs: dict | None = None) -> Evidence:
    return Evidence(read_numbers(got), read_numbers(expected), 1e-4, 1e-4, inputs or {})


def transpose(block: list[list[float]]) -> list[list[float]]:
    return [list(row) for row in zip(*block)]


EXPECTED = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]


def test_a_right_answer_triggers_no_detector() -> None:
    assert detect(evidence(EXPECTED, EXPECTED)) is None
    square = [[1.0, 2.0], [3.0, 4.0]]
    assert detect(evidence(square, square)) is None


def test_a_transposed_answer_is_named() -> None:
    found = layout(evidence(transpose(EXPECTED), EXPECTED))
    assert found is not None and found.id == "layout"
    assert found.headline.startswith("Swap rows and columns")


def test_a_square_transposed_answer_is_named() -> None:
    square = [[1.0, 2.0], [3.0, 4.0]]
    found = detect(evidence(transpose(square), square))
    assert found is not None and found.headline.startswith("Swap rows and columns")


def test_permuted_axes_are_named_with_their_order() -> None:
    expected = [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]
    got = [[expected[h][t] for h in range(2)] for t in range(3)]  # [3, 2, 2]
    found = layout(evidence(got, expected))
    assert found is not None
    assert "axes in the order (1, 0, 2)" in found.headline


def test_head_major_reshape_is_found_as_a_missing_permute() -> None:
    # Expected [time=2, heads*width=2*3]: token-major. Got: the head-major reading.
    per_head = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    expected = [[v for h in range(2) for v in per_head[h][t]] for t in range(2)]
    flat = [v for h in per_head for row in h for v in row]
    got = [flat[:6], flat[6:]]
    found = layout(evidence(got, expected))
    assert found is not None and found.id == "layout"
    assert "Reorder the axes before you reshape" in found.headline
    assert "[2, 6] seen as [2, 2, 3]" in found.headline


def test_scaling_by_the_square_root_of_a_size_is_named() -> None:
    inputs = {"Q": [[[0.0] * 8] * 6] * 2}
    got = [[v * math.sqrt(8) for v in row] for row in EXPECTED]
    found = scaled(evidence(got, EXPECTED, inputs))
    assert found is not None
    assert "times √8, the square root of the size of Q's last dimension." in found.headline
    divided = [[v / 6 for v in row] for row in EXPECTED]
    found = scaled(evidence(divided, EXPECTED, inputs))
    assert found is not None and "divided by 6, the size of Q's axis 1." in found.headline


def test_a_small_factor_is_a_number_and_a_matching_size_only_a_clue() -> None:
    # Doubling is as likely a missing "* 2" as a scaling by a size that happens to be 2.
    inputs = {"Q": [[[0.0] * 4] * 3] * 2}
    found = scaled(evidence([[v * 2.0 for v in row] for row in EXPECTED], EXPECTED, inputs))
    assert found is not None
    assert found.headline == (
        "Check your scaling: every value is the expected one times 2. A factor is missing, "
        "extra or applied twice. Here 2 is also the square root of the size of Q's last "
        "dimension."
    )
    found = scaled(evidence([[v / 3 for v in row] for row in EXPECTED], EXPECTED, inputs))
    assert found is not None
    assert "the expected one divided by 3. " in found.headline
    assert found.headline.endswith("Here 3 is also the size of Q's axis 1.")


def test_an_unnamed_factor_is_given_as_a_number() -> None:
    found = scaled(evidence([[v * 1.7 for v in row] for row in EXPECTED], EXPECTED))
    assert found is not None and "every value is 1.7 times the expected one" in found.headline


def test_a_mask_pattern_is_named() -> None:
    expected = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
    masked = [[1.0, 0.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 9.0]]
    found = triangle(evidence(masked, expected))
    assert (
        found is not None and "right on and below the diagonal and wrong above it" in found.headline
    )


def test_wrong_rows_are_named() -> None:
    expected = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    found = rows(evidence([[1.0, 2.0], [0.0, 4.0], [5.0, 6.0]], expected))
    assert found is not None and "row 1 is wrong while rows 0, 2 are right" in found.headline


def test_shuffled_values_are_named() -> None:
    found = shuffled(evidence([[6.5, 2.0, 3.0], [4.0, 5.0, 1.0]], EXPECTED))
    assert found is not None and found.id == "shuffled"


@pytest.mark.parametrize(
    "detector", [layout, scaled, triangle, rows, shuffled], ids=lambda d: d.__name__
)
def test_no_detector_claims_a_match_outside_tolerance(detector) -> None:
    noisy = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5 + 0.1]]
    transposed_noisy = transpose([[1.0, 2.0, 3.0], [4.0, 5.0, 6.6]])
    assert detector(evidence(transposed_noisy, EXPECTED)) is None
    assert detector(evidence([[v * 2 + 0.01 for v in r] for r in EXPECTED], EXPECTED)) is None
    everywhere = [[v + 0.1 for v in r] for r in EXPECTED]
    assert detector(evidence(everywhere, EXPECTED)) is None
    found = detector(evidence(noisy, EXPECTED))
    if detector is rows:
        # Only row 1 differs: saying so is this detector's finding, and it must be exact.
        assert found is not None
        assert found.headline.startswith(
            "Look at what differs between rows: row 1 is wrong while row 0 is right."
        )
    else:
        assert found is None


def test_a_watch_out_fires_when_the_answer_is_the_mistakes() -> None:
    wrong = [[0.0, 2.0, 3.0], [4.0, 5.0, 6.5]]
    watch = [WatchOut("first-zero", "the first value is reset.", mistake="zero_first")]
    found = match_watch_outs(evidence(wrong, EXPECTED), watch, {"first-zero": read_numbers(wrong)})
    assert found is not None and found.rank == WATCH_OUT
    assert found.headline == "Watch out: the first value is reset."


def test_a_watch_out_does_not_fire_when_its_mistake_is_right_on_the_case() -> None:
    watch = [WatchOut("noop", "nothing.", mistake="same")]
    got = [[0.0, 2.0, 3.0], [4.0, 5.0, 6.5]]
    assert (
        match_watch_outs(evidence(got, EXPECTED), watch, {"noop": read_numbers(EXPECTED)}) is None
    )


def test_a_watch_out_can_word_a_generic_finding() -> None:
    watch = [WatchOut("swap", "the tokens and heads are swapped.", detector="layout")]
    generic = Diagnosis("layout", "Swap rows and columns")
    found = match_watch_outs(evidence(transpose(EXPECTED), EXPECTED), watch, {}, generic)
    assert found is not None and found.id == "swap"


def test_best_prefers_the_lowest_rank() -> None:
    a, b = Diagnosis("a", "A", rank=20), Diagnosis("b", "B", rank=10)
    assert best([None, a, b]) is b
    assert best([None]) is None


def test_numbers_index() -> None:
    assert Numbers((2, 3), [0.0] * 6).index(4) == (1, 1)
    assert math.isclose(read_numbers(3).flat[0], 3.0)


def test_the_format_names_exactly_the_generic_detectors() -> None:
    assert tuple(d.__name__ for d in GENERIC) == DETECTORS


# --- exact findings, edges and ties -----------------------------------------------------------

TRIANGLE_WORDS = (
    "Check your mask: your answer is right {} and wrong {}, the pattern a triangular (causal) "
    "mask leaves when it is applied where it should not be, or left out where it should."
)


def test_triangle_names_which_side_is_right_in_full() -> None:
    expected = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
    upper = [[1.0, 0.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 9.0]]
    lower = [[1.0, 2.0, 3.0], [0.0, 5.0, 6.0], [0.0, 0.0, 9.0]]
    found = triangle(evidence(upper, expected))
    assert found == Diagnosis(
        "triangle", TRIANGLE_WORDS.format("on and below the diagonal", "above it")
    )
    found = triangle(evidence(lower, expected))
    assert found == Diagnosis(
        "triangle", TRIANGLE_WORDS.format("on and above the diagonal", "below it")
    )
    two = triangle(evidence([[1.0, 0.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]))
    assert two is not None and two.id == "triangle"  # the smallest square that has a triangle


def test_triangle_needs_the_diagonal_right_and_a_square() -> None:
    expected = [[1.0, 2.0], [3.0, 4.0]]
    assert triangle(evidence([[0.0, 0.0], [3.0, 4.0]], expected)) is None  # diagonal wrong
    assert triangle(evidence([[1.0, 2.0], [0.0, 0.0]], expected)) is None
    assert triangle(evidence(expected, expected)) is None  # nothing wrong
    assert triangle(evidence([[1.0, 0.0, 0.0]], [[1.0, 2.0, 3.0]])) is None  # not square
    assert triangle(evidence([[0.0]], [[1.0]])) is None


def test_rows_names_the_rows_exactly() -> None:
    expected = [[1.0], [2.0], [3.0], [4.0]]
    found = rows(evidence([[1.0], [0.0], [0.0], [4.0]], expected))
    assert found == Diagnosis(
        "rows",
        "Look at what differs between rows: rows 1 to 2 are wrong while rows 0, 3 are right. "
        "Something treats those rows (tokens) differently, such as a mask or an index that "
        "stops early.",
    )
    found = rows(evidence([[0.0], [2.0], [0.0], [4.0]], expected))
    assert found is not None and "rows 0, 2 are wrong while rows 1, 3 are right" in found.headline
    assert rows(evidence([[0.0], [0.0], [0.0], [0.0]], expected)) is None  # every row wrong
    assert rows(evidence([[0.0, 1.0]], [[1.0, 1.0]])) is None  # one row only
    assert rows(evidence([1.0, 0.0], [1.0, 2.0])) is None  # no rows and columns


def test_shuffled_values_are_named_in_full_and_only_when_all_are_there() -> None:
    found = shuffled(evidence([[2.0, 1.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]))
    assert found == Diagnosis(
        "shuffled",
        "Put your values in the right places: your answer holds every expected value, in a "
        "different order. Check the order of dimensions before any reshape, view or flatten.",
    )
    assert shuffled(evidence([2.0, 1.0, 5.0], [1.0, 2.0, 3.0])) is None
    assert shuffled(evidence([2.0, 1.0], [1.0, 2.0, 3.0])) is None
    assert shuffled(evidence([1.0], [2.0])) is None
    assert shuffled(evidence([math.inf, 1.0], [1.0, math.inf])) is None
    assert shuffled(evidence([2.00001, 1.0], [1.0, 2.0])) is not None  # within tolerance


def test_layout_needs_two_values_and_the_same_count() -> None:
    assert layout(evidence([[1.0], [2.0]], [[1.0, 2.0]])) is not None  # two values: transposed
    assert layout(evidence([[1.0]], [[1.0]])) is None
    assert layout(evidence([[1.0, 2.0, 3.0]], [[1.0], [2.0]])) is None
    found = layout(evidence(transpose(EXPECTED), EXPECTED))
    assert found == Diagnosis(
        "layout",
        "Swap rows and columns: your answer is the expected one transposed. A .transpose() or "
        ".T is missing or extra.",
    )


def test_layout_names_the_order_of_three_axes() -> None:
    expected = [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]  # shape [1, 3, 2]
    got = [[[1.0, 3.0, 5.0]], [[2.0, 4.0, 6.0]]]  # axes (2, 0, 1): shape [2, 1, 3]
    found = layout(evidence(got, expected))
    assert found is not None and found.headline == (
        "Put the axes in the expected order: your answer has the right values, with its axes "
        "in the order (2, 0, 1) of the expected ones. A .transpose() or .permute() is missing "
        "or extra."
    )


WATCH = WatchOut("halved", "divide by two, not four.", mistake="halve")


def test_a_watch_out_diagnosis_in_full() -> None:
    wrong = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.25]]
    found = match_watch_outs(evidence(wrong, EXPECTED), [WATCH], {"halved": read_numbers(wrong)})
    assert found == Diagnosis(
        "halved", "Watch out: divide by two, not four.", WATCH_OUT, kind="watch_out"
    )


def test_a_watch_out_matches_within_the_cases_tolerance_only() -> None:
    mistake = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.25]]
    near = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.2505]]
    answers = {"halved": read_numbers(mistake)}
    assert match_watch_outs(evidence(near, EXPECTED), [WATCH], answers) is None
    loose = Evidence(read_numbers(near), read_numbers(EXPECTED), 1e-3, 0.0)
    assert match_watch_outs(loose, [WATCH], answers) is not None
    absolute = Evidence(read_numbers(near), read_numbers(EXPECTED), 0.0, 1e-3)
    assert match_watch_outs(absolute, [WATCH], answers) is not None


def test_watch_outs_are_tried_in_order_past_ones_that_tell_nothing() -> None:
    wrong = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.25]]
    failed = WatchOut("failed", "x.", mistake="broken")
    right = WatchOut("right", "y.", mistake="same")
    other = WatchOut("other", "z.", mistake="different")
    answers = {
        "failed": None,
        "right": read_numbers(EXPECTED),
        "other": read_numbers([[9.0, 9.0, 9.0], [9.0, 9.0, 9.0]]),
        "halved": read_numbers(wrong),
    }
    found = match_watch_outs(evidence(wrong, EXPECTED), [failed, right, other, WATCH], answers)
    assert found is not None and found.id == "halved"
    # A mistake that is right on the case never fires, even if the learner's answer is right.
    assert match_watch_outs(evidence(EXPECTED, EXPECTED), [right], answers) is None


def test_a_detector_watch_out_words_the_generic_finding_with_its_details() -> None:
    watch = WatchOut("swap", "time first.", detector="layout")
    generic = Diagnosis("layout", "Swap rows and columns.", details=("one", "two"))
    found = match_watch_outs(evidence(transpose(EXPECTED), EXPECTED), [watch], {}, generic)
    assert found == Diagnosis(
        "swap", "Watch out: time first.", WATCH_OUT, details=("one", "two"), kind="watch_out"
    )
    other = Diagnosis("scaled", "Check your scaling.")
    assert match_watch_outs(evidence(transpose(EXPECTED), EXPECTED), [watch], {}, other) is None
    assert match_watch_outs(evidence(transpose(EXPECTED), EXPECTED), [watch], {}, None) is None
    plain = WatchOut("plain", "nothing to match.")
    assert match_watch_outs(evidence(transpose(EXPECTED), EXPECTED), [plain], {}, generic) is None


def test_layout_is_not_searched_past_its_size_limit() -> None:
    from pytest_lessons.core.detectors import LAYOUT_LIMIT

    for size, found in ((LAYOUT_LIMIT, True), (LAYOUT_LIMIT + 1, False)):
        row = [float(i) for i in range(size)]
        column = Evidence(Numbers((size, 1), row), Numbers((1, size), row), 1e-4, 1e-4, {})
        assert (layout(column) is not None) is found


def test_a_scaling_factor_is_named_after_an_inputs_last_dimension() -> None:
    inputs = {"x": [[1.0, 1.0, 1.0, 1.0, 1.0]], "n": 7}
    found = scaled(evidence([[5.0, 10.0]], [[1.0, 2.0]], inputs))
    assert found is not None and found.headline == (
        "Check your scaling: every value is the expected one times 5, the size of x's last "
        "dimension. A factor is missing, extra or applied twice."
    )


def test_consecutive_wrong_rows_are_named_as_a_range() -> None:
    expected = [[1.0], [2.0], [3.0], [4.0], [5.0]]
    found = rows(evidence([[1.0], [0.0], [0.0], [0.0], [5.0]], expected))
    assert found is not None
    assert "rows 1 to 3 are wrong while rows 0, 4 are right" in found.headline


def test_detectors_look_at_the_last_two_dimensions_of_a_4d_answer() -> None:
    expected = [[[[1.0, 2.0], [3.0, 4.0]]] * 5]  # shape [1, 5, 2, 2]
    masked = [[[[1.0, 0.0], [3.0, 4.0]]] * 5]
    found = triangle(evidence(masked, expected))
    assert found is not None and "right on and below the diagonal" in found.headline


# --- fitted and vetoed watch-outs, ties, and each detector's edges ----------------------------

FIT = WatchOut(
    "wrong-scale",
    "divide by {right}, not by {fitted}.",
    mistake="scaled_by",
    fit=(0.5, 50.0),
    right="sqrt(width)",
)


def test_a_fitted_watch_out_words_the_fitted_value_and_the_right_one() -> None:
    fitted = Fitted(4.9, "4.9 = √24, the model width", "√width = 2", "sqrt(heads*width)")
    assert fill(FIT.message, fitted) == "divide by √width = 2, not by 4.9 = √24, the model width."
    asked: list[WatchOut] = []

    def fitter(watch: WatchOut) -> Fitted:
        asked.append(watch)
        return fitted

    wrong = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.25]]
    found = match_watch_outs(evidence(wrong, EXPECTED), [FIT], {}, fitter=fitter)
    assert found == Diagnosis(
        "wrong-scale",
        "Watch out: divide by √width = 2, not by 4.9 = √24, the model width.",
        WATCH_OUT,
        shows_values=True,
        kind="watch_out",
    )
    assert asked == [FIT]


def test_a_fitted_watch_out_without_a_fit_lets_the_next_one_fire() -> None:
    wrong = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.25]]
    answers = {"halved": read_numbers(wrong), "wrong-scale": read_numbers(wrong)}
    for fitter in (None, lambda watch: None):
        found = match_watch_outs(evidence(wrong, EXPECTED), [FIT, WATCH], answers, fitter=fitter)
        assert found is not None and found.id == "halved"


def test_another_case_can_veto_a_mistakes_match() -> None:
    wrong = [[0.5, 1.0, 1.5], [2.0, 2.5, 3.25]]
    answers = {"halved": read_numbers(wrong)}
    seen: list[tuple[WatchOut, object]] = []

    def veto(watch: WatchOut, fitted: object) -> bool:
        seen.append((watch, fitted))
        return False

    assert match_watch_outs(evidence(wrong, EXPECTED), [WATCH], answers, consistent=veto) is None
    assert seen == [(WATCH, None)]
    found = match_watch_outs(
        evidence(wrong, EXPECTED), [WATCH], answers, consistent=lambda w, f: True
    )
    assert found is not None and found.id == "halved"
    # A learner's answer that is not the mistake's is never asked about.
    seen.clear()
    other = [[9.0, 1.0, 1.5], [2.0, 2.5, 3.25]]
    assert match_watch_outs(evidence(other, EXPECTED), [WATCH], answers, consistent=veto) is None
    assert seen == []


def test_best_keeps_the_first_of_equal_ranks() -> None:
    a, b, c = Diagnosis("a", "A"), Diagnosis("b", "B"), Diagnosis("c", "C", rank=WATCH_OUT)
    assert best([a, b]) is a and best([b, a]) is b
    assert best([a, c, b]) is c
    assert best([]) is None


def test_close_matches_nan_with_nan_only() -> None:
    nan = math.nan
    assert close(read_numbers([1.0, nan]), read_numbers([1.0, nan]), 1e-4, 1e-4)
    assert not close(read_numbers([1.0, nan]), read_numbers([1.0, 2.0]), 1e-4, 1e-4)
    assert not close(read_numbers([1.0, 2.0]), read_numbers([1.0, nan]), 1e-4, 1e-4)
    assert not close(read_numbers([[1.0, 2.0]]), read_numbers([1.0, 2.0]), 1e-4, 1e-4)


def test_detect_tries_the_detectors_most_specific_first() -> None:
    # A square transposed answer is also a shuffle: the layout finding is the one shown.
    square = [[1.0, 2.0], [3.0, 4.0]]
    found = detect(evidence(transpose(square), square))
    assert found is not None and found.id == "layout"
    assert detect(evidence([[9.0, 8.0], [7.0, 6.0]], square)) is None
    found = detect(evidence([[2.0, 4.0], [6.0, 8.0]], square))
    assert found is not None and found.id == "scaled"


def test_a_scaling_by_a_size_of_four_is_a_number_and_above_it_a_name() -> None:
    inputs = {"x": [[0.0] * 16]}  # last dimension 16: √16 = 4
    found = scaled(evidence([[v * 4 for v in r] for r in EXPECTED], EXPECTED, inputs))
    assert found is not None and found.headline == (
        "Check your scaling: every value is the expected one times 4. A factor is missing, "
        "extra or applied twice. Here 4 is also the square root of the size of x's last "
        "dimension."
    )
    found = scaled(evidence([[v * 16 for v in r] for r in EXPECTED], EXPECTED, inputs))
    assert found is not None and "the expected one times 16, the size of x's last dimension." in (
        found.headline
    )


def test_sizes_of_one_and_empty_inputs_name_no_factor() -> None:
    # Axes of size 1 are no clue; a scalar or an empty list has no axes.
    inputs = {"x": [[0.0]], "n": 3, "e": []}
    found = scaled(evidence([[v * 3 for v in r] for r in EXPECTED], EXPECTED, inputs))
    assert found is not None
    assert "every value is 3 times the expected one. A factor" in found.headline


def test_a_factor_is_named_only_when_it_matches_a_size_closely() -> None:
    inputs = {"x": [[0.0] * 7]}
    near = scaled(evidence([[v * 7.005 for v in r] for r in EXPECTED], EXPECTED, inputs))
    assert near is not None and "times 7, the size of x's last dimension" in near.headline
    off = scaled(evidence([[v * 7.05 for v in r] for r in EXPECTED], EXPECTED, inputs))
    assert off is not None and "every value is 7.05 times the expected one" in off.headline


def test_scaled_ignores_values_too_small_to_tell_a_factor() -> None:
    # The first value is within ten times atol of 0: the factor comes from the second.
    expected = [0.0005, 2.0, 3.0]
    found = scaled(evidence([0.0005, 6.0, 9.0], expected))
    assert found is None  # 0.0005 * 3 would have been 0.0015: not the same factor
    found = scaled(evidence([0.0015, 6.0, 9.0], expected))
    assert found is not None and "every value is 3 times the expected one" in found.headline


def test_scaled_needs_a_real_factor() -> None:
    assert scaled(evidence([0.0, 0.0], [1.0, 2.0])) is None  # all zero: nothing scaled
    assert scaled(evidence([1.0000001, 2.0000002], [1.0, 2.0])) is None  # the same
    assert scaled(evidence([math.inf, math.inf], [1.0, 2.0])) is None
    assert scaled(evidence([0.0, 0.0], [0.0, 0.0])) is None  # no value to divide by
    assert scaled(evidence([[2.0, 4.0]], [2.0, 4.0])) is None  # another shape
    found = scaled(evidence([-1.0, -2.0], [1.0, 2.0]))
    assert found is not None and "every value is -1 times the expected one" in found.headline


def test_rows_and_triangles_need_two_rows() -> None:
    one_row = evidence([[1.0, 0.0]], [[1.0, 2.0]])
    assert rows(one_row) is None and triangle(one_row) is None
    assert rows(evidence([[0.0], [2.0]], [[1.0], [2.0]])) == Diagnosis(
        "rows",
        "Look at what differs between rows: row 0 is wrong while row 1 is right. Something "
        "treats those rows (tokens) differently, such as a mask or an index that stops early.",
    )


def test_shuffled_leaves_an_extra_or_missing_dimension_to_the_comparison() -> None:
    # [2, 1] against [2]: the same values, but the comparison names the extra dimension.
    assert shuffled(evidence([[2.0], [1.0]], [1.0, 2.0])) is None
    found = shuffled(evidence([[2.0, 1.0, 3.0]], [[1.0], [2.0], [3.0]]))
    assert found is not None and found.id == "shuffled"


def test_layout_skips_orders_that_leave_the_values_where_they_were() -> None:
    # Every value the same: any order reads the same, which is no layout mistake.
    same = [[1.0, 1.0], [1.0, 1.0]]
    assert layout(evidence([[1.0, 1.0], [1.0, 2.0]], same)) is None


def test_the_diagnosis_words_for_permuted_axes_show_no_values() -> None:
    expected = [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]
    got = [[[1.0, 3.0, 5.0]], [[2.0, 4.0, 6.0]]]
    found = layout(evidence(got, expected))
    assert found is not None and not found.shows_values and found.kind == "detector"
    assert found.rank == 20 and found.details == ()


def reorder_words(shape: str, view: str, axes: str) -> str:
    return (
        "Reorder the axes before you reshape: your values are right but in the wrong places. "
        f"They are what you get by reading the expected {shape} seen as {view} in axis order "
        f"{axes}: a .transpose() or .permute() is missing or extra before a reshape."
    )


def test_a_row_read_as_a_transposed_block_is_a_reorder_not_a_transpose() -> None:
    # [1..6] seen as [2, 3] and read column by column.
    found = layout(evidence([1.0, 4.0, 2.0, 5.0, 3.0, 6.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert found == Diagnosis("layout", reorder_words("[6]", "[2, 3]", "(1, 0)"))


def test_a_reorder_in_full() -> None:
    per_head = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    expected = [[v for h in range(2) for v in per_head[h][t]] for t in range(2)]
    flat = [v for h in per_head for row in h for v in row]
    found = layout(evidence([flat[:6], flat[6:]], expected))
    assert found == Diagnosis("layout", reorder_words("[2, 6]", "[2, 2, 3]", "(1, 0, 2)"))


def test_permuted_axes_in_full() -> None:
    expected = [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]
    got = [[[1.0, 3.0, 5.0]], [[2.0, 4.0, 6.0]]]
    assert layout(evidence(got, expected)) == Diagnosis(
        "layout",
        "Put the axes in the expected order: your answer has the right values, with its axes "
        "in the order (2, 0, 1) of the expected ones. A .transpose() or .permute() is missing "
        "or extra.",
        shows_values=False,
    )


def swapped_within(shape: tuple[int, ...], splits: int) -> tuple[list[float], list[float]]:
    """Values 0, 1, ... of *shape* (each size 4 or 2), and the same with the two halves of
    each of the first *splits* axes of size 4 swapped: a reading of a view with those axes
    split in two."""
    flat = [float(i) for i in range(math.prod(shape))]
    view: list[int] = []
    axes: list[int] = []
    for number, size in enumerate(shape):
        if number < splits:
            axes += [len(view) + 1, len(view)]
            view += [2, 2]
        else:
            axes.append(len(view))
            view.append(size)
    return flat, _permute(flat, tuple(view), tuple(axes))


def test_views_of_up_to_five_axes_are_searched() -> None:
    flat, got = swapped_within((4, 4, 2), 2)  # needs the view [2, 2, 2, 2, 2]
    found = layout(Evidence(Numbers((4, 4, 2), got), Numbers((4, 4, 2), flat), 1e-4, 1e-4))
    assert found is not None and "seen as [2, 2, 2, 2, 2] in axis order (1, 0, 3, 2, 4)" in (
        found.headline
    )
    flat, got = swapped_within((4, 4, 4), 3)  # would need six axes
    assert layout(Evidence(Numbers((4, 4, 4), got), Numbers((4, 4, 4), flat), 1e-4, 1e-4)) is None


def tries_until(shape: tuple[int, ...], view: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """The search's count of orders tried when it reaches *axes* of *view*, the first that
    reads the expected values that way."""
    flat = list(range(math.prod(shape)))
    wanted = _permute(flat, view, axes)
    tries = 0
    for each, _ in _splits(shape):
        for order in itertools.permutations(range(len(each))):
            if order == tuple(range(len(each))):
                continue
            tries += 1
            if _permute(flat, each, order) == wanted:
                return tries
    raise AssertionError("never tried")


def test_layout_stops_after_its_budget_of_orders() -> None:
    shape, view = (12, 12, 1), (6, 2, 6, 2, 1)
    last, beyond = (1, 0, 3, 2, 4), (1, 2, 0, 3, 4)
    assert tries_until(shape, view, last) == LAYOUT_TRIES
    assert tries_until(shape, view, beyond) == LAYOUT_TRIES + 4
    flat = [float(i) for i in range(144)]
    want = Numbers(shape, flat)
    at_limit = Evidence(Numbers(shape, _permute(flat, view, last)), want, 1e-4, 1e-4)
    found = layout(at_limit)
    assert found is not None and "(1, 0, 3, 2, 4)" in found.headline
    past = Evidence(Numbers(shape, _permute(flat, view, beyond)), want, 1e-4, 1e-4)
    assert layout(past) is None


def test_a_size_of_two_names_its_square_root() -> None:
    inputs = {"x": [[0.0, 0.0]]}
    found = scaled(evidence([[v * math.sqrt(2) for v in r] for r in EXPECTED], EXPECTED, inputs))
    assert found is not None and found.headline == (
        "Check your scaling: every value is the expected one times √2, the square root of the "
        "size of x's last dimension. A factor is missing, extra or applied twice."
    )


def test_every_inputs_last_dimension_names_a_factor() -> None:
    inputs = {"a": [[0.0] * 7], "b": [[0.0] * 5]}
    for factor, name in ((7, "a"), (5, "b")):
        got = [[v * factor for v in r] for r in EXPECTED]
        found = scaled(evidence(got, EXPECTED, inputs))
        assert found is not None and found.headline == (
            f"Check your scaling: every value is the expected one times {factor}, the size of "
            f"{name}'s last dimension. A factor is missing, extra or applied twice."
        )


def test_an_unnamed_factor_in_full() -> None:
    found = scaled(evidence([[v * 1.7 for v in row] for row in EXPECTED], EXPECTED))
    assert found == Diagnosis(
        "scaled",
        "Check your scaling: every value is 1.7 times the expected one. A factor is missing, "
        "extra or applied twice.",
    )


def test_the_factor_is_read_from_values_above_ten_times_atol() -> None:
    # atol 0.01: values up to 0.1 are too close to 0 to read a factor from; they are only
    # checked against the factor the others give. 0.105 is read.
    for small in (0.05, 0.1):
        got = read_numbers([3 * small + 0.005, 6.0, 9.0])
        found = scaled(Evidence(got, read_numbers([small, 2.0, 3.0]), 1e-4, 0.01))
        assert found is not None and "every value is 3 times the expected one" in found.headline
    above = Evidence(read_numbers([0.32, 6.0, 9.0]), read_numbers([0.105, 2.0, 3.0]), 1e-4, 0.01)
    assert scaled(above) is None  # 0.32 / 0.105 is the factor, which 6 / 2 is not


def test_axes_of_equal_sizes_swapped_are_read_in_the_answers_own_shape() -> None:
    expected = [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]
    got = [[expected[j][i] for j in range(2)] for i in range(2)]  # axes 0 and 1 swapped
    found = layout(evidence(got, expected))
    assert found == Diagnosis("layout", reorder_words("[2, 2, 2]", "[2, 2, 2]", "(1, 0, 2)"))


def test_an_integer_answer_off_by_one_is_an_offset_not_a_ratio() -> None:
    # Issue 22: a count of 4 that should be 3 was "1.333 times the expected one".
    found = detect(evidence([4], [3]))
    assert found is not None and found.id == "offset"
    assert found.headline == (
        "Look for an off-by-one: each value is 1 more than expected. A count, an index or a "
        "range's bound is likely one too large."
    )
    below = detect(evidence([[0, 1], [2, 5]], [[1, 2], [3, 6]]))
    assert below is not None and "each value is 1 less than expected" in below.headline
    by_three = detect(evidence([5, 6, 10], [2, 3, 7]))
    assert by_three is not None and by_three.headline == (
        "Look for a constant added or left out: each value is 3 more than expected."
    )
    # A ratio of whole numbers that is no whole factor is no scaling; a whole factor still is.
    assert scaled(evidence([4, 8], [3, 6])) is None
    doubled = detect(evidence([2, 4, 6], [1, 2, 3]))
    assert doubled is not None and doubled.id == "scaled"
    # Answers that are not whole numbers keep their ratio.
    assert offset(evidence([1.5, 2.5], [0.5, 1.5])) is None
