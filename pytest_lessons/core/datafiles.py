"""Inputs read from files: ``X = { file = "weights.safetensors", key = "h.0.attn.c_attn.weight" }``.

The grader reads these files (in the pytest process, before any code of the case runs), never
learner or author code: the sandbox keeps the course's files out of their reach. It checks
them while ``exercise.toml`` is read (so an author sees a missing file or key with its line),
checksums them (sha256, into each case's result) and sends their numbers to the child as raw
bytes (:mod:`pytest_lessons.isolation.arguments`).

**Where a file may be.** Its path is relative to the lesson's folder, written with ``/``; it
may climb out of it (``../fixtures/tiny_gpt.safetensors``) but never out of the *course
folder*: the folder of the nearest ``course.toml`` above the lesson, or the lesson's own folder
when no course holds it. No part of the path may be a symbolic link (a link could point
anywhere, and a learner's copy would not have its target), and a file holds at most
:data:`MAX_FILE_BYTES`.

**The readers**, by the file's suffix, all in pure Python: a dependency for each would be
larger than the reader, and none of them may import torch (the pytest process must not):

* ``.safetensors``: an 8-byte header length, a JSON header (name -> dtype, shape, offsets),
  then the raw little-endian bytes. ``key`` picks one tensor; without it, every tensor as a
  mapping name -> tensor (a state dict).
* ``.npy``: numpy's header (a Python literal, read with :func:`ast.literal_eval`) and the raw
  bytes; ``.npz``: a zip of ``.npy`` files, ``key`` naming one (without it, all of them). Object
  arrays (pickles) are refused, as ``numpy.load`` refuses them by default.
* ``.pt`` / ``.pth``: what ``torch.save`` writes (a zip with a pickle and one file per storage),
  read by a restricted unpickler that knows tensors, dicts, lists, tuples, numbers and strings
  and refuses every other class: the rule of ``torch.load(weights_only=True)``, without torch.
* ``.txt``: UTF-8 text, passed as a ``str``. ``.json``: JSON data, passed as it is.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import hashlib
import io
import json
import math
import os
import pickle
import stat
import struct
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Callable

from pytest_lessons.isolation.runner import (
    DTYPES,
    pack_array,
    pack_data,
    pack_mapping,
    pack_tensor,
)

#: The largest input file the grader reads.
MAX_FILE_BYTES = 256 << 20
#: How many bytes of files read the grader keeps, at most (the last file read is always kept).
KEPT_BYTES = 1 << 30
#: The file that makes a folder a course (as :data:`pytest_lessons.core.course.COURSE_FILE`).
COURSE_FILE = "course.toml"
#: How each suffix is read.
READERS = {
    ".safetensors": "safetensors",
    ".npy": "npy",
    ".npz": "npz",
    ".pt": "pt",
    ".pth": "pt",
    ".txt": "text",
    ".json": "json",
}
#: The keys of an input's file table.
FILE_KEYS = ("file", "key")
#: Dtypes a tensor input may declare.
TENSOR_DTYPES = tuple(DTYPES)

_SAFETENSORS = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
}
_NUMPY = {
    "f8": "float64",
    "f4": "float32",
    "f2": "float16",
    "i8": "int64",
    "i4": "int32",
    "i2": "int16",
    "i1": "int8",
    "u1": "uint8",
    "b1": "bool",
}
_STORAGES = {
    "DoubleStorage": "float64",
    "FloatStorage": "float32",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
}


class DataFileError(Exception):
    """An input file cannot be used; the message says why, in an author's terms."""


@dataclass(frozen=True)
class Array:
    """A block of numbers from a file: raw little-endian bytes of *dtype*, row-major."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes | memoryview
    """A view into the file's bytes as read (never a copy: a state dict is held once)."""

    def describe(self) -> str:
        """``float32 64×192``, as an author's message names it."""
        return f"{self.dtype} {'×'.join(map(str, self.shape)) or 'scalar'}"


@dataclass(frozen=True)
class Loaded:
    """A file as read: its checksum and its contents (an :class:`Array`, a mapping of them,
    text, JSON data, or what a ``.pt`` file holds)."""

    path: Path
    sha256: str
    size: int
    value: Any


# --- where a file may be ----------------------------------------------------------------------


