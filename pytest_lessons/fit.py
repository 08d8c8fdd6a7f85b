"""Watch-outs with a free parameter: sizes of a case's axes, and the small expressions an author
writes over them (``sqrt(heads*width)``).

A watch-out may give its mistake function one more, last, argument (a scale, a divisor ...)
that the grader fits to the learner's answer within ``fit = [lowest, highest]``. The author
names likely values with expressions over the lesson's ``[generate]`` axes, and the message
says which one the learner used (``{fitted}``) and which one is right (``{right}``).

An expression is a product of axis names and numbers, optionally under ``sqrt( )``:
``width``, ``heads*width``, ``sqrt(width)``, ``sqrt(heads*width)``, ``2*width``, ``1``.
This module imports neither pytest nor torch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_EXPRESSION = re.compile(r"^\s*(sqrt\(\s*(?P<inner>[^()]+?)\s*\)|(?P<plain>[^()]+?))\s*$")
_FACTOR = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?)$")


class ExpressionError(ValueError):
    """An expression that is not a product of axis names and numbers, maybe under sqrt()."""


def _parts(expression: str) -> tuple[bool, list[str]]:
    match = _EXPRESSION.match(expression)
    if not match:
        raise ExpressionError(f'"{expression}" is not a product such as sqrt(heads*width)')
    root = match.group("inner") is not None
    body = match.group("inner") if root else match.group("plain")
    factors = [f.strip() for f in body.split("*")]
    if not all(_FACTOR.match(f) for f in factors):
        raise ExpressionError(f'"{expression}" is not a product such as sqrt(heads*width)')
    return root, factors


def names(expression: str) -> list[str]:
    """The axis names *expression* uses (it must be well formed)."""
    return [f for f in _parts(expression)[1] if not f[0].isdigit()]


def evaluate(expression: str, sizes: Mapping[str, int]) -> float | None:
    """The value of *expression* for a case with axis *sizes* (None if a size is unknown)."""
    root, factors = _parts(expression)
    value = 1.0
    for factor in factors:
        if factor[0].isdigit():
            value *= float(factor)
        elif factor in sizes:
            value *= sizes[factor]
        else:
            return None
    return math.sqrt(value) if root else value


def symbolic(expression: str) -> str:
    """*expression* as a person writes it: ``√width``, ``√(heads·width)``, ``heads·width``."""
    root, factors = _parts(expression)
    body = "·".join(factors)
    if not root:
        return body
    return f"√{body}" if len(factors) == 1 else f"√({body})"


def numeric(expression: str, sizes: Mapping[str, int]) -> str:
    """*expression* with this case's sizes put in: ``√24`` for ``sqrt(heads*width)``."""
    root, factors = _parts(expression)
    product = 1.0
    for factor in factors:
        product *= float(factor) if factor[0].isdigit() else sizes.get(factor, math.nan)
    inner = f"{product:g}"
    return f"√{inner}" if root else inner


def axis_sizes(shapes: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, int]:
    """The sizes of a case's named axes, read off its inputs: *shapes* maps an input to its axis
    names (``[generate.inputs]``), or to one axis name for an input that is that size."""
    sizes: dict[str, int] = {}
    products: list[tuple[list[str], int]] = []
    for name, axes in shapes.items():
        value = inputs.get(name)
        if isinstance(axes, str):
            if type(value) is int:
                sizes.setdefault(axes, value)
            continue
        for axis in axes:
            if not isinstance(value, list):
                break
            if "*" not in axis:
                sizes.setdefault(axis, len(value))
            else:
                products.append((axis.split("*"), len(value)))
            value = value[0] if value else None
    # A product axis gives its one unknown factor: "kv_heads*group" of size 6 with kv_heads 2.
    for factors, size in products:
        unknown = [f for f in factors if f not in sizes]
        known = math.prod(sizes[f] for f in factors if f in sizes)
        if len(unknown) == 1 and known and size % known == 0:
            sizes[unknown[0]] = size // known
    return sizes


def fmt(value: float) -> str:
    """A fitted value, short: 3 significant digits."""
    return f"{value:.3g}"
