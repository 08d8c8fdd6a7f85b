"""The expressions a fitted watch-out names values with (fit.py): what they are worth for a
case's sizes, and how the learner reads them."""

from __future__ import annotations

import math

import pytest

from pytest_lessons.core import fit

SIZES = {"heads": 2, "width": 4, "time": 3}


@pytest.mark.parametrize(
    ("expression", "value", "symbolic", "numeric"),
    [
        ("width", 4.0, "width", "4"),
        ("1", 1.0, "1", "1"),
        ("heads*width", 8.0, "heads·width", "8"),
        ("sqrt(width)", 2.0, "√width", "√4"),
        ("sqrt(heads*width)", math.sqrt(8), "√(heads·width)", "√8"),
        ("2*width", 8.0, "2·width", "8"),
        # Division: a scale multiplied in where it should divide is a divisor of 1/√width.
        ("1/sqrt(width)", 0.5, "1/√width", "1/√4"),
        ("1 / sqrt( heads * width )", 1 / math.sqrt(8), "1/√(heads·width)", "1/√8"),
        ("width/2", 2.0, "width/2", "2"),
        ("heads*width/2", 4.0, "heads·width/2", "4"),
        ("width/3", 4 / 3, "width/3", "4/3"),
        ("heads/width", 0.5, "heads/width", "2/4"),
        ("sqrt(width)/2", 1.0, "√width/2", "√4/2"),
        ("2*sqrt(width)", 4.0, "2·√width", "2·√4"),
        ("width/heads/2", 1.0, "width/heads/2", "1"),
        ("1/(heads*sqrt(width))", 0.25, "1/(heads·√width)", "1/(2·√4)"),
        ("(heads*width)/sqrt(width)", 4.0, "(heads·width)/√width", "8/√4"),
        ("sqrt(1/width)", 0.5, "√(1/width)", "√0.25"),
        ("2.5*time", 7.5, "2.5·time", "7.5"),
    ],
)
def test_an_expression_is_worth_its_value_and_reads_as_written(
    expression: str, value: float, symbolic: str, numeric: str
) -> None:
    assert fit.evaluate(expression, SIZES) == pytest.approx(value)
    assert fit.symbolic(expression) == symbolic
    assert fit.numeric(expression, SIZES) == numeric


def test_division_and_multiplication_go_from_the_left() -> None:
    # width/heads*2 is (width/heads)*2, as in Python, not width/(heads*2).
    assert fit.evaluate("width/heads*2", SIZES) == 4.0
    assert fit.evaluate("width/(heads*2)", SIZES) == 1.0
    assert fit.symbolic("width/(heads*2)") == "width/(heads·2)"


def test_an_unknown_size_has_no_value() -> None:
    assert fit.evaluate("depth", SIZES) is None
    assert fit.evaluate("1/sqrt(depth)", SIZES) is None
    assert fit.evaluate("width/depth", SIZES) is None
    assert fit.numeric("sqrt(depth)", SIZES) == "√nan"
    assert fit.numeric("depth", SIZES) == "nan"
    # A size of 0 divides nothing: no value rather than a ZeroDivisionError.
    assert fit.evaluate("1/width", {"width": 0}) is None
    assert fit.numeric("1/width", {"width": 0}) == "nan"


def test_names_are_the_axes_used_each_once_in_order() -> None:
    assert fit.names("1") == []
    assert fit.names("heads*width/2") == ["heads", "width"]
    assert fit.names("(heads*width)/sqrt(width*time)") == ["heads", "width", "time"]


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("sqrt(cols", "the ( at position 5 is never closed"),
        ("(width", "the ( at position 1 is never closed"),
        ("width)", "')' at position 6 is out of place"),
        ("", "it ends where a name or number is missing"),
        ("width*", "it ends where a name or number is missing"),
        ("*width", "'*' at position 1 where a name or number is missing"),
        ("width//2", "'/' at position 7 where a name or number is missing"),
        ("sqrt()", "')' at position 6 where a name or number is missing"),
        ("sqrt width", "sqrt at position 1 needs its ( )"),
        ("sqrt", "sqrt at position 1 needs its ( )"),
        ("width+1", "'+' at position 6 is not allowed (only names, numbers, *, /, sqrt and ( ))"),
        ("__import__('os')", '"\'" at position 12 is not allowed'),
        ("2 3", "'3' at position 3 is out of place"),
        ("width/0", "it divides by 0"),
        ("width/0.0", "it divides by 0"),
    ],
)
def test_a_broken_expression_says_where(expression: str, problem: str) -> None:
    with pytest.raises(fit.ExpressionError) as error:
        fit.names(expression)
    assert str(error.value).startswith(
        f'"{expression}" is not an expression such as sqrt(heads*width) or 1/sqrt(width): {problem}'
    )


def test_axis_sizes_are_read_off_the_inputs_with_product_axes() -> None:
    shapes = {"X": ("time", "heads*width"), "heads": "heads"}
    inputs = {"X": [[0.0] * 6] * 3, "heads": 2}
    assert fit.axis_sizes(shapes, inputs) == {"time": 3, "heads": 2, "width": 3}


def test_a_fitted_value_is_short() -> None:
    assert fit.fmt(0.70710678) == "0.707"
    assert fit.fmt(7.0) == "7"


def test_the_search_finds_the_one_valley_on_a_log_scale_within_the_bounds() -> None:
    # A scale of 8 between 0.1 and 96, as a softmax's divisor: 16 steps narrow the log range
    # to about 0.3% of the value, and each step asks for one gap (two more to start).
    asked: list[float] = []

    def gap(value: float) -> float:
        asked.append(value)
        return abs(math.log(value) - math.log(8.0))

    best = fit.golden_section(gap, 0.1, 96.0, 16)
    assert math.isclose(best, 8.0, rel_tol=0.005) and float(f"{best:.1g}") == 8.0
    assert len(asked) == 18 and all(0.1 <= value <= 96.0 for value in asked)
    # A gap that only grows leads to the lower bound; one that only falls, to the upper.
    assert math.isclose(fit.golden_section(lambda v: v, 0.1, 96.0, 16), 0.1, rel_tol=0.01)
    assert math.isclose(fit.golden_section(lambda v: -v, 0.1, 96.0, 16), 96.0, rel_tol=0.01)
    # Where no value gives an answer (every gap infinite), it still names a value between.
    assert 0.1 <= fit.golden_section(lambda v: math.inf, 0.1, 96.0, 4) <= 96.0
