"""``python -m pytest_lessons push canvas REPORT.json``: a class's grades into a Canvas
assignment, through ``canvasapi`` (the optional extra ``canvas``).

The grades are the gradebook's (:mod:`pytest_lessons.reports.gradebook`), made from the class's
``json`` report and its roster, with ``--never-lower`` holds when asked: each learner's total,
or one exercise's points. Learners are matched to Canvas users by the roster's Canvas user id
(the ``ID`` column of Canvas's gradebook export), never by name or e-mail: a learner without a
usable id is refused before anything is sent.

It is a dry run unless ``--apply`` is given: it reads the assignment's submissions, shows every
grade that would change (``bo (Canvas 1042): 8 → 10``) and the number unchanged, and uploads
nothing. With ``--apply`` it uploads only the grades that change (so a second run uploads
none), with one ``submissions_bulk_update``, waits for Canvas's progress to finish, then reads
the submissions again: a grade that Canvas did not take is named with its learner, and the
command exits 1. The API token is read from ``CANVAS_API_TOKEN``, never from the command line
(where other users of the machine could read it).

What the roster and the report hold is never made into a URL: the course and assignment are
the instructor's options, whole numbers; a Canvas id is a whole number too, and goes only into
the form field Canvas reads (``grade_data[<id>][posted_grade]``).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import os
import re
import sys
import textwrap
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.words import plural
from pytest_lessons.reports import gradebook, history
from pytest_lessons.reports.gradebook import Book, Learner, number
from pytest_lessons.reports.history import printable

#: Where the API token is read from.
TOKEN_ENV = "CANVAS_API_TOKEN"

#: The roster columns that hold a learner's Canvas user id, first found wins: Canvas's own
#: gradebook export names it ``ID``.
ID_COLUMNS = ("ID", "canvas_id", "Canvas ID", "canvas_user_id")

#: A Canvas id as Canvas gives it: a whole number.
_WHOLE = re.compile(r"[0-9]{1,20}")

#: Exit statuses, as ``--help`` and docs/ci-grading.md give them.
EXIT_STATUS = """\
exit status:
  0  the dry run showed the changes, or every change was uploaded and Canvas holds it
  1  an upload failed: Canvas refused it, or did not take a learner's grade (named)
  2  nothing was sent: the options, the report, the roster or the assignment do not fit
"""


class PushError(ValueError):
    """Nothing can be pushed; the message says what to fix."""


@dataclass(frozen=True)
class Grade:
    """One learner's grade, as it goes to Canvas."""

    learner: str
    canvas_id: int
    points: float
    held: bool = False
    """Held at the best recorded (``--never-lower``)."""


@dataclass
class Plan:
    """What the push would do, against what Canvas holds."""

    change: list[tuple[Grade, float | None]] = field(default_factory=list)
    """Each grade that differs from Canvas's, with Canvas's (None: no grade yet)."""
    unchanged: list[Grade] = field(default_factory=list)
    not_in_canvas: list[Grade] = field(default_factory=list)
    """Learners whose Canvas id has no submission in the assignment (not enrolled)."""


