"""Compare a learner's answer (plain data, see :mod:`pytest_lessons.isolation.outcome`) with
the expected value, element by element, within tolerance.

The rule is torch's: ``|got - expected| <= atol + rtol * |expected|``, in float64; it is written
once, in :func:`agrees` (over :func:`allowance`), and every comparison goes through it; a
lesson check's margin measures against it (:func:`spent`). Ints and floats are numbers;
bools are not. Nothing is broadcast or coerced: the answer must be a nested
list (tuples count as lists) of exactly the expected shape. Every other answer gets a problem code
and a headline that says what to do, then why.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import count
from typing import Any, Callable

from pytest_lessons.core.words import fmt_index, fmt_number, fmt_shape, noun, plural
from pytest_lessons.isolation import answers
from pytest_lessons.isolation.answers import (
    CUT,
    DENSE,
    NDARRAY,
    TENSOR,
    TUPLE,
    as_lists,
    rectangular,
    tag_of,
    type_name,
)

#: How many mismatched elements a report lists.
ROWS = 5


@dataclass(frozen=True)
class Numbers:
    """A rectangular block of numbers: its shape and its values in row-major order."""

    shape: tuple[int, ...]
    flat: Sequence[float]
    """A list, or for an answer that arrived packed, an ``array("d")``."""

    def index(self, position: int) -> tuple[int, ...]:
        """The multi-index of the *position*-th value."""
        index = []
        for size in reversed(self.shape):
            position, rest = divmod(position, size) if size else (position, 0)
            index.append(rest)
        return tuple(reversed(index))


@dataclass(frozen=True)
class Mismatch:
    """One value outside tolerance."""

    index: tuple[int, ...]
    got: float
    expected: float

    @property
    def gap(self) -> float:
        return abs(self.got - self.expected)


class Problem(str, Enum):
    """What is wrong with a returned answer, as a :class:`Comparison` says it. A ``str``, so
    ``problem == "shape"``, JSON and f-strings give the bare code (``shape``), as before."""

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]

    PASSED = ""
    """Nothing: the answer is right."""
    NONE = "none"
    """The entry function returned None."""
    TENSOR = "tensor"
    NDARRAY = "ndarray"
    OBJECT = "object"
    """Another object, a string or a bool where numbers were expected."""
    GENERATOR = "generator"
    """A generator, map, range or other iterator: values not yet produced."""
    CUT = "cut"
    """The answer was too large or too deep to send."""
    INNER_OBJECT = "inner_object"
    TEXT = "text"
    BOOL = "bool"
    INNER_NONE = "inner_none"
    RAGGED = "ragged"
    SHAPE = "shape"
    NONFINITE = "nonfinite"
    """NaN or an infinity where a finite number was expected."""
    VALUES = "values"
    """The shape is right, some values are outside tolerance."""
    OUTPUTS = "outputs"
    """A several-output answer that is not one value per output."""
    TYPE = "type"
    """A value of another type than its kind asks for (format 2's exact and structured
    kinds: a float where an int is expected, a list where a dict is)."""


@dataclass(frozen=True)
class Comparison:
    """The verdict on a returned answer."""

    passed: bool
    problem: Problem
    """:attr:`Problem.PASSED` (empty) when passed; else what is wrong."""
    headline: str
    expected_shape: tuple[int, ...]
    got_shape: tuple[int, ...] | None = None
    total: int = 0
    mismatched: int = 0
    worst: Mismatch | None = None
    allowed: float = 0.0
    """The tolerance at the worst mismatch (see :func:`allowance`)."""
    rows: tuple[Mismatch, ...] = ()
    got: Numbers | None = None
    """The answer as numbers, when it could be read as such (shape may differ)."""
    expected: Numbers | None = None
    bad: tuple[int, ...] = field(default=(), repr=False)
    """Flat positions of every mismatched value (for maps and detectors)."""
    notes: tuple[str, ...] = ()
    """More sentences for the learner, after the headline."""
    part: str = ""
    """For an exercise with several outputs: the output this comparison is about."""
    part_index: int = -1
    parts: int = 0
    """For an exercise with several outputs: how many it has (with :attr:`part_index`, the
    ``value 1 of 3`` the texts name)."""
    kind: str = "numeric"
    """The name of the kind of expected value that made this comparison
    (:mod:`pytest_lessons.core.kinds`): the texts ask it for the evidence."""
    evidence: tuple[tuple[str, str], ...] = ()
    """For a kind that is not numbers: its evidence rows (label, text), as its
    :meth:`~pytest_lessons.core.kinds.Kind.facts` gives them."""

    @property
    def where(self) -> str:
        """Which output is wrong, in words (``out (value 1 of 3)``); empty for one output."""
        if not self.part:
            return ""
        if self.parts == 1:  # a lesson's one named output (a gradient): its name says it
            return self.part
        return f"{self.part} (value {self.part_index + 1} of {self.parts})"


class _Problem(Exception):
    def __init__(self, code: Problem, path: tuple[int, ...], detail: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.path = path
        self.detail = detail


def nested(numbers: Numbers) -> Any:
    """*numbers* as a nested list again (a number for shape ``()``), for display."""
    return answers.nest(numbers.shape, list(numbers.flat))


def read_numbers(value: Any) -> Numbers:
    """Read an expected value (validated by the model) as :class:`Numbers`."""
    return _to_numbers(value)


def _decode_dense(tag: dict[str, Any]) -> Numbers:
    try:
        shape, packed = answers.dense_values(tag)
    except answers.Damaged:
        raise _Problem(Problem.OBJECT, (), "a damaged answer") from None
    if packed.typecode == "q":  # ints, read as numbers: float64, as every value here
        packed = array("d", packed)
    return Numbers(shape, packed)


def _to_numbers(value: Any, path: tuple[int, ...] = ()) -> Numbers:
    value = as_lists(value)
    if tag_of(value) == DENSE:
        return _decode_dense(value)
    fast = rectangular(value)
    if fast is not None:
        shape, flat, kinds = fast
        return Numbers(shape, flat if kinds == {float} else _floats(flat))
    shape = _walk(value, path)
    flat = []
    _flatten(value, flat)
    return Numbers(shape, _floats(flat))


def _floats(values: list[Any]) -> list[float]:
    """*values* as float64, as the judge compares; an int too large for a float becomes an
    infinity of its sign (it is that far off any expected value)."""
    try:
        return list(map(float, values))
    except OverflowError:
        return [_as_float(v) for v in values]


def _walk(value: Any, path: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a nested list of numbers, or a :class:`_Problem` at the first bad place."""
    kind = type(value)
    if kind is int or kind is float:
        return ()
    if kind is list:
        if not value:
            return (0,)
        first = _walk(value[0], (*path, 0))
        for i, item in enumerate(value[1:], 1):
            shape = _walk(item, (*path, i))
            if shape != first:
                if len(shape) != len(first):
                    raise _Problem(
                        Problem.RAGGED,
                        (*path, i),
                        f"{fmt_index((*path, i))} is {_describe(shape)} but "
                        f"{fmt_index((*path, 0))} is {_describe(first)}",
                    )
                where = _first_difference(value[0], item, (*path, 0), (*path, i))
                raise _Problem(Problem.RAGGED, (*path, i), where)
        return (len(value), *first)
    if kind is bool:
        raise _Problem(Problem.BOOL, path, repr(value))
    if kind is str:
        raise _Problem(Problem.TEXT, path, _short(value))
    if value is None:
        raise _Problem(Problem.INNER_NONE, path)
    if isinstance(value, dict):
        if tag_of(value) == DENSE:
            return _decode_dense(value).shape
        raise _Problem(Problem.INNER_OBJECT, path, type_name(value))
    raise _Problem(Problem.INNER_OBJECT, path, kind.__name__)  # pragma: no cover - not in JSON


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(shape: tuple[int, ...]) -> str:
    if not shape:
        return "a number"
    if len(shape) == 1:
        return f"a row of {shape[0]}"
    return f"a block of shape {fmt_index(shape)}"


