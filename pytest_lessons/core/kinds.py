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
- says whether it offers detector :class:`~pytest_lessons.core.diagnose.Evidence`
  (:attr:`Kind.offers_evidence`): only numeric kinds do, since every detector reasons about
  blocks of numbers.

Today there is one kind, :class:`Numeric` (a number or a rectangular nested list of numbers,
within tolerance), and it is the default: a value no other kind claims is judged as numbers, as
format version 1 always did. Nothing outside this module and :mod:`pytest_lessons.core.judge`
needs to know that an expected value is a block of numbers; :mod:`~pytest_lessons.core.compare`
and :mod:`~pytest_lessons.core.diagnose` are the numeric kind's own machinery.

To add a kind: a class with the members of :class:`Kind` (its comparisons carry
``kind=`` its :attr:`~Kind.name`, and a :class:`~pytest_lessons.core.compare.Problem` code,
new members there if none fits), placed in :data:`KINDS`; ``tests/test_judge.py`` plugs a
sketched ``Exact`` kind in this way. A kind in :data:`KINDS` makes the values it accepts valid
``expected`` values in every ``exercise.toml`` at once; CONTRIBUTING.md ("Add a kind of
expected value") lists every place that then changes.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from pytest_lessons.core.compare import (
    Comparison,
    close,
    compare,
    nested,
    read_numbers,
)
from pytest_lessons.core.words import fmt_index, fmt_number, fmt_shape
from pytest_lessons.isolation.outcome import TAG, rectangular


class Kind(Protocol):
    """A kind of expected value (see the module docstring)."""

    name: str
    """Its name: in :attr:`Comparison.kind`, and what a lesson would declare."""
    offers_evidence: bool
    """Whether this kind's comparisons fill :attr:`Comparison.got` and ``expected`` with
    numbers. Those two fields decide (``Grader._diagnosis``) whether a wrong answer goes to the
    detectors and watch-outs as :class:`~pytest_lessons.core.diagnose.Evidence`; nothing reads
    this flag today."""

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


class Numeric:
    """A number or a rectangular nested list of numbers, compared within tolerance by
    :func:`pytest_lessons.core.compare.compare` (torch's rule, in float64)."""

    name = "numeric"
    offers_evidence = True

    def accepts(self, value: Any) -> bool:
        if isinstance(value, dict):
            return value.get(TAG) == "dense"
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
        got_shape = fmt_shape(got) if got is not None else "-"
        facts = [("shape", f"expected {fmt_shape(comparison.expected_shape)}   got {got_shape}")]
        worst = comparison.worst
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
        if not comparison.rows:
            return [], 0
        rows = [
            (fmt_index(m.index), fmt_number(m.got, m.expected), fmt_number(m.expected, m.got))
            for m in comparison.rows
        ]
        return [("at", "got", "expected"), *rows], comparison.mismatched - len(comparison.rows)


def _shape(value: Any) -> tuple[int, ...] | None:
    """The shape of a rectangular nested list of numbers (as TOML gives it), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return ()
    if not isinstance(value, list):
        return None
    if not value:
        return (0,)
    shapes = {_shape(item) for item in value}
    if len(shapes) != 1 or None in shapes:
        return None
    (inner,) = shapes
    assert inner is not None
    return (len(value), *inner)


#: The default kind: every value no other kind claims (all of format version 1).
NUMERIC = Numeric()

#: The kinds the factory tries, in order, before the default :data:`NUMERIC` (approx()'s
#: chain of ``isinstance`` tests, most specific first). Empty today; format v2 adds its kinds
#: here.
KINDS: tuple[Kind, ...] = ()


def kind_for(value: Any) -> Kind:
    """The kind of an expected value (as TOML or the worker gives it): the first of
    :data:`KINDS` that accepts it, else :data:`NUMERIC`."""
    for kind in KINDS:
        if kind.accepts(value):
            return kind
    return NUMERIC


def named(name: str) -> Kind:
    """The kind called *name* (as :attr:`Comparison.kind` holds it); KeyError if none is."""
    for kind in (*KINDS, NUMERIC):
        if kind.name == name:
            return kind
    raise KeyError(name)


def expected_problem(value: Any) -> str | None:
    """None if *value* is a valid expected value of its kind, else what it must be."""
    return kind_for(value).problem(value)
