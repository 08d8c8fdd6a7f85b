"""Grade history: every class result kept, and regrades that never lower a grade.

A class run (or a merge) given ``--lesson-history=DIR`` writes one record of its result into
*DIR*: a JSON file named by the SHA-256 of its bytes (``<sha256>.json``), holding when it was
recorded, each learner's points per exercise, the points possible, and the whole ``json``
report of the run. A record is never rewritten: a new run is a new file, and the same bytes
give the same name. So the folder is append-only and safe on a shared or network drive (NFS,
SMB) where a database such as SQLite is not: each record is written whole to a temporary file
in the folder, flushed to disk, then renamed to its name, which POSIX and NFS do atomically, so
a reader sees a record whole or not at all, and two runs writing at once never meet.

:func:`read` gives the records in the order they were recorded; a file whose content does not
match its name (cut short, edited, a stray copy) is set aside with why, never read as a grade.
:func:`hold` is ``--lesson-never-lower``: a learner's points on an exercise never fall below
the best any record gives them (capped at the exercise's points possible today), and each hold
is said in the gradebook's note, the terminal, and the json report.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_lessons.core.words import plural
from pytest_lessons.reports.gradebook import Book, number

#: The ``format`` of a record, so a stray JSON file in the folder is never taken for one.
FORMAT = "pytest-lessons-history"


class HistoryError(ValueError):
    """The history folder cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Record:
    """One recorded class run."""

    name: str
    """The record's file name without ``.json``: the SHA-256 of its bytes."""
    recorded: str
    """When it was recorded, in UTC (ISO 8601, ``2026-03-01T09:30:00.000000Z``)."""
    exercises: tuple[str, ...]
    """The exercises in the course's order."""
    maximum: dict[str, float]
    """Each exercise's points possible then."""
    grades: dict[str, dict[str, float]]
    """Learner folder -> exercise -> points, for every learner graded in that run."""

    @property
    def when(self) -> str:
        """When it was recorded, to the second, as the terminal shows it (UTC)."""
        return self.recorded[:19].replace("T", " ")

    @property
    def short(self) -> str:
        """The first 12 characters of the name, as the terminal shows a record."""
        return self.name[:12]


@dataclass
class Read:
    """What a history folder holds."""

    records: list[Record] = field(default_factory=list)
    """In the order they were recorded (by time, then name)."""
    set_aside: list[tuple[str, str]] = field(default_factory=list)
    """(file name, why) of each file that is no record."""


@dataclass(frozen=True)
class Hold:
    """A grade that ``--lesson-never-lower`` kept at its best recorded value."""

    learner: str
    exercise: str
    this_run: float
    held: float
    record: str
    """The record that holds the best value (its short name)."""
    recorded: str

    @property
    def when(self) -> str:
        return self.recorded[:19].replace("T", " ")


def printable(text: str) -> str:
    """*text* with every character a terminal would act on (escapes, carriage returns, other
    control characters) written as its code: a learner's folder name cannot move the
    cursor or recolour the instructor's terminal."""
    return "".join(c if c.isprintable() or c == "\n" else f"\\x{ord(c):02x}" for c in text)


def _utc_now() -> str:
    # Microseconds: two runs of one second (a script, a test) keep their order.
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record_of(book: Book, report: Mapping[str, Any], recorded: str | None = None) -> bytes:
    """The bytes of one run's record: its grades from *book* and its whole *report*."""
    grades = {
        learner.name: {e: learner.points[e] for e in book.exercises}
        for learner in book.learners
        if learner.submitted and not learner.absent and learner.name
    }
    data = {
        "format": FORMAT,
        "version": 1,
        "recorded": recorded or _utc_now(),
        "exercises": list(book.exercises),
        "maximum": {e: book.maximum[e] for e in book.exercises},
        "grades": grades,
        "report": dict(report),
    }
    return (json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def write(folder: Path, data: bytes) -> Path:
    """Add the record *data* to *folder*: whole, under its content's name, never over
    another. Returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(data).hexdigest()
    target = folder / f"{name}.json"
    if target.exists():
        return target  # the same bytes are there already, under the same name
    # A dot name is never read as a record (see read), so a half-written file is invisible.
    handle, temporary = tempfile.mkstemp(prefix=f".{name[:12]}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_folder(folder)
    return target


def _sync_folder(folder: Path) -> None:
    """Flush the folder's entry of a new record to disk, where the system allows it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # Windows and some network file systems cannot sync a folder
    finally:
        os.close(fd)


def read(folder: Path) -> Read:
    """Every record in *folder*, oldest first. A missing folder holds none."""
    found = Read()
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    except OSError as error:
        raise HistoryError(f"{folder}: {error.strerror}") from None
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".json"):
            continue  # a record being written, or not ours
        why, record = _record(entry)
        if record is None:
            found.set_aside.append((entry.name, why))
        else:
            found.records.append(record)
    found.records.sort(key=lambda r: (r.recorded, r.name))
    return found


