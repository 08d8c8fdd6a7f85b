"""``python -m pytest_lessons plan SUBMISSIONS --shards=N``: the plan of a class's shards.

Written once, before a scheduler starts the shards (docs/ci-grading.md, "Recipes"): it lists
the submissions folder, puts each learner in a shard and writes the plan file. Each shard then
grades its own learners only (``pytest --lesson-submissions=DIR --lesson-plan=plan.json
--lesson-shard-index=I``, *I* the scheduler's index from 0), and the merge checks every
shard's report against the same plan (``python -m pytest_lessons merge --plan=plan.json``).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from pytest_lessons.core.plan import Plan, PlanError
from pytest_lessons.core.submissions import Roll
from pytest_lessons.isolation.text import visible

#: The command's name under ``python -m pytest_lessons``.
COMMAND = "plan"


def add_command(commands: Any) -> None:
    """Add the ``plan`` command to ``python -m pytest_lessons``'s sub-commands."""
    plan = commands.add_parser(
        COMMAND,
        help="Split a class into N shards once, for a scheduler's array of shards.",
        description=textwrap.fill(
            "Write the plan of a class graded in N shards by a scheduler: each shard's "
            "learners and a fingerprint of the class. Each shard then grades its own "
            "learners only (pytest --lesson-submissions=DIR --lesson-plan=plan.json "
            "--lesson-shard-index=I, I the scheduler's index, from 0), and the merge checks "
            "the shards against the plan (python -m pytest_lessons merge --plan=plan.json).",
            79,
        ),
        epilog="exit status: 0 the plan was written; 2 it was not (the message says why)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plan.add_argument(
        "submissions", type=Path, help="the submissions folder: one folder per learner"
    )
    plan.add_argument(
        "--shards",
        type=int,
        required=True,
        metavar="N",
        help="how many shards (many more than machines, so the scheduler balances the load)",
    )
    plan.add_argument(
        "--output", type=Path, default=Path("plan.json"), help="the plan file (plan.json)"
    )


def run(args: argparse.Namespace) -> int:
    """Write the plan *args* ask for; 0 when written, 2 when refused."""
    submissions: Path = args.submissions
    if not submissions.is_dir():
        print(f"plan: {submissions}: no such folder", file=sys.stderr)
        return 2
    roll = Roll.of(submissions, shown=str(submissions))
    # What was set aside comes first, refused or not: a folder that is no learner (its name
    # shown as escapes) may be why the class is smaller than the instructor expects.
    if roll.skipped:
        print(visible(roll.skipped_line()))
    if not roll.learners:
        print(
            visible(
                f"plan: put one folder per learner in {submissions}, then plan again: it holds "
                "no learner's folder"
            ),
            file=sys.stderr,
        )
        return 2
    try:
        plan = Plan.split(roll, args.shards)
    except PlanError as error:
        print(visible(f"plan: {error}"), file=sys.stderr)
        return 2
    output: Path = args.output
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(plan.text(), encoding="utf-8")
    except OSError as error:
        print(visible(f"plan: {output}: {error.strerror or error}"), file=sys.stderr)
        return 2
    sizes = [len(part) for part in plan.shards]
    print(
        visible(
            f"plan: {len(roll.learners)} learners in {plan.total} shards "
            f"({min(sizes)} to {max(sizes)} each), class {plan.roster}, plan {plan.id}: {output}"
        )
    )
    print(
        visible(
            f"grade shard I (0 to {plan.total - 1}) with --lesson-submissions={submissions} "
            f"--lesson-plan={output} --lesson-shard-index=I, then merge with "
            f"python -m pytest_lessons merge --plan={output} SHARD.json ..."
        )
    )
    return 0
