"""General word helpers: counts, indexes and shapes, numbers, sentences, lines and lists of
cases, as every message and report writes them. Nothing here knows about a case's outcome or
an expected answer; :mod:`~pytest_lessons.core.texts` and the reports build on these.
"""

from __future__ import annotations

import math
import re
import struct
import sys
import textwrap
from collections.abc import Iterable
from typing import Any

#: Longest headline we write, in characters: an exception's message is cut with an ellipsis
#: only past it. Every field a headline goes into carries at least this much uncut: Gradescope's
#: test ``output``, JUnit's ``message`` attribute, Exercism's ``message`` and our json report
#: set no limit; our GitHub Classroom result keeps a message up to this same length
#: (:func:`pytest_lessons.reports.formats.classroom`; only its fallbacks for an over-full result cut
#: further, and say so). 500 is Exercism's limit on a test's
#: output, the smallest limit any of these programs documents for text it shows per test.
HEADLINE_LIMIT = 500

#: Longest rendering of one input before it is abbreviated.
INPUT_WIDTH = 160


def noun(n: int, word: str) -> str:
    """*word* as it goes with the number *n*: ``value``, ``values``."""
    return word if n == 1 else f"{word}s"


def plural(n: int, word: str) -> str:
    """``1 value``, ``2 values``."""
    return f"{n} {noun(n, word)}"


def fmt_index(index: tuple[int, ...]) -> str:
    """``(0, 1)`` as ``[0, 1]``, the way Python indexes nested lists."""
    return "[" + ", ".join(str(i) for i in index) + "]"


def fmt_shape(shape: tuple[int, ...] | None) -> str:
    return "a single number" if shape == () else fmt_index(shape or ())


