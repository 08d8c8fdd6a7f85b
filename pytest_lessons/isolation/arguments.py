"""How a job carries its inputs, and how the child rebuilds them for each call.

A job's inputs are JSON values. Plain values of ``exercise.toml`` (numbers, strings, booleans
and lists of them) travel as they are; anything else is a table tagged with :data:`ARG`:

* ``{"$input": "array", "dtype": "float32", "shape": [64, 192], "data": b"..."}``: a block of
  numbers as raw little-endian bytes, rebuilt as nested lists (a ``.tolist()`` of it).
* ``{"$input": "tensor", "dtype": "int64", "value": X}``: *X* rebuilt, then made a torch
  tensor of that dtype (``dtype`` None: the tensor's own, or torch's choice for plain numbers).
* ``{"$input": "mapping", "items": {name: X, ...}}``: a dict of rebuilt values (a state dict).
* ``{"$input": "data", "value": ...}``: JSON data used as it is (it may hold tables).
* ``{"$input": "generator", "seed": 7}``: a new ``torch.Generator`` (CPU) seeded with 7, for
  each call; with ``"draws"``, the plan of a statistical case (:mod:`.draws`), whose calls
  share one generator.

**Framing.** Between processes a job is one *frame* (:func:`frame`, :func:`unframe`): a line of
JSON whose arrays name a blob (``"blob": 0``) instead of holding their bytes, and whose
``"blobs"`` lists the blobs' lengths, then the blobs' raw bytes. A 1M-float input then costs
no JSON or base64 pass over its numbers anywhere (``benchmarks/file_input.py``); a process
that only passes a job on (the worker) reads the line and the bytes it names, and forwards
them as they are.

The core packs these (:func:`pack_array` and friends); the child calls :func:`rebuild` once per
call, so every call gets fresh objects and a learner who changes an input changes nothing for
the next call. Only :func:`rebuild` imports torch, and only for a tensor input; it runs in the
process that runs learner code, before that code is called.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import struct
import sys
from array import array
from typing import Any

from pytest_lessons.isolation import answers

#: The key that marks a packed input.
ARG = "$input"

#: Dtypes an input may have, by torch's name: (``array`` type code, bytes per element).
#: ``float16`` and ``bfloat16`` have no type code and are widened to float for lists.
DTYPES: dict[str, tuple[str, int]] = {
    "float64": ("d", 8),
    "float32": ("f", 4),
    "float16": ("", 2),
    "bfloat16": ("", 2),
    "int64": ("q", 8),
    "int32": ("i", 4),
    "int16": ("h", 2),
    "int8": ("b", 1),
    "uint8": ("B", 1),
    "bool": ("B", 1),
}


def pack_array(
    dtype: str, shape: tuple[int, ...] | list[int], data: bytes | memoryview
) -> dict[str, Any]:
    """A block of numbers (*data*: raw little-endian bytes of *dtype*, row-major *shape*)."""
    return {ARG: "array", "dtype": dtype, "shape": list(shape), "data": data}


def pack_tensor(value: Any, dtype: str | None) -> dict[str, Any]:
    """*value* (packed or plain) passed as a torch tensor of *dtype* (None: its own)."""
    return {ARG: "tensor", "dtype": dtype, "value": value}


def pack_mapping(items: dict[str, Any]) -> dict[str, Any]:
    """A dict of packed or plain values, in their order."""
    return {ARG: "mapping", "items": items}


def pack_data(value: Any) -> dict[str, Any]:
    """JSON data passed as it is (tables included)."""
    return {ARG: "data", "value": value}


def pack_generator(seed: int, draws: dict[str, int] | None = None) -> dict[str, Any]:
    """A ``torch.Generator`` seeded with *seed*, made anew for each call; *draws* (``{"n": N,
    "output": i}``) makes the case statistical: N calls sharing one generator
    (:mod:`pytest_lessons.isolation.draws`)."""
    packed: dict[str, Any] = {ARG: "generator", "seed": int(seed)}
    if draws is not None:
        packed["draws"] = dict(draws)
    return packed


def frame(document: dict[str, Any], key: str = "inputs") -> bytes:
    """*document* (a request) as one frame: its JSON line, then the blobs of its *key*."""
    blobs: list[bytes | memoryview] = []
    line = dict(document)
    line[key] = _split(document.get(key), blobs)
    line["blobs"] = [len(blob) for blob in blobs]
    return b"".join([(json.dumps(line) + "\n").encode("utf-8"), *blobs])


def frame_length(line: dict[str, Any]) -> int:
    """How many bytes of blobs follow a frame's JSON *line*."""
    return sum(int(n) for n in line.get("blobs") or ())


def unframe(data: bytes, key: str = "inputs") -> dict[str, Any]:
    """The request a :func:`frame` holds, its arrays' bytes back in place."""
    head, _, rest = data.partition(b"\n")
    document: dict[str, Any] = json.loads(head)
    view = memoryview(rest)
    blobs, at = [], 0
    for length in document.pop("blobs", None) or ():
        blobs.append(view[at : at + int(length)])
        at += int(length)
    if key in document:
        document[key] = _join(document[key], blobs)
    return document


