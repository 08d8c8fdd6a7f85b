"""``python -m pytest_lessons history DIR [LEARNER ...]``: the grades a history folder holds.

Without a learner it lists every record (when, its name, how many learners, their mean);
with learners, each one's grades over the runs and what changed from one run to the next.
The folder is written by ``--lesson-history=DIR`` (:mod:`pytest_lessons.reports.history`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_lessons.reports import history

#: Exit statuses, as ``--help`` and docs/ci-grading.md give them.
EXIT_STATUS = """\
exit status:
  0  the history was listed
  1  a learner asked for is in no record
  2  the folder cannot be read
"""


def add_parser(commands: Any) -> None:
    """The ``history`` command, on the subcommands of ``python -m pytest_lessons``."""
    command = commands.add_parser(
        "history",
        help="List the grades a history folder (--lesson-history) holds, per run or per learner.",
        description="List the class results recorded with --lesson-history=DIR: every record "
        "(when, how many learners, their mean), or, given learners, each one's grades over "
        "the runs and what changed from one run to the next.",
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("folder", type=Path, metavar="DIR", help="the history folder")
    command.add_argument(
        "learners", nargs="*", metavar="LEARNER", help="learner folder names to list"
    )
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        found = history.read(args.folder)
    except history.HistoryError as error:
        print(f"history: {error}", file=sys.stderr)
        return 2
    if not args.folder.is_dir():
        print(f"history: {args.folder}: no such folder", file=sys.stderr)
        return 2
    if not args.learners:
        for line in history.overview_lines(found):
            print(history.printable(line))
        return 0
    status = 0
    for learner in args.learners:
        for line in history.learner_lines(found.records, learner):
            print(history.printable(line))
        if not history.learner_history(found.records, learner):
            status = 1
    for name, why in found.set_aside:
        print(history.printable(f"set aside, not a record: {name}: {why}"))
    return status
