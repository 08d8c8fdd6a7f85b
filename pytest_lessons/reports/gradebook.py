"""Gradebooks for a class: CSV files an instructor keeps, compares and imports into an LMS.

Built from the typed per-case results (:class:`~pytest_lessons.core.results.CaseResult`) of a batch
run, or of the shards' ``json`` reports, so one run and a merge write the same bytes. Layouts
(each a row of :data:`pytest_lessons.reports.registry.LAYOUTS`):

- ``long``: one row per learner and exercise (``learner, exercise, points, max_points, note``);
- ``wide``: one row per learner, a column per exercise, then ``total``, ``max`` and ``note``;
- ``canvas``: Canvas's gradebook import (needs a roster with Canvas's identity columns);
- ``moodle``: Moodle's "Import grades from CSV" (needs a roster with email, ID number or
  username).

A learner without an exercise's submission scores 0 for it, and the ``note`` says so. A roster
row whose folder is missing is such a learner for every exercise. Every text cell goes through
:func:`~pytest_lessons.reports.formats.text_cell`, so no cell starts a spreadsheet formula.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.words import plural
from pytest_lessons.reports.formats import MISSING as MISSING
from pytest_lessons.reports.formats import text_cell
from pytest_lessons.reports.tallies import Tally
from pytest_lessons.reports.tallies import with_hidden_faults as with_hidden_faults

#: The roster's column that names each learner's folder (matched without case).
ROSTER_KEY = "learner"

#: Canvas's identity columns, in the order its gradebook import reads them
#: (``GradebookImporter#update_column_count``: Student, ID, then SIS User ID and SIS Login ID,
#: and Section last).
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")

#: The first cell of Canvas's row of points possible (its export writes it so, indented).
CANVAS_POINTS_ROW = "    Points Possible"

#: Roster columns that Moodle's grade import can identify a user by, best first: each header
#: a Moodle export or a hand-made roster may use, and the user field it maps to.
MOODLE_IDENTITIES = (
    ("email", "useremail"),
    ("email address", "useremail"),
    ("idnumber", "useridnumber"),
    ("id number", "useridnumber"),
    ("username", "username"),
)


class RosterError(ValueError):
    """The roster cannot be used: the message says what to fix in it."""


@dataclass(frozen=True)
class Roster:
    """A CSV that maps each learner's folder to the LMS's identity of that learner.

    It has a header row and a ``learner`` column holding the folder's name; its other columns
    (Canvas's ``ID``, ``SIS User ID`` ..., Moodle's ``email`` ...) are kept as they are."""

    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]
    key: str
    """The header of the ``learner`` column, as the file spells it."""

    @classmethod
    def parse(cls, text: str, where: str = "the roster") -> Roster:
        """Read a roster's text (a UTF-8 byte-order mark, as Excel writes, is fine)."""
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
        columns = tuple((name or "").strip() for name in reader.fieldnames or ())
        key = next((c for c in columns if c.lower() == ROSTER_KEY), None)
        if key is None:
            raise RosterError(
                f"Add a column named `{ROSTER_KEY}` to {where}, holding each learner's folder "
                f"name in the submissions folder: its columns are {', '.join(columns) or 'none'}."
            )
        rows = []
        seen: dict[str, int] = {}
        for number, raw in enumerate(reader, 2):
            row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k is not None}
            if not any(row.values()):
                continue
            folder = row.get(key, "")
            if folder and folder in seen:
                raise RosterError(
                    f"Name each folder once in {where}: `{folder}` is on lines {seen[folder]} "
                    f"and {number}."
                )
            seen[folder] = number
            rows.append(row)
        return cls(columns, tuple(rows), key)

    @classmethod
    def read(cls, path: Path) -> Roster:
        return cls.parse(path.read_text(encoding="utf-8-sig"), str(path))

    def column(self, *names: str) -> str | None:
        """The roster's header matching one of *names* (without case), if any."""
        lowered = {c.lower(): c for c in self.columns}
        return next((lowered[n.lower()] for n in names if n.lower() in lowered), None)