def _split(value: Any, blobs: list[bytes | memoryview]) -> Any:
    if isinstance(value, list):
        return [_split(item, blobs) for item in value]
    if not isinstance(value, dict) or ARG not in value:
        return value
    if value[ARG] == "array" and "data" in value:
        out = {k: v for k, v in value.items() if k != "data"}
        out["blob"] = len(blobs)
        blobs.append(value["data"])
        return out
    if value[ARG] == "tensor":
        return {**value, "value": _split(value["value"], blobs)}
    if value[ARG] == "mapping":
        return {**value, "items": {k: _split(v, blobs) for k, v in value["items"].items()}}
    return value


def _join(value: Any, blobs: list[memoryview]) -> Any:
    if isinstance(value, list):
        return [_join(item, blobs) for item in value]
    if not isinstance(value, dict) or ARG not in value:
        return value
    if value[ARG] == "array" and "blob" in value:
        return {**value, "data": blobs[int(value["blob"])]}
    if value[ARG] == "tensor":
        return {**value, "value": _join(value["value"], blobs)}
    if value[ARG] == "mapping":
        return {**value, "items": {k: _join(v, blobs) for k, v in value["items"].items()}}
    return value


def blob_key(value: Any) -> str:
    """A stand-in for raw bytes in a job's JSON key (``json.dumps(default=...)``)."""
    if isinstance(value, (bytes, memoryview)):
        return "blob:" + hashlib.blake2b(value, digest_size=16).hexdigest()
    raise TypeError(f"{type(value).__name__} is not JSON data")


