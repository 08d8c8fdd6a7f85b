"""``python -m pytest_lessons merge SHARD.json ...``: one class's outputs from its shards.

A class graded in shards (``--lesson-shard=K/N`` on a CI matrix, each writing a ``json``
report) is merged here into exactly the files one run would have written: the gradebook, the
regrade diff, the feedback files, the class report and the reports. Each shard's report says
which shard of how many it is and which class it grades (its learners), so the merge refuses
a set with a shard missing, given twice or from another class, naming what is wrong; with
``--allow-missing`` the learners of a missing shard are written as not graded, never left
out. A class split by a plan (``python -m pytest_lessons plan``, for a scheduler's array of
shards) is merged with ``--plan``: each shard's report names the plan instead of listing the
class, and the merge checks every shard against the plan. Such a merge that shows no case's
texts adds up the shards' tallies (:mod:`~pytest_lessons.reports.tallyfile`: written by each
shard with ``--lesson-tally``, or made from its report as it is read) instead of holding
every case of the class.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_lessons import autograder, canvas, history_command, place, similarity, watch
from pytest_lessons import plan as plan_step
from pytest_lessons.core.plan import Plan
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.submissions import Roll, ShardError, parse_shard
from pytest_lessons.isolation.text import visible
from pytest_lessons.reports import formats, tallyfile
from pytest_lessons.reports.classreport import class_lines, name_list, tally_lines
from pytest_lessons.reports.options import MERGE, OUTPUT_OPTIONS
from pytest_lessons.reports.outputs import WRITE_FAILED, Outputs, WriteFailed, check, write
from pytest_lessons.reports.tallies import Tally

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
    tally: Tally | None = None
    """The class's tally, added up from the shards' (then :attr:`results` is empty)."""

    @property
    def graded(self) -> int:
        """How many cases the shards graded."""
        return self.tally.cases if self.tally is not None else len(self.results)

    @property
    def all_passed(self) -> bool:
        """Whether every case the shards graded passed."""
        if self.tally is not None:
            return self.tally.passed == self.tally.cases
        return all(r.passed for r in self.results)


class _Untallied(Exception):
    """A shard's report whose results no tally adds up exactly: the merge reads every
    report's results instead."""


#: The fields of a result that only a learner's own files and the json report show: a merge
#: that writes neither leaves them out as it reads (:func:`read_shards`'s *text*).
TEXT_FIELDS = ("headline", "message", "call", "output", "lesson_error", "files")

#: Why a merge that writes a learner's own files or a json report reads no tally.
TEXTS = "--feedback and --report show every case's texts, which a tally does not hold"


