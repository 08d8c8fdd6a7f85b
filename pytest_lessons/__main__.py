"""``python -m pytest_lessons merge SHARD.json ...``: one class's outputs from its shards.

A class graded in shards (``--lesson-shard=K/N`` on a CI matrix, each writing a ``json``
report) is merged here into exactly the files one run would have written: the gradebook, the
regrade diff, the feedback files, the class report and the reports. Each shard's report says
which shard of how many it is and which class it grades (its learners), so the merge refuses
a set with a shard missing, given twice or from another class, naming what is wrong; with
``--allow-missing`` the learners of a missing shard are written as not graded, never left
out.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_lessons import autograder, canvas, history_command, place, similarity, watch
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll, ShardError, parse_shard
from pytest_lessons.isolation.text import visible
from pytest_lessons.reports import formats
from pytest_lessons.reports.classreport import class_lines, name_list
from pytest_lessons.reports.options import MERGE, OUTPUT_OPTIONS
from pytest_lessons.reports.outputs import WRITE_FAILED, Outputs, WriteFailed, check, write

#: Exit statuses of the merge, as ``--help`` and docs/ci-grading.md give them.
EXIT_STATUS = """\
exit status:
  0  every case of every learner passed
  1  some learner failed a case, or was not graded (--allow-missing)
  2  the merge was refused: a shard is missing, given twice or of another class, a
     report cannot be read, or the options do not fit together; nothing is written
  5  the shards graded nothing
  10 a file could not be written (the message names it and says why); every other
     file was written
"""


class MergeError(ValueError):
    """The shards cannot be merged; the message names the shard and what to do."""


@dataclass
class Merged:
    """What the shards hold together."""

    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    """The longest shard's wall time (shards run side by side)."""
    order: tuple[str, ...] = ()
    """The exercises in course order, as the shards recorded it."""
    roll: Roll | None = None
    """The whole class, as one run would have graded it (shard 1/1)."""
    absent: dict[str, str] = field(default_factory=dict)
    """Learners of the class with no result (their shard was not given), with why."""


def read_shards(paths: Sequence[Path], allow_missing: bool = False) -> Merged:
    """Every case of every shard, checked to be one whole class split once.

    Refused (:class:`MergeError`): a case two shards both graded, a shard given twice, shards
    of another split or another class, and a shard missing (unless *allow_missing*: its
    learners are then :attr:`Merged.absent`)."""
    merged = Merged()
    seen: dict[tuple[str, str, int], Path] = {}
    shards: dict[int, Path] = {}
    first: tuple[Path, Roll] | None = None
    unlabelled: list[Path] = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != "pytest-lessons":
            raise MergeError(
                f"{path} is not a json report of pytest-lessons: write each shard's with "
                "--lesson-report=PATH --lesson-report-format=json"
            )
        merged.seconds = max(merged.seconds, float(data.get("seconds", 0.0)))
        order = tuple(data.get("exercises") or ())
        if order and not merged.order:
            merged.order = order
        table = data.get("class")
        if isinstance(table, dict):
            roll = _roll(path, table)
            k, n = roll.shard
            if first is None:
                first = (path, roll)
            else:
                _same_class(first, (path, roll))
            if k in shards:
                raise MergeError(
                    f"{shards[k]} and {path} are both shard {k}/{n}: give each shard once"
                )
            shards[k] = path
        else:
            unlabelled.append(path)
        for raw in data["results"]:
            result = CaseResult.from_dict(raw)
            key = (result.learner, result.path, result.case)
            if key in seen:
                raise MergeError(
                    f"{path} and {seen[key]} both graded {result.learner or 'the learner'}'s "
                    f"{result.exercise} {result.label}: give each shard once, all with the same N"
                )
            seen[key] = path
            merged.results.append(result)
    if unlabelled and not allow_missing:
        raise MergeError(
            f"{unlabelled[0]} does not say which shard of which class it is (written by an "
            "older pytest-lessons, or not by a class run), so the merge cannot tell whether a "
            "learner is missing: grade it again, or give --allow-missing to merge without "
            "that check"
        )
    if first is None:
        return merged
    roll = first[1]
    total = roll.shard[1]
    merged.roll = Roll(roll.learners, folder=roll.folder)
    graded = {r.learner for r in merged.results}
    missing = [k for k in range(1, total + 1) if k not in shards]
    for k in missing:
        absent = [who for who in roll.members(k) if who not in graded]
        if not allow_missing:
            who = (
                f"its {len(absent)} of {len(roll.learners)} learners: {name_list(absent)}"
                if absent
                else "it holds none of the class's learners"
            )
            raise MergeError(
                f"shard {k}/{total} is missing ({who}): give every shard's report "
                f"({total} in all), or --allow-missing to write its learners as not graded"
            )
        for name in absent:
            merged.absent[name] = f"not graded: shard {k}/{total} is missing from the merge"
    return merged


