"""The merge of a class graded in shards, at scale: synthetic shard reports of 100,000 learners
x 5 lessons of 10 cases (5,000,000 cases), merged as a scheduler's last step would. Run from
the repository root:

    python benchmarks/merge.py                                  # 100,000 learners, 500 shards
    python benchmarks/merge.py --learners 10000 --shards 100 --feedback
    python benchmarks/merge.py --learners 20000 --unplanned     # without a plan, to compare

It writes a plan (:class:`~pytest_lessons.core.plan.Plan`, as ``python -m pytest_lessons
plan`` does), each shard's json report as a planned shard writes it (indented JSON, the
``class`` table naming the plan) and each shard's tally (as ``--lesson-tally`` writes it),
then times ``python -m pytest_lessons merge --plan`` of the tallies (``--reports``: of the
reports) in a process of its own and prints its wall time, its CPU time and its peak memory
(the kernel's ``ru_maxrss`` of that process). The goal here: at most 60 s and 2 GiB for the
gradebook and the class report of 100,000 learners.

Measured on our 2-core machine, shared with other jobs (Python 3.11; docs/ci-grading.md,
"Thousands of learners: tallies", keeps these figures):

- the merge of the reports, before tallies (2ce0580): 358.9 s CPU, 1,078 s wall, peak
  2,262 MiB (load average 6.4 at the start, 9.3 at the end);
- the merge of the tallies (71 MiB of them): 22.4 s CPU, 52.5 s wall, peak 384 MiB (load
  average 12.9 at the start, 10.7 at the end); with the plan's fingerprint computed once,
  not once a shard (the same command under ``/usr/bin/time -v``): 14.9 s CPU, 14.9 s wall,
  peak 383 MiB (load 1.5, 1.4). Its files are byte for byte those of the merge before.

The class: per learner and lesson, 60 % pass every case, 15 % make the lesson's mistake (a
watch-out on every other case), 10 % leave the stub (NotImplementedError), 10 % hand in
nothing and 5 % raise an exception; texts as long as the grader's (the learner's path in
each). The reports are made from a few rendered templates, so writing 3 GB of them takes a
minute or two, not the hour that rendering 5,000,000 results one by one would.

``--feedback`` adds the feedback files (one per learner) and ``--report`` the merged json
report: both need every case's texts, so the merge then keeps them in memory (at 100,000
learners, let the shards write their learners' feedback files, as docs/ci-grading.md says).
``--unplanned`` writes shards without a plan, each listing the whole class (as
``--lesson-shard=K/N`` does), and merges them without ``--plan``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_lessons.core.plan import Plan  # noqa: E402
from pytest_lessons.core.results import CaseResult  # noqa: E402
from pytest_lessons.core.submissions import Roll  # noqa: E402
from pytest_lessons.reports import tallyfile  # noqa: E402

LESSONS = ("split_heads", "causal_attention", "combine_heads", "layer_norm", "cross_entropy")

#: (kind, share of learners), per lesson; the shares add up to 100.
KINDS = (("right", 60), ("mistake", 15), ("stub", 10), ("missing", 10), ("raised", 5))


def case_dict(lesson: str, case: int, cases: int, kind: str) -> dict[str, object]:
    """One result as a shard's report holds it, with ``@L@`` for the learner's name."""
    mine = f"submissions/@L@/{lesson}/solution.py"
    call = f"solve(x=[[0.25, -1.5, 2.0, 0.75], [1.0, 0.5, -0.25, 3.0]], heads={case % 4 + 1})"
    failed = {
        "mistake": case % 2 == 0,
        "stub": True,
        "missing": True,
        "raised": True,
    }.get(kind, False)
    base: dict[str, object] = {
        "exercise": lesson,
        "title": lesson.replace("_", " ").capitalize(),
        "path": f"/course/exercises/{lesson}/exercise.toml",
        "status": "passed",
        "points": 1.0,
        "max_points": 1.0,
        "case": case,
        "cases": cases,
        "id": f"case-{case}",
        "label": f"case {case}",
        "line": 10 + 6 * case,
        "learner": "@L@",
        "hidden": case > cases - 3,
        "generated": False,
        "headline": "",
        "message": "",
        "diagnosis": None,
        "diagnosis_kind": None,
        "fault": "",
        "unloadable": False,
        "seconds": 0.0412,
        "call": call,
        "output": "",
        "lesson_error": "",
        "files": {},
        "passed": True,
    }
    if not failed:
        return base
    base.update(status="failed" if kind == "mistake" else "error", points=0.0, passed=False)
    if kind == "mistake":
        headline = (
            f"Transpose K before the product in {mine}: the scores come out as Q times K, "
            "so each row mixes the wrong positions."
        )
        base.update(diagnosis="missing-transpose", diagnosis_kind="watch_out")
    elif kind == "stub":
        headline = (
            f"Write your solution: {lesson} is not implemented yet. Open {mine} and replace "
            "`raise NotImplementedError` (line 12) in solve with your code."
        )
        base.update(fault="raised NotImplementedError at solution.py:12")
    elif kind == "missing":
        headline = f"Create {mine} and write solve(x, heads) in it: there is no such file."
        base.update(fault="setup missing_file", unloadable=True, seconds=0.0)
    else:
        headline = (
            f"Fix the error in {mine}, line 18: your code raised IndexError "
            "(index 4 is out of bounds for dimension 0 with size 4)."
        )
        base.update(fault="raised IndexError at solution.py:18")
    base["headline"] = headline
    base["message"] = (
        headline
        + "\n\n  inputs     x = [[0.25, -1.5, 2.0, 0.75], [1.0, 0.5, -0.25, 3.0]]\n"
        + f"  expected   [[0.5, -3.0], [2.0, 1.5]]\n  your code  {mine}\n"
    )
    return base


def templates(cases: int) -> dict[tuple[str, str], str]:
    """Each lesson's results for one learner of each kind, rendered as a shard's report
    indents them (2 spaces, inside ``results``), with ``@L@`` for the learner."""
    out = {}
    for lesson in LESSONS:
        for kind, _ in KINDS:
            rendered = [
                json.dumps(case_dict(lesson, n, cases, kind), indent=2) for n in range(1, cases + 1)
            ]
            out[(lesson, kind)] = ",\n".join(
                "    " + text.replace("\n", "\n    ") for text in rendered
            )
    return out


def kind_of(index: int, lesson: int) -> str:
    """The kind of a learner's lesson: spread by the learner's number and the lesson's."""
    slot = (index * 7 + lesson * 31) % 100
    for kind, share in KINDS:
        if slot < share:
            return kind
        slot -= share
    return KINDS[0][0]


