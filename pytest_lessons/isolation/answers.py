"""The answer encoding: how what learner code returns travels from the child to the judge as
JSON. Its tags, their packing (:func:`encode`, in the child), their validation
(:func:`valid_answer`, at the runner boundary: the child's bytes are untrusted) and their
decoding (:func:`decode`, :func:`unpack`, :func:`tag_of`, :func:`type_name`, in the judge) are
all here, so a new tag is one entry of :data:`TAGS` and its three parts in this module.

The child imports it, and so does the grading core (``tests/test_layers.py``); it knows only the
shape of the data, never an expected answer, and imports nothing but the standard library and
the boundary for learner text.

Lists, ints, floats (NaN and infinities included), bools, strings and None stand for
themselves. Anything else is a *tag*, a dict with the key ``"$"``:

``{"$": "dense", "shape": [2, 3], "float64le": "..."}``
    a rectangular nested list (or tuple) of floats, packed as base64 float64 (``"int64le"``
    for one of ints that fit in 64 bits: the ints stay ints);
``{"$": "tuple", "type": "tuple", "items": [...]}``
    a tuple (or a subclass, named by ``type``) that is not a block of numbers;
``{"$": "dict", "type": "dict", "items": [[key, value], ...]}``
    a mapping, as pairs so that keys of any kind (ints, tuples, bytes) survive JSON;
``{"$": "set", "type": "set", "items": [...]}``
    a set or frozenset, its items sorted where they can be;
``{"$": "bytes", "type": "bytes", "hex": "6869"}``
    bytes or a bytearray;
``{"$": "tensor", "type": "torch.Tensor", "shape": [2, 2], "dtype": "torch.float64",
"values": [...]}``
    a torch tensor or numpy array (``"$": "ndarray"``), with its values when they are real numbers;
``{"$": "object", "type": "builtins.dict"}``
    any other object, never inspected further;
``{"$": "cut", "reason": "..."}``
    the answer was too large or too deep to send;
``{"$": "counts", "calls": 20000, "items": [[category, count], ...], "sizes": [[1, 20000]]}``
    a statistical case's draws, counted, and each call's number of draws, run-length coded
    (:mod:`pytest_lessons.isolation.draws`).
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import re
import sys
from array import array
from dataclasses import dataclass
from typing import Any, Callable

from pytest_lessons.isolation import text as _text_boundary
from pytest_lessons.isolation.text import learner_text

#: The key that marks a tag.
TAG = "$"

DENSE = "dense"
TUPLE = "tuple"
DICT = "dict"
SET = "set"
BYTES = "bytes"
TENSOR = "tensor"
NDARRAY = "ndarray"
OBJECT = "object"
CUT = "cut"
COUNTS = "counts"

#: Every tag, with its text fields: what the words quote of it (a type's name, a dtype, why it
#: was cut), made plain by the boundary for learner text as the answer is validated.
TAGS: dict[str, tuple[str, ...]] = {
    DENSE: (),
    TUPLE: ("type",),
    DICT: ("type",),
    SET: ("type",),
    BYTES: ("type",),
    TENSOR: ("type", "dtype"),
    NDARRAY: ("type", "dtype"),
    OBJECT: ("type",),
    CUT: ("reason",),
    COUNTS: (),
}
#: The tags that hold other answers in their ``items``.
CONTAINERS = frozenset({TUPLE, SET, DICT})

#: Deeper answers are not walked by the child (they would only hit Python's recursion limit).
MAX_DEPTH = 64
#: Larger answers are not sent.
MAX_ELEMENTS = 10_000_000
#: Nesting an answer may have (the child cuts at :data:`MAX_DEPTH` levels; tags add a few).
ANSWER_DEPTH = 80

#: What json.loads makes that holds no other value.
PLAIN = frozenset({bool, int, float, str, type(None)})


def tag_of(value: Any) -> str | None:
    """The tag of an encoded value, or None for a plain one (and for a TOML table)."""
    if isinstance(value, dict):
        tag = value.get(TAG)
        return tag if isinstance(tag, str) else None
    return None


def type_name(value: dict[str, Any], default: str | None = None) -> str:
    """The type a tag names (``torch.Tensor``, ``generator``), for the words; else *default*,
    else the tag itself (a forged tag may leave it out)."""
    if "type" in value:
        return str(value["type"])
    return default if default is not None else str(value.get(TAG, "value"))


def cut(reason: str) -> dict[str, Any]:
    """The tag of an answer that was not sent or not read, and why (``more than ... values``)."""
    return {TAG: CUT, "reason": reason}


# --- packing (in the child) ----------------------------------------------------------------


def encode(value: Any) -> Any:
    """*value* in the answer encoding: a cut tag when it holds more than :data:`MAX_ELEMENTS`
    values. Whatever learner code's objects raise on the way is raised (the child reports it
    as the learner's error)."""
    try:
        return _whole(value)
    except _TooLarge:
        return cut(f"more than {MAX_ELEMENTS:,} values")