@dataclass
class Learner:
    """One row of a wide gradebook: a learner's points per exercise."""

    name: str
    """The learner's folder name (empty for a roster row that names no folder)."""
    points: dict[str, float] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    """Exercises the learner handed in nothing for (each scores 0)."""
    roster: dict[str, str] | None = None
    """The roster row matched to the folder, when there is a roster."""
    submitted: bool = True
    """False for a roster row whose folder is not among the submissions."""
    absent: str = ""
    """Why a learner of the class was not graded at all (a merge without their shard)."""
    held: dict[str, float] = field(default_factory=dict)
    """Exercise -> this run's points, for each exercise whose points ``--lesson-never-lower``
    held at the best recorded (:func:`pytest_lessons.reports.history.hold`)."""

    @property
    def total(self) -> float:
        return sum(self.points.values())

    def held_note(self, exercise: str | None = None) -> str:
        """What the note says of the grades held at their best recorded (of *exercise* only,
        given one)."""
        held = {e: p for e, p in self.held.items() if exercise in (None, e)}
        if not held:
            return ""
        if exercise is not None:
            return f"held at best recorded (this run {number(held[exercise])})"
        return "held at best recorded: " + ", ".join(
            f"{e} (this run {number(p)})" for e, p in held.items()
        )

    def note(self, exercises: Sequence[str]) -> str:
        """Why some points are 0 without a wrong answer, and which were held, for the
        ``note`` column."""
        if not self.submitted:
            return "no submission: no folder for this learner"
        if self.absent:
            return self.absent
        notes = []
        if len(self.missing) == len(exercises) and self.missing:
            notes.append("no submission: no exercise handed in")
        elif self.missing:
            notes.append("not handed in: " + ", ".join(self.missing))
        if self.held:
            notes.append(self.held_note())
        return "; ".join(notes)


@dataclass
class Book:
    """A class's points, learners in folder order, exercises in the course's order."""

    exercises: list[str]
    maximum: dict[str, float]
    """Each exercise's points possible."""
    learners: list[Learner]
    roster: Roster | None = None
    unmatched_folders: list[str] = field(default_factory=list)
    """Learner folders that no roster row names: left out of the LMS layouts."""
    unmatched_rows: list[dict[str, str]] = field(default_factory=list)
    """Roster rows naming no graded folder: their learners score 0, with a note."""

    @property
    def most(self) -> float:
        return sum(self.maximum.values())


def build(
    results: Sequence[CaseResult],
    roster: Roster | None = None,
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
) -> Book:
    """A class's gradebook from its per-case results, joined with *roster* when given.

    Exercises come in their course's order (*order* as a shard recorded it, else from
    ``course.toml``). *absent* names learners of the class who have no result at all (their
    shard is missing from a merge), each with why: they get a row of zeros saying so."""
    return book_of(Tally.of(results), roster, order, absent)


def book_of(
    tally: Tally,
    roster: Roster | None = None,
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
) -> Book:
    """:func:`build`'s gradebook from the class's :class:`Tally` (a merge of the shards'
    tallies has no results)."""
    exercises = tally.order(order)
    maximum = dict(tally.maximum)
    absent = dict(absent or {})
    names = sorted(set(tally.learners) | set(absent))
    graded = {learner for learner, _ in tally.marks}
    learners = []
    for name in names:
        row = Learner(name)
        if name in absent and name not in graded:
            row.absent = absent[name]
            row.points = dict.fromkeys(exercises, 0.0)
            learners.append(row)
            continue
        for exercise in exercises:
            mark = tally.marks.get((name, exercise))
            if mark is None:
                row.points[exercise] = 0.0
                row.missing.append(exercise)
                continue
            row.points[exercise] = mark.points
            if not mark.handed:
                row.missing.append(exercise)
        learners.append(row)
    book = Book(exercises, maximum, learners, roster)
    if roster is not None:
        by_folder = {entry.get(roster.key, ""): entry for entry in roster.rows}
        graded_names = set(names) - {""}
        for learner in learners:
            learner.roster = by_folder.get(learner.name)
            if learner.roster is None:
                book.unmatched_folders.append(learner.name)
        for entry in roster.rows:
            if entry.get(roster.key, "") not in graded_names:
                book.unmatched_rows.append(entry)
                no_folder = Learner(entry.get(roster.key, ""), roster=entry, submitted=False)
                no_folder.points = dict.fromkeys(exercises, 0.0)
                no_folder.missing = list(exercises)
                book.learners.append(no_folder)
    return book