def write_tallies(folder: Path, plan: Plan, cases: int) -> int:
    """Every shard's tally in *folder*, as ``--lesson-tally`` writes it (the tally of the
    shard's results, in its report's order); returns the files' bytes. The results are the
    templates' with each learner's name, so no report is parsed for it."""
    made = {
        key: [CaseResult.from_dict(case_dict(lesson, n, cases, kind)) for n in range(1, cases + 1)]
        for key in templates(cases)
        for lesson, kind in [key]
    }
    number = {name: n for n, name in enumerate(plan.learners)}
    size = 0
    for k in range(1, plan.total + 1):
        results = [
            replace(r, learner=name)
            for name in plan.members(k)
            for n, lesson in enumerate(LESSONS)
            for r in made[(lesson, kind_of(number[name], n))]
        ]
        tally = tallyfile.shard_tally(results, 600.0, LESSONS, plan.roll(k).table())
        data = tallyfile.text(tally)
        (folder / f"shard-{k - 1}.tally").write_bytes(data)
        size += len(data)
    return size


def write_shards(folder: Path, plan: Plan, cases: int, planned: bool) -> tuple[int, int]:
    """Every shard's report in *folder*; returns (files' bytes, cases)."""
    rendered = templates(cases)
    number = {name: n for n, name in enumerate(plan.learners)}
    everyone = Roll(plan.learners)
    size = cases_written = 0
    for k in range(1, plan.total + 1):
        learners = plan.members(k)
        if planned:
            table = plan.roll(k).table()
        else:
            table = Roll(everyone.learners, (k, plan.total), folder="submissions").table()
        head = {
            "format": "pytest-lessons",
            "version": 1,
            "seconds": 600.0,
            "totals": {},
            "summary": "synthetic shard",
            "mistakes": {},
            "exercises": list(LESSONS),
            "class": table,
        }
        parts = []
        for name in learners:
            for n, lesson in enumerate(LESSONS):
                text = rendered[(lesson, kind_of(number[name], n))]
                parts.append(text.replace("@L@", name))
        cases_written += len(learners) * len(LESSONS) * cases
        body = json.dumps(head, indent=2)[:-2]
        text = body + ',\n  "results": [\n' + ",\n".join(parts) + "\n  ]\n}\n"
        path = folder / f"shard-{k - 1}.json"
        path.write_text(text, encoding="utf-8")
        size += len(text.encode("utf-8"))
    return size, cases_written


