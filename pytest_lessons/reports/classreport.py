"""The class report: one self-contained HTML page an instructor reads to see the class at a
glance.

Per exercise, a bar chart of outcomes (passed, each watch-out, each generic finding, each
check of the lesson's harness, wrong answers, timeouts, cases not run, crashes, exceptions,
returned tensors, not implemented, missing, the lesson's own errors apart from the grader's)
with the learners behind each bar; each case's pass rate, the case that fails most first; a
histogram of total points; the slowest submissions.

The charts are inline SVG drawn here, so the page needs no script and no network: its
Content-Security-Policy forbids both, and every text a learner chose (folder names, exception
messages) is escaped. Made from typed results only, so a merge of shards writes the same page
as one run. The class's terminal lines are here too (:func:`class_lines`, and
:func:`progress_line` for a run in progress), made from the same outcomes.
"""

from __future__ import annotations

import heapq
import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.words import noun, plural
from pytest_lessons.isolation.text import visible, visible_name
from pytest_lessons.reports import similarity
from pytest_lessons.reports.gradebook import book_of, number
from pytest_lessons.reports.tallies import Bar as Bar
from pytest_lessons.reports.tallies import Group, Tally, bars_of, summary_of, with_hidden_faults
from pytest_lessons.reports.tallies import Outcome as Outcome
from pytest_lessons.reports.tallies import lesson_failed as lesson_failed
from pytest_lessons.reports.tallies import outcome_of as outcome_of

#: Colours by kind of outcome, readable on white and apart for the common colour blindness.
COLOURS = {
    "passed": "#1b7837",
    "watch_out": "#d6604d",
    "detector": "#f4a582",
    "wrong": "#b2182b",
    "timeout": "#762a83",
    "crash": "#40004b",
    "raised": "#9970ab",
    "returned": "#e08214",
    "unloadable": "#878787",
    "missing": "#bababa",
    "check": "#fdb863",
    "lesson": "#8c510a",
    "grader": "#4d4d4d",
}
#: The colour of a bar whose kind this grader does not know (a newer shard's tally).
OTHER_COLOUR = "#878787"

#: How many of the slowest submissions the page lists.
SLOWEST = 10

#: Most bins of the histogram of total points below full marks (each spans whole points).
BINS = 10


def mean_text(mean: float) -> str:
    """A mean of points as people read it: one decimal at most (29.7, 5, 1234.5)."""
    return number(round(mean, 1))


def _e(text: object) -> str:
    """*text* as HTML text or an attribute's value: its markup escaped, and what no page should
    hold (controls, escapes, bidirectional overrides, lone surrogates: a folder name's bytes)
    shown as escapes (:func:`~pytest_lessons.isolation.text.visible`)."""
    return html.escape(visible(str(text)), quote=True)


def _names(names: Iterable[str]) -> str:
    """Learners' folder names, one-to-one as a reader sees them (see
    :func:`~pytest_lessons.isolation.text.visible_name`), as HTML text."""
    return html.escape(", ".join(visible_name(name) for name in names), quote=True)


def exercise_bars(results: Sequence[CaseResult]) -> list[Bar]:
    """One exercise's bars: ``passed`` (every case passed) first, then each outcome by how many
    learners show it, each learner counted once per outcome."""
    return bars_of(with_hidden_faults(results))


#: Longest bar label drawn whole, in characters (the bar's title holds every label whole).
LABEL_LIMIT = 80
#: Pixels a character of a label takes at the chart's 13 px font, at most.
CHAR_WIDTH = 7.5


