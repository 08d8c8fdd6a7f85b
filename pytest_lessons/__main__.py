"""``python -m pytest_lessons merge SHARD.json ...``: one class's outputs from its shards.

A class graded in shards (``--lesson-shard=K/N`` on a CI matrix, each writing a ``json``
report) is merged here into exactly the files one run would have written: the gradebook, the
regrade diff, the feedback files, the class report and the reports. This module imports
neither pytest nor torch: the merge job needs neither.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_lessons import classoutputs, formats, gradebook
from pytest_lessons.results import CaseResult


def read_shards(paths: Sequence[Path]) -> tuple[list[CaseResult], float]:
    """Every case of every shard, and the longest shard's wall time (shards run side by side).

    A case that two shards both graded is an error: the shards were not of one split."""
    results: list[CaseResult] = []
    seen: dict[tuple[str, str, int], Path] = {}
    seconds = 0.0
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != "pytest-lessons":
            raise ValueError(
                f"{path} is not a json report of pytest-lessons: write each shard's with "
                "--lesson-report=PATH --lesson-report-format=json"
            )
        seconds = max(seconds, float(data.get("seconds", 0.0)))
        for raw in data["results"]:
            result = CaseResult.from_dict(raw)
            key = (result.learner, result.path, result.case)
            if key in seen:
                raise ValueError(
                    f"{path} and {seen[key]} both graded {result.learner or 'the learner'}'s "
                    f"{result.exercise} {result.label}: give each shard once, all with the same N"
                )
            seen[key] = path
            results.append(result)
    return results, seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_lessons")
    commands = parser.add_subparsers(dest="command", required=True)
    merge = commands.add_parser(
        "merge",
        help="Merge the shards' json reports into what one run would have written.",
    )
    merge.add_argument("shards", nargs="+", type=Path, metavar="SHARD.json")
    merge.add_argument("--gradebook", metavar="PATH")
    merge.add_argument("--gradebook-format", default="long", choices=gradebook.LAYOUTS)
    merge.add_argument("--roster", metavar="CSV")
    merge.add_argument("--gradebook-diff", metavar="OLD.csv")
    merge.add_argument("--feedback", metavar="DIR")
    merge.add_argument("--class-report", metavar="PATH")
    merge.add_argument("--report", metavar="PATH")
    merge.add_argument("--report-format", default="json", choices=tuple(formats.FORMATS))
    merge.add_argument("--hidden-visibility", default="after_published")
    args = parser.parse_args(argv)
    outputs = classoutputs.Outputs(
        gradebook=args.gradebook,
        gradebook_format=args.gradebook_format,
        roster=args.roster,
        gradebook_diff=args.gradebook_diff,
        feedback=args.feedback,
        class_report=args.class_report,
        report=args.report,
        report_format=args.report_format,
        hidden_visibility=args.hidden_visibility,
    )
    here = Path.cwd()
    try:
        classoutputs.check(outputs, here, batch=True)
        results, seconds = read_shards(args.shards)
    except (OSError, ValueError) as error:
        print(f"merge: {error}", file=sys.stderr)
        return 2
    if not results:
        print("merge: the shards graded nothing", file=sys.stderr)
        return 5
    for line in classoutputs.class_lines(results):
        print(line)
    print(formats.summary_text(results))
    for line in classoutputs.write(outputs, results, seconds, here):
        print(line)
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
