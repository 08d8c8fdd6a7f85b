"""Name the mistake behind a wrong answer: lesson watch-outs and generic detectors.

A :class:`Diagnosis` is a headline for a failing case, with a rank; the report shows the best one
(lowest rank) instead of the comparison's own headline. Detectors only claim "looks like ..." when
the match holds within the case's tolerance. Everything here works on plain numbers
(:class:`~pytest_lessons.core.compare.Numbers`). The pytest hook that calls these functions
lives in :mod:`pytest_lessons.plugin`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from pytest_lessons.core.compare import Numbers, outside, size_one_positions
from pytest_lessons.core.compare import (
    close as close,  # the watch-outs and the tests have always found it here
)
from pytest_lessons.core.model import WatchOut
from pytest_lessons.core.words import first_row_shape, fmt_index, fmt_shape

#: Ranks: a lower rank wins. Learner errors never reach diagnosis (they have no answer).
WATCH_OUT = 10
DETECTOR = 20

#: Larger answers are not searched for layout mistakes (the search tries many orders).
LAYOUT_LIMIT = 100_000
#: At most this many orders are tried.
LAYOUT_TRIES = 2_000


@dataclass(frozen=True)
class Diagnosis:
    """What went wrong, in the learner's terms."""

    id: str
    """A stable identifier: a watch-out's ``id``, or a detector's (``layout``, ``scaled`` ...)."""
    headline: str
    """What to do, then why. Shown first."""
    rank: int = DETECTOR
    details: tuple[str, ...] = ()
    """More lines, shown under the headline."""
    shows_values: bool = False
    """Whether the words reveal values of the case (a hidden case must not show those)."""
    kind: str = "detector"
    """``watch_out`` or ``detector``."""


@dataclass(frozen=True)
class Evidence:
    """What a diagnostician may look at: all plain data."""

    got: Numbers
    expected: Numbers
    rtol: float
    atol: float
    inputs: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    """The comparison's problem code (``values``, ``shape`` ...)."""
    part_index: int = -1
    """For an exercise with several outputs: which one ``got`` and ``expected`` are."""


def best(diagnoses: Sequence[Diagnosis | None]) -> Diagnosis | None:
    """The diagnosis to show: the lowest rank, first come first served among equals."""
    found = [d for d in diagnoses if d is not None]
    return min(found, key=lambda d: d.rank) if found else None


# --- lesson watch-outs ------------------------------------------------------------------------


@dataclass(frozen=True)
class Fitted:
    """A watch-out's free parameter, fitted to the learner's answer on one case."""

    value: float
    """The value that gives the learner's answer."""
    words: str
    """The value for the message's ``{fitted}``: ``4.9 = √24, the model width``."""
    right: str = ""
    """The right value for the message's ``{right}``: ``√width = 2``."""
    expression: str = ""
    """The author's expression that named the value, if one did."""


def fill(message: str, fitted: Fitted) -> str:
    """A fitted watch-out's message with ``{fitted}`` and ``{right}`` put in."""
    return message.replace("{fitted}", fitted.words).replace("{right}", fitted.right)


def match_watch_outs(
    evidence: Evidence,
    watch_outs: Sequence[WatchOut],
    mistake_answers: dict[str, Numbers | None],
    generic: Diagnosis | None = None,
    fitter: Callable[[WatchOut], Fitted | None] | None = None,
    consistent: Callable[[WatchOut, Fitted | None], bool] | None = None,
    fits: Callable[[WatchOut], bool] | None = None,
) -> Diagnosis | None:
    """The first watch-out whose mistake gives the learner's answer on this case.

    *mistake_answers* maps a watch-out id to its mistake function's answer on the case (None
    when the function failed). A mistake that gives the right answer on this case tells nothing
    and never fires. A watch-out with a ``detector`` fires when *generic* has that id. A
    watch-out with ``fit`` asks *fitter* for the value of its free parameter that gives the
    learner's answer here and on the other cases. *consistent* may veto another watch-out's
    match that other cases contradict. A watch-out with ``code`` fires only where *fits* says
    the graded code matches it (its message tells of a call that code makes).
    """
    for watch in watch_outs:
        if watch.code is not None and fits is not None and not fits(watch):
            continue
        if watch.fit is not None:
            # The fitter checks the other cases itself: it picks the value that explains them.
            found = fitter(watch) if fitter is not None else None
            if found is not None:
                return Diagnosis(
                    watch.id,
                    f"Watch out: {fill(watch.message, found)}",
                    WATCH_OUT,
                    shows_values=True,
                    kind="watch_out",
                )
            continue
        if watch.mistake:
            answer = mistake_answers.get(watch.id)
            if answer is None or close(answer, evidence.expected, evidence.rtol, evidence.atol):
                continue
            if close(evidence.got, answer, evidence.rtol, evidence.atol) and (
                consistent is None or consistent(watch, None)
            ):
                return Diagnosis(
                    watch.id, f"Watch out: {watch.message}", WATCH_OUT, kind="watch_out"
                )
        elif watch.detector and generic is not None and generic.id == watch.detector:
            return Diagnosis(
                watch.id,
                f"Watch out: {watch.message}",
                WATCH_OUT,
                details=generic.details,
                kind="watch_out",
            )
    return None


