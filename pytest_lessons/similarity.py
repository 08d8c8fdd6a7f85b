"""``python -m pytest_lessons similarity SUBMISSIONS COURSE``: pairs of submissions per lesson,
ranked by how much of their code overlaps, with ``copydetect`` (the optional extra
``similarity``).

Each learner's file of a lesson (``SUBMISSIONS/<learner>/<lesson>/solution.py``, the file the
class run grades) is read as the grader reads it: beneath the learner's folder, through no
link, a plain file of at most 1 MiB
(:func:`~pytest_lessons.isolation.files.read_beneath`); a file that is not so is left out and
counted, never followed. copydetect fingerprints each file (tokens, so renamed variables and
changed comments do not hide a copy; k-grams of 25 tokens, winnowed), with the lesson's starter
file as boilerplate, so the code every learner was handed never counts as shared. Every pair of
learners that shares a fingerprint is then compared.

The pairs are evidence to look at, never a grade (:data:`~pytest_lessons.reports.similarity
.EVIDENCE`): the command changes no point, and says so in the terminal and in the class
report's section ``Similar submissions`` (``--class-report``, with the class's json report).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path, PurePath
from typing import Any

from pytest_lessons.core import course, model, summary
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.isolation.files import Unreadable, read_beneath
from pytest_lessons.reports import classreport, similarity
from pytest_lessons.reports.history import printable

#: copydetect's defaults: fingerprints are k-grams of 25 tokens, winnowed in windows of 1
#: (its noise and guarantee thresholds of 25).
NOISE = 25
WINDOW = 1

#: Why a learner's file was not compared, by :class:`Unreadable`'s problem.
WHY = {
    "missing": "no file",
    "link": "a link, not followed",
    "not_file": "not a plain file",
    "too_large": "larger than 1 MiB",
    "hard_link": "a hard link",
}

#: Exit statuses, as ``--help`` and docs/ci-grading.md give them.
EXIT_STATUS = """\
exit status:
  0  the pairs were listed (whatever they are: a pair is no finding)
  2  nothing was compared: the folders, the options or copydetect are missing
"""


class SimilarityError(ValueError):
    """Nothing can be compared; the message says what to fix."""


def lessons_of(folder: Path) -> list[Path]:
    """The ``exercise.toml`` of every lesson under *folder*, in the course's order."""
    found = sorted(folder.resolve().rglob(model.EXERCISE_FILE))
    found = [f for f in found if "__pycache__" not in f.parts]
    found.sort(key=summary.course_order(course.of(found)))
    return found


def _text(data: bytes) -> str:
    """A learner's file as the text Python runs: in the encoding its coding line declares, so
    that ``# coding: utf-7`` and a body of base64 hide no copy (a red team's round J)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding, errors="replace")
    except (SyntaxError, LookupError, UnicodeError, ValueError):
        return data.decode("utf-8", errors="replace")


def compare_lesson(
    lesson: Path, submissions: Path, learners: Sequence[str], threshold: float
) -> similarity.Lesson:
    """The pairs of one lesson whose overlap is at least *threshold*, best first."""
    import numpy
    from copydetect import CodeFingerprint  # the optional extra `similarity`

    exercise = model.load(lesson)
    folder = lesson.parent
    relative = PurePath(exercise.solution.relative_to(folder))
    name = exercise.solution.name
    found = similarity.Lesson(folder.name)
    starter = ""
    if exercise.solution.is_file():
        starter = exercise.solution.read_text(encoding="utf-8", errors="replace")
    boilerplate = numpy.unique(
        numpy.array(
            list(
                CodeFingerprint(name, NOISE, 1, language="python", fp=io.StringIO(starter)).hashes
            ),
            dtype=numpy.int64,
        )
    )
    prints: dict[str, Print] = {}
    for learner in learners:
        try:
            data = read_beneath(submissions, PurePath(learner, folder.name, relative))
        except Unreadable as error:
            why = WHY.get(error.problem, error.problem)
            if error.problem == "not_file" and error.what:
                why = f"{error.what}, not a file"  # a folder, a FIFO, a device
            found.left_out.setdefault(why, []).append(learner)
            continue
        prints[learner] = Print.of(
            CodeFingerprint(
                name, NOISE, WINDOW, boilerplate, language="python", fp=io.StringIO(_text(data))
            )
        )
    found.compared = len(prints)
    # Only pairs that share a fingerprint can overlap: an index of who holds each one keeps
    # the comparisons to those, instead of every pair of the class.
    holders: dict[int, list[str]] = {}
    for learner, fingerprint in prints.items():
        for value in fingerprint.hashes:
            holders.setdefault(value, []).append(learner)
    candidates: set[tuple[str, str]] = set()
    for who in holders.values():
        if len(who) > 1:
            candidates.update(combinations(who, 2))
    for first, second in sorted(candidates):
        tokens, share_1, share_2 = overlap(prints[first], prints[second])
        pair = similarity.Pair(first, second, share_1, share_2, tokens)
        if tokens and pair.score >= threshold:
            found.pairs.append(pair)
    found.pairs.sort(key=lambda p: (-p.score, -p.tokens, p.first, p.second))
    return found


@dataclass(frozen=True)
class Print:
    """A file's copydetect fingerprint, as plain Python values (fast to compare in bulk)."""

    hashes: frozenset[int]
    masks: dict[int, int]
    """Each fingerprint -> the tokens its k-grams cover in the file, one bit per token."""
    coverage: float
    """How many of the file's tokens its fingerprints cover (copydetect's token coverage)."""
    empty: bool

    @classmethod
    def of(cls, fingerprint: Any) -> Print:
        gram = (1 << NOISE) - 1
        masks: dict[int, int] = {}
        for value, where in fingerprint.hash_idx.items():
            mask = 0
            for start in where:
                mask |= gram << int(start)
            masks[int(value)] = mask
        return cls(
            frozenset(masks),
            masks,
            float(fingerprint.token_coverage),
            len(fingerprint.filtered_code) == 0,
        )

    def covered(self, shared: frozenset[int]) -> int:
        """How many of the file's tokens the fingerprints *shared* cover together."""
        mask = 0
        for value in shared:
            mask |= self.masks[value]
        return bin(mask).count("1")


