"""What a ``%%lesson`` cell and the other magics show: :class:`Feedback` (HTML in a
notebook through the ``_repr_html_`` protocol, the terminal's text elsewhere) and
:class:`Text`. The failures' words are the grading core's; which cases fold under which
follows :mod:`pytest_lessons.core.frontend`, as in the terminal."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_lessons.core import words
from pytest_lessons.core.frontend import SAME_WAY, FaultGroups
from pytest_lessons.core.results import DETECTOR, FAULT, WATCH_OUT, CaseResult
from pytest_lessons.core.texts import MAP_TITLE


@dataclass
class Shown:
    """One failing case as the cell shows it, and the later cases that failed as it did."""

    result: CaseResult
    text: str
    repeats: list[tuple[CaseResult, str]] = field(default_factory=list)
    """Cases with the same fault (counted, not shown, as in the terminal) or the same
    diagnosis (shown in short): collapsed under this one in the HTML."""


class Feedback:
    """What a ``%%lesson`` cell shows: HTML in a notebook, the terminal's text elsewhere."""

    def __init__(
        self,
        slug: str,
        graded: Sequence[tuple[CaseResult, str]],
        progress: Sequence[str],
        notes: Sequence[str] = (),
        seconds: float = 0.0,
    ) -> None:
        self.slug = slug
        self.results = [result for result, _ in graded]
        """Every case's result, in order."""
        self.progress = list(progress)
        """The ``lessons`` lines: the lesson's state, then the course line."""
        self.notes = list(notes)
        self.seconds = seconds
        """Wall time the grading of the cell took."""
        self.shown: list[Shown] = []
        self.same_way = 0
        """Failing cases counted as failing the same way as an earlier one."""
        groups = FaultGroups[Shown]((WATCH_OUT, FAULT, DETECTOR))
        for result, text in graded:
            if result.passed:
                continue
            shown = Shown(result, text)
            first = groups.first(result, shown)
            if first is None or first is shown:
                self.shown.append(shown)
                continue
            first.repeats.append((result, text))
            if result.fault:
                self.same_way += 1

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def points(self) -> float:
        return sum(r.points for r in self.results)

    @property
    def max_points(self) -> float:
        return sum(r.max_points for r in self.results)

    def counts(self) -> str:
        """``10 passed`` or ``2 passed, 1 failed, 7 failed the same way``, as pytest's last
        line counts them."""
        passed = sum(1 for r in self.results if r.passed)
        failed = len(self.results) - passed - self.same_way
        parts = [f"{passed} passed"] if passed else []
        if failed:
            parts.append(f"{failed} failed")
        if self.same_way:
            parts.append(f"{self.same_way} {SAME_WAY}")
        return ", ".join(parts) or "no cases"

    def headline(self) -> str:
        if self.passed:
            return f"{self.slug}: every case passed ({self.counts()})."
        return f"{self.slug}: {self.counts()}"

    def text(self) -> str:
        """The plain text: the failures as the terminal shows them (a case that failed the
        same way as an earlier one is counted, not shown), then the progress."""
        lines = [self.headline()]
        for shown in self.shown:
            for result, text in [(shown.result, shown.text), *shown.repeats]:
                if result is not shown.result and result.fault:
                    continue
                lines += ["", f"____ {self.slug}: {result.label} ____", text.rstrip("\n")]
        if self.notes or self.progress:
            lines.append("")
        lines += [*self.notes, *self.progress]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text().rstrip("\n"))

    def _repr_html_(self) -> str:
        """The headline first, then each failure: its headline, its evidence with the
        mismatch map as a coloured grid, the cases that failed the same way collapsed; the
        lesson's progress last."""
        # What to do comes first: a failing cell's counts stay small, above its first
        # failure's headline; a passing cell's line is its headline.
        top = "font-weight:bold;color:#1a7f37" if self.passed else "color:#cf222e;font-size:90%"
        parts = [
            f'<div class="pytest-lessons" style="{_BOX}">',
            f'<div style="{top}">{_e(self.headline())}</div>',
        ]
        for shown in self.shown:
            parts.append(_case_html(shown.result, shown.text))
            if shown.repeats:
                numbers = [r.case for r, _ in shown.repeats]
                how = "failed as" if shown.result.fault else "made the same mistake as"
                inner = "".join(_case_html(r, t, nested=True) for r, t in shown.repeats)
                parts.append(
                    '<details style="margin:0 0 0.6em 1em">'
                    f"<summary>{_e(words.case_list(numbers))} "
                    f"{how} {_e(shown.result.label)}</summary>{inner}</details>"
                )
        tail = [*self.notes, *self.progress]
        if tail:
            parts.append(f'<pre style="{_PRE}">{_e(chr(10).join(tail))}</pre>')
        parts.append("</div>")
        return "".join(parts)


