"""``core/words.py``: the numbers, sentences and lines every message is made of, as a learner
reads them. Each row is a text a message shows; the function is the module's, called directly."""

from __future__ import annotations

import sys

import pytest

from pytest_lessons.core.words import first_sentence, float_text, fmt_number, fmt_shape, wrap

#: The largest int a float holds: past it a learner's int is told from its own digits.
FLOAT_MAX = int(sys.float_info.max)
#: float32's largest value, as a float32 tensor's ``tolist()`` gives it (a common mask value).
FLOAT32_MAX = 3.4028234663852886e38


def short(value: object) -> str:
    """A test id that stays readable for a 400-digit int."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} chars)"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.20000000298023224, "0.2"),  # float32's 0.2 as tolist() gives it
        (0.30000001192092896, "0.3"),
        (123456.7890625, "123456.79"),
        (1.401298464324817e-45, "1e-45"),  # float32's smallest subnormal
        (FLOAT32_MAX, "3.4028235e+38"),
        (-FLOAT32_MAX, "-3.4028235e+38"),
        (0.1, "0.1"),  # not a float32 value: repr
        (0.1 + 2**-56, "0.10000000000000002"),
        (1e300, "1e+300"),  # beyond float32
        (16777217.0, "16777217.0"),  # not a float32 value (2**24 + 1)
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (float("nan"), "nan"),
        (1.0, "1"),
        (0.5, "0.5"),  # as long as its repr: the repr
        (0.25, "0.25"),
        (-0.0, "-0"),
    ],
    ids=short,
)
def test_a_float_is_written_as_the_shortest_text_of_its_own_precision(
    value: float, text: str
) -> None:
    assert float_text(value) == text


@pytest.mark.parametrize(
    ("value", "other", "text"),
    [
        (12345678, None, "1.23457e+07"),
        (0.000123456789, None, "0.000123457"),
        (1.0, None, "1"),
        (5, 5, "5"),
        (float("nan"), 1.0, "nan"),
        (float("-inf"), None, "-inf"),
        (10**400, None, "1e+400"),
        (-(10**400), None, "-1e+400"),
        (10**400 + 5 * 10**395, None, "1.00005e+400"),
        (123456789 * 10**392, None, "1.23457e+400"),
        (FLOAT_MAX, None, "1.79769e+308"),
        # Six digits that would read the same are made longer, as far as telling them apart takes.
        (1234567, 1234568, "1234567"),
        (1.0000001, 1.0, "1.0000001"),
        (0.30000001192092896, 0.3, "0.30000001192092896"),  # float32's text would say 0.3
        (0.1 + 2**-56, 0.1, "0.10000000000000002"),
        (0.2, 0.20000001, "0.2"),
        (0.20000001, 0.2, "0.20000001"),
        (FLOAT32_MAX, 3.402823e38, "3.4028235e+38"),
        (10**400, 2 * 10**400, "1e+400"),
        (10**400, float("inf"), "1e+400"),
        (0.30000001192092896, 0.3000001, "0.30000001192092896"),  # float32's 0.3 reads as both
        (123456789, 123456790, "123456789"),  # an int as an int, never "123456789.0"
        (5, 5.000001, "5"),
        (999999500 * 10**392, None, "1e+401"),  # rounding carries into the exponent
        (1234565 * 10**394, None, "1.23456e+400"),  # half to even, as format's "g"
        (1234575 * 10**394, None, "1.23458e+400"),
    ],
    ids=short,
)
def test_a_number_is_short_unless_it_must_be_told_from_another(
    value: float, other: float | None, text: str
) -> None:
    assert fmt_number(value, other) == text


def test_two_ints_beyond_a_float_are_told_apart_by_as_many_digits_as_it_takes() -> None:
    big = 10**400
    assert fmt_number(big, big + 1) == "1e+400"
    assert fmt_number(big + 1, big) == "1." + "0" * 399 + "1e+400"
    near = FLOAT_MAX + 10**300
    mine, theirs = fmt_number(near, near + 1), fmt_number(near + 1, near)
    assert mine != theirs
    assert mine.startswith("1.7976931") and mine.endswith("e+308")
    assert fmt_number(-big, -big - 10**380) == "-1e+400"
    assert fmt_number(-big - 10**380, -big) == "-1." + "0" * 19 + "1e+400"
    # Past 2**53 a float would round them to one number.
    assert fmt_number(12345678901234567890, 12345678901234567891) == "1.234567890123456789e+19"
    assert fmt_number(12345678901234567891, 12345678901234567890) == "1.2345678901234567891e+19"
    # Ninety-nines beside the next power of ten: every digit, or it rounds up to it.
    assert fmt_number(big - 1, big) == "9." + "9" * 399 + "e+399"
    # At least 17 digits, as a float gets: the 18th is rounded away.
    assert fmt_number(big + 10**390 + 10**383, big) == "1.0000000001e+400"


@pytest.mark.parametrize(
    ("headline", "first"),
    [
        ("Do this. Then that.", "Do this."),
        ("Write it.\nNext line.", "Write it."),
        ("a.b. c", "a.b."),  # a full stop inside a word ends nothing
        ("end.", "end."),
        ("No full stop here", "No full stop here"),
        ("Call f(a. b) first. Why.", "Call f(a. b) first."),
        ("Index [1. 2] there. Why.", "Index [1. 2] there."),
        ("A {x. y} set. Why.", "A {x. y} set."),
        ("Use `x. y` here. Then.", "Use `x. y` here."),
        ("Use `(x` here. Then.", "Use `(x` here."),  # a bracket in code opens nothing
        ("x) y. z", "x) y."),  # a stray closing bracket leaves the depth at 0
        ("(a) b. c", "(a) b."),
        ("Call f((a) b. c) now. Why.", "Call f((a) b. c) now."),  # brackets within brackets
        (
            "solve raised ValueError at line 3 of solution.py: bad. value. more",
            "solve raised ValueError at line 3 of solution.py: bad. value. more",
        ),
        ("solve raised KeyError: no. x", "solve raised KeyError: no. x"),
        ("Python says TypeError: no. x", "Python says TypeError: no. x"),
        ("Fix it. solve raised ValueError: bad. value", "Fix it."),
    ],
)
def test_a_headlines_first_sentence_ends_at_its_own_full_stop(headline: str, first: str) -> None:
    assert first_sentence(headline) == first


def test_lines_fold_at_spaces_and_keep_flags_shapes_and_long_words_whole() -> None:
    text = "a  b\n\tc --lesson-hints [-1] " + "x" * 30
    assert wrap(text, 20) == ["a b c --lesson-hints", "[-1]", "x" * 30]
    assert wrap("one two three", 7) == ["one two", "three"]
    assert wrap("one two three") == ["one two three"]
    assert wrap("") == []
    assert wrap("aaaa bbbb-cccc", 10) == ["aaaa", "bbbb-cccc"]  # never at a hyphen


def test_a_shape_is_written_as_an_index_and_no_dimensions_as_a_single_number() -> None:
    assert fmt_shape(()) == "a single number"
    assert fmt_shape((2, 3)) == "[2, 3]"
    assert fmt_shape(None) == "[]"