def qualified(obj: Any) -> str:
    """The name of *obj*'s type as the words show it: ``torch.Tensor``, ``int`` (builtins bare)."""
    cls = type(obj)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if module == "builtins" else f"{module}.{name}"


def _encode(value: Any, depth: int, count: list[int]) -> Any:
    kind = type(value)
    if kind in (bool, int, float, str) or value is None:
        count[0] += 1
        if count[0] > MAX_ELEMENTS:
            raise _TooLarge
        return value
    if kind is list:
        if depth >= MAX_DEPTH:
            return cut(f"nested deeper than {MAX_DEPTH} levels")
        return [_encode(item, depth + 1, count) for item in value]
    if isinstance(value, (tuple, dict, set, frozenset)):
        if depth >= MAX_DEPTH:
            return cut(f"nested deeper than {MAX_DEPTH} levels")
        return _container(value, depth, count)
    if isinstance(value, (bytes, bytearray)):
        count[0] += 1 + len(value) // 64
        if count[0] > MAX_ELEMENTS:
            raise _TooLarge
        return {TAG: BYTES, "type": qualified(value), "hex": bytes(value).hex()}
    array_tag = _array_tag(value)
    if array_tag is not None:
        return array_tag
    return {TAG: OBJECT, "type": qualified(value)}


def _container(value: Any, depth: int, count: list[int]) -> dict[str, Any]:
    """Tag a tuple, mapping or set so that its kind survives JSON: a mapping as [key, value]
    pairs (its keys may be ints, tuples or bytes), a set's items sorted where they compare.
    The base classes' own methods are called, never a subclass's (a Counter is a dict)."""
    name = qualified(value)
    if isinstance(value, dict):
        pairs = [
            [_encode(key, depth + 1, count), _encode(item, depth + 1, count)]
            for key, item in dict.items(value)
        ]
        return {TAG: DICT, "type": name, "items": pairs}
    if isinstance(value, tuple):
        items = [_encode(item, depth + 1, count) for item in tuple.__iter__(value)]
        return {TAG: TUPLE, "type": name, "items": items}
    members = list(
        frozenset.__iter__(value) if isinstance(value, frozenset) else set.__iter__(value)
    )
    try:
        members = sorted(members)
    except TypeError:  # items of kinds that do not compare: sorted by their encoding below
        encoded = [_encode(item, depth + 1, count) for item in members]
        encoded.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return {TAG: SET, "type": name, "items": encoded}
    return {TAG: SET, "type": name, "items": [_encode(i, depth + 1, count) for i in members]}


class _TooLarge(Exception):
    pass


def _whole(value: Any) -> Any:
    """*value* encoded as a whole answer: packed dense where it can be, counted from zero;
    :class:`_TooLarge` when it holds too many values."""
    dense = _dense(value)
    if dense is not None:
        return dense
    return _encode(value, 0, [0])