def _roll(path: Path, table: dict[str, object]) -> Roll:
    learners = table.get("learners")
    shard = table.get("shard")
    if not isinstance(learners, list) or not isinstance(shard, str):
        raise MergeError(f"{path}: its class table has no learners list or shard")
    try:
        k, n = parse_shard(shard)
    except ShardError:
        raise MergeError(f"{path}: its shard {shard!r} is not K/N") from None
    folder = str(table.get("folder") or "submissions")
    return Roll(tuple(str(name) for name in learners), (k, n), folder=folder)


def _same_class(first: tuple[Path, Roll], other: tuple[Path, Roll]) -> None:
    (one, a), (two, b) = first, other
    if a.id != b.id:
        only = sorted(set(b.learners) - set(a.learners)) or sorted(
            set(a.learners) - set(b.learners)
        )
        raise MergeError(
            f"{two} grades another class than {one} ({len(b.learners)} learners against "
            f"{len(a.learners)}; in one only: {name_list(only)}): give the shards "
            "of one run, graded from the same submissions folder"
        )
    if a.shard[1] != b.shard[1]:
        raise MergeError(
            f"{one} is shard {a.shard[0]}/{a.shard[1]} and {two} is shard "
            f"{b.shard[0]}/{b.shard[1]}: give the shards of one split, all with the same N"
        )


def parser() -> argparse.ArgumentParser:
    """The command line, with every option described (``python -m pytest_lessons merge -h``)."""
    top = argparse.ArgumentParser(prog="python -m pytest_lessons")
    commands = top.add_subparsers(dest="command", required=True)
    merge = commands.add_parser(
        "merge",
        help="Merge the shards' json reports into what one run would have written.",
        description=textwrap.fill(
            "Merge the json reports of a class graded in shards (pytest "
            "--lesson-submissions=DIR --lesson-shard=K/N --lesson-report=shard-K.json) into "
            "the files one run of the whole class would have written. Every shard of the "
            "split must be given once: a missing shard, one given twice or one of another "
            "class is refused.",
            79,
        ),
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    merge.add_argument(
        "shards",
        nargs="+",
        type=Path,
        metavar="SHARD.json",
        help="each shard's json report (--lesson-report-format=json, the default)",
    )
    merge.add_argument(
        "--allow-missing",
        action="store_true",
        help="merge although a shard is missing: its learners are written as not graded "
        "(0 points, with a note), never left out",
    )
    for option in OUTPUT_OPTIONS:
        merge.add_argument(option.flag(MERGE), help=option.help_in(MERGE), **option.arguments())
    scope = commands.add_parser(
        "gradescope",
        help="Gradescope's autograder: grade one upload, write results.json.",
        description="Grade a learner's Gradescope upload against a fresh copy of the course: "
        "only <exercise>/solution.py files are taken (or one solution.py for a one-exercise "
        "assignment); an exercise without one is graded as not handed in. Exits 0 when the "
        "results were written, else with pytest's own status (the grader failed).",
    )
    scope.add_argument("source", type=Path, help="the autograder's folder holding exercises/")
    scope.add_argument("submission", type=Path, help="the learner's upload")
    scope.add_argument("results", type=Path, help="where Gradescope reads results.json")
    place.add_command(commands)
    # Each of these commands is a module of its own: its parser, and its run() on the args.
    for command in (history_command, watch, canvas, similarity):
        command.add_parser(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if hasattr(args, "run"):
        return int(args.run(args))
    if args.command == "gradescope":
        return autograder.grade(args.source, args.submission, args.results)
    if args.command == "place":
        return place.run(args)
    outputs = Outputs.from_values(lambda name: getattr(args, name))
    here = Path.cwd()
    try:
        check(outputs, here, batch=True)
        merged = read_shards(args.shards, args.allow_missing)
    except (OSError, ValueError) as error:
        print(f"merge: {error}", file=sys.stderr)
        return 2
    results = merged.results
    if not results:
        print("merge: the shards graded nothing", file=sys.stderr)
        return 5
    for line in class_lines(results, merged.order, merged.absent):
        print(line)
    print(visible(formats.summary_text(results)))
    try:
        written = write(
            outputs, results, merged.seconds, here, merged.roll, merged.order, merged.absent
        )
    except WriteFailed as failed:
        for line in failed.lines:
            print(visible(line))
        for line in failed.error_lines():
            print(visible(line), file=sys.stderr)
        return WRITE_FAILED
    for line in written:
        print(visible(line))
    return 0 if all(r.passed for r in results) and not merged.absent else 1


if __name__ == "__main__":
    sys.exit(main())