def course_folder(lesson: Path) -> Path:
    """The folder an input file of the lesson in *lesson* must stay in: the nearest folder
    above it with a ``course.toml``, else the lesson's own folder."""
    lesson = lesson.resolve()
    for parent in lesson.parents:
        if (parent / COURSE_FILE).is_file():
            return parent
    return lesson


def resolve(lesson: Path, name: Any) -> Path:
    """The file *name* (as ``exercise.toml`` writes it) of the lesson in *lesson*, checked
    against the rules of the module's docstring; raises :class:`DataFileError`."""
    if not isinstance(name, str) or not name.strip():
        raise DataFileError('file must be a path such as "weights.safetensors"')
    if "\\" in name or PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute():
        raise DataFileError(
            f'file "{name}" must be relative to the lesson folder, written with /, '
            'such as "../fixtures/tiny_gpt.safetensors"'
        )
    base = lesson.resolve()
    root = course_folder(lesson)
    target = Path(os.path.normpath(base / name))
    try:
        inside = target.relative_to(root)
    except ValueError:
        if root != base:
            where = f"into the course folder {root}"
        else:  # no course: the lesson's own folder is the limit
            where = f"into the lesson folder {root}, or put a course.toml above both"
        raise DataFileError(
            f'move the file "{name}" {where}: it is outside, and a learner\'s copy of the '
            "course would not have it"
        ) from None
    if target.suffix.lower() not in READERS:
        raise DataFileError(
            f'file "{name}": the grader reads {", ".join(READERS)} files; convert it to one of them'
        )
    current = root
    for part in inside.parts:
        current = current / part
        try:
            found = os.lstat(current)
        except OSError:
            raise DataFileError(
                f'add the file or correct the path (relative to the lesson folder): file "{name}" '
                f"does not exist ({current} is missing)"
            ) from None
        if stat.S_ISLNK(found.st_mode):
            raise DataFileError(
                f'file "{name}": {current} is a symbolic link; put the file itself there '
                "(a link can point outside the course, and a learner's copy lacks its target)"
            )
    if not stat.S_ISREG(found.st_mode):
        raise DataFileError(f'file "{name}" is not a file ({target})')
    if found.st_size > MAX_FILE_BYTES:
        raise DataFileError(
            f'file "{name}" holds {found.st_size / (1 << 20):.0f} MiB; an input file holds at '
            f"most {MAX_FILE_BYTES >> 20} MiB"
        )
    return target


# --- reading ------------------------------------------------------------------------------------

#: Each file read so far: its (modification time, size) then, and what it held.
_READ: dict[Path, tuple[tuple[int, int], Loaded]] = {}


def read(path: Path) -> Loaded:
    """*path* read, checksummed and parsed (again only once it changed); raises
    :class:`DataFileError`."""
    try:
        found = os.stat(path)
    except OSError as exc:
        raise DataFileError(f"{path.name} cannot be read: {exc.strerror}") from None
    stamp = (found.st_mtime_ns, found.st_size)
    known = _READ.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        # No link in the last place either, should one have appeared since resolve() looked.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise DataFileError(f"{path.name} cannot be read: {exc.strerror}") from None
    reader = READERS[path.suffix.lower()]
    try:
        value = _PARSERS[reader](data)
    except DataFileError as error:
        raise DataFileError(f"{path.name} {error}") from None
    except Exception as exc:  # a damaged file: any parser step may fail
        raise DataFileError(f"{path.name} is not a readable {reader} file ({exc})") from None
    loaded = Loaded(path, hashlib.sha256(data).hexdigest(), len(data), value)
    _READ.pop(path, None)
    _READ[path] = (stamp, loaded)
    # A notebook kernel lives for hours: the files read longest ago go once these hold more
    # than KEPT_BYTES (a file dropped here is read again when a case needs it).
    while sum(entry.size for _, entry in _READ.values()) > KEPT_BYTES and len(_READ) > 1:
        del _READ[next(iter(_READ))]
    return loaded


def _numbers(dtype: str, shape: list[int], data: bytes | memoryview, where: str) -> Array:
    count = math.prod(shape)
    if count * DTYPES[dtype][1] != len(data):
        raise DataFileError(
            f"{where}: {dtype} {shape} needs {count * DTYPES[dtype][1]} bytes, the file "
            f"holds {len(data)}"
        )
    return Array(dtype, tuple(shape), data)