def measure(command: list[str], where: Path) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak MiB, exit status, stderr's last line) of *command*, alone in its
    process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    last = errors.strip().splitlines()[-1] if errors.strip() else ""
    return wall, cpu, usage.ru_maxrss / 1024, child.returncode, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=100_000)
    parser.add_argument("--cases", type=int, default=10, help="cases per lesson (10)")
    parser.add_argument("--shards", type=int, default=500)
    parser.add_argument("--feedback", action="store_true", help="also the feedback files")
    parser.add_argument("--report", action="store_true", help="also the merged json report")
    parser.add_argument("--unplanned", action="store_true", help="shards without a plan")
    parser.add_argument(
        "--reports", action="store_true", help="merge the planned shards' reports, not tallies"
    )
    parser.add_argument("--keep", type=Path, help="write here and keep the files")
    args = parser.parse_args()

    where = args.keep or Path(tempfile.mkdtemp(prefix="merge-bench-"))
    where.mkdir(parents=True, exist_ok=True)
    try:
        names = tuple(f"learner{n:06d}" for n in range(args.learners))
        plan = Plan.split(Roll(names), args.shards)
        (where / "plan.json").write_text(plan.text(), encoding="utf-8")
        shards = where / "shards"
        shutil.rmtree(shards, ignore_errors=True)
        shards.mkdir()
        started = time.perf_counter()
        size, cases = write_shards(shards, plan, args.cases, not args.unplanned)
        print(
            f"{args.learners:,} learners x {len(LESSONS)} lessons x {args.cases} cases = "
            f"{cases:,} cases in {args.shards} shards ({'un' if args.unplanned else ''}planned): "
            f"{size / 2**30:.2f} GiB of reports, written in {time.perf_counter() - started:.0f} s"
        )
        given = sorted(shards.iterdir())
        tallied = not (args.unplanned or args.reports or args.feedback or args.report)
        if tallied:
            tallies = where / "tallies"
            shutil.rmtree(tallies, ignore_errors=True)
            tallies.mkdir()
            started = time.perf_counter()
            size = write_tallies(tallies, plan, args.cases)
            # The tally made from the templates is the one --lesson-tally makes from a report.
            tallyfile.write_beside(shards / "shard-0.json", where / "check.tally")
            assert (where / "check.tally").read_bytes() == (tallies / "shard-0.tally").read_bytes()
            print(
                f"tallies: {size / 2**20:.0f} MiB, written in {time.perf_counter() - started:.0f} s"
            )
            given = sorted(tallies.iterdir())
        command = [sys.executable, "-m", "pytest_lessons", "merge"]
        if not args.unplanned:
            command.append("--plan=plan.json")
        command += [str(p) for p in given]
        command += ["--gradebook=out/grades.csv", "--gradebook-format=wide"]
        command += ["--class-report=out/class.html"]
        asked = ["gradebook", "class report", "from tallies" if tallied else "from reports"]
        if args.feedback:
            command.append("--feedback=out/feedback")
            asked.append("feedback files")
        if args.report:
            command.append("--report=out/class.json")
            asked.append("json report")
        wall, cpu, peak, status, last = measure(command, where)
        print(
            f"merge ({', '.join(asked)}): {wall:.1f} s wall, {cpu:.1f} s CPU, peak "
            f"{peak:,.0f} MiB, exit {status}" + (f" ({last})" if status not in (0, 1) else "")
        )
        if status not in (0, 1):
            return 1
        rows = (where / "out" / "grades.csv").read_text(encoding="utf-8").count("\n") - 1
        html = (where / "out" / "class.html").stat().st_size
        print(f"gradebook: {rows:,} learners; class report: {html / 2**20:.1f} MiB")
    finally:
        if args.keep is None:
            shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