# --- generic detectors ------------------------------------------------------------------------


def detect(evidence: Evidence) -> Diagnosis | None:
    """The most specific generic finding about a wrong answer, if any holds. None for a
    single number: any wrong number is a multiple and an offset of the right one, so no
    finding about values would tell the learner anything."""
    if close(evidence.got, evidence.expected, evidence.rtol, evidence.atol):
        return None
    if evidence.expected.shape == () and evidence.got.shape == ():
        return None
    for detector in GENERIC:
        found = detector(evidence)
        if found is not None:
            return found
    return None


def _permute(flat: Sequence[float], shape: tuple[int, ...], axes: tuple[int, ...]) -> list[float]:
    """Row-major values of the block *flat* of *shape* with its axes put in order *axes*."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    new_shape = [shape[a] for a in axes]
    new_strides = [strides[a] for a in axes]
    offsets = [0]
    for size, stride in zip(new_shape, new_strides):
        offsets = [o + k * stride for o in offsets for k in range(size)]
    return [flat[o] for o in offsets]


def _splits(shape: tuple[int, ...]) -> list[tuple[tuple[int, ...], str]]:
    """Finer views of *shape*: each size kept or split into two factors (2×3 for 6)."""
    options: list[list[tuple[int, ...]]] = []
    for size in shape:
        choices: list[tuple[int, ...]] = [(size,)]
        choices += [(a, size // a) for a in range(2, size) if size % a == 0]
        options.append(choices)
    views = []
    for combo in itertools.product(*options):
        view = tuple(s for part in combo for s in part)
        if len(view) <= 5:
            views.append((view, "" if view == shape else fmt_index(view)))
    return views


def layout(evidence: Evidence) -> Diagnosis | None:
    """Right values in another layout: axes permuted, transposed, or reshaped from a tensor
    whose axes were in another order (token-major vs head-major)."""
    got, want = evidence.got, evidence.expected
    size = len(want.flat)
    if len(got.flat) != size or size > LAYOUT_LIMIT or size < 2:
        return None
    tries = 0
    if got.shape != want.shape:
        # The axes themselves are out of order.
        for axes in itertools.permutations(range(len(want.shape))):
            if tuple(want.shape[a] for a in axes) != got.shape:
                continue
            tries += 1
            moved = Numbers(got.shape, _permute(want.flat, want.shape, axes))
            if close(got, moved, evidence.rtol, evidence.atol):
                if len(axes) == 2:
                    return _transposed()
                return Diagnosis(
                    "layout",
                    "Put the axes in the expected order: your answer has the right values, "
                    f"with its axes in the order {axes} of the expected ones. A .transpose() or "
                    ".permute() is missing or extra.",
                    shows_values=False,
                )
        return None
    for view, named in _splits(want.shape):
        for axes in itertools.permutations(range(len(view))):
            if axes == tuple(range(len(view))):
                continue
            tries += 1
            if tries > LAYOUT_TRIES:
                return None
            moved = Numbers(got.shape, _permute(want.flat, view, axes))
            if moved.flat == list(want.flat) or not close(got, moved, evidence.rtol, evidence.atol):
                continue
            if len(view) == 2 and not named:
                return _transposed()
            seen = f"the expected {fmt_shape(want.shape)} seen as {named or fmt_shape(view)}"
            return Diagnosis(
                "layout",
                "Reorder the axes before you reshape: your values are right but in the wrong "
                "places. They are what you get by reading "
                f"{seen} in axis order {axes}: a .transpose() or .permute() is missing or "
                "extra before a reshape.",
            )
    return None


def _transposed() -> Diagnosis:
    return Diagnosis(
        "layout",
        "Swap rows and columns: your answer is the expected one transposed. A .transpose() or "
        ".T is missing or extra.",
    )


def _constant_names(inputs: dict[str, Any]) -> list[tuple[float, str]]:
    """Factors a scaling mistake is likely made of, named after the inputs' sizes: first the
    last dimension's (the width d, and √d), then the other axes' (heads, time)."""
    last: list[tuple[float, str]] = []
    other: list[tuple[float, str]] = []
    for name, value in inputs.items():
        shape = first_row_shape(value)
        for axis, size in enumerate(shape):
            if size < 2:
                continue
            if axis == len(shape) - 1:
                where = f"the size of {name}'s last dimension"
                last += [
                    (math.sqrt(size), f"√{size}, the square root of {where}"),
                    (float(size), f"{size}, {where}"),
                ]
            else:
                other.append((float(size), f"{size}, the size of {name}'s axis {axis}"))
    return last + other


#: Whole factors up to this are named as numbers first: a size this small matches by chance.
SMALL_FACTOR = 4


def _factor_words(factor: float, inputs: dict[str, Any]) -> tuple[str, str]:
    """How the answer relates to the expected one, and a clue sentence (or "")."""
    for value, name in _constant_names(inputs):
        for size, how in ((value, "times"), (1 / value, "divided by")):
            if not math.isclose(factor, size, rel_tol=1e-3):
                continue
            if round(value) == value and value <= SMALL_FACTOR:
                # 2 or 3 is as likely a plain missing factor as this size: offer it as a clue.
                return f"the expected one {how} {value:g}", (
                    f" Here {value:g} is also {name.split(', ', 1)[1]}."
                )
            return f"the expected one {how} {name}", ""
    return f"{factor:.4g} times the expected one", ""


def _whole(numbers: Numbers) -> bool:
    return all(math.isfinite(v) and float(v).is_integer() for v in numbers.flat)


def offset(evidence: Evidence) -> Diagnosis | None:
    """An answer of whole numbers off by the same whole amount everywhere: an off-by-one (or
    by-k), which a ratio would misname ("1.333 times" for a 4 that should be 3)."""
    got, want = evidence.got, evidence.expected
    if got.shape != want.shape or not got.flat or not (_whole(got) and _whole(want)):
        return None
    differences = {g - e for g, e in zip(got.flat, want.flat)}
    if len(differences) != 1:
        return None
    step = differences.pop()
    if step == 0:
        return None
    how = "more" if step > 0 else "less"
    amount = f"{abs(step):g}"
    if abs(step) == 1:
        return Diagnosis(
            "offset",
            f"Look for an off-by-one: each value is 1 {how} than expected. A count, an index "
            "or a range's bound is likely one too "
            f"{'large' if step > 0 else 'small'}.",
        )
    return Diagnosis(
        "offset",
        f"Look for a constant added or left out: each value is {amount} {how} than expected.",
    )


def scaled(evidence: Evidence) -> Diagnosis | None:
    """Every value off by the same factor; for an answer of whole numbers, only a whole factor
    (or its inverse) counts, as a ratio of two counts is no scaling."""
    got, want = evidence.got, evidence.expected
    if got.shape != want.shape:
        return None
    if _whole(got) and _whole(want):
        nonzero = [(g, e) for g, e in zip(got.flat, want.flat) if g and e]
        if not nonzero:
            return None
        g, e = nonzero[0]
        if not (float(g / e).is_integer() or float(e / g).is_integer()):
            return None
    pairs = [(g, e) for g, e in zip(got.flat, want.flat) if abs(e) > evidence.atol * 10]
    if not pairs or not all(math.isfinite(g) for g, _ in pairs):
        return None
    factor = pairs[0][0] / pairs[0][1]
    if factor == 0 or abs(factor - 1) < 1e-6:
        return None
    scaled_want = Numbers(want.shape, [factor * e for e in want.flat])
    if not close(got, scaled_want, evidence.rtol, evidence.atol):
        return None
    text, clue = _factor_words(factor, evidence.inputs)
    return Diagnosis(
        "scaled",
        f"Check your scaling: every value is {text}. A factor is missing, extra or applied "
        f"twice.{clue}",
    )


def _grid(evidence: Evidence) -> tuple[int, int, set[tuple[int, int]]] | None:
    """The last two dimensions' size and which of their cells are wrong in any leading slice."""
    shape = evidence.expected.shape
    if len(shape) < 2 or evidence.got.shape != shape:
        return None
    rows_n, cols_n = shape[-2], shape[-1]
    cells = set()
    for position in outside(
        evidence.got.flat, evidence.expected.flat, evidence.rtol, evidence.atol
    ):
        index = evidence.expected.index(position)
        cells.add((index[-2], index[-1]))
    return rows_n, cols_n, cells