def _first_difference(a: Any, b: Any, pa: tuple[int, ...], pb: tuple[int, ...]) -> str:
    """Where two sibling lists of different shapes first differ, in words."""
    while isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            values = plural(len(b), "value")
            return f"row {fmt_index(pb)} has {values} but row {fmt_index(pa)} has {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if _walk(x, (*pa, i)) != _walk(y, (*pb, i)):
                a, b, pa, pb = x, y, (*pa, i), (*pb, i)
                break
        else:  # pragma: no cover - shapes differ, so some child differs
            break
    return f"{fmt_index(pb)} and {fmt_index(pa)} differ in shape"


def _flatten(value: Any, out: list[float]) -> None:
    if type(value) is list:
        for item in value:
            _flatten(item, out)
    elif isinstance(value, dict):
        out.extend(_decode_dense(value).flat)
    else:
        out.append(value)


def compare(expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
    """Judge *answer* (encoded plain data) against *expected* (a validated model value)."""
    answer = as_lists(answer)
    want = read_numbers(expected)
    base = {"expected_shape": want.shape, "expected": want, "total": len(want.flat)}
    top = _top_level(answer, want, rtol, atol)
    if top is not None:
        code, headline, notes = top
        got = None
        if code in (Problem.TENSOR, Problem.NDARRAY) and "values" in answer:
            # The values still help name a mistake; the headline keeps asking for .tolist().
            try:
                got = _to_numbers(answer["values"])
            except _Problem:
                got = None
        return Comparison(
            False,
            code,
            headline,
            notes=tuple(notes),
            got=got,
            got_shape=got.shape if got else None,
            **base,  # type: ignore[arg-type]
        )
    try:
        got = _to_numbers(answer)
    except _Problem as problem:
        return Comparison(False, problem.code, _inner_headline(problem), **base)  # type: ignore[arg-type]
    if got.shape != want.shape:
        notes = _shape_notes(got.shape, want.shape)
        if (
            size_one_positions(got.shape, want.shape)
            and len(got.flat) == len(want.flat)
            and not outside(got.flat, want.flat, rtol, atol)
        ):
            notes.append("Your values are right, in the right order; only the shape is not.")
        return Comparison(
            False,
            Problem.SHAPE,
            _shape_headline(got.shape, want.shape),
            got_shape=got.shape,
            got=got,
            notes=tuple(notes),
            **base,  # type: ignore[arg-type]
        )
    bad = outside(got.flat, want.flat, rtol, atol)
    if not bad:
        return Comparison(True, Problem.PASSED, "", got_shape=got.shape, got=got, **base)  # type: ignore[arg-type]
    mismatches = [Mismatch(want.index(i), got.flat[i], want.flat[i]) for i in bad[:ROWS]]

    def badness(i: int) -> float:
        gap = abs(got.flat[i] - want.flat[i])
        return math.inf if math.isnan(gap) else gap

    worst_at = max(bad, key=badness)
    worst = Mismatch(want.index(worst_at), got.flat[worst_at], want.flat[worst_at])
    nonfinite = [i for i in bad if not math.isfinite(got.flat[i]) and math.isfinite(want.flat[i])]
    if nonfinite:
        code, headline = Problem.NONFINITE, _nonfinite_headline(got, want, nonfinite)
    elif want.shape == ():  # one number: no shape, no share of values to speak of
        code = Problem.VALUES
        headline = (
            f"Check your calculation: your number is {fmt_number(worst.got, worst.expected)}, "
            f"the expected one {fmt_number(worst.expected, worst.got)}."
        )
    else:
        code = Problem.VALUES
        headline = (
            "Check your calculation: the shape is right, but "
            f"{len(bad)} of {len(want.flat)} values differ from the expected answer."
        )
    return Comparison(
        False,
        code,
        headline,
        got_shape=got.shape,
        got=got,
        mismatched=len(bad),
        worst=worst,
        allowed=allowance(worst.expected, rtol, atol),
        rows=tuple(mismatches),
        bad=tuple(bad),
        **base,  # type: ignore[arg-type]
    )


#: From this many values on, compare with NumPy when it is installed: about 30 times faster,
#: and the same IEEE float64 arithmetic, so the same verdict.
VECTOR_FROM = 50_000


def _as_float(value: float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def allowance(expected: Any, rtol: float, atol: float) -> Any:
    """How far an answer may be from *expected* and still be right: ``atol + rtol *
    |expected|`` (a NumPy array of them for an array)."""
    return atol + rtol * abs(expected)


def agrees(got: Any, expected: Any, rtol: float, atol: float, lib: Any = math) -> Any:
    """THE tolerance rule: *got* is right when it is *expected* itself, or when *expected* is
    finite and ``|got - expected| <= allowance``. So NaN is never right (not even for an
    expected NaN, which the model does not allow), and an infinite expected value is matched
    only by the same infinity. On floats with ``lib=math``; elementwise on NumPy arrays with
    ``lib=numpy``."""
    return (got == expected) | (
        lib.isfinite(expected) & (abs(got - expected) <= allowance(expected, rtol, atol))
    )


def spent(got: float, expected: float, rtol: float, atol: float) -> float:
    """How much of its tolerance *got* uses at *expected*, by :func:`agrees`' rule: 0 when it
    is *expected* itself, 1 at the edge, above 1 wrong (infinite when *expected* is not finite
    or has no tolerance, and *got* is not it). NaN for a NaN *got* (the caller decides)."""
    if got == expected:
        return 0.0
    if not math.isfinite(expected):
        return math.inf
    allowed = allowance(expected, rtol, atol)
    return float(abs(got - expected) / allowed) if allowed > 0 else math.inf


def outside(got: Sequence[float], want: Sequence[float], rtol: float, atol: float) -> list[int]:
    """Positions where *got* does not :func:`agree <agrees>` with *want*."""
    if len(want) >= VECTOR_FROM:
        found = _outside_numpy(got, want, rtol, atol)
        if found is not None:
            return found
    # agrees() spelt out: a call per value was most of a class run's judging.
    finite = math.isfinite
    return [
        i
        for i, g, e in zip(count(), got, want)
        if g != e and not (finite(e) and abs(g - e) <= atol + rtol * abs(e))
    ]


def close(got: Numbers, want: Numbers, rtol: float, atol: float) -> bool:
    """Whether *got* equals *want* in shape and, within tolerance, in every value; NaN
    matches NaN here (a mistake that makes NaN is matched by the same NaN)."""
    if got.shape != want.shape:
        return False
    return all(
        math.isnan(got.flat[i]) and math.isnan(want.flat[i])
        for i in outside(got.flat, want.flat, rtol, atol)
    )


def _outside_numpy(
    got: Sequence[float], want: Sequence[float], rtol: float, atol: float
) -> list[int] | None:
    try:
        import numpy
    except ImportError:
        return None
    with numpy.errstate(invalid="ignore", over="ignore"):
        g = (
            numpy.frombuffer(got, numpy.float64)
            if isinstance(got, array)
            else numpy.array(got, numpy.float64)
        )
        e = numpy.array(want, numpy.float64)
        ok = agrees(g, e, rtol, atol, numpy)
    return numpy.flatnonzero(~ok).tolist()


def _top_level(
    answer: Any, want: Numbers, rtol: float, atol: float
) -> tuple[Problem, str, list[str]] | None:
    expected_form = (
        "a number" if want.shape == () else f"a nested list of shape {fmt_shape(want.shape)}"
    )
    if answer is None:
        return (
            Problem.NONE,
            (
                "Return your answer: solve returned None, which usually means it has no "
                "`return` line, or it returns the result of a method that changes a value in place."
            ),
            [],
        )
    if isinstance(answer, (str, bool)):
        what = "the string " if isinstance(answer, str) else ""
        return Problem.OBJECT, f"Return {expected_form}: solve returned {what}{_short(answer)}.", []
    tag = tag_of(answer)
    if tag is None or tag == DENSE:
        return None
    if tag in (TENSOR, NDARRAY):
        kind = "tensor" if tag == TENSOR else "NumPy array"
        shape = tuple(answer.get("shape", ()))
        notes = []
        if "values" in answer:
            try:
                inner = compare_values(answer["values"], want, rtol, atol)
            except _Problem:
                inner = None
            if inner is True:
                notes.append(f"The {kind}'s values are right; only the type is not.")
            elif shape != want.shape:
                notes.append(
                    f"Its shape is {fmt_shape(shape)}; the expected answer's is "
                    f"{fmt_shape(want.shape)}."
                )
        return (
            Problem(tag),
            (
                "Return plain Python numbers: add .tolist() to your result. solve returned a "
                f"{type_name(answer, kind)} ({answer.get('dtype', '')}, "
                f"shape {fmt_shape(shape)}), "
                f"and the grader compares {expected_form}."
            ),
            notes,
        )
    if tag == CUT:
        return (
            Problem.CUT,
            (
                f"Return {expected_form}: your answer was not read because it is "
                f"{answer.get('reason', 'too large')}."
            ),
            [],
        )
    named = type_name(answer, "object")
    if named in ("generator", "map", "filter", "zip", "range") or named.endswith("iterator"):
        return (
            Problem.GENERATOR,
            (
                f"Build a list, for example with list(...) or [... for ...]: solve returned a "
                f"{named}, which only produces values when asked, and the grader needs "
                f"{expected_form}."
            ),
            [],
        )
    return Problem.OBJECT, (f"Return {expected_form}: solve returned a {named}."), []


def compare_values(values: Any, want: Numbers, rtol: float, atol: float) -> bool:
    """Whether *values* (encoded) equal *want* within tolerance; False on any other shape."""
    try:
        got = _to_numbers(values)
    except _Problem:
        return False
    return got.shape == want.shape and not outside(got.flat, want.flat, rtol, atol)


def _inner_headline(problem: _Problem) -> str:
    where = fmt_index(problem.path)
    if problem.code == Problem.BOOL:
        return f"Return numbers, not True or False: your answer holds {problem.detail} at {where}."
    if problem.code == Problem.TEXT:
        return f"Return numbers, not text: your answer holds {problem.detail} at {where}."
    if problem.code == Problem.INNER_NONE:
        return f"Fill in every value: your answer holds None at {where}."
    if problem.code == Problem.RAGGED:
        return f"Make every row the same length: {problem.detail}."
    if problem.detail in ("torch.Tensor", "numpy.ndarray") or problem.code == Problem.INNER_OBJECT:
        advice = ""
        if "Tensor" in problem.detail or "ndarray" in problem.detail:
            advice = " Call .tolist() on the whole tensor rather than building a list of tensors."
        return (
            f"Return only numbers and lists: your answer holds a {problem.detail} at {where}."
            + advice
        )
    return f"Return a nested list of numbers: your answer is {problem.detail}."  # pragma: no cover


def size_one_positions(got: tuple[int, ...], want: tuple[int, ...]) -> list[int]:
    """Where *got* has one extra dimension of size 1 that *want* has not (positions in *got*),
    or one missing (positions in *want*); empty when the shapes differ in another way."""
    longer, shorter = (got, want) if len(got) > len(want) else (want, got)
    if len(longer) != len(shorter) + 1:
        return []
    return [
        i for i, size in enumerate(longer) if size == 1 and longer[:i] + longer[i + 1 :] == shorter
    ]


def _positions(positions: list[int]) -> str:
    if len(positions) == 1:
        return f"position {positions[0]}"
    return "position " + ", ".join(str(p) for p in positions[:-1]) + f" or {positions[-1]}"


def _shape_headline(got: tuple[int, ...], want: tuple[int, ...]) -> str:
    where = size_one_positions(got, want)
    if where and len(got) > len(want):
        # .squeeze(i) is exact; a bare .squeeze() would also drop sizes that are 1 by chance.
        return (
            f"Remove the extra dimension of size 1 at {_positions(where)} with "
            f".squeeze({where[0]}): your answer has shape {fmt_shape(got)}, the expected "
            f"one {fmt_shape(want)}."
        )
    if where:
        return (
            f"Add the missing dimension of size 1 at {_positions(where)} with "
            f".unsqueeze({where[0]}): your answer has shape {fmt_shape(got)}, the expected "
            f"one {fmt_shape(want)}."
        )
    return f"Return shape {fmt_shape(want)}: your answer has shape {fmt_shape(got)}."


def _shape_notes(got: tuple[int, ...], want: tuple[int, ...]) -> list[str]:
    notes: list[str] = []
    if size_one_positions(got, want):
        return notes
    if math.prod(got) == math.prod(want) and got:
        notes.append(
            "It holds the right number of values, grouped differently: check the sizes you "
            "reshape to."
        )
    if len(got) != len(want):
        notes.append(
            f"Your answer has {plural(len(got), 'dimension')}; the expected one has {len(want)}."
        )
    return notes


def _nonfinite_headline(got: Numbers, want: Numbers, positions: list[int]) -> str:
    first = positions[0]
    value = got.flat[first]
    more = len(positions) - 1
    extra = f" (and {more} more {noun(more, 'place')})" if more else ""
    name = "NaN" if math.isnan(value) else str(value)
    return (
        f"Find where {name} comes from: your answer holds {name} at "
        f"{fmt_index(got.index(first))}{extra}, where the expected answer is a finite number. "
        "NaN often comes from 0/0 or from a softmax over a row that is all -inf; inf from "
        "dividing by zero or exp() of a large number."
    )


def split_outputs(answer: Any, count: int) -> list[Any] | None:
    """The *count* parts of a several-output answer (a tuple or list), or None if it is not
    one. A packed answer (parts of equal shape) is unpacked; a tuple's tag is its list."""
    if tag_of(answer) == TUPLE:
        answer = answer.get("items")
    if tag_of(answer) == DENSE:
        answer = nested(_decode_dense(answer))
    if isinstance(answer, list) and len(answer) == count:
        return answer
    return None


#: How one output is judged: ``(expected, answer, rtol, atol) -> Comparison``.
PartJudge = Callable[[Any, Any, float, float], Comparison]


def compare_outputs(
    expected: dict[str, Any],
    answer: Any,
    names: Sequence[str],
    rtol: float,
    atol: float,
    judges: Sequence[PartJudge] = (),
) -> Comparison:
    """Judge an answer made of several named outputs, returned in *names*' order: the first
    output that is wrong speaks for the whole answer. *judges* judge each output (by its
    kind of expected value, :mod:`pytest_lessons.core.kinds`); :func:`compare` by default."""
    if tag_of(answer) == TUPLE:
        answer = answer.get("items")
    if tag_of(answer) == DENSE:
        # Unpacked first, so a wrong count is told in values, never as the packing's tag.
        answer = nested(_decode_dense(answer))
    parts = split_outputs(answer, len(names))
    try:
        first = read_numbers(expected[names[0]])
    except _Problem:  # an output of another kind than numbers: no shape to name
        first = Numbers((), [])
    if parts is None:
        listed = ", ".join(names)
        what = "None" if answer is None else _kind_of(answer)
        # The example is Python: an output's label ("grad of x") becomes a variable's name.
        example = ", ".join(_variable(name) for name in names)
        return Comparison(
            False,
            Problem.OUTPUTS,
            f"Return {len(names)} values, in this order: {listed} (for example "
            f"`return {example}`). solve returned {what}.",
            expected_shape=first.shape,
            expected=first,
            total=len(first.flat),
        )
    for index, (name, part) in enumerate(zip(names, parts)):
        judge = judges[index] if judges else compare
        verdict = judge(expected[name], part, rtol, atol)
        if not verdict.passed:
            verdict = replace(verdict, part=name, part_index=index, parts=len(names))
            return replace(verdict, headline=f"In {verdict.where}: {verdict.headline}")
    return Comparison(
        True, Problem.PASSED, "", expected_shape=first.shape, expected=first, total=len(first.flat)
    )


def _variable(name: str) -> str:
    """An output's name as a Python variable: itself, or a label's words joined by ``_``
    (``grad of x`` -> ``grad_x``)."""
    if name.isidentifier():
        return name
    words = [w for w in re.findall(r"[A-Za-z0-9_]+", name) if w != "of"]
    joined = "_".join(words) or "value"
    return joined if joined.isidentifier() else f"_{joined}"


def _kind_of(answer: Any) -> str:
    if isinstance(answer, list):
        return plural(len(answer), "value")
    if isinstance(answer, dict):
        return f"a {type_name(answer)}"
    return f"a {type(answer).__name__}"