def read_shards(
    paths: Sequence[Path],
    allow_missing: bool = False,
    plan: Plan | None = None,
    text: bool = True,
    untallied: str = "",
) -> Merged:
    """Every case of every shard, checked to be one whole class split once.

    Refused (:class:`MergeError`): a case two shards both graded, a shard given twice, shards
    of another split or another class, and a shard missing (unless *allow_missing*: its
    learners are then :attr:`Merged.absent`). With *plan*, every shard is checked against it
    instead (:func:`_check_planned`). Without *text*, the results leave out
    :data:`TEXT_FIELDS` (for a merge that writes no learner's own file and no json report).
    Shards are read one at a time, so only the results stay in memory.

    With *plan* and without *text*, unless *untallied* says why not (then a shard's tally is
    refused with that reason), each shard is added up as a tally (a tally file, or its
    report's results made one) into :attr:`Merged.tally`, and no result is kept; a report
    whose points no tally adds up exactly raises :class:`_Untallied`."""
    merged = Merged()
    # A planned merge that shows no case's texts adds up each shard's tally, read from its
    # tally file or made from its report: one shard's results in memory at a time.
    adder = tallyfile.Adder() if plan is not None and not text and not untallied else None
    seen: dict[tuple[str, str, int], Path] = {}
    shards: dict[int, Path] = {}
    first: tuple[Path, Roll] | None = None
    unlabelled: list[Path] = []
    strings: dict[str, str] = {}
    numbers: dict[float, float] = {}
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        if tallyfile.is_tally(data):
            if plan is None or adder is None:
                if plan is None:
                    why = "give the plan its shards were graded from with --plan=plan.json"
                else:
                    why = f"give the shards' json reports instead ({untallied or TEXTS})"
                raise MergeError(f"{path} is a shard's tally: {why}")
            try:
                rows = tallyfile.rows(data, str(path))
            except tallyfile.TallyError as error:
                raise MergeError(str(error)) from None
            k, folder = _check_table(path, data.get("class"), plan, shards)
            _check_members(path, k, plan, ((row.learner, None) for row in rows), bool(rows))
            if first is None:
                first = (path, plan.roll(k, folder))
            merged.seconds = max(merged.seconds, float(data.get("seconds", 0.0)))
            if data.get("exercises") and not merged.order:
                merged.order = tuple(data["exercises"])
            adder.add(rows, data)
            continue
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
        results = [_result(raw, text, strings, numbers) for raw in data["results"]]
        if plan is not None:
            k, folder = _check_planned(path, table, plan, shards, results)
            if first is None:
                first = (path, plan.roll(k, folder))
            if adder is None:
                merged.results += results
                continue
            try:
                made = tallyfile.shard_tally(results, 0.0, order, {})
            except tallyfile.TallyError:
                raise _Untallied() from None
            adder.add(tallyfile.rows(made, str(path)), made)
            continue
        if isinstance(table, dict):
            if "plan" in table:
                raise MergeError(
                    f"{path} was graded from a plan ({table['plan']}): give that plan with "
                    "--plan=plan.json, so the merge knows the class"
                )
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
        for result in results:
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
    if adder is not None:
        try:
            merged.tally = adder.tally()
        except tallyfile.TallyError:
            raise _Untallied() from None
    if plan is not None:
        folder = first[1].folder if first is not None else plan.folder
        merged.roll = Roll(plan.learners, folder=folder)
        members: Callable[[int], Sequence[str]] = plan.members
        total = plan.total
        size = len(merged.roll.learners)
    elif first is None:
        return merged
    else:
        roll = first[1]
        total = roll.shard[1]
        merged.roll = Roll(roll.learners, folder=roll.folder)
        members = roll.members
        size = len(roll.learners)
    graded = (
        set(merged.tally.learners)
        if merged.tally is not None
        else {r.learner for r in merged.results}
    )
    for k in (k for k in range(1, total + 1) if k not in shards):
        absent = [who for who in members(k) if who not in graded]
        if not allow_missing:
            who = (
                f"its {len(absent)} of {size} learners: {name_list(absent)}"
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


#: A result's fields, and those of its strings that recur in every learner's results.
_FIELDS = frozenset(f.name for f in dataclasses.fields(CaseResult))
_SHARED = (
    "exercise",
    "title",
    "path",
    "id",
    "label",
    "learner",
    "fault",
    "diagnosis",
    "diagnosis_kind",
)
_STATUS = {status.value: status for status in Status}
#: What a result without file inputs holds as its files: one empty table for them all (no
#: reader changes a result's table), not one each.
_NO_FILES: dict[str, str] = {}


def _result(
    raw: dict[str, Any], text: bool, strings: dict[str, str], numbers: dict[float, float]
) -> CaseResult:
    """One result of a shard's report (as :meth:`CaseResult.from_dict` reads it, faster: a
    merge reads millions). Each recurring string and number of points is kept once, and
    without *text* the :data:`TEXT_FIELDS` are left out."""
    raw.pop("passed", None)
    if not text:
        for key in TEXT_FIELDS:
            raw.pop(key, None)
    for key in _SHARED:
        value = raw.get(key)
        if isinstance(value, str):
            raw[key] = strings.setdefault(value, value)
    for key in ("points", "max_points"):
        value = raw.get(key)
        if isinstance(value, float):
            raw[key] = numbers.setdefault(value, value)
    if not raw.get("files"):
        raw["files"] = _NO_FILES
    if not _FIELDS.issuperset(raw):
        return CaseResult.from_dict(raw)
    status = _STATUS.get(raw["status"])
    if status is None:
        return CaseResult.from_dict(raw)
    raw["status"] = status
    return CaseResult(**raw)


def _check_planned(
    path: Path,
    table: object,
    plan: Plan,
    shards: dict[int, Path],
    results: Sequence[CaseResult],
) -> tuple[int, str]:
    """Shard *path* against *plan*: graded from it, given once, and grading exactly the
    learners the plan gives it. Returns its number (from 1), now in *shards*, and its
    submissions folder as it named it."""
    k, folder = _check_table(path, table, plan, shards)
    cases = ((r.learner, r) for r in results)
    _check_members(path, k, plan, cases, bool(results))
    return k, folder


def _check_table(path: Path, table: object, plan: Plan, shards: dict[int, Path]) -> tuple[int, str]:
    """A planned shard's ``class`` *table* (of its report or its tally) against *plan*:
    graded from it, given once. Returns its number (from 1), now in *shards*, and its
    submissions folder as it named it."""
    if not isinstance(table, dict) or "plan" not in table:
        raise MergeError(
            f"{path} was not graded from a plan: grade every shard with --lesson-plan, or "
            "merge without --plan"
        )
    if table["plan"] != plan.id or table.get("id") != plan.roster:
        raise MergeError(
            f"{path} was graded from another plan ({table['plan']}) than the one given "
            f"({plan.id}, {len(plan.learners)} learners in {plan.total} shards): give the "
            "shards of this plan, or its own plan"
        )
    try:
        k, n = parse_shard(str(table.get("shard")))
    except ShardError:
        raise MergeError(f"{path}: its shard {table.get('shard')!r} is not K/N") from None
    if n != plan.total:
        raise MergeError(
            f"{path} is shard {k}/{n} and the plan has {plan.total} shards: give the shards "
            "of this plan"
        )
    if k in shards:
        raise MergeError(f"{shards[k]} and {path} are both shard {k}/{n}: give each shard once")
    shards[k] = path
    return k, str(table.get("folder") or plan.folder)


def _check_members(
    path: Path,
    k: int,
    plan: Plan,
    graded: Iterable[tuple[str, CaseResult | None]],
    any_graded: bool,
) -> None:
    """What shard *k* (*path*) graded against the learners *plan* gives it: each of its
    (learner, result) *graded* is its own learner's, no result twice, and every learner of
    the shard has one (if it graded anything)."""
    n = plan.total
    own = set(plan.shards[k - 1])
    learners: set[str] = set()
    cases: set[tuple[str, str, int]] = set()
    for learner, result in graded:
        if learner not in own:
            raise MergeError(
                f"{path} (shard {k}/{n}) graded {learner or 'a learner of no class'}, "
                f"whom the plan does not put in shard {k}: give the shards of this plan"
            )
        if result is not None:
            key = (result.learner, result.path, result.case)
            if key in cases:
                raise MergeError(
                    f"{path} graded {result.learner}'s {result.exercise} {result.label} "
                    "twice: grade the shard again"
                )
            cases.add(key)
        learners.add(learner)
    if any_graded and learners != own:
        lost = sorted(own - learners)
        raise MergeError(
            f"{path} (shard {k}/{n}) has no result for {len(lost)} of its {len(own)} "
            f"learners ({name_list(lost)}): grade shard {k} again"
        )


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
    merge.add_argument(
        "--plan",
        type=Path,
        metavar="PLAN.json",
        help="the plan the shards were graded from (python -m pytest_lessons plan): every "
        "shard is checked against it",
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
    plan_step.add_command(commands)
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
    if args.command == plan_step.COMMAND:
        return plan_step.run(args)
    outputs = Outputs.from_values(lambda name: getattr(args, name))
    here = Path.cwd()
    try:
        check(outputs, here, batch=True)
        planned = Plan.read(args.plan) if args.plan is not None else None
        # Only a learner's own files and the json report show a case's texts.
        text = bool(outputs.feedback or outputs.report)
        try:
            # A record of the history holds the whole json report: made of results.
            why = "--history records every case, which a tally does not hold"
            merged = read_shards(
                args.shards, args.allow_missing, planned, text, why if outputs.history else ""
            )
        except _Untallied:
            # Points no tally adds up exactly (finer than 2**-GRAIN): every result, as ever.
            why = (
                f"some shard's points are finer than 2**-{tallyfile.GRAIN}, which no tally "
                "adds up exactly"
            )
            merged = read_shards(args.shards, args.allow_missing, planned, text, why)
    except (OSError, ValueError) as error:
        print(f"merge: {error}", file=sys.stderr)
        return 2
    results = merged.results
    if not merged.graded:
        print("merge: the shards graded nothing", file=sys.stderr)
        return 5
    if merged.tally is not None:
        lines = tally_lines(merged.tally, merged.order, merged.absent)
        summary = formats.summary_of(merged.tally.totals)
    else:
        lines = class_lines(results, merged.order, merged.absent)
        summary = formats.summary_text(results)
    for line in lines:
        print(line)
    print(visible(summary))
    try:
        written = write(
            outputs,
            results,
            merged.seconds,
            here,
            merged.roll,
            merged.order,
            merged.absent,
            merged.tally,
        )
    except WriteFailed as failed:
        for line in failed.lines:
            print(visible(line))
        for line in failed.error_lines():
            print(visible(line), file=sys.stderr)
        return WRITE_FAILED
    for line in written:
        print(visible(line))
    return 0 if merged.all_passed and not merged.absent else 1


if __name__ == "__main__":
    sys.exit(main())