def _array_tag(value: Any) -> dict[str, Any] | None:
    """Tag a torch tensor or numpy array, with its values when they are real numbers."""
    module = type(value).__module__ or ""
    torch = sys.modules.get("torch")
    if torch is not None and module.startswith("torch") and isinstance(value, torch.Tensor):
        tag: dict[str, Any] = {
            TAG: TENSOR,
            "type": qualified(value),
            "shape": list(value.shape),
            "dtype": str(value.dtype),
        }
        if type(value) in (torch.Tensor, torch.nn.Parameter) and not value.is_complex():
            tag["values"] = _whole(value.detach().cpu().tolist())
        return tag
    numpy = sys.modules.get("numpy")
    if numpy is not None and module.startswith("numpy"):
        if isinstance(value, numpy.ndarray):
            tag = {
                TAG: NDARRAY,
                "type": qualified(value),
                "shape": list(value.shape),
                "dtype": f"numpy.{value.dtype}",
            }
            if type(value) is numpy.ndarray and value.dtype.kind in "biuf":
                tag["values"] = _whole(value.tolist())
            return tag
        if isinstance(value, numpy.generic):
            return {TAG: OBJECT, "type": qualified(value)}
    return None


def _dense(value: Any) -> dict[str, Any] | None:
    """Pack a rectangular nested list of floats as raw float64, or one of ints as raw int64
    (so an int stays an int, for the exact kinds), which is many times faster to send and
    read than JSON for large answers; None when *value* is anything else, ints and floats
    mixed included (the JSON path keeps each one's type)."""
    found = rectangular(value)
    if found is None:
        return None
    shape, level, kinds = found
    if len(level) > MAX_ELEMENTS:
        return None
    if kinds == {int}:
        try:
            packed = array("q", level)
        except OverflowError:
            return None  # array("q") cannot hold it; the JSON path can
        key = "int64le"
    elif kinds == {float}:
        packed = array("d", level)
        key = "float64le"
    else:
        return None
    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    data = base64.b64encode(packed).decode("ascii")
    return {TAG: DENSE, "shape": list(shape), key: data}


def rectangular(value: Any) -> tuple[tuple[int, ...], list[Any], set[type]] | None:
    """Shape, row-major values and value types of a rectangular nested list (or tuple) of ints
    and floats, found level by level in C-speed passes; None for anything else (bools, ragged
    rows, other types, an empty list), which the caller then walks slowly to say exactly what is
    wrong."""
    if type(value) not in (list, tuple):
        return None
    shape: list[int] = []
    level: list[Any] = [value]
    kinds: set[type] = {type(value)}
    while kinds <= {list, tuple}:
        lengths = set(map(len, level))
        if len(lengths) != 1:
            return None
        shape.append(lengths.pop())
        level = list(itertools.chain.from_iterable(level))
        if not level:
            return None
        kinds = set(map(type, level))
    if not kinds <= {int, float}:
        return None
    return tuple(shape), level, kinds


# --- validation (at the runner boundary) ---------------------------------------------------

_HEX = re.compile(r"[0-9a-f]*")