def _bar_chart(bars: Sequence[Bar], learners: int, width: int = 640) -> str:
    """A horizontal bar chart as inline SVG, one row per bar, scaled to the class size; its
    labels column as wide as its longest label needs."""
    longest = max((len(_short(b.outcome.label, LABEL_LIMIT)) for b in bars), default=0)
    row, label_width = 26, max(230, math.ceil(longest * CHAR_WIDTH) + 16)
    width += label_width - 230
    height = row * len(bars) + 8
    span = width - label_width - 60
    parts = [
        f'<svg class="bars" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, bar in enumerate(bars):
        y = 4 + i * row
        length = max(2.0, span * len(bar.learners) / max(learners, 1))
        colour = COLOURS.get(bar.outcome.kind, OTHER_COLOUR)
        parts.append(
            f'<text x="{label_width - 8}" y="{y + 17}" text-anchor="end">'
            f"{_e(_short(bar.outcome.label, LABEL_LIMIT))}</text>"
            f'<rect data-outcome="{_e(bar.outcome.key)}" x="{label_width}" y="{y + 3}" '
            f'width="{length:.1f}" height="{row - 8}" fill="{colour}">'
            f"<title>{_e(bar.outcome.label)}: {len(bar.learners)}</title></rect>"
            f'<text x="{label_width + length + 6:.1f}" y="{y + 17}">{len(bar.learners)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Bin:
    """A bar of the histogram: the learners whose total is from *low* to under *high*, or
    exactly full marks for the last bar (*full*)."""

    low: float
    high: float
    count: int
    full: bool = False

    @property
    def label(self) -> str:
        """The bar's label under the axis: its whole-point start, or full marks."""
        return number(self.low)

    @property
    def title(self) -> str:
        if self.full:
            return f"full marks ({number(self.low)} points)"
        return f"{number(self.low)} to under {number(self.high)} points"


def histogram(totals: Sequence[float], most: float, bins: int = BINS) -> list[Bin]:
    """Learners by total points: bars of whole points each (one point, or as many whole
    points as keep them to *bins* bars), from 0 up to under full marks, then one bar of
    exactly full marks, so a full score never shares a bar with a lower one."""
    width = max(1, math.ceil(most / bins)) if most > 0 else 1
    below = math.ceil(most / width) if most > 0 else 0
    out = [Bin(n * width, min((n + 1) * width, most), 0) for n in range(below)]
    out.append(Bin(most, most, 0, full=True))
    counts = [0] * len(out)
    for total in totals:
        if total >= most - 1e-9:
            counts[-1] += 1
        else:
            counts[min(below - 1, max(0, int(total // width)))] += 1
    return [Bin(b.low, b.high, c, b.full) for b, c in zip(out, counts)]


def _histogram_svg(bins: Sequence[Bin], width: int = 640) -> str:
    height, bottom, left = 200, 30, 30
    counts = [b.count for b in bins]
    top = max(counts, default=0) or 1
    slot = (width - left - 10) / len(counts)
    parts = [
        f'<svg class="histogram" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" '
        'stroke="#333"/>',
    ]
    for i, one in enumerate(bins):
        count = one.count
        bar = (height - bottom - 20) * count / top
        x = left + i * slot
        parts.append(
            f'<rect data-bin="{i}" data-low="{number(one.low)}" x="{x + 2:.1f}" '
            f'y="{height - bottom - bar:.1f}" width="{slot - 4:.1f}" height="{bar:.1f}" '
            f'fill="#2166ac"><title>{_e(one.title)}: {count}</title></rect>'
            f'<text x="{x + slot / 2:.1f}" y="{height - bottom + 16}" text-anchor="middle">'
            f"{one.label}</text>"
        )
        if count:
            parts.append(
                f'<text x="{x + slot / 2:.1f}" y="{height - bottom - bar - 4:.1f}" '
                f'text-anchor="middle">{count}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1, h2 { font-weight: 600; }
svg text { font: 13px system-ui, sans-serif; fill: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
td, th { border-bottom: 1px solid #ddd; padding: .2em .8em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
details { margin: .2em 0; }
summary { cursor: pointer; }
.who { color: #444; }
"""


def render(
    results: Sequence[CaseResult],
    title: str = "Class report",
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
    similar: Sequence[similarity.Lesson] | None = None,
) -> str:
    """The whole page, from a class's per-case results: exercises in their course's order
    (*order* as a shard recorded it, else ``course.toml``'s); *absent* learners (not graded
    at all, with why) are named, never counted as 0. *similar* adds the section of similar
    submissions (``python -m pytest_lessons similarity``)."""
    return render_tally(Tally.of(results), title, order, absent, similar)


def render_tally(
    tally: Tally,
    title: str = "Class report",
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
    similar: Sequence[similarity.Lesson] | None = None,
) -> str:
    """:func:`render`'s page from the class's :class:`Tally` (a merge of the shards' tallies
    has no results)."""
    order = tally.order(order)
    book = book_of(tally, order=order)
    learners = tally.learners
    totals = [x.total for x in book.learners]
    mean = sum(totals) / len(totals) if totals else 0.0
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # No script, no fetch, no font, no image from anywhere: the page stands alone, and
        # nothing a learner wrote into it can run.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>{len(learners)} learners; mean {mean_text(mean)} of {number(book.most)} points. "
        f"{_e(summary_of(tally.totals))}</p>",
    ]
    if absent:
        reasons = "; ".join(sorted(set(absent.values())))
        out.append(
            f'<p class="absent"><strong>Not graded: {len(absent)} '
            f"learner{'s' if len(absent) != 1 else ''}</strong> ({_e(reasons)}): "
            f"{_names(sorted(absent))}. They are in no figure of this page.</p>"
        )
    out += [
        "<h2>Total points</h2>",
        _histogram_svg(histogram(totals, book.most)),
    ]
    for group in tally.in_order(book.exercises):
        exercise, bars = group.slug, group.bars
        out += [
            f'<section class="exercise" id="{_e(exercise)}">',
            f"<h2>{_e(group.title)} <small>({_e(exercise)})</small></h2>",
            _bar_chart(bars, group.learners),
        ]
        for bar in bars:
            out.append(
                f"<details><summary>{_e(bar.outcome.label)}: {len(bar.learners)} "
                f"learner{'s' if len(bar.learners) != 1 else ''}</summary>"
                f'<p class="who">{_names(bar.learners)}</p></details>'
            )
        out += ["<h3>Pass rate per case, lowest first</h3>", *_case_table(group), "</section>"]
    out += similarity_section(similar) if similar is not None else []
    out += ["<h2>Slowest submissions</h2>", *_slowest(tally), "</body></html>"]
    return "\n".join(out) + "\n"


def _case_table(group: Group) -> list[str]:
    lines = ["<table><tr><th>case</th><th>passed</th><th>rate</th></tr>"]
    for rate, _, label, passed, total in group.cases:
        lines.append(
            f'<tr><td>{_e(label)}</td><td class="n">{passed} of {total}</td>'
            f'<td class="n">{rate:.0%}</td></tr>'
        )
    lines.append("</table>")
    return lines


def _slowest(tally: Tally) -> list[str]:
    seconds = {key: mark.seconds for key, mark in tally.marks.items()}
    # nsmallest is sorted()[:SLOWEST] (the key is a total order), without sorting a class.
    worst = heapq.nsmallest(SLOWEST, seconds.items(), key=lambda kv: (-kv[1], kv[0]))
    lines = ["<table><tr><th>learner</th><th>exercise</th><th>seconds</th></tr>"]
    for (learner, exercise), spent in worst:
        lines.append(
            f"<tr><td>{_names([learner])}</td><td>{_e(exercise)}</td>"
            f'<td class="n">{spent:.1f}</td></tr>'
        )
    lines.append("</table>")
    return lines


# --- the terminal of a class run ------------------------------------------------------------


def class_lines(
    results: Sequence[CaseResult],
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
) -> list[str]:
    """The class at a glance: per exercise, who passed, the mean, and how many learners show
    each outcome (every kind: watch-outs, findings, timeouts, crashes, missing ...).
    Exercises come in their course's order, as in the ``lessons`` section of a learner's run.
    Learners *absent* from the results (a merge without their shard) are named first. Each
    line is safe to print on a terminal: what a learner chose (a folder name, an error's
    name) shows its escape sequences and control characters as ``\\x1b``, never runs them."""
    return tally_lines(Tally.of(results), order, absent)


def tally_lines(
    tally: Tally, order: Sequence[str] = (), absent: Mapping[str, str] | None = None
) -> list[str]:
    """:func:`class_lines` from the class's :class:`Tally` (a merge of the shards' tallies has
    no results)."""
    learners = len(tally.learners)
    lines = [plural(learners, "learner")]
    if absent:
        lines[0] += f" graded of {len(absent) + learners}"
    for why, names in _by_reason(absent or {}).items():
        lines.append(f"NOT GRADED: {plural(len(names), 'learner')}, {why}: {name_list(names)}")
    for group in tally.in_order(order):
        exercise, bars = group.slug, group.bars
        passed = next((len(b.learners) for b in bars if b.outcome.key == "passed"), 0)
        mean = group.points / learners
        most = group.max_points / learners
        lines.append(
            f"{exercise}: {passed} of {learners} passed, mean {mean_text(mean)} of {most:g} points"
        )
        for bar in bars:
            if bar.outcome.key != "passed":
                count = len(bar.learners)
                lines.append(f"    {count:>3} {noun(count, 'learner')}  {bar.outcome.label}")
    return [visible(line) for line in lines]


def _by_reason(absent: Mapping[str, str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in sorted(absent):
        found.setdefault(absent[name], []).append(name)
    return found


def name_list(names: Sequence[str], most: int = 10) -> str:
    """``a, b, c`` or ``a, b ... and 12 more``: enough to find them, never a wall of names."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most} more"


def progress_line(done: int, total: int, learners_done: int, learners: int, elapsed: float) -> str:
    """``learners 12/40 done, cases 130/400, 0:42 elapsed, about 1:30 left``."""
    left = elapsed * (total - done) / done if done else 0.0
    text = (
        f"learners {learners_done}/{learners} done, cases {done}/{total}, {_clock(elapsed)} elapsed"
    )
    return text + (f", about {_clock(left)} left" if done < total and done else "")


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}"


def similarity_section(lessons: Sequence[similarity.Lesson], shown: int = 20) -> list[str]:
    """The section of similar submissions: per lesson, its pairs best first, said to be
    evidence to look at and never a grade."""
    out = [
        '<section class="similarity" id="similar-submissions">',
        "<h2>Similar submissions</h2>",
        f"<p>{_e(similarity.EVIDENCE)}</p>",
    ]
    for lesson in lessons:
        left_out = "; ".join(f"{len(who)} {why}" for why, who in lesson.left_out.items())
        out += [
            f"<h3>{_e(lesson.lesson)} <small>({lesson.compared} files compared"
            f"{'; not compared: ' + _e(left_out) if left_out else ''})</small></h3>",
        ]
        if not lesson.pairs:
            out.append("<p>No pair above the threshold.</p>")
            continue
        out.append(
            "<table><tr><th>overlap</th><th>learner</th><th>share in the other's</th>"
            "<th>learner</th><th>share in the other's</th><th>tokens</th></tr>"
        )
        for pair in lesson.pairs[:shown]:
            out.append(
                f'<tr><td class="n">{round(100 * pair.score)}%</td>'
                f"<td>{_names([pair.first])}</td>"
                f'<td class="n">{round(100 * pair.first_share)}%</td>'
                f"<td>{_names([pair.second])}</td>"
                f'<td class="n">{round(100 * pair.second_share)}%</td>'
                f'<td class="n">{pair.tokens}</td></tr>'
            )
        out.append("</table>")
        if len(lesson.pairs) > shown:
            out.append(f"<p>... and {len(lesson.pairs) - shown} more pairs.</p>")
    out.append("</section>")
    return out