def read_report(path: Path) -> tuple[list[CaseResult], tuple[str, ...], dict[str, str]]:
    """A class's results from its ``json`` report: the results, the exercises in course order,
    and the learners of the class who were not graded."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PushError(f"{path}: {getattr(error, 'strerror', None) or error}") from None
    if not isinstance(data, dict) or data.get("format") != "pytest-lessons":
        raise PushError(
            f"{path} is not a json report of pytest-lessons: write the class's with "
            "--lesson-report=PATH --lesson-report-format=json"
        )
    results = [CaseResult.from_dict(raw) for raw in data.get("results", [])]
    table = data.get("class")
    if not isinstance(table, dict):
        table = {}
    absent = {str(k): str(v) for k, v in (table.get("absent") or {}).items()}
    return results, tuple(data.get("exercises") or ()), absent


def canvas_id_column(roster: gradebook.Roster) -> str:
    column = roster.column(*ID_COLUMNS)
    if column is None:
        raise PushError(
            "Add the Canvas user id of each learner to the roster, in a column named `ID` "
            "(Canvas's gradebook export has it): learners are matched on it, never by name or "
            "e-mail."
        )
    return column


def grades(book: Book, exercise: str | None) -> list[Grade]:
    """Each roster learner's grade: their total, or their points on *exercise*."""
    assert book.roster is not None
    column = canvas_id_column(book.roster)
    if exercise is not None and exercise not in book.exercises:
        raise PushError(
            f"--exercise={exercise}: the report grades no such exercise; it grades "
            f"{', '.join(book.exercises)}"
        )
    found: list[Grade] = []
    bad: list[str] = []
    for learner in book.learners:
        if learner.roster is None or learner.absent:
            # A folder the roster does not name (listed by unmatched_lines), or a learner a
            # merge could not grade (their shard is missing): no grade to give.
            continue
        raw = learner.roster.get(column, "")
        who = learner.name or "(a roster row without a folder)"
        if not _WHOLE.fullmatch(raw):
            bad.append(f"{who} ({column} {raw!r})")
            continue
        found.append(
            Grade(learner.name, int(raw), _points(learner, exercise), _held(learner, exercise))
        )
    if bad:
        raise PushError(
            f"Give each learner's Canvas user id, a whole number, in the roster's {column} "
            f"column: {'; '.join(bad)}. Nothing was sent."
        )
    seen: dict[int, str] = {}
    for grade in found:
        if grade.canvas_id in seen:
            raise PushError(
                f"{seen[grade.canvas_id]} and {grade.learner} have the same Canvas id "
                f"{grade.canvas_id} in the roster: give each learner their own. Nothing was sent."
            )
        seen[grade.canvas_id] = grade.learner
    return found


def _points(learner: Learner, exercise: str | None) -> float:
    return learner.total if exercise is None else learner.points[exercise]


def _held(learner: Learner, exercise: str | None) -> bool:
    return bool(learner.held) if exercise is None else exercise in learner.held


def plan(wanted: Sequence[Grade], current: dict[int, float | None]) -> Plan:
    """Compare the grades with Canvas's (*current*: Canvas id -> score, None for none)."""
    out = Plan()
    for grade in wanted:
        if grade.canvas_id not in current:
            out.not_in_canvas.append(grade)
            continue
        now = current[grade.canvas_id]
        if now is not None and math.isclose(now, grade.points, abs_tol=1e-6):
            out.unchanged.append(grade)
        else:
            out.change.append((grade, now))
    return out


def _who(grade: Grade) -> str:
    return f"{printable(grade.learner)} (Canvas {grade.canvas_id})"


def plan_lines(found: Plan, most: float, apply: bool) -> list[str]:
    lines = []
    for grade, now in found.change:
        before = "no grade" if now is None else number(now)
        held = " (held at the best recorded)" if grade.held else ""
        lines.append(f"  {_who(grade)}: {before} → {number(grade.points)} of {number(most)}{held}")
    verb = "to upload" if apply else "would change"
    head = f"{plural(len(found.change), 'grade')} {verb}"
    lines.insert(0, f"canvas: {head}, {len(found.unchanged)} unchanged (skipped)")
    return lines