def float_text(value: float) -> str:
    """*value* as its shortest text: ``repr``, but a float32 value (a float32 tensor's
    ``tolist()`` gives 0.20000000298023224 for 0.2) as the shortest text float32 reads back
    as it (``0.2``). A float64 value that is exactly a float32 one by chance is told so too,
    correctly: the two texts name the same number to float32's precision."""
    if not math.isfinite(value):
        return repr(value)
    try:
        single = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return repr(value)
    if single != value:
        return repr(value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        try:
            read_back = struct.unpack("<f", struct.pack("<f", float(text)))[0]
        except OverflowError:  # near float32's largest, a rounded text can lie beyond it
            continue
        if read_back == value:
            return text if len(text) < len(repr(value)) else repr(value)
    return repr(value)


def fmt_number(value: float, other: float | None = None) -> str:
    """A short form of *value*; longer when needed to tell it from *other*."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    text = _significant(value, 6)
    if other is not None and text == _significant(other, 6) and value != other:
        if isinstance(value, int) and (isinstance(other, int) or math.isfinite(other)):
            # An int is told by its own digits, as many as it takes: a float's would round
            # past 2**53 (12345678901234567890 and ...891 read the same as floats).
            digits = str(abs(value))
            if len(digits) <= 17:
                text = str(value)
            else:
                text = _exact(value, _digits_apart(value, int(other)))
        else:
            text = float_text(float(value))
            if text == _significant(other, 6) or float(text) == other:
                text = _significant(value, 17)  # float32's text cannot tell them
    return text


#: The largest int a float holds (its magnitude): a learner's int beyond it is formatted from
#: its digits, since ``format(n, "g")`` would raise OverflowError in the grader.
_FLOAT_MAX = int(sys.float_info.max)


def _digits_apart(value: int, other: int) -> int:
    """How many leading digits of *value* tell it from *other* (17 at least, as for a float);
    both are ints of at most Python's int max str digits, so their texts are cheap."""
    mine, theirs = str(abs(value)), str(abs(other))
    if len(mine) != len(theirs):  # 99...9 beside 10...0: every digit, or it rounds up to it
        return max(17, len(mine))
    differ = next((at for at, (a, b) in enumerate(zip(mine, theirs)) if a != b), len(mine))
    return max(17, differ + 1)


def _significant(value: float, digits: int) -> str:
    """*value* to *digits* significant digits, as ``g`` formats it; an int too large for a
    float from its own digits (at most Python's int max str digits, so its str is cheap)."""
    if not isinstance(value, int) or -_FLOAT_MAX <= value <= _FLOAT_MAX:
        return repr(float(value)) if digits > 15 else f"{value:.{digits}g}"
    return _exact(value, digits)


def _exact(value: int, digits: int) -> str:
    """*value* to *digits* significant digits in ``g``'s exponent form, from its own digits
    (exact however large it is)."""
    magnitude = abs(value)
    exponent = len(str(magnitude)) - 1
    # Rounded half to even, as ``g`` rounds: the int's digits are exact.
    unit = 10 ** (exponent + 1 - digits)
    kept, rest = divmod(magnitude, unit)
    if 2 * rest > unit or (2 * rest == unit and kept % 2):
        kept += 1
    if kept == 10**digits:  # 9.99...5 rounds up to the next power of ten
        kept, exponent = kept // 10, exponent + 1
    text = str(kept)
    mantissa = (text[0] + "." + text[1:]).rstrip("0").rstrip(".")
    return f"{'-' if value < 0 else ''}{mantissa}e+{exponent}"


def first_row_shape(value: Any) -> tuple[int, ...]:
    """The shape of a nested list read along its first elements (an empty list has size 0):
    cheap, for words about a value that need not be rectangular (input sizes, abbreviations)."""
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def abbreviate(value: Any, width: int = INPUT_WIDTH) -> str:
    """A one-line rendering of an input, cut with its shape when too long; an input read from
    a file (format 2's ``{ file = ..., key = ... }``) is named by its file, as a learner can
    find it: ``<"wte" in ../fixtures/tiny.safetensors>``."""
    if (
        isinstance(value, dict)
        and isinstance(value.get("file"), str)
        and set(value)
        <= {
            "file",
            "key",
        }
    ):
        key = value.get("key")
        return f'<"{key}" in {value["file"]}>' if isinstance(key, str) else f"<{value['file']}>"
    text = repr(value)
    if len(text) <= width:
        return text
    shape = first_row_shape(value)
    suffix = f" ... (shape {fmt_index(shape)})" if shape else " ..."
    return text[: width - len(suffix)] + suffix


def wrap(text: str, width: int = 88) -> list[str]:
    """*text* folded into lines of at most *width* characters (a longer word stays whole)."""
    # Runs of white space (line breaks, tabs, doubled spaces) become one space first, as an
    # author's multi-line TOML string is one paragraph; a word is never cut, nor at a hyphen
    # (a shape such as ``[-1]`` or a flag such as ``--lesson-hints`` stays whole).
    return textwrap.wrap(
        " ".join(text.split()), width, break_long_words=False, break_on_hyphens=False
    )


#: Where a headline quotes an exception's own message (``solve raised ValueError at line 3
#: of solution.py: ...``, ``Python says TypeError: ...``): its sentences are Python's, and
#: the headline is one sentence to its end.
_QUOTED = re.compile(r"\braised [A-Za-z_][\w.]*(?: at [^:]*)?: |\bPython says ")
_OPEN, _CLOSE = "([{", ")]}"


def first_sentence(text: str) -> str:
    """The first sentence of a headline: what to do, without the why. A sentence ends at a
    full stop before any white space (an author's message runs over lines); never inside an
    exception's message the headline quotes, nor inside brackets or a `code span`."""
    depth, code = 0, False
    for at, char in enumerate(text):
        if char == "`":
            code = not code
        elif not code and char in _OPEN:
            depth += 1
        elif not code and char in _CLOSE:
            depth = max(0, depth - 1)
        elif char == "." and text[at + 1 : at + 2].isspace() and depth == 0 and not code:
            quoted = _QUOTED.search(text, 0, at)
            return text if quoted else text[: at + 1]
    return text


def case_list(numbers: Iterable[int], hidden: Iterable[int] = ()) -> str:
    """Cases by number, as every message and report lists them: ``case 3``, ``cases 1, 4``,
    ``cases 2 to 10``, ``cases 1, 2, 5 to 9``; a run of three or more as a range. *hidden*
    cases are listed apart, after the others: ``case 1; hidden cases 4, 5``."""
    parts: list[str] = []
    for kind, group in (("case", numbers), ("hidden case", hidden)):
        ordered = sorted(group)
        if not ordered:
            continue
        runs: list[str] = []
        start = prev = ordered[0]
        for n in [*ordered[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            if start == prev:
                runs.append(f"{start}")
            else:
                runs.append(f"{start}, {prev}" if prev == start + 1 else f"{start} to {prev}")
            if n is not None:
                start = prev = n
        parts.append(f"{noun(len(ordered), kind)} {', '.join(runs)}")
    return "; ".join(parts)