def triangle(evidence: Evidence) -> Diagnosis | None:
    """Right on and below the diagonal only (or on and above): a mask in the wrong place."""
    grid = _grid(evidence)
    if grid is None:
        return None
    rows_n, cols_n, cells = grid
    if rows_n != cols_n or rows_n < 2 or not cells:
        return None
    if all(c > r for r, c in cells):
        part, other = "on and below the diagonal", "above it"
    elif all(c < r for r, c in cells):
        part, other = "on and above the diagonal", "below it"
    else:
        return None
    return Diagnosis(
        "triangle",
        f"Check your mask: your answer is right {part} and wrong {other}, the pattern a "
        "triangular (causal) mask leaves when it is applied where it should not be, or "
        "left out where it should.",
    )


def rows(evidence: Evidence) -> Diagnosis | None:
    """Only some rows (of the last two dimensions) are wrong."""
    grid = _grid(evidence)
    if grid is None:
        return None
    rows_n, _, cells = grid
    wrong = sorted({r for r, _ in cells})
    if not wrong or len(wrong) == rows_n or rows_n < 2:
        return None
    right = [r for r in range(rows_n) if r not in wrong]
    start = f"Look at what differs between rows: {_rows(wrong)} wrong while {_rows(right)} right."
    if _rows_scaled(evidence):
        # Each wrong row is the right one times a factor of its own: a statistic of the row
        # (its variance, norm or sum) is used another way, which shows where it is small,
        # as eps added outside a square root does.
        why = (
            " Each wrong row is the right row times a factor of its own: check how a "
            "statistic of each row (its mean, variance, norm or sum) is computed and used, "
            "such as where eps goes; rows where that statistic is small show it most."
        )
    else:
        why = (
            " Something treats those rows (tokens) differently, such as a mask or an index "
            "that stops early."
        )
    return Diagnosis("rows", start + why)