def valid_answer(answer: Any) -> bool:
    """Whether *answer* is in the answer encoding (see the module docstring), so that the
    judge can read it whatever its values: JSON types, nested at most :data:`ANSWER_DEPTH`
    levels, tags with fields of their own types. Walked without recursion, and with no
    Python object made per value: a list of plain values is checked in one C-speed pass,
    and only the lists and tags within a list wait on the walk's stack.

    On the way, each tag's text (a type's name, a dtype, why it was cut: what the words quote)
    is made plain in place by the boundary for learner text (:mod:`~pytest_lessons.isolation
    .text`), in the one walk the answer gets; the answer's own strings are its values, which
    the judge compares and the words quote with ``repr``."""
    stack: list[tuple[Any, int]] = [(answer, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > ANSWER_DEPTH:
            return False
        kind = type(value)
        if kind in PLAIN:
            continue  # NaN and infinities are answers too
        if kind is list:
            if set(map(type, value)) <= PLAIN:
                continue
            inner = depth + 1
            for item in value:
                if type(item) not in PLAIN:
                    stack.append((item, inner))
            continue
        if kind is not dict:
            return False
        tag = value.get(TAG)
        if type(tag) is not str or tag not in TAGS:
            return False
        fields = TAGS[tag]
        if not all(isinstance(value.get(k, ""), str) for k in fields):
            return False
        for key in fields:
            if key in value:
                value[key] = learner_text(value[key], _text_boundary.NAME, lines=False)
        if tag == DENSE:
            if not _valid_dense(value):
                return False
        elif tag in (TENSOR, NDARRAY):
            if not _valid_shape(value.get("shape")):
                return False
            if "values" in value:
                stack.append((value["values"], depth + 1))
        elif tag in CONTAINERS:
            items = value.get("items")
            if not isinstance(items, list):
                return False
            if tag == DICT:
                if not all(type(pair) is list and len(pair) == 2 for pair in items):
                    return False
                for pair in items:
                    for part in pair:
                        if type(part) not in PLAIN:
                            stack.append((part, depth + 1))
            else:
                stack.append((items, depth))  # its items: one level below this tag
        elif tag == BYTES:
            data = value.get("hex")
            if not isinstance(data, str) or len(data) % 2 or not _HEX.fullmatch(data):
                return False
        elif tag == COUNTS:
            if not _valid_counts(value):
                return False
            if "bad" in value:
                stack.append((value["bad"]["answer"], depth + 1))
    return True


def _valid_counts(tag: dict[str, Any]) -> bool:
    """A statistical case's counts (:mod:`pytest_lessons.isolation.draws`): whole numbers,
    each category drawn at least once, and each call's number of draws (``sizes``, run-length
    coded) adding up to the calls and the counts the tag says."""
    items, sizes, bad, calls = tag.get("items"), tag.get("sizes"), tag.get("bad"), tag.get("calls")
    if type(calls) is not int or not isinstance(items, list) or not isinstance(sizes, list):
        return False
    if bad is not None and not (
        type(bad) is dict and type(bad.get("call")) is int and "answer" in bad
    ):
        return False
    if not all(
        type(pair) is list
        and len(pair) == 2
        and type(pair[0]) is int
        and type(pair[1]) is int
        and pair[1] >= 1
        for pair in itertools.chain(items, sizes)
    ):
        return False
    if any(size < 0 for size, _ in sizes):
        return False
    drawn = sum(count for _, count in items)
    return bool(sum(n for _, n in sizes) == calls and sum(s * n for s, n in sizes) == drawn)


def _valid_shape(shape: Any) -> bool:
    return (
        isinstance(shape, list)
        and len(shape) <= ANSWER_DEPTH
        and all(type(s) is int and s >= 0 for s in shape)
    )


def _valid_dense(tag: dict[str, Any]) -> bool:
    """A dense tag whose data holds exactly its shape's float64 (or int64) values."""
    data = tag.get("float64le", tag.get("int64le"))
    if "float64le" in tag and "int64le" in tag:
        return False
    shape = tag.get("shape")
    if not isinstance(data, str) or not data.isascii() or not _valid_shape(shape):
        return False
    assert isinstance(shape, list)
    if len(data) % 4:
        return False
    padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0  # no copy made
    return len(data) // 4 * 3 - padding == 8 * math.prod(shape)


# --- decoding (in the judge) ---------------------------------------------------------------


class Damaged(ValueError):
    """An encoded value that does not hold what its tag says (only an answer that skipped
    :func:`valid_answer` can be one)."""


@dataclass(frozen=True, eq=False)
class Other:
    """A part of an answer the judge cannot read as a value, named in words (``a generator``)."""

    what: str


@dataclass(frozen=True, eq=False)
class TensorAnswer:
    """A tensor (or NumPy array) as the child packed it: its dtype, shape and values."""

    type: str
    dtype: str
    """Without its module: ``float32``."""
    shape: tuple[int, ...]
    values: Any
    """The encoded values (a list or a dense tag), or None when they were not sent."""


def dense_values(tag: dict[str, Any]) -> tuple[tuple[int, ...], array[Any]]:
    """A dense tag's shape and row-major values: an ``array("q")`` of ints for ``int64le``, an
    ``array("d")`` of floats for ``float64le``; :class:`Damaged` when they do not fit the shape."""
    ints = "int64le" in tag
    packed = array("q" if ints else "d")
    if packed.itemsize != 8:  # pragma: no cover
        raise ValueError("64-bit arrays are not 8 bytes here")
    packed.frombytes(base64.b64decode(tag["int64le" if ints else "float64le"]))
    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    shape = tuple(int(s) for s in tag["shape"])
    if math.prod(shape) != len(packed):
        raise Damaged("a damaged answer")
    return shape, packed


def nest(shape: tuple[int, ...], flat: list[Any]) -> Any:
    """Row-major *flat* values in *shape* as nested lists again (a value for shape ``()``)."""
    values = flat
    for size in reversed(shape[1:]):
        values = [values[i : i + size] for i in range(0, len(values), size)]
    return values[0] if shape == () else values


def unpack(tag: dict[str, Any]) -> Any:
    """A dense tag's values as nested lists: ints for ``int64le``, floats for ``float64le``."""
    shape, packed = dense_values(tag)
    return nest(shape, packed.tolist())


def as_lists(answer: Any) -> Any:
    """*answer* with every tuple tag (through lists and tuple tags) turned back into a list:
    the reading of format version 1, where a tuple is a list (``return out, cache``)."""
    if type(answer) is list:
        return [as_lists(item) for item in answer]
    if type(answer) is dict and answer.get(TAG) == TUPLE and isinstance(answer.get("items"), list):
        return [as_lists(item) for item in answer["items"]]
    return answer


#: What the judge makes of a mapping (its decoded keys and values) and of a set (its decoded
#: members): never a dict or a set of the learner's values, whose hashes learner code chooses.
Mapping = Callable[[list[Any], list[Any]], Any]
Members = Callable[[list[Any]], Any]


def decode(value: Any, mapping: Mapping, members: Members) -> Any:
    """An encoded answer (validated) as Python values again: ints stay ints, a tuple a tuple,
    bytes bytes, a mapping and a set what *mapping* and *members* make of them (the keys and
    members hashable: lists as tuples, a mapping as an :class:`Other`); a tensor a
    :class:`TensorAnswer`, anything else an :class:`Other`. Nesting is bounded by the
    validation; a list of plain values is the list itself (decoded in one C-speed pass)."""
    kind = type(value)
    if kind is list:
        if set(map(type, value)) <= PLAIN:
            return value
        return [decode(item, mapping, members) for item in value]
    if kind is not dict:
        return value
    tag = value.get(TAG)
    if tag == DENSE:
        return unpack(value)
    if tag == TUPLE:
        return tuple(decode(item, mapping, members) for item in value["items"])
    if tag == DICT:
        items = value["items"]
        keys = _members([pair[0] for pair in items], mapping, members)
        values = [pair[1] for pair in items]
        if not set(map(type, values)) <= PLAIN:
            values = [decode(item, mapping, members) for item in values]
        return mapping(keys, values)
    if tag == SET:
        return members(_members(value["items"], mapping, members))
    if tag == BYTES:
        return bytes.fromhex(value["hex"])
    if tag in (TENSOR, NDARRAY):
        dtype = str(value.get("dtype", "")).rpartition(".")[2]
        shape = tuple(int(s) for s in value.get("shape", ()))
        return TensorAnswer(type_name(value), dtype, shape, value.get("values"))
    if tag == CUT:
        return Other(f"an answer too large to send ({value.get('reason', 'too large')})")
    # A forged tag's type may be empty.
    return Other(f"a {value['type']}" if value.get("type") else "an object")


def _members(values: list[Any], mapping: Mapping, members: Members) -> list[Any]:
    """Encoded members of a set (or keys of a mapping), decoded as :func:`_member` makes
    them: in C-speed passes where they are plain values, or lists of plain values."""
    types = set(map(type, values))
    if types <= PLAIN:
        return values
    if types == {list} and set(map(type, itertools.chain.from_iterable(values))) <= PLAIN:
        return list(map(tuple, values))
    return [_member(item, mapping, members) for item in values]


def _member(value: Any, mapping: Mapping, members: Members) -> Any:
    """Encoded *value* as a key of a mapping or a member of a set: lists (and tuples) as
    tuples; a mapping (which no set holds) as an :class:`Other`."""
    if type(value) is list:
        return tuple(_member(item, mapping, members) for item in value)
    tag = tag_of(value)
    if tag == TUPLE:
        return tuple(_member(item, mapping, members) for item in value["items"])
    if tag == DICT:
        return Other("a dict")
    if tag == DENSE:
        return _member(unpack(value), mapping, members)
    return decode(value, mapping, members)