def _record(entry: os.DirEntry[str]) -> tuple[str, Record | None]:
    if not entry.is_file(follow_symlinks=False):
        return "not a plain file", None
    try:
        with open(entry.path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return f"cannot be read ({error.strerror})", None
    name = entry.name[: -len(".json")]
    if hashlib.sha256(data).hexdigest() != name:
        return "its content does not match its name (cut short or changed)", None
    try:
        raw = json.loads(data.decode("utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            return "not a history record", None
        grades = {
            str(who): {str(e): float(p) for e, p in row.items()}
            for who, row in raw["grades"].items()
        }
        return "", Record(
            name,
            str(raw["recorded"]),
            tuple(str(e) for e in raw["exercises"]),
            {str(e): float(p) for e, p in raw["maximum"].items()},
            grades,
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return "not a history record", None


def hold(book: Book, records: Sequence[Record]) -> list[Hold]:
    """Raise each learner's points in *book* to the best any of *records* gives them on that
    exercise (never above the exercise's points possible now), and return every hold."""
    best: dict[tuple[str, str], tuple[float, Record]] = {}
    for record in records:
        for name, row in record.grades.items():
            for exercise, points in row.items():
                key = (name, exercise)
                if key not in best or points > best[key][0]:
                    best[key] = (points, record)
    holds = []
    for learner in book.learners:
        if not learner.submitted or learner.absent:
            continue
        for exercise in book.exercises:
            found = best.get((learner.name, exercise))
            if found is None:
                continue
            held = min(found[0], book.maximum[exercise])
            now = learner.points[exercise]
            if held > now + 1e-9:
                learner.points[exercise] = held
                learner.held[exercise] = now
                holds.append(
                    Hold(learner.name, exercise, now, held, found[1].short, found[1].recorded)
                )
    return holds


def hold_lines(holds: Sequence[Hold]) -> list[str]:
    """What the terminal says of the holds of ``--lesson-never-lower``."""
    if not holds:
        return ["never lower: no grade fell below its best recorded one"]
    learners = len({h.learner for h in holds})
    lines = [
        f"never lower: {plural(len(holds), 'grade')} of {plural(learners, 'learner')} held at "
        "the best recorded (this run gave fewer points)"
    ]
    for h in holds:
        lines.append(
            f"  {printable(h.learner)}: {h.exercise} held at {number(h.held)} (this run "
            f"{number(h.this_run)}; best in record {h.record}, {h.when})"
        )
    return lines


def hold_table(holds: Sequence[Hold]) -> list[dict[str, Any]]:
    """The holds as the json report's ``class.held`` lists them."""
    return [
        {
            "learner": h.learner,
            "exercise": h.exercise,
            "this_run": h.this_run,
            "held": h.held,
            "record": h.record,
            "recorded": h.recorded,
        }
        for h in holds
    ]


# --- reading a learner's history ------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One record of a learner's history, and what moved since the learner's record before."""

    record: Record
    points: dict[str, float]
    changed: list[tuple[str, float | None, float | None]]
    """(exercise, before, after) of every exercise whose points moved (None: not graded)."""

    @property
    def total(self) -> float:
        return sum(self.points.values())


def learner_history(records: Sequence[Record], learner: str) -> list[Step]:
    """The records that graded *learner*, oldest first, each with what changed."""
    steps: list[Step] = []
    before: dict[str, float] | None = None
    for record in records:
        points = record.grades.get(learner)
        if points is None:
            continue
        changed: list[tuple[str, float | None, float | None]] = []
        if before is not None:
            for exercise in dict.fromkeys([*before, *points]):
                old, new = before.get(exercise), points.get(exercise)
                if old is None or new is None or abs(old - new) > 1e-9:
                    changed.append((exercise, old, new))
        steps.append(Step(record, dict(points), changed))
        before = points
    return steps


def _shown(value: float | None) -> str:
    return "not graded" if value is None else number(value)


def learner_lines(records: Sequence[Record], learner: str) -> list[str]:
    """A learner's grades over the runs, for the terminal: one line per run with the total
    and each change since the run before."""
    steps = learner_history(records, learner)
    if not steps:
        return [f"{learner}: in none of the {plural(len(records), 'record')}"]
    lines = [f"{learner}: graded in {plural(len(steps), 'record')} of {len(records)}"]
    for step in steps:
        most = sum(step.record.maximum.get(e, 0.0) for e in step.points)
        head = (
            f"  {step.record.when}  {step.record.short}  total {number(step.total)} "
            f"of {number(most)}"
        )
        if step is steps[0]:
            marks = ", ".join(f"{e} {number(p)}" for e, p in step.points.items())
            lines.append(f"{head}  first record: {marks}")
        elif step.changed:
            moves = "; ".join(f"{e} {_shown(a)} → {_shown(b)}" for e, a, b in step.changed)
            lines.append(f"{head}  changed: {moves}")
        else:
            lines.append(f"{head}  no change")
    return lines


def overview_lines(found: Read) -> list[str]:
    """Every record, one line each: when, its name, how many learners, their mean total."""
    lines = []
    for record in found.records:
        totals = [sum(row.values()) for row in record.grades.values()]
        mean = sum(totals) / len(totals) if totals else 0.0
        most = sum(record.maximum.values())
        lines.append(
            f"{record.when}  {record.short}  {plural(len(record.grades), 'learner')}, "
            f"mean {number(round(mean, 2))} of {number(most)}"
        )
    if not lines:
        lines.append("no record yet: grade a class with --lesson-history=DIR")
    for name, why in found.set_aside:
        lines.append(f"set aside, not a record: {name}: {why}")
    return lines