_BOX = "font-family:var(--jp-ui-font-family,sans-serif);line-height:1.4"
_PRE = "margin:0.2em 0;white-space:pre;overflow-x:auto;font-size:90%"
_RED, _GREEN = "#ffd7d5", "#d3f5d8"


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _split(text: str) -> tuple[str, list[str]]:
    """A failure's text as its headline paragraph (on one line) and its evidence lines."""
    lines = text.rstrip("\n").split("\n")
    end = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    return " ".join(" ".join(lines[:end]).split()), lines[end:]


def _case_html(result: CaseResult, text: str, nested: bool = False) -> str:
    headline, evidence = _split(text)
    while evidence and not evidence[0].strip():
        evidence.pop(0)
    label = f'<div style="color:#57606a;font-size:90%">{_e(result.label)}</div>'
    body = f'<div style="font-weight:bold">{_e(headline)}</div>'
    body += "".join(_evidence_html(evidence))
    margin = "0.3em 0" if nested else "0.6em 0"
    return f'<div style="margin:{margin}">{label}{body}</div>'


def _evidence_html(lines: list[str]) -> list[str]:
    """The evidence: the table of mismatches as a table, the mismatch map as a grid of
    coloured cells, everything else as the terminal's text."""
    parts: list[str] = []
    plain: list[str] = []

    def flush() -> None:
        while plain and not plain[-1].strip():
            plain.pop()
        if any(line.strip() for line in plain):
            parts.append(f'<pre style="{_PRE}">{_e(chr(10).join(plain))}</pre>')
        plain.clear()

    at = 0
    while at < len(lines):
        line = lines[at]
        if line.startswith(MAP_TITLE):
            rows = _block(lines, at + 2)
            if at + 1 < len(lines) and rows:
                flush()
                parts.append(_map_html(line.strip(), lines[at + 1], rows))
                at += 2 + len(rows)
                continue
        if line.split() == ["at", "got", "expected"]:
            rows = _block(lines, at + 1)
            flush()
            parts.append(_table_html(rows))
            at += 1 + len(rows)
            continue
        plain.append(line)
        at += 1
    flush()
    return parts


def _block(lines: list[str], start: int) -> list[str]:
    """The lines from *start* to the next empty one."""
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    return lines[start:end]


_CELL = "padding:0 0.6em;text-align:right;font-family:monospace"


def _table_html(rows: list[str]) -> str:
    head = "".join(f'<th style="{_CELL}">{word}</th>' for word in ("at", "got", "expected"))
    body = []
    for row in rows:
        cells = [cell for cell in row.strip().split("   ") if cell.strip()]
        if len(cells) != 3:
            body.append(f'<tr><td colspan="3" style="{_CELL}">{_e(row.strip())}</td></tr>')
            continue
        body.append("<tr>" + "".join(f'<td style="{_CELL}">{_e(c.strip())}</td>' for c in cells))
    return (
        '<table style="border-collapse:collapse;margin:0.3em 1em;font-size:90%">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _map_html(title: str, header: str, rows: list[str]) -> str:
    """The mismatch map: red where a value is outside tolerance, green where it matches."""
    square = "width:1.4em;height:1.4em;text-align:center;font-family:monospace;font-size:80%"
    columns = header.split()
    out = [f'<tr><td style="{square}"></td>']
    out += [f'<td style="{square};color:#57606a">{c}</td>' for c in columns]
    out.append("</tr>")
    for row in rows:
        label, *cells = row.split()
        out.append(f'<tr><td style="{square};color:#57606a">{_e(label)}</td>')
        for cell in cells:
            wrong = cell == "x"
            colour = _RED if wrong else _GREEN
            out.append(
                f'<td style="{square};background:{colour};border:1px solid #fff" '
                f'title="{"outside tolerance" if wrong else "matches"}">{_e(cell)}</td>'
            )
        out.append("</tr>")
    return (
        f'<div style="margin:0.4em 0 0 1em;font-size:90%">{_e(title)}</div>'
        f'<table class="lessons-map" style="border-collapse:collapse;margin:0.2em 1em">'
        f"{''.join(out)}</table>"
    )


@dataclass
class Text:
    """Lines to show as they are (hints, the worked solution, a message)."""

    lines: list[str]

    def text(self) -> str:
        return "\n".join(self.lines).strip("\n") + "\n"

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text().rstrip("\n"))

    def _repr_html_(self) -> str:
        return f'<pre style="{_PRE}">{_e(self.text())}</pre>'