def _base_url(url: str) -> str:
    """The Canvas address, refused unless it is https (or http on this machine's loopback):
    the token travels in every request."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise PushError(f"--url={url}: give the Canvas address, https://canvas.example.edu")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise PushError(
            f"--url={url}: give an https:// address: the API token would travel unencrypted"
        )
    if parts.path.rstrip("/").endswith("/api/v1"):
        raise PushError(f"--url={url}: give the address without /api/v1")
    return url.rstrip("/")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def push(args: argparse.Namespace) -> int:
    token = os.environ.get(TOKEN_ENV, "")
    try:
        base = _base_url(args.url)
        if not token:
            raise PushError(
                f"Put a Canvas API token in {TOKEN_ENV} (Canvas: Account, Settings, New access "
                "token): it is read from there, never from the command line."
            )
        if args.never_lower and not args.history:
            raise PushError(
                "Give --history=DIR with --never-lower: the best grades are those recorded there."
            )
        try:
            import canvasapi  # the optional extra `canvas`
        except ImportError:
            raise PushError(
                "Install canvasapi to push to Canvas: pip install 'pytest-lessons[canvas]'"
            ) from None
        results, order, absent = read_report(args.report)
        try:
            roster = gradebook.Roster.read(args.roster)
        except OSError as error:
            raise PushError(f"--roster={args.roster}: {error.strerror}") from None
        book = gradebook.build(results, roster, order, absent)
        holds: list[history.Hold] = []
        if args.never_lower:
            holds = history.hold(book, history.read(args.history).records)
        wanted = grades(book, args.exercise)
        most = book.maximum[args.exercise] if args.exercise else book.most
    except (PushError, gradebook.RosterError, history.HistoryError) as error:
        print(f"push: {error}", file=sys.stderr)
        return 2
    for line in gradebook.unmatched_lines(book):
        print(printable(line))
    for line in history.hold_lines(holds) if args.never_lower else []:
        print(line)
    with warnings.catch_warnings():
        # canvasapi warns of an http:// address: only the loopback's is let through above.
        warnings.filterwarnings("ignore", message=".*HTTP.*", category=UserWarning)
        canvas = canvasapi.Canvas(base, token)
    try:
        course = canvas.get_course(int(args.course))
        assignment = course.get_assignment(int(args.assignment))
        possible = getattr(assignment, "points_possible", None)
        print(
            f"canvas: {printable(str(getattr(course, 'name', args.course)))}, assignment "
            f"{printable(str(getattr(assignment, 'name', args.assignment)))} "
            f"({number(float(possible or 0))} points)"
        )
        if possible is not None and not math.isclose(float(possible), most, abs_tol=1e-6):
            print(
                f"push: the assignment is worth {number(float(possible))} points in Canvas and "
                f"these grades are out of {number(most)}: set its points possible to "
                f"{number(most)} in Canvas, or push another assignment. Nothing was sent.",
                file=sys.stderr,
            )
            return 2
        found = plan(wanted, _scores(assignment))
    except Exception as error:  # canvasapi's and requests' errors: none reached Canvas's grades
        print(f"push: Canvas refused a read ({_error(error)}). Nothing was sent.", file=sys.stderr)
        return 2
    for line in plan_lines(found, most, args.apply):
        print(line)
    if found.not_in_canvas:
        shown = ", ".join(_who(g) for g in found.not_in_canvas)
        print(
            f"push: not in the assignment in Canvas (not enrolled, or another id): {shown}. "
            "Nothing was sent: fix their ids in the roster.",
            file=sys.stderr,
        )
        return 2
    if not args.apply:
        if found.change:
            print("canvas: a dry run, nothing was sent: give --apply to upload these grades")
        return 0
    if not found.change:
        print("canvas: nothing to upload: every grade is unchanged")
        return 0
    return _upload(assignment, found, args.wait)


def _scores(assignment: Any) -> dict[int, float | None]:
    """Canvas id -> the score Canvas holds for the assignment (None: none yet)."""
    scores: dict[int, float | None] = {}
    for submission in assignment.get_submissions(per_page=100):
        score = getattr(submission, "score", None)
        scores[int(submission.user_id)] = None if score is None else float(score)
    return scores


def _error(error: Exception) -> str:
    return printable(f"{type(error).__name__}: {error}")[:300]


def _upload(assignment: Any, found: Plan, wait: float) -> int:
    data = {grade.canvas_id: {"posted_grade": number(grade.points)} for grade, _ in found.change}
    sent = [grade for grade, _ in found.change]
    everyone = ", ".join(_who(g) for g in sent)
    try:
        progress = assignment.submissions_bulk_update(grade_data=data)
        end = time.monotonic() + wait
        state = str(getattr(progress, "workflow_state", ""))
        while state not in ("completed", "failed"):
            if time.monotonic() > end:
                print(
                    f"push: ERROR: Canvas had not finished the upload after {wait:g} s "
                    f"(progress {state or 'unknown'}); check these grades in Canvas: {everyone}",
                    file=sys.stderr,
                )
                return 1
            time.sleep(min(1.0, max(0.05, wait / 100)))
            progress = progress.query()
            state = str(getattr(progress, "workflow_state", ""))
        if state == "failed":
            message = printable(str(getattr(progress, "message", "") or "no reason given"))
            print(
                f"push: ERROR: Canvas failed the upload ({message[:300]}); none of these grades "
                f"may be in Canvas: {everyone}",
                file=sys.stderr,
            )
            return 1
        after = _scores(assignment)
    except Exception as error:  # canvasapi's and requests' errors
        print(
            f"push: ERROR: the upload failed ({_error(error)}); check these grades in Canvas: "
            f"{everyone}",
            file=sys.stderr,
        )
        return 1
    missed = [
        g
        for g in sent
        if after.get(g.canvas_id) is None
        or not math.isclose(float(after[g.canvas_id] or 0.0), g.points, abs_tol=1e-6)
    ]
    for grade in missed:
        holds = after.get(grade.canvas_id)
        print(
            f"push: ERROR: Canvas did not take the grade of {_who(grade)}: it holds "
            f"{'no grade' if holds is None else number(holds)}, {number(grade.points)} was sent",
            file=sys.stderr,
        )
    if missed:
        return 1
    print(
        f"canvas: uploaded {len(sent)} {'grade' if len(sent) == 1 else 'grades'}; Canvas holds them"
    )
    return 0


def add_parser(commands: Any) -> None:
    """The ``push canvas`` command, on the subcommands of ``python -m pytest_lessons``."""
    push_command = commands.add_parser(
        "push",
        help="Put a class's grades into an LMS (canvas).",
        description="Put a class's grades into an LMS.",
    )
    lms = push_command.add_subparsers(dest="lms", required=True, metavar="LMS")
    command = lms.add_parser(
        "canvas",
        help="Put the grades into a Canvas assignment (a dry run unless --apply).",
        description=textwrap.fill(
            "Put each learner's grade (their total, or one exercise's points) from a class's "
            "json report into a Canvas assignment. A dry run unless --apply: it shows every "
            "grade that would change and sends nothing. Learners are matched on the roster's "
            "Canvas user id (its ID column), never by name or e-mail. Grades Canvas holds "
            f"already are skipped. The API token is read from {TOKEN_ENV}.",
            79,
        ),
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("report", type=Path, metavar="REPORT.json", help="the class's json report")
    command.add_argument(
        "--roster",
        type=Path,
        required=True,
        metavar="CSV",
        help="the roster: a 'learner' column (each folder) and Canvas's ID column",
    )
    command.add_argument(
        "--url", required=True, help="the Canvas address, https://canvas.example.edu"
    )
    command.add_argument("--course", required=True, type=int, metavar="ID", help="the course id")
    command.add_argument(
        "--assignment", required=True, type=int, metavar="ID", help="the assignment id"
    )
    command.add_argument(
        "--exercise", metavar="NAME", help="push this exercise's points (default: the total)"
    )
    command.add_argument("--history", type=Path, metavar="DIR", help="the class's history folder")
    command.add_argument(
        "--never-lower",
        action="store_true",
        help="with --history: hold each grade at its best recorded, as the class run does",
    )
    command.add_argument(
        "--apply", action="store_true", help="upload the changes (default: a dry run)"
    )
    command.add_argument(
        "--wait",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long to wait for Canvas to apply the upload (default 120)",
    )
    command.set_defaults(run=push)