def rebuild(value: Any) -> Any:
    """The argument *value* stands for, as fresh objects (see the module's docstring)."""
    if isinstance(value, list):
        return [rebuild(item) for item in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(ARG)
    if tag == "array":
        return _lists(value)
    if tag == "tensor":
        return _tensor(value["value"], value.get("dtype"))
    if tag == "mapping":
        return {str(name): rebuild(item) for name, item in value["items"].items()}
    if tag == "data":
        return json.loads(json.dumps(value["value"]))
    if tag == "generator":
        return _generator(int(value["seed"]))
    return json.loads(json.dumps(value))


def _generator(seed: int) -> Any:
    """A CPU generator: its stream for a seed is the same in a forked child, a spawned one
    and in-process (the global generator, which learner code may reseed, is not used)."""
    torch: Any = importlib.import_module("torch")
    return torch.Generator(device="cpu").manual_seed(seed)


def _raw(packed: dict[str, Any]) -> bytes | memoryview:
    data: bytes | memoryview = packed["data"]
    return data


def _lists(packed: dict[str, Any]) -> Any:
    """The array as nested lists of Python numbers (a number for shape ``[]``).

    A dtype Python's buffers know (float64, float32, the ints, bool) is read in one C pass: the
    bytes cast to a memoryview of that format and shape, whose ``tolist`` makes the nested
    lists and their numbers together. Building a flat list and slicing it into rows costs as
    much again for a 1M-element input, most of it in a spawned child's fresh heap."""
    dtype, shape = packed["dtype"], list(packed["shape"])
    code = "?" if dtype == "bool" else DTYPES[dtype][0]
    if code and shape and 0 not in shape and (sys.byteorder == "little" or DTYPES[dtype][1] == 1):
        view: Any = memoryview(_raw(packed)).cast("B")  # the format code is a runtime str
        return view.cast(code, shape).tolist()
    return _nested(_flat(packed), shape)


def _flat(packed: dict[str, Any]) -> list[Any]:
    """The array's elements, row-major, as Python numbers."""
    dtype, data = packed["dtype"], _raw(packed)
    if dtype in ("float16", "bfloat16"):
        data = bytes(data)
    if dtype == "float16":
        return list(struct.unpack(f"<{len(data) // 2}e", data))
    if dtype == "bfloat16":
        # A bfloat16 is the high half of a float32: put each one back in its place.
        wide = bytearray(2 * len(data))
        wide[2::4], wide[3::4] = data[0::2], data[1::2]
        data, dtype = bytes(wide), "float32"
    code = DTYPES[dtype][0]
    values = array(code)
    values.frombytes(data)
    if sys.byteorder != "little" and DTYPES[dtype][1] > 1:  # pragma: no cover
        values.byteswap()
    flat = values.tolist()
    if dtype == "bool":
        return [bool(v) for v in flat]
    return flat


def _nested(flat: list[Any], shape: list[int]) -> Any:
    """*flat* in row-major *shape* as nested lists (a number for shape ``[]``)."""
    if not shape:
        return flat[0]
    if 0 in shape:
        return _empty(shape)
    rows: list[Any] = flat
    for size in reversed(shape[1:]):
        rows = [rows[i : i + size] for i in range(0, len(rows), size)]
    return rows


def _empty(shape: list[int]) -> list[Any]:
    if shape[0] == 0 or len(shape) == 1:
        return []
    return [_empty(shape[1:]) for _ in range(shape[0])]


def _tensor(value: Any, dtype: str | None) -> Any:
    torch: Any = importlib.import_module("torch")
    wanted = getattr(torch, dtype) if dtype else None
    if isinstance(value, dict) and value.get(ARG) == "array":
        own = getattr(torch, value["dtype"])
        data = bytearray(_raw(value))  # writable: the learner may change the tensor
        shape = list(value["shape"])
        if not data:
            tensor = torch.empty(shape, dtype=own)
        elif sys.byteorder != "little":  # pragma: no cover
            tensor = torch.tensor(_nested(_flat(value), shape), dtype=own)
        else:
            tensor = torch.frombuffer(data, dtype=own).reshape(shape)
        return tensor if wanted is None or wanted == own else tensor.to(wanted)
    return torch.tensor(rebuild(value), dtype=wanted)


# --- an input as a child sends it back, made without torch --------------------------------


class NotMirrored(ValueError):
    """An input :func:`as_sent` cannot make as the child would without torch (a bfloat16
    tensor, a value an int dtype wraps around, a generator)."""


#: Each dtype's Python-side conversion of one number, as a torch tensor of it holds it.
_INT_RANGES = {
    "int64": (-(1 << 63), (1 << 63) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "int8": (-128, 127),
    "uint8": (0, 255),
}


def _convert(flat: list[Any], dtype: str) -> list[Any]:
    """*flat* numbers as a tensor of *dtype* holds them (what ``tolist`` gives back)."""
    if dtype == "bool":
        return [bool(v) for v in flat]
    if dtype == "float64":
        return [float(v) for v in flat]
    if dtype == "float32":
        return array("f", [float(v) for v in flat]).tolist()
    if dtype == "float16":
        try:
            packed = struct.pack(f"<{len(flat)}e", *[float(v) for v in flat])
        except (OverflowError, struct.error):
            raise NotMirrored("a float16 value out of range") from None
        return list(struct.unpack(f"<{len(flat)}e", packed))
    if dtype in _INT_RANGES:
        low, high = _INT_RANGES[dtype]
        try:
            values = [int(v) for v in flat]  # a float is cut toward zero, as torch does
        except (ValueError, OverflowError):  # NaN, infinity: torch refuses them too
            raise NotMirrored(f"a value {dtype} cannot hold") from None
        if any(not low <= v <= high for v in values):
            raise NotMirrored(f"a value {dtype} cannot hold")
        return values
    raise NotMirrored(f"a {dtype} tensor")


def _inferred(flat: list[Any]) -> str:
    """The dtype torch gives a tensor of plain numbers (the default float dtype, float32)."""
    if not flat or any(type(v) is float for v in flat):
        return "float32"
    if flat and all(type(v) is bool for v in flat):
        return "bool"
    return "int64"


def _numbers(value: Any) -> tuple[list[int], list[Any]]:
    """A rectangular nested list's shape and row-major numbers; :class:`NotMirrored` else."""
    shape: list[int] = []
    level = value
    while isinstance(level, list):
        shape.append(len(level))
        level = level[0] if level else None
    flat: list[Any] = [value]
    for size in shape:
        if not all(isinstance(row, list) and len(row) == size for row in flat):
            raise NotMirrored("a ragged list")
        flat = [item for row in flat for item in row]
    if not all(type(v) in (int, float, bool) for v in flat):
        raise NotMirrored("a tensor of other values than numbers")
    return shape, flat


def as_sent(packed: Any) -> Any:
    """The argument *packed* stands for, in the answer encoding
    (:func:`pytest_lessons.isolation.answers.encode`), as a child sends back an input its call
    left alone: what :func:`rebuild` builds, encoded, made here without torch, so the grader
    can compare an ``unchanged`` input without importing it. :class:`NotMirrored` for an
    input it cannot make exactly."""
    if not isinstance(packed, dict) or packed.get(ARG) in ("array", "data", None):
        return answers.encode(rebuild(packed))
    tag = packed[ARG]
    if tag == "mapping":
        items = [[str(name), as_sent(item)] for name, item in packed["items"].items()]
        return {answers.TAG: answers.DICT, "type": "dict", "items": items}
    if tag != "tensor":
        raise NotMirrored(f"a {tag} input")
    value, dtype = packed["value"], packed.get("dtype")
    if isinstance(value, dict) and value.get(ARG) == "array":
        shape, flat, own = list(value["shape"]), _flat(value), str(value["dtype"])
        dtype = dtype or own
        flat = flat if dtype == own and own != "bfloat16" else _convert(flat, dtype)
    else:
        shape, flat = _numbers(rebuild(value))
        dtype = dtype or _inferred(flat)
        flat = _convert(flat, dtype)
    if dtype == "bfloat16":
        raise NotMirrored("a bfloat16 tensor")
    return {
        answers.TAG: answers.TENSOR,
        "type": "torch.Tensor",
        "shape": shape,
        "dtype": f"torch.{dtype}",
        "values": answers.encode(_nested(flat, shape)),
    }
