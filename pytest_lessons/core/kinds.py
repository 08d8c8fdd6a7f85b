"""Kinds of expected value: what an expected value may be, and how an answer is judged against it.

In the shape of pytest's ``approx()``: one class per kind, chosen by one factory
(:func:`kind_for`) from the expected value itself, or by name (:func:`named`) where a lesson
declares it. A kind

- validates an expected value as ``exercise.toml`` writes it (:meth:`Kind.problem`, for the
  format's field checks);
- compares it with an answer (:meth:`Kind.compare`, a :class:`~pytest_lessons.core.compare.
  Comparison`), and two answers with each other (:meth:`Kind.same`, for the watch-outs);
- tells whether a reference's answer is a value of the kind (:meth:`Kind.usable`) and writes
  one as ``expected`` is written (:meth:`Kind.plain`, for the learner's copy);
- gives the evidence lines the texts show under a failure's headline (:meth:`Kind.facts`,
  :meth:`Kind.listing`);
- says whether it offers detector :class:`~pytest_lessons.core.detectors.Evidence`
  (:attr:`Kind.offers_evidence`): only numeric kinds do, since every detector reasons about
  blocks of numbers.

Format version 1 has one kind, :class:`Numeric` (a number or a rectangular nested list of
numbers, within tolerance), and it is the default: a value no other kind claims is judged as
numbers, as format version 1 always did (:func:`kind_for`). :mod:`~pytest_lessons.core.compare`
and :mod:`~pytest_lessons.core.detectors` are the numeric kind's own machinery.

Format version 2 adds the exact and structured kinds (:class:`Scalar` for ``int``, ``bool``,
``str`` and ``bytes``; :class:`Seq` for lists and tuples, :class:`Mapping`, :class:`Group` for
sets, :class:`Optional`; :class:`Tensor`). A lesson declares one by a Python type expression
(``list[int]``, ``dict[int, bytes]``, ``tensor[float32]``) that :func:`parse` reads and
:func:`named` finds again from a comparison's :attr:`~Comparison.kind`; without a declaration a
format-2 lesson's expected value gives its own kind (:func:`infer`). Each is built on
:class:`Exact`: the expected value is read into Python values (TOML spellings such as
``{ hex = "..." }`` and ``{ none = true }`` understood), the answer decoded from its encoding
(:func:`decode`), and the two walked together to the first :class:`Difference`, which the
kind words in its own language.

To add a kind: a class with the members of :class:`Kind` (its comparisons carry
``kind=`` its :attr:`~Kind.name`, and a :class:`~pytest_lessons.core.compare.Problem` code,
new members there if none fits). A kind lessons declare by name (the usual case, as every
format-2 kind is) is a row of :data:`WORDS` and stays out of :data:`KINDS`, which is empty:
:data:`KINDS` is only for a kind that every ``exercise.toml``, format 1 included, must
recognise from the value alone, since a kind there makes the values it accepts valid
``expected`` values in every lesson at once. ``tests/test_judge.py`` plugs a sketched ``Exact``
kind into :data:`KINDS` that way without touching this file. The contributors' guide
(docs/contributors/recipes.md, "Add a kind of expected value") lists every place that then
changes.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import math
import operator
import re
import reprlib
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import count
from typing import Any, Callable, Protocol

from pytest_lessons.core.compare import (
    Comparison,
    Problem,
    agrees,
    allowance,
    close,
    compare,
    nested,
    read_numbers,
)
from pytest_lessons.core.frequencies import FREQUENCIES
from pytest_lessons.core.words import float_text, fmt_index, fmt_number, fmt_shape, noun, plural
from pytest_lessons.isolation import answers
from pytest_lessons.isolation.answers import (
    DENSE,
    TAG,
    TENSOR,
    Other,
    TensorAnswer,
    as_lists,
    rectangular,
    tag_of,
)


class Kind(Protocol):
    """A kind of expected value (see the module docstring)."""

    name: str
    """Its name: in :attr:`Comparison.kind`, and what a lesson would declare."""
    offers_evidence: bool
    """Whether this kind's comparisons fill :attr:`Comparison.got` and ``expected`` with
    numbers, which the detectors reason about. ``explain.evidence`` builds
    :class:`~pytest_lessons.core.detectors.Evidence` from those two fields;
    ``explain.wrong_answer`` reads this flag: a wrong answer of a kind without evidence (or
    with no ``got``) has its watch-outs matched by the kind's own sameness
    (``WatchOuts.exact``) instead."""

    def accepts(self, value: Any) -> bool:
        """Whether *value* (as TOML gives it, or encoded from the worker) is of this kind:
        what the factory asks."""

    def problem(self, value: Any) -> str | None:
        """None when *value* is a valid expected value of this kind, else what it must be
        (``must be ...``), for the field checks of ``exercise.toml``."""

    def compare(self, expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
        """The verdict on *answer* (encoded plain data) against *expected*."""

    def same(self, a: Any, b: Any, rtol: float, atol: float) -> bool:
        """Whether two encoded answers are the same (a mistake's and the learner's); raises
        when either is not of this kind."""

    def usable(self, answer: Any) -> bool:
        """Whether a reference's encoded *answer* is a value of this kind (else the lesson
        failed on the case)."""

    def plain(self, answer: Any) -> Any:
        """An encoded answer of this kind as ``expected`` is written in ``exercise.toml``."""

    def facts(self, comparison: Comparison) -> list[tuple[str, str]]:
        """The evidence under a wrong answer's headline, as (label, text) rows."""

    def listing(self, comparison: Comparison) -> tuple[list[tuple[str, ...]], int]:
        """A table of the first places the answer is wrong (its header row first; empty for
        none) and how many more places are not listed."""


class Part(Kind, Protocol):
    """A kind that can also be a part of a value (``list[Part]``, a mapping's keys): numbers
    and every :class:`Exact` kind, never a tensor."""

    def describe(self, many: bool = False) -> str:
        """What a value of this kind is, in words: ``an int`` (``ints`` when *many*)."""

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        """*value* (TOML, or decoded) as a Python value of this kind; :class:`Unreadable`
        when it is not one."""

    def toml(self, value: Any) -> Any:
        """A Python value of this kind as ``exercise.toml`` writes it."""

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        """Where *got* first differs from *want* (at *path*), or None when it does not."""


