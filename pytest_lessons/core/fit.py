"""Watch-outs with a free parameter: sizes of a case's axes, and the small expressions an author
writes over them (``sqrt(heads*width)``).

A watch-out may give its mistake function one more, last, argument (a scale, a divisor ...)
that the grader fits to the learner's answer within ``fit = [lowest, highest]``. The author
names likely values with expressions over the lesson's ``[generate]`` axes, and the message
says which one the learner used (``{fitted}``) and which one is right (``{right}``).

An expression multiplies and divides axis names and numbers, any of them under ``sqrt( )``,
with parentheses to group: ``width``, ``heads*width``, ``sqrt(heads*width)``, ``1/sqrt(width)``,
``width/2``, ``heads*width/2``, ``1``. ``*`` and ``/`` bind equally, from the left. It is read
by a small parser here, never by ``eval``: an author's typo is reported, not run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, NoReturn, Union

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[*/()]))"
)


class ExpressionError(ValueError):
    """An expression that is not axis names and numbers joined by ``*`` and ``/``, maybe
    under ``sqrt()``."""


@dataclass(frozen=True)
class _Number:
    text: str


@dataclass(frozen=True)
class _Name:
    name: str


@dataclass(frozen=True)
class _Root:
    inner: _Expression


@dataclass(frozen=True)
class _Group:
    inner: _Expression


_Factor = Union[_Number, _Name, _Root, _Group]


@dataclass(frozen=True)
class _Expression:
    """Factors, each multiplied (``*``) or divided (``/``) into the ones before it; the
    first is always ``*``."""

    parts: tuple[tuple[str, _Factor], ...]


@lru_cache(maxsize=256)
def _parse(expression: str) -> _Expression:
    tokens: list[tuple[str, str, int]] = []
    at = 0
    while expression[at:].strip():
        match = _TOKEN.match(expression, at)
        if not match:
            where = f"{expression[at:].strip()[0]!r} at position {_column(expression, at)}"
            _fail(expression, f"{where} is not allowed (only names, numbers, *, /, sqrt and ( ))")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind), _column(expression, at)))
        at = match.end()
    parsed, used = _expression(expression, tokens, 0)
    if used < len(tokens):
        _fail(expression, f"{tokens[used][1]!r} at position {tokens[used][2]} is out of place")
    return parsed


def _column(expression: str, at: int) -> int:
    """The 1-based position of the first non-blank character from *at*."""
    return at + len(expression[at:]) - len(expression[at:].lstrip()) + 1


def _fail(expression: str, problem: str) -> NoReturn:
    raise ExpressionError(
        f'"{expression}" is not an expression such as sqrt(heads*width) or 1/sqrt(width): {problem}'
    )


def _expression(
    expression: str, tokens: list[tuple[str, str, int]], at: int
) -> tuple[_Expression, int]:
    parts: list[tuple[str, _Factor]] = []
    op = "*"
    while True:
        factor, at = _factor(expression, tokens, at)
        if op == "/" and isinstance(factor, _Number) and float(factor.text) == 0:
            _fail(expression, "it divides by 0")
        parts.append((op, factor))
        if at < len(tokens) and tokens[at][1] in ("*", "/"):
            op = tokens[at][1]
            at += 1
            continue
        return _Expression(tuple(parts)), at


def _factor(expression: str, tokens: list[tuple[str, str, int]], at: int) -> tuple[_Factor, int]:
    if at >= len(tokens):
        _fail(expression, "it ends where a name or number is missing")
    kind, text, column = tokens[at]
    if kind == "number":
        return _Number(text), at + 1
    if kind == "name" and text != "sqrt":
        return _Name(text), at + 1
    if kind == "op" and text in ("*", "/", ")"):
        _fail(expression, f"{text!r} at position {column} where a name or number is missing")
    opened = at + 1 if text == "sqrt" else at
    if opened >= len(tokens) or tokens[opened][1] != "(":
        _fail(expression, f"sqrt at position {column} needs its ( )")
    inner, at = _expression(expression, tokens, opened + 1)
    if at >= len(tokens) or tokens[at][1] != ")":
        _fail(expression, f"the ( at position {tokens[opened][2]} is never closed")
    return (_Root(inner) if text == "sqrt" else _Group(inner)), at + 1


def names(expression: str) -> list[str]:
    """The axis names *expression* uses, in order (raises :class:`ExpressionError` if it is
    not well formed)."""
    found: list[str] = []

    def walk(node: _Expression) -> None:
        for _, factor in node.parts:
            if isinstance(factor, _Name):
                found.append(factor.name)
            elif isinstance(factor, (_Root, _Group)):
                walk(factor.inner)

    walk(_parse(expression))
    return list(dict.fromkeys(found))


def _value(node: _Expression, sizes: Mapping[str, float]) -> float | None:
    value = 1.0
    for op, factor in node.parts:
        if isinstance(factor, _Number):
            part: float | None = float(factor.text)
        elif isinstance(factor, _Name):
            part = sizes.get(factor.name)
        else:
            part = _value(factor.inner, sizes)
            if part is not None and isinstance(factor, _Root):
                part = math.sqrt(part)
        if part is None or (op == "/" and part == 0):
            return None
        value = value * part if op == "*" else value / part
    return value


def evaluate(expression: str, sizes: Mapping[str, int]) -> float | None:
    """The value of *expression* for a case with axis *sizes* (None if a size is unknown, or
    a divisor is 0)."""
    return _value(_parse(expression), sizes)


def symbolic(expression: str) -> str:
    """*expression* as a person writes it: ``√width``, ``√(heads·width)``, ``1/√width``,
    ``heads·width/2``."""
    return _symbolic(_parse(expression))


def _symbolic(node: _Expression) -> str:
    text = ""
    for op, factor in node.parts:
        if text:
            text += "·" if op == "*" else "/"
        if isinstance(factor, _Number):
            text += factor.text
        elif isinstance(factor, _Name):
            text += factor.name
        elif isinstance(factor, _Group):
            text += f"({_symbolic(factor.inner)})"
        else:
            inner = factor.inner.parts
            single = len(inner) == 1 and isinstance(inner[0][1], (_Number, _Name))
            text += f"√{_symbolic(factor.inner)}" if single else f"√({_symbolic(factor.inner)})"
    return text


@dataclass
class _Side:
    """One side of a fraction, ``number·√root`` (``rooted``: a square root is on this side)."""

    number: float = 1.0
    root: float = 1.0
    rooted: bool = False

    def __str__(self) -> str:
        if not self.rooted:
            return f"{self.number:g}"
        root = f"√{self.root:g}"
        return root if self.number == 1 else f"{self.number:g}·{root}"


def numeric(expression: str, sizes: Mapping[str, int]) -> str:
    """*expression* with this case's sizes put in, its square roots kept: ``√24`` for
    ``sqrt(heads*width)``, ``1/√4`` for ``1/sqrt(width)``, ``8`` for ``heads*width``, ``5/2``
    for ``width/2`` with width 5 (``nan`` for a size not known)."""
    # Written as c·√a / (d·√b): a learner tells √24 as "the root of the model width" more
    # readily than 4.9, and 1/√4 as one divided by a root.
    top, bottom = _Side(), _Side()

    def walk(node: _Expression, upper: bool) -> None:
        for op, factor in node.parts:
            here = upper == (op == "*")
            side = top if here else bottom
            if isinstance(factor, _Group):
                walk(factor.inner, here)
            elif isinstance(factor, _Root):
                value = _value(factor.inner, sizes)
                side.root *= math.nan if value is None else value
                side.rooted = True
            elif isinstance(factor, _Number):
                side.number *= float(factor.text)
            else:
                side.number *= float(sizes.get(factor.name, math.nan))

    walk(_parse(expression), True)
    if not top.rooted and not bottom.rooted:
        whole = top.number / bottom.number if bottom.number else math.nan
        if bottom.number != 1 and math.isfinite(whole) and whole % 1:
            return f"{top.number:g}/{bottom.number:g}"
        return f"{whole:g}"
    if not bottom.rooted and bottom.number == 1:
        return str(top)
    under = str(bottom)
    return f"{top}/({under})" if "·" in under else f"{top}/{under}"


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
            if "*" not in axis and not axis.strip().isdigit():
                sizes.setdefault(axis, len(value))
            elif "*" in axis:
                products.append(([f.strip() for f in axis.split("*")], len(value)))
            value = value[0] if value else None
    # A product axis gives its one unknown factor: "kv_heads*group" of size 6 with kv_heads 2,
    # "4*C" of size 12: C is 3.
    for factors, size in products:
        unknown = [f for f in factors if f not in sizes and not f.isdigit()]
        known = math.prod(int(f) if f.isdigit() else sizes[f] for f in factors if f not in unknown)
        if len(unknown) == 1 and known and size % known == 0:
            sizes[unknown[0]] = size // known
    return sizes


def fmt(value: float) -> str:
    """A fitted value, short: 3 significant digits."""
    return f"{value:.3g}"


def golden_section(gap: Callable[[float], float], low: float, high: float, steps: int) -> float:
    """The value between *low* and *high* (both > 0) where *gap* is least, found by a
    golden-section search on a log scale in *steps* steps (each calls *gap* once, after two
    calls to start).

    A scale inside a softmax changes the answer smoothly, so the gap between a mistake's answer
    and the learner's has one valley between the bounds in the cases that matter; a log scale
    gives 0.1 .. 1 as many steps as 10 .. 100."""
    a, b = math.log(low), math.log(high)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    gc, gd = gap(math.exp(c)), gap(math.exp(d))
    for _ in range(steps):
        if gc <= gd:
            b, d, gd = d, c, gc
            c = b - ratio * (b - a)
            gc = gap(math.exp(c))
        else:
            a, c, gc = c, d, gd
            d = a + ratio * (b - a)
            gd = gap(math.exp(d))
    return math.exp(c if gc <= gd else d)