def _rows_scaled(evidence: Evidence) -> bool:
    """Whether every row (along the last dimension) with a wrong value is the expected row
    times one factor, within the tolerance, rows of two values or more."""
    shape = evidence.expected.shape
    width = shape[-1]
    if width < 2:
        return False
    got, want = evidence.got.flat, evidence.expected.flat
    bad = {p // width for p in outside(got, want, evidence.rtol, evidence.atol)}
    for row in bad:
        g = [float(v) for v in got[row * width : (row + 1) * width]]
        e = [float(v) for v in want[row * width : (row + 1) * width]]
        if not all(math.isfinite(v) for v in (*g, *e)):
            return False
        norm = sum(v * v for v in e)
        if norm == 0:
            return False
        factor = sum(a * b for a, b in zip(g, e)) / norm
        if not math.isfinite(factor) or factor <= 0:
            return False
        scaled = [factor * v for v in e]
        if outside(g, scaled, evidence.rtol, evidence.atol):
            return False
    return bool(bad)


def _rows(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"row {numbers[0]} is"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"rows {numbers[0]} to {numbers[-1]} are"
    return "rows " + ", ".join(str(n) for n in numbers) + " are"


def shuffled(evidence: Evidence) -> Diagnosis | None:
    """The expected values, all there, in other places."""
    got, want = evidence.got, evidence.expected
    if len(got.flat) != len(want.flat) or len(want.flat) < 2:
        return None
    if size_one_positions(got.shape, want.shape):
        return None  # the comparison's own headline names the extra or missing dimension
    if not all(math.isfinite(v) for v in got.flat):
        return None
    mine = Numbers((len(got.flat),), sorted(got.flat))
    theirs = Numbers((len(want.flat),), sorted(want.flat))
    if not close(mine, theirs, evidence.rtol, evidence.atol):
        return None
    return Diagnosis(
        "shuffled",
        "Put your values in the right places: your answer holds every expected value, in a "
        "different order. Check the order of dimensions before any reshape, view or flatten.",
    )


#: The generic detectors, most specific first; their ids are model.DETECTORS.
GENERIC = (layout, offset, scaled, triangle, rows, shuffled)