class Numeric:
    """A number or a rectangular nested list of numbers, compared within tolerance by
    :func:`pytest_lessons.core.compare.compare` (torch's rule, in float64)."""

    name = "numeric"
    offers_evidence = True

    def accepts(self, value: Any) -> bool:
        if isinstance(value, dict):
            return tag_of(value) == DENSE
        return rectangular(value) is not None or self.problem(value) is None

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool):
            return "must be a number or a nested list of numbers, not true/false"
        if isinstance(value, (int, float)):
            return None
        if not isinstance(value, list):
            return "must be a number or a nested list of numbers"
        if _shape(value) is None:
            return "must be a rectangular nested list of numbers (every row the same length)"
        return None

    def compare(self, expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
        return compare(expected, answer, rtol, atol)

    def same(self, a: Any, b: Any, rtol: float, atol: float) -> bool:
        return close(read_numbers(a), read_numbers(b), rtol, atol)

    def usable(self, answer: Any) -> bool:
        try:
            read_numbers(answer)
        except Exception:  # any value that does not read as numbers, a damaged tag too
            return False
        return True

    def plain(self, answer: Any) -> Any:
        return nested(read_numbers(answer))

    def facts(self, comparison: Comparison) -> list[tuple[str, str]]:
        got = comparison.got_shape
        worst = comparison.worst
        if comparison.expected_shape == () and got == () and worst is not None:
            # One number: what it is, what it should be, how close it must come.
            allowed = f" (allowed ±{comparison.allowed:.2g})" if not math.isnan(worst.gap) else ""
            return [
                ("got", fmt_number(worst.got, worst.expected)),
                ("expected", f"{fmt_number(worst.expected, worst.got)}{allowed}"),
            ]
        got_shape = fmt_shape(got) if got is not None else "-"
        facts = [("shape", f"expected {fmt_shape(comparison.expected_shape)}   got {got_shape}")]
        if worst is not None:
            total = comparison.total
            share = 100 * comparison.mismatched / total if total else 0
            facts.append(
                ("mismatched", f"{comparison.mismatched} of {total} values ({share:.0f}%)")
            )
            allowed = f" (allowed ±{comparison.allowed:.2g})" if not math.isnan(worst.gap) else ""
            got_text = fmt_number(worst.got, worst.expected)
            want_text = fmt_number(worst.expected, worst.got)
            where = fmt_index(worst.index)
            facts.append(
                ("largest gap", f"at {where}: got {got_text}, expected {want_text}{allowed}")
            )
        return facts

    def listing(self, comparison: Comparison) -> tuple[list[tuple[str, ...]], int]:
        if not comparison.rows or comparison.expected_shape == ():
            return [], 0
        rows = [
            (fmt_index(m.index), fmt_number(m.got, m.expected), fmt_number(m.expected, m.got))
            for m in comparison.rows
        ]
        return [("at", "got", "expected"), *rows], comparison.mismatched - len(comparison.rows)

    # As a part of a structured value (``list[float]``, ``dict[str, float]``):

    def describe(self, many: bool = False) -> str:
        return "numbers" if many else "a number"

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        if tag_of(value) == DENSE:
            return nested(read_numbers(value))
        value = as_lists(_listed(value))
        if self.problem(value) is not None:
            raise Unreadable("a number", path)
        return value

    def toml(self, value: Any) -> Any:
        return value

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        got = _listed(got)
        where = _where(path) or "the top"
        if isinstance(want, (int, float)):
            if isinstance(got, bool) or not isinstance(got, (int, float)):
                return _type_difference(path, got)
            # want as a float too: a set's members are checked as diff(member, member).
            if agrees(_float(got), _float(want), tol.rtol, tol.atol):
                return None
            if tol.nan_equal and math.isnan(got) and math.isnan(want):
                return None
            allowed = allowance(want, tol.rtol, tol.atol)
            return Difference(
                Problem.VALUES,
                path,
                f"at {where}: expected {fmt_number(want, got)}, got {fmt_number(got, want)} "
                f"(allowed ±{allowed:.2g})",
            )
        if not isinstance(got, list):
            return _type_difference(path, got)
        verdict = compare(want, got, tol.rtol, tol.atol)
        if verdict.passed:
            return None
        if verdict.problem in (Problem.VALUES, Problem.NONFINITE) and verdict.worst is not None:
            numbers = verdict.got is not None and verdict.expected is not None
            if tol.nan_equal and numbers:
                assert verdict.got is not None and verdict.expected is not None
                if close(verdict.got, verdict.expected, tol.rtol, tol.atol):
                    return None
            worst = verdict.worst
            return Difference(
                Problem.VALUES,
                path,
                f"at {where}: {verdict.mismatched} of {verdict.total} values differ (the largest "
                f"gap at {fmt_index(worst.index)}: got {fmt_number(worst.got, worst.expected)}, "
                f"expected {fmt_number(worst.expected, worst.got)})",
                count=verdict.mismatched,
            )
        if verdict.problem == Problem.SHAPE:
            return Difference(
                Problem.SHAPE,
                path,
                f"at {where}: expected shape {fmt_shape(verdict.expected_shape)}, got "
                f"{fmt_shape(verdict.got_shape)}",
                lead="Return the expected shape",
            )
        return Difference(Problem.TYPE, path, f"at {where}: {verdict.headline.rstrip('.')}")


def _listed(value: Any) -> Any:
    """Tuples as lists, for the numeric rule (a tuple of numbers is numbers)."""
    if isinstance(value, (list, tuple)):
        return [_listed(item) for item in value]
    return value


def _float(value: float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _number(value: Any) -> bool:
    """Whether *value* is a number as format version 1 writes one (a bool is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shape(value: Any, leaf: Callable[[Any], bool] = _number) -> tuple[int, ...] | None:
    """The shape of a *leaf* or a rectangular nested list (or tuple) of leaves, else None:
    by default of numbers, as TOML gives them."""
    if leaf(value):
        return ()
    if not isinstance(value, (list, tuple)):
        return None
    if not value:
        return (0,)
    shapes = {_shape(item, leaf) for item in value}
    if len(shapes) != 1 or None in shapes:
        return None
    (inner,) = shapes
    assert inner is not None
    return (len(value), *inner)


# --- format version 2: exact and structured kinds ------------------------------------------


class Unreadable(ValueError):
    """A value that is not a value of its kind (as an expected value, or a reference's answer):
    :attr:`want` is what it must be, :attr:`path` where it is not."""

    def __init__(self, want: str, path: tuple[Any, ...] = ()) -> None:
        super().__init__(want)
        self.want = want
        self.path = path

    def __str__(self) -> str:
        return self.want


def decode(value: Any) -> Any:
    """An encoded answer as Python values again (:func:`pytest_lessons.isolation.answers
    .decode`): a mapping as :class:`Pairs` (its keys as they were), a set as :class:`Items`,
    a tensor a :class:`TensorAnswer`, anything unreadable an :class:`Other`. The last answers
    decoded are kept
    with their decodings until :func:`forget_decoded`: the judge, the watch-outs and the words each
    ask for it, and a learner's answer of a million nested lists took 0.8 s a decoding."""
    for encoded, decoded in _LAST:
        if encoded is value:
            return decoded
    try:
        decoded = answers.decode(value, Pairs.of, Items.of)
    except answers.Damaged:
        raise Unreadable("a damaged answer") from None
    if type(value) in (list, dict):
        # A few: a case's judge and watch-outs alternate between the learner's answer, the
        # expected one and a mistake's.
        _LAST[:] = [(value, decoded), *_LAST[:3]]
    return decoded


#: The last encoded answers :func:`decode` decoded, with their decodings (see there).
_LAST: list[tuple[Any, Any]] = []


def forget_decoded() -> None:
    """Drop the decoding :func:`decode` keeps: once a case is graded, so that no answer
    outlives its case in the grader's memory."""
    _LAST.clear()


def _hashable(value: Any) -> Any:
    """*value* as a key of a dict or an item of a set: lists as tuples. For an expected value
    only (the author's, from TOML or the reference): a learner's answer is never hashed
    (see :func:`order`)."""
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    try:
        hash(value)
    except TypeError:
        return Other(f"a {type(value).__name__}")
    return value


# The ranks of the kinds of value in an order key (see order()).
_NUMBER, _NAN, _TEXT, _BYTES, _NONE, _TUPLE, _SET, _ALONE = range(8)
#: Types whose own order is their order keys' among values of that one type: a set or the
#: keys of a mapping of one of them are sorted and matched as they are, at C speed.
_PLAIN_KEYS = {int: _NUMBER, str: _TEXT, bytes: _BYTES}


def order(value: Any) -> tuple[Any, ...]:
    """The key a member of a set or a key of a mapping is sorted and matched by, so that no
    hash table of the learner's values is ever built (ints that share one hash, ``k + i *
    (2**61 - 1)``, make building one quadratic). Two decoded values have equal keys when
    Python finds them equal (1, 1.0 and True alike, a tuple by its items, a set by its
    members), but NaN is equal to NaN (json reads every NaN as one object, so a set's NaN was
    always its own); an :class:`Other` or a tensor equals nothing else. Keys of any two
    values compare."""
    kind = type(value)
    if kind is int or kind is bool:
        return (_NUMBER, value)
    if kind is float:
        return (_NAN, 0) if value != value else (_NUMBER, value)
    if kind in _PLAIN_KEYS:
        return (_PLAIN_KEYS[kind], value)
    if value is None:
        return (_NONE, 0)
    if kind is tuple:
        return (_TUPLE, tuple(map(order, value)))
    if kind is Items:
        return (_SET, tuple(value.keys()))
    if kind is frozenset:  # an expected value's set (read from TOML or the reference)
        return (_SET, tuple(sorted(map(order, value))))
    return (_ALONE, id(value))


@dataclass(frozen=True)
class _Keyed:
    """Values sorted by their order keys, each key once."""

    index: list[int]
    """Positions in the values, in key order (of a key's run: the first and the last)."""
    last: list[int]
    keys: Sequence[Any]
    """The sorted keys: the values themselves where :attr:`plain`, else :func:`order`'s."""
    plain: Any
    """The values' one plain type (see :func:`_plain`), or None."""


def _keyed(values: Sequence[Any]) -> _Keyed:
    """*values* sorted by key (C-speed where all are of one plain type), equal keys once."""
    plain = _plain(values)
    keys: Sequence[Any] = values if plain is not None else list(map(order, values))
    index = sorted(range(len(keys)), key=keys.__getitem__)
    ranked = [keys[i] for i in index]
    if not any(map(operator.eq, ranked, itertools.islice(ranked, 1, None))):
        return _Keyed(index, index, ranked, plain)
    first: list[int] = []
    last: list[int] = []
    unique: list[Any] = []
    for at, key in zip(index, ranked):  # only a forged answer repeats a key
        if unique and unique[-1] == key:
            last[-1] = at
            continue
        first.append(at)
        last.append(at)
        unique.append(key)
    return _Keyed(first, last, unique, plain)


def _plain(values: Sequence[Any]) -> Any:
    """The one type of *values* when their own order is their order keys' (ints, strings,
    bytes, or tuples of one of those), so that they are sorted and matched as they are, at C
    speed: that type (``(tuple, int)`` for tuples of ints); else None."""
    types = set(map(type, values))
    if len(types) != 1:
        return None
    (only,) = types
    if only in _PLAIN_KEYS:
        return only
    if only is tuple:
        inner = set(map(type, itertools.chain.from_iterable(values)))
        if len(inner) == 1 and inner <= set(_PLAIN_KEYS):
            return (tuple, inner.pop())
    return None


def _full(keyed: _Keyed) -> list[Any]:
    """*keyed*'s keys as :func:`order` gives them (for matching against another type's)."""
    return list(keyed.keys) if keyed.plain is None else list(map(order, keyed.keys))


def _comparable(a: _Keyed, b: _Keyed) -> tuple[Sequence[Any], Sequence[Any]]:
    if a.plain is not None and a.plain == b.plain:
        return a.keys, b.keys
    return _full(a), _full(b)


@dataclass(frozen=True)
class _Match:
    """Two sorted key lists merged: what only one holds (the first few, and how many), and
    the positions of the keys both hold."""

    only_a: list[int]
    only_a_total: int
    only_b: list[int]
    only_b_total: int
    both: list[tuple[int, int]]


#: How many of the members a merge keeps that only one side holds (the words show 5).
_KEPT = 8


def _match(a: _Keyed, b: _Keyed) -> _Match:
    """Match *a*'s keys with *b*'s (positions are into their keys lists): the smaller's each
    found in the larger by bisection, at C speed, with no hash table of either."""
    ka, kb = _comparable(a, b)
    if ka == kb:
        return _Match([], 0, [], 0, list(zip(range(len(ka)), range(len(kb)))))
    swap = len(ka) > len(kb)
    small, large = (kb, ka) if swap else (ka, kb)
    hits: list[tuple[int, int]] = []
    only_small: list[int] = []
    for i, key in enumerate(small):
        j = bisect.bisect_left(large, key)
        if j < len(large) and large[j] == key:
            hits.append((i, j))
        elif len(only_small) < _KEPT:
            only_small.append(i)
    taken = {j for _, j in hits}  # positions, not the learner's values
    only_large: list[int] = []
    for j in range(len(large)):  # stops after at most len(small) + _KEPT steps
        if len(only_large) == _KEPT:
            break
        if j not in taken:
            only_large.append(j)
    n_small, n_large = len(small) - len(hits), len(large) - len(hits)
    if swap:
        both = [(j, i) for i, j in hits]
        return _Match(only_large, n_large, only_small, n_small, both)
    return _Match(only_small, n_small, only_large, n_large, hits)


@dataclass(frozen=True, eq=False)
class Items:
    """A set, decoded: its members in the order of their keys (:func:`order`), each once.
    Never a frozenset of the learner's values, whose hashes learner code chooses."""

    members: Sequence[Any]
    keyed: _Keyed
    """The members' keys (``keyed.index`` unused: the members are in key order)."""

    @classmethod
    def of(cls, values: Sequence[Any]) -> Items:
        plain = _plain(values)
        if plain is not None:  # sorted as they are, at C speed (a child's set comes sorted)
            members = keys = sorted(values)
        else:
            found = list(map(order, values))
            index = sorted(range(len(found)), key=found.__getitem__)
            members, keys = [values[i] for i in index], [found[i] for i in index]
        if any(map(operator.eq, keys, itertools.islice(keys, 1, None))):  # forged repeats
            kept = [0, *(i for i in range(1, len(keys)) if keys[i] != keys[i - 1])]
            members, keys = [members[i] for i in kept], [keys[i] for i in kept]
        return cls(members, _Keyed([], [], keys, plain))

    def keys(self) -> list[Any]:
        """Each member's :func:`order` key, in order."""
        return _full(self.keyed)

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.members)

    def __repr__(self) -> str:
        return "{" + ", ".join(map(repr, self.members)) + "}" if self.members else "set()"


@dataclass(frozen=True, eq=False)
class Pairs:
    """A mapping, decoded: its keys and values in the order they came (a key given twice:
    where it first came, with its last value, as ``dict()`` keeps it), and its keys sorted
    by :func:`order` to be matched. Never a dict of the learner's keys (see :class:`Items`)."""

    keys: tuple[Any, ...]
    values: tuple[Any, ...]
    keyed: _Keyed
    """The keys in key order: ``keyed.index`` holds their positions in :attr:`keys`."""

    @classmethod
    def of(cls, keys: Sequence[Any], values: Sequence[Any]) -> Pairs:
        keyed = _keyed(keys)
        if keyed.last is keyed.index:  # no key twice: the pairs as they came
            return cls(tuple(keys), tuple(values), keyed)
        # Only a forged answer gives a key twice. In the order the keys first came:
        firsts, lasts = keyed.index, keyed.last
        came = sorted(range(len(firsts)), key=firsts.__getitem__)
        at = [0] * len(came)
        for position, rank in enumerate(came):
            at[rank] = position
        return cls(
            tuple(keys[firsts[rank]] for rank in came),
            tuple(values[lasts[rank]] for rank in came),
            _Keyed(at, at, keyed.keys, keyed.plain),
        )

    def items(self) -> Iterator[tuple[Any, Any]]:
        return zip(self.keys, self.values)

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "}"


def what_is(value: Any) -> str:
    """What a decoded answer (or part of one) is, in words: ``a float``, ``a list``."""
    if value is None:
        return "None"
    if isinstance(value, Other):
        return value.what
    if isinstance(value, TensorAnswer):
        return f"a {value.type} ({value.dtype}, shape {fmt_index(value.shape)})"
    if isinstance(value, Items):
        return "a set"
    if isinstance(value, Pairs):
        return "a dict"
    names = {
        bool: "a bool",
        int: "an int",
        float: "a float",
        str: "a string",
        bytes: "bytes",
        list: "a list",
        tuple: "a tuple",
        dict: "a dict",
        frozenset: "a set",
    }
    return names.get(type(value), f"a {type(value).__name__}")


def loosely_same(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two encoded answers hold the same values, whatever holds them: a tensor is its
    values, a tuple a list, and a float equal to an int is that int. Ints match only ints
    exactly; a float matches within *rtol* and *atol* (NaN matches NaN). For the watch-outs:
    a learner's answer of the wrong type (a tensor, floats for ints) still tells which mistake
    made its values."""
    return _alike(_loose(_safe_decode(a)), _loose(_safe_decode(b)), rtol, atol)


def same_type(a: Any, b: Any) -> bool:
    """Whether two encoded answers are held the same way: a tensor of one dtype, a list of
    ints, a tuple of strings. Among watch-outs whose mistakes give a wrong-typed answer's
    values (an eye as floats, an eye as booleans), the one of the same type is the mistake the
    learner made."""
    return bool(_held(_safe_decode(a)) == _held(_safe_decode(b)))


def _held(value: Any, depth: int = 0) -> Any:
    if isinstance(value, TensorAnswer):
        return ("tensor", value.dtype)
    if depth > 8:
        return None
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, _held(value[0], depth + 1) if value else None)
    if isinstance(value, Pairs):
        return ("dict", _held(value.values[0] if value.values else None, depth + 1))
    if isinstance(value, Items):
        return "set"
    return type(value).__name__


def _loose(value: Any) -> Any:
    if isinstance(value, TensorAnswer):
        return _loose(_safe_decode(value.values)) if value.values is not None else value
    if isinstance(value, (list, tuple)):
        return [_loose(item) for item in value]
    if isinstance(value, Pairs):
        return Pairs(value.keys, tuple(_loose(item) for item in value.values), value.keyed)
    return value


def _alike(a: Any, b: Any, rtol: float, atol: float) -> bool:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        if type(a) is int and type(b) is int:
            return a == b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return bool(agrees(a, b, rtol, atol))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_alike(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, Pairs) and isinstance(b, Pairs):
        found = _match(a.keyed, b.keyed)
        if found.only_a_total or found.only_b_total:
            return False
        return all(
            _alike(a.values[a.keyed.index[i]], b.values[b.keyed.index[j]], rtol, atol)
            for i, j in found.both
        )
    if isinstance(a, Items) and isinstance(b, Items):
        found = _match(a.keyed, b.keyed)
        return not found.only_a_total and not found.only_b_total
    return type(a) is type(b) and bool(a == b)


def _where(path: tuple[Any, ...]) -> str:
    """A place in a value: ``[2, 3]`` in nested lists, ``[256][0]`` under a key (a path's
    parts are ``(index,)`` for a list or tuple position, ``("key", key)`` for a key)."""
    if all(len(part) == 1 for part in path):
        return fmt_index(tuple(part[0] for part in path))
    if len(path) == 1:  # a mapping's own key, which "[97]" would read as a list position
        return f"key {path[0][1]!r}"
    return "".join(f"[{part[1]!r}]" if len(part) == 2 else f"[{part[0]}]" for part in path)


def _position(path: tuple[Any, ...]) -> str:
    """:func:`_where`, but ``position 17`` for a place in a flat list (a token sequence)."""
    if len(path) == 1 and len(path[0]) == 1:
        return f"position {path[0][0]}"
    return _where(path)


def _show(value: Any) -> str:
    """A short rendering of one value of an answer, for the words (a float32 value as
    float32 writes it: 0.2, not 0.20000000298023224); never the repr of all of a long string
    or a large tuple (which could be the size of the answer)."""
    text = float_text(value) if type(value) is float else _SHORT.repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Short(reprlib.Repr):
    """Reprs bounded before they are made: a string or bytes is cut, then rendered."""

    def repr_bytes(self, x: bytes, level: int) -> str:
        cut = x[: self.maxstring]
        return repr(cut) + ("..." if len(x) > len(cut) else "")


_SHORT = _Short()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlevel = 4


@dataclass(frozen=True)
class Difference:
    """Where and how an answer first differs from the expected value."""

    problem: Problem
    path: tuple[Any, ...]
    text: str
    """The difference in words, without what to do: ``at position 17: expected 50256, got
    50255``; for a wrong type, empty (the kind at the top says it, with :attr:`got`)."""
    got: str = ""
    """For a wrong type: what the answer holds there, in words."""
    lead: str = "Check your calculation"
    """What to do, before the difference."""
    facts: tuple[tuple[str, str], ...] = ()
    count: int = 1
    """How many places differ (where that was counted)."""
    total: int = 0


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    nan_equal: bool = False
    """NaN matches NaN (two answers alike, for the watch-outs)."""


def _type_difference(path: tuple[Any, ...], got: Any) -> Difference:
    return Difference(Problem.TYPE, path, "", got=what_is(got))


class Exact:
    """What every kind of format version 2 shares: an expected value is read into Python
    values (:meth:`read`), the answer decoded (:func:`decode`), and the two walked together
    (:meth:`diff`) to the first place they differ, which the words name. Subclasses give
    :attr:`name`, :meth:`describe`, :meth:`read`, :meth:`diff` and :meth:`toml`."""

    name = "exact"
    offers_evidence = False

    def describe(self, many: bool = False) -> str:
        """The kind in words: ``a list of ints`` (or, with *many*, ``lists of ints``)."""
        raise NotImplementedError

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        """*value* (as TOML writes it, or encoded from the worker) as a Python value of this
        kind; :class:`Unreadable` when it is not one."""
        raise NotImplementedError

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        """The first difference of the decoded answer *got* from the read value *want*."""
        raise NotImplementedError

    def toml(self, value: Any) -> Any:
        """A read value as ``exercise.toml`` writes it (which :meth:`read` reads back)."""
        return value

    # the Kind protocol, from the four above

    def accepts(self, value: Any) -> bool:
        return self.problem(value) is None

    def problem(self, value: Any) -> str | None:
        try:
            self.read(value)
        except Unreadable as error:
            where = f" ({_where(error.path)} is not {error.want})" if error.path else ""
            return f"must be {self.describe()}{where}"
        return None

    def compare(self, expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
        want = self.read(expected)
        try:
            got = decode(answer)
        except Exception:  # a damaged packing: not a value at all
            got = Other("an answer that could not be read")
        found = self.diff(want, got, (), Tolerance(rtol, atol))
        if found is None:
            return Comparison(True, Problem.PASSED, "", expected_shape=(), kind=self.name)
        return self.verdict(found)

    def verdict(self, found: Difference) -> Comparison:
        """The comparison that says *found* to the learner."""
        if found.problem == Problem.TYPE:
            at = f" at {_where(found.path)}" if found.path else ""
            if found.text:
                headline = f"Return {self.describe()}: {found.text}."
            elif found.got == "None" and not found.path:
                headline = (
                    f"Return {self.describe()}: solve returned None, which usually means it "
                    "has no `return` line."
                )
            else:
                headline = f"Return {self.describe()}: got {found.got}{at}."
            problem = Problem.NONE if found.got == "None" and not found.path else Problem.TYPE
        else:
            headline, problem = f"{found.lead}: {found.text}.", found.problem
        facts = list(found.facts)
        if found.total and found.count:
            facts.append(("differ", f"{found.count} of {plural(found.total, 'position')}"))
        return Comparison(
            False,
            problem,
            headline,
            expected_shape=(),
            kind=self.name,
            evidence=tuple(facts),
            mismatched=found.count,
            total=found.total,
        )

    def same(self, a: Any, b: Any, rtol: float, atol: float) -> bool:
        return self.diff(self.read(a), decode(b), (), Tolerance(rtol, atol, True)) is None

    def usable(self, answer: Any) -> bool:
        try:
            self.read(answer)
        except Exception:  # any value not of this kind, a damaged tag too
            return False
        return True

    def plain(self, answer: Any) -> Any:
        return self.toml(self.read(answer))

    def facts(self, comparison: Comparison) -> list[tuple[str, str]]:
        return list(comparison.evidence) or [("compared", f"exactly, as {self.describe()}")]

    def listing(self, comparison: Comparison) -> tuple[list[tuple[str, ...]], int]:
        return [], 0


def _decoded(value: Any) -> Any:
    """An encoded value decoded; a TOML value as it is (a table stays a table)."""
    if isinstance(value, (list, dict)) and _has_tag(value):
        return decode(value)
    return value


def _has_tag(value: Any) -> bool:
    if isinstance(value, dict):
        return TAG in value
    return isinstance(value, list) and any(_has_tag(item) for item in value[:1])


class Scalar(Exact):
    """A value of one Python type, compared exactly: ``int``, ``bool``, ``str``, ``bytes``."""

    def __init__(self, name: str, type_: type, one: str, many: str) -> None:
        self.name, self.type, self.one, self.many = name, type_, one, many

    def describe(self, many: bool = False) -> str:
        return self.many if many else self.one

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        value = _decoded(value)
        if self.type is bytes:
            if isinstance(value, dict) and set(value) == {"hex"} and isinstance(value["hex"], str):
                try:
                    return bytes.fromhex(value["hex"])
                except ValueError:
                    raise Unreadable(
                        'bytes (hex = "..." holds pairs of hex digits)', path
                    ) from None
            if isinstance(value, str):
                return value.encode("utf-8")
        if type(value) is not self.type:
            raise Unreadable(self.one, path)
        return value

    def toml(self, value: Any) -> Any:
        return {"hex": value.hex()} if self.type is bytes else value

    def wrong_type(self, got: Any) -> bool:
        return type(got) is not self.type

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        if self.wrong_type(got):
            return _type_difference(path, got)
        if got == want:
            return None
        if self.type is str:
            return _text_difference(want, got, path)
        if self.type is bytes:
            return _bytes_difference(want, got, path)
        at = f" at {_where(path)}" if path else ""
        if self.type is bool:
            return Difference(
                Problem.VALUES, path, f"expected {want}{at}, got {got}", lead="Check your condition"
            )
        want, got = _digits(want), _digits(got)
        text = (
            f"at {_position(path)}: expected {want}, got {got}"
            if path
            else f"expected {want}, got {got}"
        )
        return Difference(Problem.VALUES, path, text)


def _digits(value: int) -> str:
    """An int for the words: a learner's may have thousands of digits, shown by its ends."""
    text = str(value)
    if len(text) <= 40:
        return text
    return f"{text[:12]}...{text[-12:]} ({len(text.lstrip('-')):,} digits)"


def _window(items: Sequence[Any], at: int, show: Callable[[Any], str], radius: int = 3) -> str:
    """The items around position *at*, the one there in brackets: ``… 12 13 [50256] 14 …``."""
    start, end = max(0, at - radius), min(len(items), at + radius + 1)
    shown = [f"[{show(items[i])}]" if i == at else show(items[i]) for i in range(start, end)]
    if at >= len(items):
        shown.append("[end]")
    return " ".join(["…"] * (start > 0) + shown + ["…"] * (end < len(items)))


def _char(text: str, at: int) -> str:
    if at >= len(text):
        return "the end of the text"
    return f"{text[at]!r} (U+{ord(text[at]):04X})"


def _first_unequal(a: Sequence[Any], b: Sequence[Any]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _text_difference(want: str, got: str, path: tuple[Any, ...]) -> Difference:
    at = _first_unequal(want, got)
    where = f" of {_where(path)}" if path else ""
    text = f"at character {at}{where}: expected {_char(want, at)}, got {_char(got, at)}"
    start = max(0, at - 20)
    facts = (
        (
            "expected",
            ("…" if start else "")
            + repr(want[start : at + 20])
            + ("…" if at + 20 < len(want) else ""),
        ),
        (
            "got",
            ("…" if start else "")
            + repr(got[start : at + 20])
            + ("…" if at + 20 < len(got) else ""),
        ),
        ("lengths", f"expected {plural(len(want), 'character')}, got {len(got)}"),
    )
    return Difference(Problem.VALUES, path, text, lead="Check your text", facts=facts)


def _bytes_difference(want: bytes, got: bytes, path: tuple[Any, ...]) -> Difference:
    at = _first_unequal(want, got)
    where = f" of {_where(path)}" if path else ""

    def byte(data: bytes) -> str:
        return f"0x{data[at]:02x}" if at < len(data) else "the end"

    text = f"at byte {at}{where}: expected {byte(want)}, got {byte(got)}"
    facts = (("expected", _show(want)), ("got", _show(got)))
    return Difference(Problem.VALUES, path, text, lead="Check your bytes", facts=facts)


INT = Scalar("int", int, "an int", "ints")
BOOL = Scalar("bool", bool, "a bool (True or False)", "bools")
STR = Scalar("str", str, "a string", "strings")
BYTES = Scalar("bytes", bytes, "bytes", "bytes")


class Seq(Exact):
    """A list (``list[int]``: its items of one kind, any lengths, so ragged lists too) or a
    tuple (``tuple[int, str]``: one kind per position). A tuple and a list are both accepted
    for either: the order and the items decide, as Python's own sequences compare by
    value."""

    def __init__(self, items: tuple[Part, ...], fixed: bool) -> None:
        self.items, self.fixed = items, fixed
        inner = ", ".join(item.name for item in items)
        self.name = f"tuple[{inner}]" if fixed else f"list[{inner}]"

    def item(self, index: int) -> Any:
        return self.items[index] if self.fixed else self.items[0]

    def describe(self, many: bool = False) -> str:
        if self.fixed:
            parts = [item.describe() for item in self.items]
            joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
            return f"tuples of {joined}" if many else f"a tuple of {joined}"
        return f"{'lists' if many else 'a list'} of {self.items[0].describe(many=True)}"

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        value = _decoded(value)
        if not isinstance(value, (list, tuple)):
            raise Unreadable(self.describe(), path)
        if self.fixed and len(value) != len(self.items):
            raise Unreadable(self.describe(), path)
        item = self.items[0]
        if (
            isinstance(item, Scalar)
            and not self.fixed
            and item.type is not bytes
            and set(map(type, value)) <= {item.type}
        ):  # the common case, in one pass
            return list(value)
        read = [self.item(i).read(v, (*path, (i,))) for i, v in enumerate(value)]
        return tuple(read) if self.fixed else read

    def toml(self, value: Any) -> Any:
        return [self.item(i).toml(v) for i, v in enumerate(value)]

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        if not isinstance(got, (list, tuple)):
            return _type_difference(path, got)
        item = self.items[0]
        if not self.fixed and isinstance(item, Scalar):
            return self._flat(want, got, path, item)
        first: Difference | None = None
        differing = 0
        for i, (w, g) in enumerate(zip(want, got)):
            found: Difference | None = self.item(i).diff(w, g, (*path, (i,)), tol)
            if found is None:
                continue
            if found.problem == Problem.TYPE:
                return found
            first, differing = first or found, differing + found.count
        if len(got) != len(want):
            return self._length(want, got, path, first)
        if first is not None and differing > 1:
            total = len(_leaves(want)) if first.total else 0
            return replace(first, count=differing, total=total)
        return first

    def _length(
        self,
        want: Sequence[Any],
        got: Sequence[Any],
        path: tuple[Any, ...],
        first: Difference | None,
    ) -> Difference:
        of = f" at {_where(path)}" if path else ""
        text = f"expected {plural(len(want), 'item')}{of}, got {len(got)}"
        shorter = min(len(want), len(got))
        if first is not None:
            text += f"; the first difference is {first.text}"
        else:
            text += f"; the first {shorter} are right" if shorter else ""
        # The items themselves where the two part: a wrong length alone says nothing of
        # which ids came back.
        facts = first.facts if first is not None and first.facts else ()
        if not facts:
            show = str if self.items[0] is BOOL else _show
            facts = (
                ("expected", _window(want, shorter, show)),
                ("got", _window(got, shorter, show)),
            )
        return Difference(
            Problem.SHAPE, path, text, lead="Return the expected number of items", facts=facts
        )

    def _flat(
        self, want: list[Any], got: Sequence[Any], path: tuple[Any, ...], item: Scalar
    ) -> Difference | None:
        """Items of one exact type, compared in C-speed passes: 100,000 token ids are read,
        decoded and judged in about 25 ms (``benchmarks/kinds.py``)."""
        if set(map(type, got)) - {item.type}:
            at = next(i for i, g in enumerate(got) if type(g) is not item.type)
            return _type_difference((*path, (at,)), got[at])
        if len(got) == len(want) and list(got) == want:
            return None
        bad = [i for i, w, g in zip(count(), want, got) if w != g]
        if not bad:
            return self._length(want, got, path, None)
        at = bad[0]
        found = item.diff(want[at], got[at], (*path, (at,)), Tolerance(0, 0))
        assert found is not None
        show = _show if item.type is not bool else str
        facts = (("expected", _window(want, at, show)), ("got", _window(got, at, show)))
        found = replace(found, facts=facts + found.facts, count=len(bad), total=len(want))
        if len(got) != len(want):
            return self._length(want, got, path, found)
        return found


class Mapping(Exact):
    """A dict: the same keys (missing and extra ones named), each value compared by its
    kind. In TOML a table (its keys read by the key kind: ``"256"`` for the int 256, hex
    digits for bytes) or a list of ``[key, value]`` pairs (any key kind, tuples too)."""

    def __init__(self, key: Part, value: Part) -> None:
        self.key, self.value = key, value
        self.name = f"dict[{key.name}, {value.name}]"

    def describe(self, many: bool = False) -> str:
        head = "dicts" if many else "a dict"
        return f"{head} of {self.key.describe(many=True)} to {self.value.describe(many=True)}"

    def _key(self, text: str, path: tuple[Any, ...]) -> Any:
        kind = self.key
        try:
            if kind is INT and re.fullmatch(r"-?[0-9]+", text):
                return int(text)
            if kind is BYTES:
                return bytes.fromhex(text)
            if kind is BOOL and text in ("true", "false"):
                return text == "true"
        except ValueError:
            pass
        if kind is STR or isinstance(kind, Auto):
            return text
        raise Unreadable(
            f"{self.describe()} (a key {text!r} is not {kind.describe()}; write a list of "
            "[key, value] pairs for keys a table cannot spell)",
            path,
        )

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        value = _decoded(value)
        if isinstance(value, Pairs):  # an encoded mapping (a reference's answer)
            pairs = list(value.items())
        elif isinstance(value, dict):
            pairs = [
                (self._key(k, path) if isinstance(k, str) and self.key is not STR else k, v)
                for k, v in value.items()
            ]
        elif isinstance(value, list) and all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in value
        ):
            pairs = [(p[0], p[1]) for p in value]
        else:
            raise Unreadable(self.describe(), path)
        out = {}
        for k, v in pairs:
            key = _hashable(self.key.read(k, path))
            out[key] = self.value.read(v, (*path, ("key", key)))
        return out

    def toml(self, value: Any) -> Any:
        if self.key in (STR, INT, BYTES) or (
            isinstance(self.key, Auto) and all(isinstance(k, str) for k in value)
        ):
            spell = (lambda k: k.hex()) if self.key is BYTES else str
            return {spell(k): self.value.toml(v) for k, v in value.items()}
        return [[self.key.toml(k), self.value.toml(v)] for k, v in value.items()]

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        if not isinstance(got, Pairs):
            return _type_difference(path, got)
        if not isinstance(self.key, Auto):
            wrong = _first_wrong(self.key, got.keys, path, tol)
            if wrong is not None:
                return Difference(
                    Problem.TYPE, path, "", got=f"{what_is(wrong)} as a key ({_show(wrong)})"
                )
        # Matched through sorted keys, never a dict of the learner's keys (see Pairs).
        expected = Pairs.of(list(want), list(want.values()))
        found = _match(expected.keyed, got.keyed)
        if found.only_a_total or found.only_b_total:
            missing = [expected.keys[expected.keyed.index[i]] for i in found.only_a]
            extra = [got.keys[got.keyed.index[j]] for j in found.only_b]
            of = f" of {_where(path)}" if path else ""
            parts = []
            if found.only_a_total:
                parts.append(f"missing {_keys(missing, found.only_a_total)}")
            if found.only_b_total:
                parts.append(f"extra {_keys(extra, found.only_b_total)}")
            return Difference(
                Problem.SHAPE,
                path,
                f"{' and '.join(parts)}{of}",
                lead="Return every expected key and no other",
                facts=(("keys", f"expected {len(want)}, got {len(got)}"),),
            )
        # Positions, not keys, index this table: the learner's keys are never hashed.
        matched = {expected.keyed.index[i]: got.keyed.index[j] for i, j in found.both}
        first, differing = None, 0
        for position, (key, w) in enumerate(want.items()):
            g = got.values[matched[position]]
            found_here: Difference | None = self.value.diff(w, g, (*path, ("key", key)), tol)
            if found_here is None:
                continue
            if found_here.problem == Problem.TYPE:
                return found_here
            first, differing = first or found_here, differing + 1
        return replace(first, count=differing) if first is not None else None


def _keys(keys: list[Any], total: int) -> str:
    """The first keys of *total*, in words: ``keys 'a', 'b' and 3 more``."""
    shown = ", ".join(_show(k) for k in keys[:5])
    more = f" and {total - 5} more" if total > 5 else ""
    return f"{noun(total, 'key')} {shown}{more}"


def _first_wrong(kind: Part, values: Sequence[Any], path: tuple[Any, ...], tol: Tolerance) -> Any:
    """The first of *values* that is not a value of *kind* (a set's member, a mapping's key),
    else None: in one C-speed pass over their types for a scalar kind."""
    if isinstance(kind, Scalar):
        if set(map(type, values)) <= {kind.type}:
            return None
        return next(v for v in values if type(v) is not kind.type)
    for value in values:
        if kind.diff(value, value, path, tol) is not None:
            return value if value is not None else _NONE_MEMBER
    return None


#: None as the wrong member of a set (told apart from "nothing wrong").
_NONE_MEMBER = Other("None")


class Group(Exact):
    """A set (``set[str]``): the same items in any order, missing and extra ones named. In
    TOML a list."""

    def __init__(self, item: Part) -> None:
        self.item = item
        self.name = f"set[{item.name}]"

    def describe(self, many: bool = False) -> str:
        return f"{'sets' if many else 'a set'} of {self.item.describe(many=True)}"

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        value = _decoded(value)
        if not isinstance(value, (list, tuple, frozenset, Items)):
            raise Unreadable(self.describe(), path)
        return frozenset(_hashable(self.item.read(v, path)) for v in value)

    def toml(self, value: Any) -> Any:
        items = [self.item.toml(v) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        if not isinstance(got, Items):
            found = _type_difference(path, got)
            if isinstance(got, (list, tuple)):
                return replace(
                    found,
                    text=f"got {what_is(got)} (build it with set(...))",
                )
            return found
        wrong = _first_wrong(self.item, got.members, path, tol)
        if wrong is not None:
            shown = "None" if wrong is _NONE_MEMBER else _show(wrong)
            return Difference(Problem.TYPE, path, "", got=f"{what_is(wrong)} in the set ({shown})")
        # Matched through sorted members, never a hash table of the learner's (see Items).
        expected = Items.of(list(want))
        merged = _match(expected.keyed, got.keyed)
        if not merged.only_a_total and not merged.only_b_total:
            return None
        parts = []
        if merged.only_a_total:
            missing = [expected.members[i] for i in merged.only_a]
            parts.append(
                f"missing {', '.join(_show(v) for v in missing[:5])}"
                + (f" and {merged.only_a_total - 5} more" if merged.only_a_total > 5 else "")
            )
        if merged.only_b_total:
            extra = [got.members[j] for j in merged.only_b]
            parts.append(
                f"not expected {', '.join(_show(v) for v in extra[:5])}"
                + (f" and {merged.only_b_total - 5} more" if merged.only_b_total > 5 else "")
            )
        of = f" in {_where(path)}" if path else ""
        return Difference(
            Problem.VALUES,
            path,
            f"{'; '.join(parts)}{of}",
            lead="Return the expected items",
            facts=(("items", f"expected {len(want)}, got {len(got)} (in any order)"),),
        )


class Optional(Exact):
    """A value of its kind or None (``int | None``, ``optional[int]``). TOML has no null:
    None is written ``{ none = true }``."""

    def __init__(self, inner: Part) -> None:
        self.inner = inner
        self.name = f"optional[{inner.name}]"

    def describe(self, many: bool = False) -> str:
        return f"{self.inner.describe(many)}, or None"

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        if value is None or value == {"none": True}:
            return None
        return self.inner.read(value, path)

    def toml(self, value: Any) -> Any:
        return {"none": True} if value is None else self.inner.toml(value)

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        if want is None:
            if got is None:
                return None
            at = f" at {_where(path)}" if path else ""
            text = f"expected None{at}, got {what_is(got)}"
            return Difference(Problem.VALUES, path, text, lead="Check which values are None")
        if got is None:
            at = f" at {_where(path)}" if path else ""
            text = f"expected {self.inner.describe()}{at}, got None"
            return Difference(Problem.VALUES, path, text, lead="Check which values are None")
        found: Difference | None = self.inner.diff(want, got, path, tol)
        return found


class Auto(Exact):
    """Inside an expected value no kind was declared for: each part judged by the kind its
    own value has (a string as text, a number within tolerance)."""

    name = "auto"

    def describe(self, many: bool = False) -> str:
        return "values" if many else "a value"

    def read(self, value: Any, path: tuple[Any, ...] = ()) -> Any:
        # infer's own last step: only the kinds a part can be have a read (KINDS' need not).
        return _kind_of_value(_toml_value(value)).read(value, path)

    def toml(self, value: Any) -> Any:
        return _kind_of_value(value).toml(value)

    def diff(self, want: Any, got: Any, path: tuple[Any, ...], tol: Tolerance) -> Difference | None:
        found: Difference | None = _kind_of_value(want).diff(want, got, path, tol)
        return found


AUTO = Auto()


#: torch.testing.assert_close's default tolerances by dtype, (rtol, atol): a tensor kind's
#: default where neither the exercise nor the case sets one. Integer and bool dtypes compare
#: exactly.
DTYPE_TOLERANCE: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
#: The dtypes a tensor kind may name.
DTYPES = (
    *DTYPE_TOLERANCE,
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
)


class Tensor:
    """A torch tensor (``tensor[float32]``): its dtype and shape checked and named first,
    then its values, within tolerance for a floating dtype (by the numeric kind's rule, so the
    detectors and watch-outs see them) and exactly for integers and bools. The expected
    value in TOML is a nested list; its dtype is the declared one, else what
    ``torch.tensor(expected)`` would make (int64 for ints, bool for booleans, float32)."""

    offers_evidence = True

    def __init__(self, dtype: str | None) -> None:
        self.dtype = dtype
        self.name = f"tensor[{dtype}]" if dtype else "tensor"

    def describe(self, many: bool = False) -> str:
        what = f"{self.dtype} tensor" if self.dtype else "tensor"
        return f"{what}s" if many else f"a {what}"

    def expected(self, value: Any) -> tuple[str, tuple[int, ...], Any]:
        """The expected dtype, shape and values (encoded or TOML) of *value*."""
        if tag_of(value) == TENSOR and "values" in value:
            dtype = str(value.get("dtype", "")).rpartition(".")[2]
            return dtype, tuple(int(s) for s in value.get("shape", ())), value["values"]
        plain = decode(value) if isinstance(value, dict) and TAG in value else value
        shape = _shape(plain, _scalar)
        if shape is None:
            raise Unreadable(f"{self.describe()} (a rectangular nested list)")
        leaves = _leaves(plain)
        if self.dtype:
            dtype = self.dtype
        elif leaves and all(type(v) is bool for v in leaves):
            dtype = "bool"
        elif all(type(v) is int for v in leaves):
            dtype = "int64"
        else:
            dtype = "float32"
        return dtype, shape, plain

    def accepts(self, value: Any) -> bool:
        return self.problem(value) is None

    def problem(self, value: Any) -> str | None:
        try:
            self.expected(value)
        except Unreadable as error:
            return f"must be {error}"
        return None

    def _exact_kind(self, dtype: str, depth: int) -> Exact:
        kind: Exact = BOOL if dtype == "bool" else INT
        for _ in range(depth):
            kind = Seq((kind,), fixed=False)
        return kind

    def compare(self, expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
        dtype, shape, values = self.expected(expected)
        want = f"a {dtype} tensor of shape {fmt_index(shape)}"
        if tag_of(answer) != TENSOR:
            got = what_is(_safe_decode(answer))
            return Comparison(
                False,
                Problem.NONE if answer is None else Problem.TYPE,
                f"Return a torch tensor: expected {want}, got {got}.",
                expected_shape=shape,
                kind=self.name,
            )
        got_dtype = str(answer.get("dtype", "")).rpartition(".")[2]
        got_shape = tuple(int(s) for s in answer.get("shape", ()))
        if got_dtype != dtype or got_shape != shape:
            problem = Problem.TYPE if got_dtype != dtype else Problem.SHAPE
            fix = (
                f"Return {want}"
                if got_dtype == dtype
                else f"Return {want} (convert with .to(torch.{dtype}))"
            )
            headline = f"{fix}: expected {want}, got {got_dtype} {fmt_index(got_shape)}."
            if problem == Problem.SHAPE and dtype in DTYPE_TOLERANCE and "values" in answer:
                # The values as numbers still let the detectors tell a transpose apart.
                verdict = compare(values, answer["values"], rtol, atol)
                return replace(verdict, headline=headline, kind=self.name, notes=())
            return Comparison(
                False,
                problem,
                headline,
                expected_shape=shape,
                got_shape=got_shape,
                kind=self.name,
            )
        if "values" not in answer:
            return Comparison(
                False,
                Problem.TYPE,
                f"Return a plain torch tensor: the values of your {answer.get('type', 'tensor')} "
                "could not be read.",
                expected_shape=shape,
                kind=self.name,
            )
        if dtype in DTYPE_TOLERANCE:
            verdict = compare(values, answer["values"], rtol, atol)
            return replace(verdict, kind=self.name)
        exact = self._exact_kind(dtype, len(shape))
        verdict = exact.compare(values, answer["values"], 0, 0)
        return replace(verdict, kind=self.name, expected_shape=shape, got_shape=got_shape)

    def same(self, a: Any, b: Any, rtol: float, atol: float) -> bool:
        dtype, shape, values = self.expected(a)
        other = self.expected(b)
        if (dtype, shape) != other[:2]:
            return False
        if dtype in DTYPE_TOLERANCE:
            return close(read_numbers(values), read_numbers(other[2]), rtol, atol)
        return bool(decode(values) == decode(other[2]))

    def usable(self, answer: Any) -> bool:
        try:
            self.expected(answer)
        except Exception:  # not a tensor's values
            return False
        return True

    def plain(self, answer: Any) -> Any:
        _, _, values = self.expected(answer)
        return decode(values) if isinstance(values, (dict, list)) else values

    def facts(self, comparison: Comparison) -> list[tuple[str, str]]:
        if comparison.evidence or comparison.got is None:
            return list(comparison.evidence) or [("compared", "dtype, shape, then values")]
        return NUMERIC.facts(comparison)

    def listing(self, comparison: Comparison) -> tuple[list[tuple[str, ...]], int]:
        return NUMERIC.listing(comparison) if comparison.got is not None else ([], 0)


def _safe_decode(value: Any) -> Any:
    try:
        return decode(value)
    except Exception:  # a damaged packing
        return Other("an answer that could not be read")


def _scalar(value: Any) -> bool:
    """Whether *value* is one element of a tensor: a number or a bool."""
    return isinstance(value, (bool, int, float))


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def default_tolerance(kinds: Sequence[str | None]) -> tuple[float, float] | None:
    """The default tolerance of a case whose outputs are of the declared *kinds*: the
    loosest of their tensors' dtypes (:data:`DTYPE_TOLERANCE`), or None when no output is a
    tensor of a floating dtype (then the format's own default applies)."""
    found = [
        DTYPE_TOLERANCE[k[7:-1]]
        for k in kinds
        if k and k.startswith("tensor[") and k[7:-1] in DTYPE_TOLERANCE
    ]
    if not found:
        return None
    return max(r for r, _ in found), max(a for _, a in found)


# --- kinds by name: a declared kind is a Python type expression ----------------------------


class KindError(ValueError):
    """A kind expression that cannot be read; the message says why."""


@dataclass(frozen=True)
class Word:
    """One word of the kind language, as a lesson writes it in ``outputs``: a kind alone
    (``int``) or one that holds others in brackets (``list[int]``). :data:`WORDS` is the one
    list of them: :func:`parse` reads by it and names it when a word is unknown, and the editor
    schema (``pytest_lessons/schema.py``) describes the ``kind`` key with its examples."""

    #: The word itself.
    name: str
    #: How the list of kinds shows it (``dict[..., ...]``).
    spelling: str
    #: Expressions that use it, for the schema's description.
    examples: tuple[str, ...]
    #: How many kinds its brackets hold: 0 for a kind alone, :data:`ANY` for any number.
    holds: int
    #: The kind, from the kinds in its brackets (none for a kind alone).
    build: Callable[[tuple[Part, ...]], Kind]


#: :attr:`Word.holds` of a word whose brackets hold any number of kinds (a tuple's).
ANY = -1

#: The words of the kind language, in the order the author's documentation lists them. A
#: kind lessons declare by name is one row here (see docs/contributors/recipes.md).
WORDS: tuple[Word, ...] = (
    Word("int", "int", ("int",), 0, lambda _: INT),
    Word("float", "float", ("float",), 0, lambda _: NUMERIC),
    Word("bool", "bool", ("bool",), 0, lambda _: BOOL),
    Word("str", "str", ("str",), 0, lambda _: STR),
    Word("bytes", "bytes", ("bytes",), 0, lambda _: BYTES),
    Word("list", "list[...]", ("list[int]",), 1, lambda parts: Seq(parts, fixed=False)),
    Word("tuple", "tuple[...]", ("tuple[int, str]",), ANY, lambda parts: Seq(parts, fixed=True)),
    Word("dict", "dict[..., ...]", ("dict[int, bytes]",), 2, lambda parts: Mapping(*parts)),
    Word("set", "set[...]", ("set[str]",), 1, lambda parts: Group(parts[0])),
    Word("optional", "optional[...]", ("int | None", "optional[int]"), 1, lambda p: Optional(p[0])),
    # tensor[float32]: its brackets hold a dtype, not a kind (parse reads them against DTYPES)
    Word("tensor", "tensor", ("tensor", "tensor[float32]"), 0, lambda _: Tensor(None)),
)

#: The words a comparison's kind may hold that no lesson writes: the default kind's name and a
#: part no kind was declared for (:func:`named` reads them back).
_UNWRITTEN: dict[str, Callable[[], Kind]] = {"numeric": lambda: NUMERIC, "auto": lambda: AUTO}


def known_kinds() -> str:
    """The kinds a lesson may write, as an error names them (from :data:`WORDS`)."""
    return ", ".join(word.spelling for word in WORDS)


def kind_examples() -> list[str]:
    """Every example expression of :data:`WORDS`, in order (for the editor schema)."""
    return [example for word in WORDS for example in word.examples]


def parse(text: str) -> Kind:
    """The kind a declared expression names, in Python's own type syntax: a word of
    :data:`WORDS` (``int``, ``float``, ``bool``, ``str``, ``bytes``, ``list[int]``,
    ``tuple[int, int]``, ``dict[int, bytes]``, ``set[str]``, ``optional[int]``, ``tensor`` and
    ``tensor[float32]``) or ``int | None``; nested as deep as needed
    (``list[tuple[bytes, bytes]]``). Python's own parser reads it (:func:`ast.parse`), and
    anything it reads that is no kind (a call, a dotted name, a number...) is refused.
    :class:`KindError`, whose words name what to change, if it cannot be read."""
    # Whitespace is free between words, newlines too, as the tokens of a TOML string.
    source = " ".join(text.split())
    if "#" in source:
        raise KindError(f'"{text}": remove the comment ("{source[source.index("#") :]}")')
    try:
        with warnings.catch_warnings():  # an escape in a string is refused, not warned of
            warnings.simplefilter("ignore")
            tree = ast.parse(source, mode="eval").body
    except SyntaxError as error:
        raise KindError(_unreadable(text, source, error.offset)) from None
    except (ValueError, RecursionError, MemoryError):  # a NUL byte; thousands of "|"
        raise KindError(_unreadable(text, source, None)) from None
    kind = _read(tree, text, source)
    if kind is None:
        raise KindError(f'"{text}": None alone is not a kind (write "int | None")')
    return kind


def _read(node: ast.expr, text: str, source: str) -> Kind | None:
    """The kind *node* of the expression *text* names, None for ``None``."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        members: list[Kind | None] = []
        stack: list[ast.expr] = [node]
        while stack:  # a loop, not recursion: int | int | ... may be long
            last = stack.pop()
            if isinstance(last, ast.BinOp) and isinstance(last.op, ast.BitOr):
                stack += [last.right, last.left]
            else:
                members.append(_read(last, text, source))
        kinds = [member for member in members if member is not None]
        if len(kinds) != 1:
            raise KindError(f'"{text}": a union may only add None to one kind (int | None)')
        return Optional(_part(kinds[0], text)) if len(members) > 1 else kinds[0]
    if isinstance(node, ast.Name):
        word, inner = node.id, None
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        word, inner = node.value.id, node.slice
    else:
        raise KindError(_refused(node, text, source))
    if word in _UNWRITTEN and inner is None:
        return _UNWRITTEN[word]()
    entry = next((w for w in WORDS if w.name == word), None)
    if entry is None:
        lower = f"write {word.lower()}; " if any(w.name == word.lower() for w in WORDS) else ""
        raise KindError(f'"{text}": unknown kind "{word}" ({lower}the kinds are {known_kinds()})')
    if inner is None:
        if entry.holds:
            raise KindError(f'"{text}": say what {word} holds, such as {word}[int]')
        return entry.build(())
    args = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    if word == "tensor":
        dtype = args[0].id if len(args) == 1 and isinstance(args[0], ast.Name) else None
        if dtype not in DTYPES:
            raise KindError(f'"{text}": the dtype must be one of ' + ", ".join(DTYPES))
        return Tensor(dtype)
    if not entry.holds:
        raise KindError(f'"{text}": {word} holds no other kind; write {word} alone')
    if word == "tuple" and any(_is_ellipsis(a) for a in args):
        raise KindError(f'"{text}": write list[...] for any number of items; tuple[...] names each')
    if not args:  # tuple[()]
        raise KindError(f'"{text}": say what {word} holds, such as {word}[int]')
    if entry.holds != ANY and len(args) != entry.holds:
        raise KindError(f'"{text}": {word}[...] takes {entry.holds} kind(s)')
    parts = [_read(arg, text, source) for arg in args]
    if any(part is None for part in parts):
        raise KindError(f'"{text}": None is written as "kind | None"')
    return entry.build(tuple(_part(part, text) for part in parts))


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


#: What each kind of Python expression that is no kind is called when it is refused.
_NOT_KINDS: dict[type, str] = {
    ast.Call: "a call",
    ast.Attribute: "a dotted name",
    ast.List: "a list",
    ast.Tuple: "several kinds without a tuple[...] around them",
    ast.Set: "a set",
    ast.Dict: "a dict",
    ast.Starred: "a starred expression",
    ast.Slice: "a slice",
    ast.BinOp: 'an operation: "| None" is the only one between kinds',
    ast.BoolOp: 'an operation: "| None" is the only one between kinds',
}


def _refused(node: ast.expr, text: str, source: str) -> str:
    """Why *node*, which Python reads but is no kind, is refused, and what to write."""
    while isinstance(node, ast.Subscript):  # typing.List[int]: what is wrong is typing.List
        node = node.value
    shown = ast.get_source_segment(source, node) or source
    if isinstance(node, ast.Constant):
        what = "a string" if isinstance(node.value, (str, bytes)) else "a value"
    else:
        what = _NOT_KINDS.get(type(node), "not a kind")
    if isinstance(node, ast.Tuple) and shown == source:
        return f'"{text}": write several values as tuple[{shown}]'
    return f'"{text}": write a kind such as list[int] or int | None; "{shown}" is {what}'


_CLOSER = {"[": "]", "(": ")", "{": "}"}


def _unreadable(text: str, source: str, offset: int | None) -> str:
    """What to change in *source*, which Python cannot read: a bracket left open, closed
    twice or by the wrong one; else where Python stops. Python's own message is not shown:
    it differs from version to version."""
    pairs = {closer: opener for opener, closer in _CLOSER.items()}
    opened: list[str] = []
    for at, char in enumerate(source, 1):
        if char in "[({":
            opened.append(char)
        elif char in pairs and not opened:
            return f'"{text}": remove the "{char}" at character {at}: nothing opens it'
        elif char in pairs and opened[-1] != pairs[char]:
            return f'"{text}": close its "{opened[-1]}" with "{_CLOSER[opened[-1]]}", not "{char}"'
        elif char in pairs:
            opened.pop()
    if opened:
        return f'"{text}": close its "{opened[-1]}" with "{_CLOSER[opened[-1]]}"'
    empty = re.search(r"([A-Za-z_]\w*)\s*\[\s*\]", source)
    if empty and empty.group(1) == "tensor":
        return f'"{text}": the dtype must be one of ' + ", ".join(DTYPES)
    if empty:
        return f'"{text}": say what {empty.group(1)} holds, such as {empty.group(1)}[int]'
    rest = (
        f'; it cannot be read from "{source[offset - 1 :]}"'
        if offset and 0 < offset <= len(source)
        else ""
    )
    return f'"{text}": write a kind in Python\'s type syntax, such as list[int] or int | None{rest}'


def _part(kind: Kind | None, text: str) -> Part:
    if not isinstance(kind, (Numeric, Exact)):  # a tensor (None is refused before)
        raise KindError(f'"{text}": a tensor can only be a whole output, not a part of one')
    return kind


def _kind_of_value(value: Any) -> Part:
    """The kind a Python value (read or decoded) has, for the parts of an expected value no
    kind was declared for: numbers stay numbers (within tolerance)."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, str):
        return STR
    if isinstance(value, bytes):
        return BYTES
    if isinstance(value, (dict, Pairs)):
        return Mapping(AUTO, AUTO)
    if isinstance(value, (frozenset, Items)):
        return Group(AUTO)
    if isinstance(value, tuple):
        return Seq(tuple(_kind_of_value(v) for v in value), fixed=True)
    if isinstance(value, list):
        if NUMERIC.problem(value) is None:
            return NUMERIC
        items = {_kind_of_value(v).name: _kind_of_value(v) for v in value}
        return Seq((items.popitem()[1] if len(items) == 1 else AUTO,), fixed=False)
    return NUMERIC


def infer(value: Any) -> Kind:
    """The kind of an expected value of a format-2 lesson no kind was declared for (as TOML or
    the worker gives it): one of :data:`KINDS` that accepts it; else text for a string, bools
    for a bool or lists of them, bytes for ``{ hex = "..." }``, a mapping for another table,
    lists of those kinds; numbers (:data:`NUMERIC`, within tolerance) for everything else, so
    TOML integers stay numbers unless a kind is declared."""
    for kind in KINDS:
        if kind.accepts(value):
            return kind
    return _kind_of_value(_toml_value(value))


def _toml_value(value: Any) -> Any:
    """A TOML (or encoded) value as the Python value it spells, for :func:`infer`."""
    if isinstance(value, dict):
        if TAG in value:
            return _safe_decode(value)
        if set(value) == {"hex"} and isinstance(value["hex"], str):
            return b""
        return {k: _toml_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_toml_value(v) for v in value]
    return value


def named(name: str) -> Kind:
    """The kind called *name* (as :attr:`Comparison.kind` holds it, or a lesson declares it);
    KeyError if none is."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    if name == NUMERIC.name:
        return NUMERIC
    if name == AUTO.name:
        return AUTO
    if name == FREQUENCIES.name:  # a statistical case's verdict (frequencies.py)
        return FREQUENCIES
    try:
        return _parsed(name)
    except KindError:
        raise KeyError(name) from None


@functools.lru_cache(maxsize=256)
def _parsed(name: str) -> Kind:
    return parse(name)


def expected_problem(value: Any) -> str | None:
    """None if *value* is a valid expected value of its kind, else what it must be."""
    return kind_for(value).problem(value)


#: The default kind: every value no other kind claims (all of format version 1).
NUMERIC: Numeric = Numeric()

#: The kinds the factory tries, in order, before the default :data:`NUMERIC` (approx()'s
#: chain of ``isinstance`` tests, most specific first): the place a plug-in kind goes. Format
#: version 2's kinds are not here but declared by name (:func:`named`) or inferred from a
#: format-2 expected value (:func:`infer`), so that a version-1 lesson reads as it always did.
KINDS: tuple[Kind, ...] = ()


def kind_for(value: Any) -> Kind:
    """The kind of an expected value of a format-1 lesson (as TOML or the worker gives it):
    the first of :data:`KINDS` that accepts it, else :data:`NUMERIC`."""
    for kind in KINDS:
        if kind.accepts(value):
            return kind
    return NUMERIC
