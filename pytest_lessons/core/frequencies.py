"""Counts of draws against a distribution: the test of a statistical case, and its words.

A statistical case (docs/authors/randomness.md) calls the learner's sampler N
times and gets back how often each category (an int: a token id, a start index) was drawn,
and how many draws each call gave. Each call must give the draws the case asks of it (the
reference's first call's number, or, with no reference to ask, the learner's first call's):
a short or long answer is the case's failure, before any count is tested. Then the test, for
n = N x per-call draws in all and the exact probability p of each category:

* a category with p = 0 must never be drawn (exact: a right sampler never draws it);
* a category with p > 0 must be drawn between its binomial bounds ``lo`` and ``hi``: the
  smallest ``lo`` with ``P(X < lo) <= a/2`` and the largest ``hi`` with ``P(X > hi) <= a/2``
  for X ~ Binomial(n, p), where ``a = false_fail / K`` over the K categories with p > 0
  (Bonferroni's correction).

A right sampler then fails with probability at most ``false_fail``: by the union bound, at most
K times ``a``; the bounds are whole counts, so each tail holds at most ``a/2`` (less, as a rule:
the rate is an upper bound). Because the grader seeds the generator, the verdict on one piece
of code is the same every run: a false failure would be reproducible, and ``--lesson-check``
shows the reference and the variants pass.

:func:`power` bounds the chance a sampler of another distribution fails, for choosing N: as
few calls as keep the power against the mistakes a case is there to catch. The test is not
sequential (stopping once the verdict is sure): a right sampler's verdict is never sure before
the last draw unless some power is given up, and stopping early at all would need the child
to hold the bounds, within reach of the learner's code in the same process.

:class:`Frequencies` is the kind that words the verdict (``Comparison.kind == "frequencies"``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_lessons.core.compare import Comparison, Problem, read_numbers
from pytest_lessons.isolation.answers import COUNTS, DENSE, DICT, TAG, TENSOR, tag_of, type_name

#: The false-failure rate of a statistical case when the lesson sets none.
FALSE_FAIL = 1e-6

#: How many off categories a failure lists.
LISTED = 6


def _categories(n: int) -> str:
    return f"{n:,} {'category' if n == 1 else 'categories'}"


def bounds(n: int, p: float, alpha: float) -> tuple[int, int]:
    """The counts (lo, hi) out of *n* draws a category of probability *p* stays within but for
    probability at most *alpha* (at most *alpha*/2 in each tail)."""
    if p <= 0.0:
        return 0, 0
    if p >= 1.0:
        return n, n
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    # Beyond 40 standard deviations (and 10 counts) the binomial's mass is below 1e-300.
    first = max(0, math.floor(mean - 40 * sd - 10))
    last = min(n, math.ceil(mean + 40 * sd + 10))
    log_p, log_q = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)

    def pmf(k: int) -> float:
        return math.exp(
            base - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q
        )

    tail, lo = 0.0, first
    for k in range(first, last + 1):
        mass = pmf(k)
        if tail + mass > alpha / 2:
            lo = k
            break
        tail += mass
    tail, hi = 0.0, last
    for k in range(last, first - 1, -1):
        mass = pmf(k)
        if tail + mass > alpha / 2:
            hi = k
            break
        tail += mass
    return lo, hi


def within(n: int, q: float, lo: int, hi: int) -> float:
    """P(lo <= X <= hi) for X ~ Binomial(n, q), summed exactly from its terms."""
    if q <= 0.0:
        return 1.0 if lo <= 0 <= hi else 0.0
    if q >= 1.0:
        return 1.0 if lo <= n <= hi else 0.0
    log_q, log_r, base = math.log(q), math.log1p(-q), math.lgamma(n + 1)
    return min(
        1.0,
        sum(
            math.exp(
                base - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_q + (n - k) * log_r
            )
            for k in range(max(0, lo), min(n, hi) + 1)
        ),
    )


def power(
    probabilities: dict[int, float], other: dict[int, float], false_fail: float, n: int
) -> float:
    """A lower bound on the chance that the test of *n* draws against *probabilities* (at
    *false_fail*) fails a sampler that draws from *other* instead: the largest, over the
    categories, of the exact chance that that one category's count leaves its bounds (the
    test fails when any does), and the chance that a category of probability 0 comes up.
    What an author reads to choose a statistical case's number of calls: as few as keep
    the power against the mistakes the case is there to catch."""
    tested = [k for k, p in probabilities.items() if p > 0]
    alpha = false_fail / max(1, len(tested))
    never = sum(q for k, q in other.items() if probabilities.get(k, 0.0) <= 0)
    best = 1.0 - (1.0 - min(1.0, never)) ** n
    for k in tested:
        lo, hi = bounds(n, probabilities[k], alpha)
        best = max(best, 1.0 - within(n, other.get(k, 0.0), lo, hi))
    return best


def hypergeometric_bounds(total: int, marked: int, taken: int, alpha: float) -> tuple[int, int]:
    """The counts (lo, hi) of marked items among *taken* of *total* (of which *marked* are
    marked), drawn without replacement, that the count stays within but for probability at
    most *alpha* (at most *alpha*/2 in each tail)."""
    first, last = max(0, taken - (total - marked)), min(marked, taken)
    if first == last:
        return first, last
    mean = taken * marked / total
    sd = math.sqrt(taken * (marked / total) * (1 - marked / total))
    # Beyond 40 standard deviations (and 10 counts) the mass is below 1e-300, as for bounds.
    start = max(first, math.floor(mean - 40 * sd - 10))
    end = min(last, math.ceil(mean + 40 * sd + 10))
    base = (
        math.lgamma(marked + 1)
        + math.lgamma(total - marked + 1)
        + math.lgamma(taken + 1)
        + math.lgamma(total - taken + 1)
        - math.lgamma(total + 1)
    )

    def pmf(k: int) -> float:
        return math.exp(
            base
            - math.lgamma(k + 1)
            - math.lgamma(marked - k + 1)
            - math.lgamma(taken - k + 1)
            - math.lgamma(total - marked - taken + k + 1)
        )

    tail, lo = 0.0, start
    for k in range(start, end + 1):
        tail += pmf(k)
        if tail > alpha / 2:
            lo = k
            break
    tail, hi = 0.0, end
    for k in range(end, start - 1, -1):
        tail += pmf(k)
        if tail > alpha / 2:
            hi = k
            break
    return lo, hi


def same_distribution(mine: list[Any], other: list[Any], false_fail: float) -> bool:
    """Whether two samples' counts (``[category, count]`` pairs, as a counts tag holds them)
    fit one distribution: the test that names a catalogued mistake drawn another way, the
    mistake's own draws (from another seed) being *other*. Given each category's count in
    both, m, the count of *mine* among them is hypergeometric when both samples come from one
    distribution (m items of *mine*'s n and *other*'s n' together, taken as n of n + n'); it
    must lie within bounds that hold but for ``false_fail / K`` over the K categories drawn
    (Bonferroni), so draws that do come from the mistake's distribution fit with probability
    at least ``1 - false_fail``. Sorted and merged, never hashed (the counts are untrusted)."""
    a = sorted(([int(k), int(c)] for k, c in mine), key=operator.itemgetter(0))
    b = sorted(([int(k), int(c)] for k, c in other), key=operator.itemgetter(0))
    n_a, n_b = sum(c for _, c in a), sum(c for _, c in b)
    if n_a <= 0 or n_b <= 0:
        return False
    merged: list[tuple[int, int]] = []  # (count in mine, count in both), category by category
    i = j = 0
    while i < len(a) or j < len(b):
        category = a[i][0] if j == len(b) or (i < len(a) and a[i][0] <= b[j][0]) else b[j][0]
        here = there = 0
        while i < len(a) and a[i][0] == category:  # a forged tag may repeat one
            here += a[i][1]
            i += 1
        while j < len(b) and b[j][0] == category:
            there += b[j][1]
            j += 1
        if here + there:
            merged.append((here, here + there))
    alpha = false_fail / max(1, len(merged))
    for here, both in merged:
        lo, hi = hypergeometric_bounds(n_a + n_b, both, n_a, alpha)
        if not lo <= here <= hi:
            return False
    return True


def read_probabilities(value: Any) -> dict[int, float] | None:
    """A distribution as ``distribution()`` returns it or a case writes it: probabilities by
    category, from a list (the index is the category), a 1-D tensor's values, or a mapping of
    int categories; normalised when it sums to 1 within 1e-6, else None (as for anything
    that is not such numbers)."""
    if tag_of(value) == TENSOR:
        value = value.get("values")
    if tag_of(value) == DENSE:
        from_dense = _dense(value)
        if from_dense is None:
            return None
        value = from_dense
    pairs: list[tuple[Any, Any]]
    if tag_of(value) == DICT:
        pairs = [(k, v) for k, v in value.get("items", [])]
    elif isinstance(value, list):
        pairs = list(enumerate(value))
    else:
        return None
    probabilities: dict[int, float] = {}
    for category, p in pairs:
        if type(category) is not int or type(p) not in (int, float):
            return None
        if not math.isfinite(p) or p < 0:
            return None
        probabilities[category] = probabilities.get(category, 0.0) + float(p)
    total = sum(probabilities.values())
    if not probabilities or abs(total - 1.0) > 1e-6:
        return None
    return {k: p / total for k, p in probabilities.items()}


def _dense(tag: dict[str, Any]) -> list[float] | None:
    try:
        numbers = read_numbers(tag)
    except Exception:  # a damaged packing: not a distribution
        return None
    return [float(x) for x in numbers.flat] if len(numbers.shape) == 1 else None


@dataclass(frozen=True)
class Off:
    """The categories whose counts fall outside their bounds (see :func:`off_counts`)."""

    listed: tuple[tuple[int, int, float, int, int], ...]
    """The first :data:`LISTED` of them, in category order: (category, count, p, lo, hi)."""
    total: int
    """How many categories are off."""
    never: tuple[int, ...]
    """The first :data:`LISTED` off categories of probability 0, in order."""
    never_total: int
    """How many categories of probability 0 came up."""
    categories: int
    """How many categories there are: in the distribution, or drawn."""


def off_counts(probabilities: dict[int, float], items: list[Any], false_fail: float, n: int) -> Off:
    """The categories whose counts (*items*, ``[category, count]`` pairs) fall outside their
    bounds for *n* draws in all. The learner's categories are sorted and merged with the
    distribution's, never put in a hash table: ints that share one hash would make that
    quadratic (categories are untrusted data)."""
    tested = [k for k, p in probabilities.items() if p > 0]
    alpha = false_fail / max(1, len(tested))
    drawn = sorted(items, key=operator.itemgetter(0))
    known = sorted(probabilities)
    listed: list[tuple[int, int, float, int, int]] = []
    never: list[int] = []
    total = never_total = categories = 0
    i = j = 0
    while i < len(drawn) or j < len(known):
        if j < len(known) and (i == len(drawn) or known[j] <= drawn[i][0]):
            category = known[j]
            j += 1
        else:
            category = drawn[i][0]
        count = 0
        while i < len(drawn) and drawn[i][0] == category:  # a forged tag may repeat one
            count += drawn[i][1]
            i += 1
        p = probabilities.get(category, 0.0)
        categories += 1
        lo, hi = bounds(n, p, alpha) if p > 0 else (0, 0)
        if lo <= count <= hi:
            continue
        total += 1
        if len(listed) < LISTED:
            listed.append((category, count, p, lo, hi))
        if p == 0:
            never_total += 1
            if len(never) < LISTED:
                never.append(category)
    return Off(tuple(listed), total, tuple(never), never_total, categories)


def _sizes(sizes: list[list[int]], asked: int) -> tuple[int, int] | None:
    """The first call whose number of draws is not *asked*, with that number: (call, draws),
    calls counted from 1; None when every call gave *asked*."""
    call = 1
    for size, times in sizes:
        if size != asked:
            return call, size
        call += times
    return None


def _draws(n: int) -> str:
    return f"{n:,} {'draw' if n == 1 else 'draws'}"


def compare(
    probabilities: dict[int, float],
    answer: Any,
    false_fail: float,
    calls: int,
    per_call: int | None = None,
) -> Comparison:
    """The verdict on a statistical case's counts tag *answer* against *probabilities*, for
    a case of *calls* calls that each return *per_call* draws (the reference's; None when
    there is no reference to ask: then every call must give as many as the first). The test
    is on calls x per-call draws, once each call is found to have given its share."""
    if tag_of(answer) != COUNTS:
        return _failed(Problem.TYPE, "Return ints: the draws did not come back as counts.", ())
    if "bad" in answer:
        call = answer["bad"]["call"]
        what = _what(answer["bad"]["answer"])
        return _failed(
            Problem.TYPE,
            f"Return ints (a token id, an integer tensor) from every call: call {call:,} of "
            f"{calls:,} returned {what}.",
            (),
        )
    sizes = answer.get("sizes") or []
    if answer.get("calls") != calls:  # the child makes every call: a result it did not write
        return _failed(Problem.TYPE, "Return ints: the draws did not come back as counts.", ())
    first = sizes[0][0] if sizes else 0
    asked = per_call if per_call else first
    odd = _sizes(sizes, asked)
    if odd is not None:
        call, size = odd
        if per_call:
            headline = (
                f"Return {_draws(asked)} from each call: call {call:,} of {calls:,} returned "
                f"{size:,}."
            )
        else:
            headline = (
                f"Return the same number of draws from each call: call 1 returned {first:,}, "
                f"call {call:,} of {calls:,} returned {size:,}."
            )
        why = (
            "each call is one step of a sampling loop: it draws the same number every time, "
            "and the test counts that many from each call"
        )
        return _failed(
            Problem.SHAPE,
            headline,
            (("draws", f"{_draws(asked)} asked of each of {calls:,} calls"), ("why", why)),
        )
    n = calls * asked
    tested = sum(1 for p in probabilities.values() if p > 0)
    test = (
        f"each category's count within its binomial bounds; false-failure rate "
        f"{false_fail:g} (Bonferroni over {_categories(tested)})"
    )
    evidence: list[tuple[str, str]] = [
        (
            "draws",
            f"{n:,} from {calls:,} {'call' if calls == 1 else 'calls'}, {asked:,} each (one "
            "generator, seeded by the case)",
        ),
        ("test", test),
    ]
    if n == 0:
        return _failed(
            Problem.SHAPE, "Return at least one draw from each call: none came back.", evidence
        )
    off = off_counts(probabilities, answer["items"], false_fail, n)
    if not off.total:
        return Comparison(True, Problem.PASSED, "", expected_shape=(), kind=FREQUENCIES.name)
    if off.never:
        more = " ..." if off.never_total > LISTED else ""
        shown = ", ".join(str(c) for c in off.never) + more
        headline = (
            f"Draw only what the distribution allows: {_categories(off.never_total)} with "
            f"probability 0 came up ({shown})."
        )
    else:
        more = " ..." if off.total > LISTED else ""
        shown = ", ".join(str(c) for c, *_ in off.listed) + more
        headline = (
            f"Check the probabilities you draw from: {_categories(off.total)} came up "
            f"too often or too rarely for the right distribution ({shown})."
        )
    evidence.append(("off", f"{off.total} of {_categories(off.categories)}"))
    for category, count, p, lo, hi in off.listed:
        evidence.append(
            (
                f"category {category}",
                f"expected {p:.4f}, drawn {count / n:.4f} (allowed {lo / n:.4f} to {hi / n:.4f})",
            )
        )
    if off.total > LISTED:
        evidence.append(("", f"... and {off.total - LISTED} more"))
    return _failed(Problem.VALUES, headline, evidence)


def _failed(problem: Problem, headline: str, evidence: Sequence[tuple[str, str]]) -> Comparison:
    return Comparison(
        False,
        problem,
        headline,
        expected_shape=(),
        kind=FREQUENCIES.name,
        evidence=tuple(evidence),
    )


def _what(answer: Any) -> str:
    if tag_of(answer) == TENSOR:
        return f"a {str(answer.get('dtype', '')).replace('torch.', '')} tensor"
    if answer is None:
        return "None"
    if isinstance(answer, dict) and TAG in answer:
        return f"a {type_name(answer)}"
    return f"a {type(answer).__name__}"


class Frequencies:
    """The kind that words a statistical case's verdict (:func:`compare` makes it)."""

    name = "frequencies"
    offers_evidence = False

    def accepts(self, value: Any) -> bool:
        return False  # never inferred: a statistical case says what it is

    def problem(self, value: Any) -> str | None:
        if read_probabilities(value) is None:
            return "must be probabilities by category, summing to 1"
        return None

    def compare(self, expected: Any, answer: Any, rtol: float, atol: float) -> Comparison:
        probabilities = read_probabilities(expected) or {}
        calls = answer.get("calls", 0) if isinstance(answer, dict) else 0
        return compare(probabilities, answer, FALSE_FAIL, calls)

    def same(self, a: Any, b: Any, rtol: float, atol: float) -> bool:
        return bool(a == b)

    def usable(self, answer: Any) -> bool:
        return read_probabilities(answer) is not None

    def plain(self, answer: Any) -> Any:
        probabilities = read_probabilities(answer) or {}
        return [probabilities.get(k, 0.0) for k in range(max(probabilities, default=-1) + 1)]

    def facts(self, comparison: Comparison) -> list[tuple[str, str]]:
        return list(comparison.evidence) or [("compared", "each call's draws, counted")]

    def listing(self, comparison: Comparison) -> tuple[list[tuple[str, ...]], int]:
        return [], 0


#: The one :class:`Frequencies` kind.
FREQUENCIES = Frequencies()
