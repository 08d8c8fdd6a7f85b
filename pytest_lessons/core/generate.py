"""Generated cases: inputs drawn at random from a ``[generate]`` table, the same for the same seed.

Each case draws one size per named axis, all different from each other, so an answer with two
axes swapped cannot pass by accident; then fills every input with values from a range. An input
written as a table (:class:`InputSpec`) says its own kind: floats, integers (token ids below a
vocabulary axis, seeds), booleans, strings from an alphabet, and rows of their own lengths
(ragged). An input written as a file table (``{ file = "merges.json" }``) is not drawn: every
case reads the same file, beside the drawn inputs (:attr:`GenerateSpec.fixed`). Expected
answers are not drawn here: they come from the lesson's ``reference.py`` when
the case runs. When a generated case fails, :func:`smaller` proposes smaller inputs, so the
report can show a small input that fails the same way.

Sizes are bounded (:data:`MAX_SIZE`, :data:`MAX_ELEMENTS`, settable per lesson up to
:data:`SIZE_CEILING` and :data:`ELEMENTS_CEILING`): every input travels to the worker as data,
and a case must stay quick to send and to grade.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: The largest axis size a lesson may draw unless its ``[generate]`` sets ``max_size``.
MAX_SIZE = 64
#: The most a lesson's ``max_size`` may be.
SIZE_CEILING = 4096
#: The most values (numbers, booleans, characters) one generated case may hold over all its
#: inputs, unless ``[generate]`` sets ``max_elements``; counted at the ranges' upper bounds.
MAX_ELEMENTS = 100_000
#: The most a lesson's ``max_elements`` may be (sent as JSON, a million floats cost about a
#: second a case).
ELEMENTS_CEILING = 1_000_000

#: The kinds of value an input may be drawn as.
INPUT_KINDS = ("float", "int", "bool", "str")

#: The characters strings are drawn from unless an input gives its ``alphabet``.
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class InputSpec:
    """One input of ``[generate.inputs]`` written as a table: what each value is drawn as."""

    kind: str
    """One of :data:`INPUT_KINDS`; ints and bools arrive as Python ints and bools."""
    axes: tuple[str, ...] = ()
    """Its axes, outermost first (none: one value)."""
    low: float = 0.0
    """Lowest value drawn (``range``), for float and int."""
    high: float = 1.0
    """Highest value drawn (``range``, inclusive), for float and int."""
    below: str | None = None
    """For int: draw below this axis's size instead of up to ``high`` (token ids of a vocabulary
    axis: 0 .. vocab - 1)."""
    decimals: int | None = None
    """For float: digits kept (None: the table's ``decimals``)."""
    ragged: tuple[int, int] | None = None
    """One more, innermost, dimension whose length each row draws on its own, in this range."""
    alphabet: str = LETTERS
    """For str: the characters drawn."""
    length: tuple[int, int] = (1, 8)
    """For str: the range of each string's length."""

    def elements(self, axes: dict[str, tuple[int, int]]) -> int:
        """The most values one draw holds, at every range's upper bound."""
        count = 1
        for axis in self.axes:
            count *= factor(axis)
            for name in axis_names(axis):
                count *= axes[name][1]
        if self.ragged is not None:
            count *= max(self.ragged[1], 1)
        if self.kind == "str":
            count *= max(self.length[1], 1)
        return count


@dataclass(frozen=True)
class GenerateSpec:
    """A validated ``[generate]`` table."""

    count: int
    seed: int
    axes: dict[str, tuple[int, int]]
    """Axis name -> inclusive size range."""
    inputs: dict[str, tuple[str, ...] | str]
    """Input name -> its axes, outermost first (an axis may be a product, ``heads*width``),
    or one axis name: the input is then that axis's size, a whole number."""
    values: tuple[float, float]
    decimals: int
    points: float
    hidden: bool
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Input name -> its own [lowest, highest] drawn value, instead of ``values``."""
    kinds: dict[str, InputSpec] = field(default_factory=dict)
    """Input name -> how it is drawn, for inputs written as a table (their axes are also in
    :attr:`inputs`); the others are floats from ``values``, as in format version 1."""
    fixed: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Input name -> the file table (``{ file, key }``) every case reads it from, the same in
    each case: a tokenizer's merges or a weight file beside drawn inputs. These inputs are
    not in :attr:`inputs`, which holds the drawn ones."""

    def with_fixed(self, drawn: dict[str, Any]) -> dict[str, Any]:
        """A case's *drawn* inputs with the fixed ones added (each case its own copy of the
        file table, so no case can change another's)."""
        return {**drawn, **{name: dict(table) for name, table in self.fixed.items()}}


def distinct_possible(axes: dict[str, tuple[int, int]]) -> bool:
    """Whether every axis can get a size no other axis has (a matching exists)."""
    # Greedy by upper bound works for intervals of integers.
    taken: set[int] = set()
    for low, high in sorted(axes.values(), key=lambda r: (r[1], r[0])):
        size = next((s for s in range(low, high + 1) if s not in taken), None)
        if size is None:
            return False
        taken.add(size)
    return True


def _sizes(spec: GenerateSpec, rng: random.Random) -> dict[str, int]:
    for _ in range(1000):
        sizes: dict[str, int] = {}
        for name, (low, high) in spec.axes.items():
            free = [s for s in range(low, high + 1) if s not in sizes.values()]
            if not free:
                break
            sizes[name] = rng.choice(free)
        else:
            return sizes
    raise ValueError("the axes' size ranges leave no way to give every axis its own size")


def _fill(
    shape: list[int], spec: GenerateSpec, rng: random.Random, bounds: tuple[float, float]
) -> Any:
    if not shape:
        low, high = bounds
        return round(rng.uniform(low, high), spec.decimals)
    return [_fill(shape[1:], spec, rng, bounds) for _ in range(shape[0])]


def size_of(axis: str, sizes: dict[str, int]) -> int:
    """The size of *axis*, which may be a product of axes and whole numbers (``heads*width``,
    ``4*C``)."""
    size = factor(axis)
    for name in axis_names(axis):
        size *= sizes[name]
    return size


def axis_names(axis: str) -> list[str]:
    """The axes an axis entry is made of: ``heads*width`` -> heads, width; a whole number
    among them (``4*C``) is a factor, no axis."""
    return [name for name in (part.strip() for part in axis.split("*")) if not name.isdigit()]


def factor(axis: str) -> int:
    """The product of the whole numbers of an axis entry: ``4*C`` -> 4, ``heads*width`` -> 1."""
    return math.prod(int(part) for part in (p.strip() for p in axis.split("*")) if part.isdigit())


def _leaf(kind: InputSpec, spec: GenerateSpec, sizes: dict[str, int], rng: random.Random) -> Any:
    if kind.kind == "int":
        high = sizes[kind.below] - 1 if kind.below is not None else int(kind.high)
        return rng.randint(int(kind.low), max(int(kind.low), high))
    if kind.kind == "bool":
        return rng.random() < 0.5
    if kind.kind == "str":
        return "".join(rng.choice(kind.alphabet) for _ in range(rng.randint(*kind.length)))
    decimals = spec.decimals if kind.decimals is None else kind.decimals
    return round(rng.uniform(kind.low, kind.high), decimals)


def _fill_kind(
    shape: list[int], kind: InputSpec, spec: GenerateSpec, sizes: dict[str, int], rng: random.Random
) -> Any:
    if shape:
        return [_fill_kind(shape[1:], kind, spec, sizes, rng) for _ in range(shape[0])]
    if kind.ragged is not None:
        return [_leaf(kind, spec, sizes, rng) for _ in range(rng.randint(*kind.ragged))]
    return _leaf(kind, spec, sizes, rng)


def _input(
    name: str,
    axes: tuple[str, ...] | str,
    sizes: dict[str, int],
    spec: GenerateSpec,
    rng: random.Random,
) -> Any:
    if isinstance(axes, str):
        return sizes[axes]
    kind = spec.kinds.get(name)
    if kind is not None:
        return _fill_kind([size_of(a, sizes) for a in axes], kind, spec, sizes, rng)
    bounds = spec.ranges.get(name, spec.values)
    return _fill([size_of(a, sizes) for a in axes], spec, rng, bounds)


def draw(spec: GenerateSpec) -> list[tuple[dict[str, int], dict[str, Any]]]:
    """The generated cases: (axis sizes, inputs by name) each, the same for the same spec."""
    cases = []
    for index in range(spec.count):
        rng = random.Random(f"pytest-lessons:{spec.seed}:{index}")
        sizes = _sizes(spec, rng)
        inputs = {name: _input(name, axes, sizes, spec, rng) for name, axes in spec.inputs.items()}
        cases.append((sizes, spec.with_fixed(inputs)))
    return cases


def _cut(value: Any, depth: int, size: int) -> Any:
    """*value* with the axis at *depth* cut to its first *size* entries."""
    if depth == 0:
        return value[:size]
    return [_cut(item, depth - 1, size) for item in value]


def _floats(spec: GenerateSpec, name: str) -> bool:
    """Whether input *name* is drawn as floats (rounding them makes a simpler input; rounding
    an int, a bool or a string would change its kind)."""
    if name in spec.fixed or isinstance(spec.inputs[name], str):
        return False
    kind = spec.kinds.get(name)
    return kind is None or kind.kind == "float"


def _round(value: Any) -> Any:
    if isinstance(value, list):
        return [_round(v) for v in value]
    return float(round(value))


def smaller(
    spec: GenerateSpec, sizes: dict[str, int], inputs: dict[str, Any]
) -> Iterator[tuple[dict[str, int], dict[str, Any]]]:
    """Simpler variants of a failing input, simplest first: each axis one shorter (down to its
    range's lower bound), then every value rounded to an integer."""
    in_products = {
        name
        for axes in spec.inputs.values()
        if not isinstance(axes, str)
        for axis in axes
        if "*" in axis
        for name in axis_names(axis)
    }
    # Integers drawn below an axis's size (token ids) would fall outside a cut axis.
    in_products |= {kind.below for kind in spec.kinds.values() if kind.below is not None}
    for axis, (low, _) in spec.axes.items():
        if sizes[axis] <= max(low, 1) or axis in in_products:
            continue  # an axis inside a product cannot be cut by slicing
        shorter = dict(sizes, **{axis: sizes[axis] - 1})
        cut = {}
        for name, value in inputs.items():
            if name in spec.fixed:  # read from a file: the same in every variant
                cut[name] = value
                continue
            axes = spec.inputs[name]
            if isinstance(axes, str):
                cut[name] = shorter[axes]
            elif axis in axes:
                cut[name] = _cut(value, axes.index(axis), shorter[axis])
            else:
                cut[name] = value
        yield shorter, cut
    rounded = {
        name: _round(value) if _floats(spec, name) else value for name, value in inputs.items()
    }
    if rounded != inputs:
        yield sizes, rounded


def draw_at(spec: GenerateSpec, sizes: dict[str, int], key: str) -> dict[str, Any]:
    """Inputs drawn as :func:`draw` draws them, at the given axis *sizes* (a work budget's
    case), the same for the same *key*."""
    rng = random.Random(f"pytest-lessons:{spec.seed}:{key}")
    drawn = {name: _input(name, axes, sizes, spec, rng) for name, axes in spec.inputs.items()}
    return spec.with_fixed(drawn)


def elements_at(spec: GenerateSpec, sizes: dict[str, int]) -> int:
    """The most values the drawn inputs hold at the given axis *sizes* (a file input travels
    as raw bytes, and the file's own limit bounds it)."""
    fixed = {name: (size, size) for name, size in sizes.items()}
    total = 0
    for name, axes in spec.inputs.items():
        if not isinstance(axes, str):
            total += spec.kinds.get(name, InputSpec("float", axes)).elements(fixed)
    return total