def _safetensors(data: bytes) -> dict[str, Array]:
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - 8:
        raise DataFileError("is not a safetensors file (its header is cut short)")
    header = json.loads(data[8 : 8 + length])
    body = memoryview(data)[8 + length :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS.get(info["dtype"])
        if dtype is None:
            raise DataFileError(
                f'holds "{name}" as {info["dtype"]}; the grader reads {", ".join(_SAFETENSORS)}'
            )
        start, end = info["data_offsets"]
        tensors[name] = _numbers(dtype, list(info["shape"]), body[start:end], f'"{name}"')
    return tensors


def _npy(data: bytes, where: str = "") -> Array:
    if data[:6] != b"\x93NUMPY":
        raise DataFileError(f"{where}is not a .npy file (no NUMPY header)")
    major = data[6]
    size_format, start = ("<H", 10) if major == 1 else ("<I", 12)
    (length,) = struct.unpack(size_format, data[8:start])
    header = ast.literal_eval(data[start : start + length].decode("latin1"))
    descr = str(header["descr"])
    dtype = _NUMPY.get(descr[1:])
    if dtype is None:
        raise DataFileError(
            f"{where}holds numpy dtype {descr!r}; the grader reads "
            f"{', '.join(_NUMPY.values())} (object arrays are pickles, and never read)"
        )
    if header.get("fortran_order"):
        raise DataFileError(f"{where}is in Fortran order; save it with np.ascontiguousarray")
    raw: bytes | memoryview = memoryview(data)[start + length :]
    if descr[0] == ">" and DTYPES[dtype][1] > 1:
        raw = bytes(raw)
        swapped = bytearray(raw)
        width = DTYPES[dtype][1]
        for i in range(width):
            swapped[i::width] = raw[width - 1 - i :: width]
        raw = bytes(swapped)
    return _numbers(dtype, list(header["shape"]), raw, where.rstrip(": ") or "the array")


def _npz(data: bytes) -> dict[str, Array]:
    arrays = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                name = member[: -len(".npy")]
                arrays[name] = _npy(archive.read(member), f'"{name}": ')
    return arrays


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def _json(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except ValueError as exc:
        raise DataFileError(f"is not valid JSON: {exc}") from None


# --- .pt files, without torch -------------------------------------------------------------------


@dataclass(frozen=True)
class _StorageType:
    dtype: str


@dataclass(frozen=True)
class _Storage:
    dtype: str
    data: memoryview


class _Dict(dict):  # type: ignore[type-arg]
    """A pickled ``OrderedDict`` (its ``_metadata`` attribute lands in ``__dict__``)."""


def _rebuild_tensor(storage: _Storage, offset: int, size: Any, stride: Any, *_: Any) -> Array:
    shape = [int(n) for n in size]
    expected: list[int] = []
    step = 1
    for n in reversed(shape):
        expected.insert(0, step)
        step *= n
    if math.prod(shape) > 1 and [s for s, n in zip(stride, shape) if n > 1] != [
        s for s, n in zip(expected, shape) if n > 1
    ]:
        raise DataFileError("holds a tensor that is not contiguous; save tensor.contiguous()")
    width = DTYPES[storage.dtype][1]
    start = int(offset) * width
    return _numbers(
        storage.dtype,
        shape,
        storage.data[start : start + math.prod(shape) * width],
        "a tensor",
    )


def _rebuild_parameter(data: Array, *_: Any) -> Array:
    return data


class _Unpickler(pickle.Unpickler):
    """The pickle of a ``torch.save`` file, with tensors rebuilt as :class:`Array`."""

    def __init__(self, data: bytes, storage: Callable[[str], bytes]) -> None:
        super().__init__(io.BytesIO(data))
        self._storage = storage

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor
        if module == "torch._utils" and name == "_rebuild_parameter":
            return _rebuild_parameter
        if module == "torch" and name in _STORAGES:
            return _StorageType(_STORAGES[name])
        if module == "collections" and name == "OrderedDict":
            return _Dict
        raise DataFileError(
            f"holds a {module}.{name}, which the grader does not read: save only tensors in "
            "dicts, lists and tuples (what torch.load(weights_only=True) reads)"
        )

    def persistent_load(self, pid: Any) -> Any:
        kind, storage_type, key, _location, _numel = pid
        if kind != "storage" or not isinstance(storage_type, _StorageType):
            raise DataFileError("holds a storage the grader does not read")
        return _Storage(storage_type.dtype, memoryview(self._storage(str(key))))


def _pt(data: bytes) -> Any:
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise DataFileError(
            "is not in torch.save's zip format (torch 1.6 and later); save it again with a "
            "recent torch, or as .safetensors"
        )
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        pickled = next((n for n in names if n.endswith("/data.pkl") or n == "data.pkl"), None)
        if pickled is None:
            raise DataFileError("has no data.pkl: it was not written by torch.save")
        prefix = pickled[: -len("data.pkl")]
        order = f"{prefix}byteorder"
        if order in names and archive.read(order).strip() != b"little":
            raise DataFileError("was saved on a big-endian machine; save it on another")
        value = _Unpickler(
            archive.read(pickled), lambda key: archive.read(f"{prefix}data/{key}")
        ).load()
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


_PARSERS: dict[str, Callable[[bytes], Any]] = {
    "safetensors": _safetensors,
    "npy": _npy,
    "npz": _npz,
    "pt": _pt,
    "text": _text,
    "json": _json,
}


# --- an input's value -------------------------------------------------------------------------


def is_file_input(value: Any) -> bool:
    """Whether an input's value in ``exercise.toml`` names a file (a table with ``file``)."""
    return isinstance(value, dict) and "file" in value


def _select(loaded: Loaded, table: dict[str, Any]) -> Any:
    key = table.get("key")
    value = loaded.value
    if key is None:
        return value
    name = loaded.path.name
    if not isinstance(key, str):
        raise DataFileError(f'key must be the name of one tensor of {name}, such as "h.0.weight"')
    if not isinstance(value, dict) or isinstance(loaded.value, str):
        raise DataFileError(
            f"leave out key: {name} holds one value, not named ones (key is for .safetensors, "
            ".npz and a .pt file that holds a dict)"
        )
    if key not in value:
        close = difflib.get_close_matches(key, list(value), n=3)
        if len(value) <= 8:
            names = ", ".join(f'"{n}"' for n in value)
        else:
            names = f"{len(value)} names" + (
                ", close to it: " + ", ".join(f'"{n}"' for n in close) if close else ""
            )
        raise DataFileError(f'use a name {name} holds: it has no "{key}" ({names})')
    return value[key]


def _dtype_problem(have: str, want: str, what: str) -> str | None:
    """None if a *have* value may be passed as *want*; widening and int -> float are fine,
    a float made an int (its fraction lost) is not."""
    kind = {"f": "float", "b": "float", "i": "int", "u": "int"}
    family = {d: ("bool" if d == "bool" else kind[d[0]]) for d in DTYPES}
    if family[want] == "float" or family[have] == family[want]:
        return None
    return (
        f'declare dtype = "{have}" or store it as {want}: {what} is {have}, and the input '
        f"declares {want} (the numbers' fractions would be lost)"
    )


def check(lesson: Path, table: dict[str, Any], tensor: bool, dtype: str | None) -> Loaded:
    """Check an input's file *table* (``{ file = ..., key = ... }``) of the lesson in
    *lesson*, to be passed as a tensor (of *dtype*) or as plain data; the file read. Raises
    :class:`DataFileError` with what to change."""
    for key in table:
        if key not in FILE_KEYS:
            close = difflib.get_close_matches(key, FILE_KEYS, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise DataFileError(
                f'unknown key "{key}" in the file table{hint}: its keys are file and key'
            )
    path = resolve(lesson, table["file"])
    loaded = read(path)
    value = _select(loaded, table)
    what = f"{path.name}" + (f' "{table["key"]}"' if table.get("key") else "")
    if tensor:
        for leaf in _leaves(value):
            if isinstance(leaf, str):
                raise DataFileError(
                    f'leave out pass = "tensor": {what} is text, which cannot be a tensor'
                )
            if isinstance(leaf, Array) and dtype:
                problem = _dtype_problem(leaf.dtype, dtype, what)
                if problem:
                    raise DataFileError(problem)
    return loaded


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


def inline_problem(value: Any, dtype: str | None) -> str | None:
    """For an input passed as a tensor: None if its inline *value* can be one of *dtype*."""
    flat: list[Any] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo += item
        else:
            flat.append(item)
    if any(isinstance(v, str) for v in flat):
        return "is passed as a tensor, so it must be numbers (it holds text)"
    whole = dtype is not None and dtype != "bool" and dtype[0] in "iu"
    if whole and any(isinstance(v, float) and not v.is_integer() for v in flat):
        return f"is passed as a tensor of {dtype}, so it must be whole numbers"
    return None


#: Arguments built so far: (file, its stamp, key, tensor, dtype) -> the packed value.
_PACKED: dict[tuple[Path, str, str | None, bool, str | None], Any] = {}


def argument(lesson: Path, table: dict[str, Any], tensor: bool, dtype: str | None) -> Any:
    """The packed argument (:mod:`pytest_lessons.isolation.arguments`) of a file input."""
    loaded = check(lesson, table, tensor, dtype)
    key = (loaded.path, loaded.sha256, table.get("key"), tensor, dtype)
    if key not in _PACKED:
        # Only arguments of files still held: a packed array is a view into its file's bytes.
        for old in [k for k in _PACKED if k[0] not in _READ or _READ[k[0]][1].sha256 != k[1]]:
            del _PACKED[old]
        value = _select(loaded, table)
        packed: Any
        if tensor and loaded.path.suffix.lower() == ".json":
            packed = pack_tensor(value, dtype)
        elif isinstance(value, str):
            packed = value
        elif loaded.path.suffix.lower() == ".json":
            packed = pack_data(value)
        else:
            packed = _pack(value, tensor, dtype)
        _PACKED[key] = packed
    return _PACKED[key]


def _pack(value: Any, tensor: bool, dtype: str | None) -> Any:
    if isinstance(value, Array):
        packed = pack_array(value.dtype, value.shape, value.data)
        return pack_tensor(packed, dtype) if tensor else packed
    if isinstance(value, dict):
        return pack_mapping({k: _pack(v, tensor, dtype) for k, v in value.items()})
    if isinstance(value, list):
        return [_pack(v, tensor, dtype) for v in value]
    return pack_data(value)


def inline_argument(value: Any, tensor: bool, dtype: str | None) -> Any:
    """The packed argument of an input written in ``exercise.toml`` (or drawn)."""
    return pack_tensor(value, dtype) if tensor else value


def arguments(
    lesson: Path,
    tensors: dict[str, str | None],
    names: tuple[str, ...],
    inputs: dict[str, Any],
) -> list[Any]:
    """A case's *inputs* packed for its job, in the order of *names*; *tensors* the inputs
    passed as tensors, with their dtypes."""
    packed = []
    for name in names:
        value, tensor, dtype = inputs[name], name in tensors, tensors.get(name)
        if is_file_input(value):
            packed.append(argument(lesson, value, tensor, dtype))
        else:
            packed.append(inline_argument(value, tensor, dtype))
    return packed


def folders(lesson: Path, cases: Iterable[Any]) -> set[Path]:
    """The folders that hold the input files of *cases* (each with its ``inputs``): the
    sandbox keeps them out of learner code's reach, as it keeps the lesson's own folder."""
    found = set()
    for case in cases:
        for value in case.inputs.values():
            if is_file_input(value):
                with contextlib.suppress(DataFileError):
                    found.add(resolve(lesson, value["file"]).parent)
    return found


def shipped(lesson: Path, cases: Iterable[Any]) -> list[tuple[Path, str]]:
    """The input files a learner's copy needs: (the file, its name in ``exercise.toml``) for
    each file an unhidden case of *cases* reads, once each. A file only hidden cases read is
    left out, so the copy neither holds nor names it."""
    found: dict[Path, str] = {}
    for case in cases:
        if case.hidden:
            continue
        for value in case.inputs.values():
            if is_file_input(value):
                with contextlib.suppress(DataFileError):
                    found.setdefault(resolve(lesson, value["file"]), value["file"])
    return list(found.items())


def checksums(lesson: Path, inputs: dict[str, Any]) -> dict[str, str]:
    """Input name -> sha256 (hex) of its file, for a case's inputs read from files."""
    found = {}
    for name, value in inputs.items():
        if is_file_input(value):
            try:
                found[name] = read(resolve(lesson, value["file"])).sha256
            except DataFileError:
                found[name] = "unreadable"
    return found
