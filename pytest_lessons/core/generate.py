"""Generated cases: inputs drawn at random from a ``[generate]`` table, the same for the same seed.

Each case draws one size per named axis, all different from each other, so an answer with two
axes swapped cannot pass by accident; then fills every input with values from a range. Expected
answers are not drawn here: they come from the lesson's ``reference.py`` when the case runs.
When a generated case fails, :func:`smaller` proposes smaller inputs, so the report can show a
small input that fails the same way.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


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
    """The size of *axis*, which may be a product of axes (``heads*width``)."""
    size = 1
    for name in axis.split("*"):
        size *= sizes[name.strip()]
    return size


def axis_names(axis: str) -> list[str]:
    """The axes an axis entry is made of: ``heads*width`` -> heads, width."""
    return [name.strip() for name in axis.split("*")]


def _input(
    name: str,
    axes: tuple[str, ...] | str,
    sizes: dict[str, int],
    spec: GenerateSpec,
    rng: random.Random,
) -> Any:
    if isinstance(axes, str):
        return sizes[axes]
    bounds = spec.ranges.get(name, spec.values)
    return _fill([size_of(a, sizes) for a in axes], spec, rng, bounds)


def draw(spec: GenerateSpec) -> list[tuple[dict[str, int], dict[str, Any]]]:
    """The generated cases: (axis sizes, inputs by name) each, the same for the same spec."""
    cases = []
    for index in range(spec.count):
        rng = random.Random(f"pytest-lessons:{spec.seed}:{index}")
        sizes = _sizes(spec, rng)
        inputs = {name: _input(name, axes, sizes, spec, rng) for name, axes in spec.inputs.items()}
        cases.append((sizes, inputs))
    return cases


def _cut(value: Any, depth: int, size: int) -> Any:
    """*value* with the axis at *depth* cut to its first *size* entries."""
    if depth == 0:
        return value[:size]
    return [_cut(item, depth - 1, size) for item in value]


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
    for axis, (low, _) in spec.axes.items():
        if sizes[axis] <= max(low, 1) or axis in in_products:
            continue  # an axis inside a product cannot be cut by slicing
        shorter = dict(sizes, **{axis: sizes[axis] - 1})
        cut = {}
        for name, value in inputs.items():
            axes = spec.inputs[name]
            if isinstance(axes, str):
                cut[name] = shorter[axes]
            elif axis in axes:
                cut[name] = _cut(value, axes.index(axis), shorter[axis])
            else:
                cut[name] = value
        yield shorter, cut
    rounded = {
        name: value if isinstance(spec.inputs[name], str) else _round(value)
        for name, value in inputs.items()
    }
    if rounded != inputs:
        yield sizes, rounded