def overlap(one: Print, two: Print) -> tuple[int, float, float]:
    """copydetect's ``compare_files`` for two fingerprints: the tokens of *one* that *two*
    shares, and the share of each file's tokens that overlap. The same numbers (the union of
    the shared k-grams' tokens, over each file's token coverage), computed on bit masks: its
    own version builds numpy arrays per fingerprint, some 20 times slower for a class."""
    shared = one.hashes & two.hashes
    if not shared:
        return 0, 0.0, 0.0
    covered_1, covered_2 = one.covered(shared), two.covered(shared)
    share_1 = 0.0 if one.empty or not one.coverage else covered_1 / one.coverage
    share_2 = 0.0 if two.empty or not two.coverage else covered_2 / two.coverage
    return covered_1, share_1, share_2


def compare_class(
    submissions: Path, lessons: Sequence[Path], threshold: float, roll: Roll | None = None
) -> list[similarity.Lesson]:
    """Every lesson's pairs, lessons in the course's order: of *roll*'s learners (the
    class in *submissions* when not given)."""
    learners = (roll or Roll.of(submissions)).learners
    return [compare_lesson(lesson, submissions, learners, threshold) for lesson in lessons]


def _read_results(path: Path) -> tuple[list[CaseResult], tuple[str, ...], dict[str, str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != "pytest-lessons":
        raise SimilarityError(
            f"{path} is not a json report of pytest-lessons: give the class's "
            "(--lesson-report=PATH --lesson-report-format=json)"
        )
    table = data.get("class")
    absent = table.get("absent") if isinstance(table, dict) else None
    return (
        [CaseResult.from_dict(raw) for raw in data.get("results", [])],
        tuple(data.get("exercises") or ()),
        {str(k): str(v) for k, v in (absent or {}).items()},
    )


def run(args: argparse.Namespace) -> int:
    try:
        if not args.submissions.is_dir():
            raise SimilarityError(f"{args.submissions}: no such folder")
        if args.class_report and not args.report:
            raise SimilarityError(
                "Give --report=CLASS.json with --class-report: the class report is made from "
                "the class's results, with the section of similar submissions added."
            )
        try:
            import copydetect  # noqa: F401  (the optional extra `similarity`)
        except ImportError:
            raise SimilarityError(
                "Install copydetect to compare submissions: pip install "
                "'pytest-lessons[similarity]'"
            ) from None
        lessons = lessons_of(args.course)
        if args.lesson:
            lessons = [lesson for lesson in lessons if lesson.parent.name in args.lesson]
        if not lessons:
            raise SimilarityError(f"{args.course}: no lesson (exercise.toml) to compare")
        report = _read_results(args.report) if args.report else None
    except (SimilarityError, OSError, ValueError, course.CourseError) as error:
        print(f"similarity: {error}", file=sys.stderr)
        return 2
    roll = Roll.of(args.submissions, shown=str(args.submissions))
    found = compare_class(args.submissions, lessons, args.threshold, roll)
    for line in similarity.lines(found, args.top):
        print(printable(line))
    if roll.skipped:
        # As a class run says it: a folder set aside for its name is compared with no one.
        print(printable(roll.skipped_line()))
    if args.class_report and report is not None:
        results, order, absent = report
        page = classreport.render(results, order=order, absent=absent, similar=found)
        args.class_report.parent.mkdir(parents=True, exist_ok=True)
        args.class_report.write_text(page, encoding="utf-8")
        print(f"class report: {args.class_report} (with similar submissions)")
    return 0


def add_parser(commands: Any) -> None:
    """The ``similarity`` command, on the subcommands of ``python -m pytest_lessons``."""
    command = commands.add_parser(
        "similarity",
        help="Rank pairs of submissions per lesson by how much code they share (evidence "
        "to look at, never a grade).",
        description="Compare the learners' files of each lesson with copydetect, the lesson's "
        "starter left out, and list the pairs that overlap most: evidence to look at, never "
        "a grade. Files are read beneath each learner's folder, through no link.",
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument(
        "submissions", type=Path, metavar="SUBMISSIONS", help="the class's submissions folder"
    )
    command.add_argument(
        "course", type=Path, metavar="COURSE", help="the course (or lesson) folder"
    )
    command.add_argument(
        "--lesson", action="append", metavar="NAME", help="compare this lesson only (repeatable)"
    )
    command.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        metavar="SHARE",
        help="list pairs whose larger share of overlapping code is at least this (default 0.5)",
    )
    command.add_argument(
        "--top", type=int, default=10, metavar="N", help="pairs shown per lesson (default 10)"
    )
    command.add_argument(
        "--report", type=Path, metavar="CLASS.json", help="the class's json report"
    )
    command.add_argument(
        "--class-report",
        type=Path,
        metavar="PATH",
        help="with --report: write the class report, with a section of similar submissions",
    )
    command.set_defaults(run=run)