def number(value: float) -> str:
    """A points cell: plain decimals, no exponent, no trailing zeros (``2.5``, ``10``)."""
    if not math.isfinite(value):
        return ""
    text = f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _csv(rows: Iterable[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([text_cell(cell) for cell in row])
    return out.getvalue()


def long(book: Book) -> str:
    """One row per learner and exercise: ``learner, exercise, points, max_points, note``."""
    rows: list[list[str]] = [["learner", "exercise", "points", "max_points", "note"]]
    for learner in _graded_first(book):
        note = "no submission: no folder for this learner" if not learner.submitted else ""
        note = note or learner.absent
        for exercise in book.exercises:
            why = note or ("not handed in" if exercise in learner.missing else "")
            if exercise in learner.held:
                why = "; ".join(filter(None, [why, learner.held_note(exercise)]))
            rows.append(
                [
                    learner.name,
                    exercise,
                    number(learner.points[exercise]),
                    number(book.maximum[exercise]),
                    why,
                ]
            )
    return _csv(rows)


def wide(book: Book) -> str:
    """One row per learner: ``learner``, a column per exercise, ``total``, ``max``, ``note``."""
    rows: list[list[str]] = [["learner", *book.exercises, "total", "max", "note"]]
    for learner in _graded_first(book):
        rows.append(
            [
                learner.name,
                *(number(learner.points[e]) for e in book.exercises),
                number(learner.total),
                number(book.most),
                learner.note(book.exercises),
            ]
        )
    return _csv(rows)


def _graded_first(book: Book) -> list[Learner]:
    """Graded learners in folder order, then roster rows without a folder in roster order."""
    return [x for x in book.learners if x.submitted] + [x for x in book.learners if not x.submitted]


def _matched(book: Book, layout: str) -> list[Learner]:
    if book.roster is None:
        raise RosterError(
            f"Give --lesson-roster=CSV with the {layout} layout: it joins each learner's folder "
            f"to the LMS's identity (see docs/ci-grading.md, 'Gradebooks')."
        )
    return [x for x in _graded_first(book) if x.roster is not None]


def canvas(book: Book) -> str:
    """Canvas's gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``, one column
    per exercise, a ``Points Possible`` row, then one row per roster learner.

    Canvas matches a student by ``ID`` (its user id), else ``SIS User ID`` or ``SIS Login ID``,
    else by name; a column whose header matches no assignment (``Title (id)`` or the title)
    becomes a new assignment with the points possible given. So there is no total and no note
    column here: each would become an assignment."""
    learners = _matched(book, "canvas")
    roster = book.roster
    assert roster is not None
    ids = [roster.column(name) for name in CANVAS_COLUMNS]
    if not any(ids[1:4]):
        raise RosterError(
            "Add Canvas's `ID`, `SIS User ID` or `SIS Login ID` column to the roster (Canvas's "
            "own gradebook export has them): Canvas finds each student by one of them."
        )
    rows: list[list[str]] = [[*CANVAS_COLUMNS, *book.exercises]]
    rows.append(
        [CANVAS_POINTS_ROW, "", "", "", "", *(number(book.maximum[e]) for e in book.exercises)]
    )
    for learner in learners:
        row = learner.roster or {}
        identity = [row.get(column, "") if column else "" for column in ids]
        identity[0] = identity[0] or learner.name
        rows.append([*identity, *(number(learner.points[e]) for e in book.exercises)])
    return _csv(rows)


def moodle(book: Book) -> str:
    """Moodle's "Import grades from CSV": the roster's identity column (email, ID number or
    username), then one column per exercise and ``total``.

    Moodle aborts the whole import at a row whose user it cannot find, so only learners the
    roster names are written; the instructor maps the identity column ("Map from") to the
    matching user field ("Map to") and each exercise column to its grade item."""
    learners = _matched(book, "moodle")
    roster = book.roster
    assert roster is not None
    identity = next((c for name, _ in MOODLE_IDENTITIES if (c := roster.column(name))), None)
    if identity is None:
        raise RosterError(
            "Add an `email`, `idnumber` or `username` column to the roster: Moodle's grade import "
            "finds each user by one of them."
        )
    rows: list[list[str]] = [[identity, *book.exercises, "total"]]
    for learner in learners:
        row = learner.roster or {}
        rows.append(
            [
                row.get(identity, ""),
                *(number(learner.points[e]) for e in book.exercises),
                number(learner.total),
            ]
        )
    return _csv(rows)


def unmatched_lines(book: Book) -> list[str]:
    """What the roster and the submissions folder disagree on, for the terminal."""
    if book.roster is None:
        return []
    lines = []
    if book.unmatched_folders:
        lines.append(
            f"{len(book.unmatched_folders)} submission folder(s) not in the roster, left out of "
            f"the LMS file: {', '.join(book.unmatched_folders)}"
        )
    if book.unmatched_rows:
        key = book.roster.key
        shown = [
            row.get(key) or ", ".join(v for v in row.values() if v) for row in book.unmatched_rows
        ]
        lines.append(
            f"{len(book.unmatched_rows)} roster row(s) without a submission folder, graded 0: "
            f"{'; '.join(shown)}"
        )
    return lines


# --- regrading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """A learner's points on one exercise, before and after a regrade (None: not in that
    gradebook)."""

    learner: str
    exercise: str
    old: float | None
    new: float | None


def points_of(text: str) -> dict[tuple[str, str], float]:
    """(learner, exercise) -> points from a gradebook we wrote, long or wide.

    Learner cells are compared as written (with their formula guard), so a name survives the
    round trip without being unescaped."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, [])
    found: dict[tuple[str, str], float] = {}
    if header[:4] == ["learner", "exercise", "points", "max_points"]:
        for row in reader:
            if len(row) >= 3 and row[2] != "":
                found[(row[0], row[1])] = float(row[2])
        return found
    if header[:1] == ["learner"] and "total" in header:
        exercises = header[1 : header.index("total")]
        for row in reader:
            for exercise, cell in zip(exercises, row[1:]):
                if cell != "":
                    found[(row[0], exercise)] = float(cell)
        return found
    raise ValueError(
        "Give a long or wide gradebook written by pytest-lessons: its first row is "
        "`learner,exercise,points,max_points...` or `learner,<exercises>,total,max,note`."
    )


def changes(old: Mapping[tuple[str, str], float], book: Book) -> list[Change]:
    """Every learner's exercise whose points moved between *old* and *book*, in learner order."""
    new: dict[tuple[str, str], float] = {}
    for learner in book.learners:
        if learner.submitted and not learner.absent:
            for exercise in book.exercises:
                new[(text_cell(learner.name), exercise)] = learner.points[exercise]
    moved = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before is None or after is None or abs(before - after) > 1e-9:
            moved.append(Change(key[0], key[1], before, after))
    return moved


def changes_csv(moved: Sequence[Change]) -> str:
    """The regrade's changes: ``learner, exercise, old_points, new_points`` (empty: absent)."""
    rows = [["learner", "exercise", "old_points", "new_points"]]
    for c in moved:
        rows.append(
            [
                c.learner,
                c.exercise,
                "" if c.old is None else number(c.old),
                "" if c.new is None else number(c.new),
            ]
        )
    # Learner cells were written guarded already: guarding twice would add a second quote.
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([row[0], *(text_cell(cell) for cell in row[1:])])
    return out.getvalue()


def changes_lines(moved: Sequence[Change]) -> list[str]:
    """One line per learner whose points moved: ``ada: combine_heads 3 → 10; total 13 → 20``."""
    by_learner: dict[str, list[Change]] = {}
    for c in moved:
        by_learner.setdefault(c.learner, []).append(c)
    if not by_learner:
        return ["regrade: no learner's points changed"]
    lines = [f"regrade: the points of {plural(len(by_learner), 'learner')} changed"]
    for learner, mine in by_learner.items():
        parts = [f"{c.exercise} {_shown(c.old)} → {_shown(c.new)}" for c in mine]
        old = sum(c.old or 0.0 for c in mine)
        new = sum(c.new or 0.0 for c in mine)
        sign = "+" if new >= old else "-"
        lines.append(f"  {learner}: {'; '.join(parts)} (total {sign}{number(abs(new - old))})")
    return lines


def _shown(value: float | None) -> str:
    return "absent" if value is None else number(value)
