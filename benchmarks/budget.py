"""What counting a case's work costs: each budget case of the course run with its count and
without. Run from the repository root:

    python benchmarks/budget.py                  # 15 rounds, fork mode
    python benchmarks/budget.py --rounds 5 --isolation spawn --settle 6

Each round runs, through the core (``Runs.job``, then the runner), the same job twice: once as
a budget case runs it (``Job.work``: the child pushes the counting dispatch mode before the
sandbox closes, counts the call, and for a growth case calls again on the smaller inputs), once
without. The medians per case and the overhead of counting are printed, for:

* ``pairwise_scores`` case "work budget" (n = 48, m = 40, d = 16): the reference (8 torch
  operations) and the mistake ``two_loops`` (7,681 operations: the cost per operation);
* ``kv_cache_step`` case "work growth" (past = 1024, and 64 for the second call): the
  reference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_lessons.core import model  # noqa: E402
from pytest_lessons.core.runs import Runs  # noqa: E402
from pytest_lessons.core.settings import Settings  # noqa: E402
from pytest_lessons.isolation.outcome import RETURNED  # noqa: E402
from pytest_lessons.isolation.runner import make_runner  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--isolation", default="fork", choices=["fork", "spawn", "off"])
    parser.add_argument("--settle", type=float, default=0.0, help="seconds to wait before each job")
    args = parser.parse_args()
    pairwise = model.load(ROOT / "exercises" / "pairwise_scores" / "exercise.toml")
    kv = model.load(ROOT / "exercises" / "kv_cache_step" / "exercise.toml")
    budget_case = next(c for c in pairwise.cases if c.name == "work budget")
    growth_case = next(c for c in kv.cases if c.name == "work growth")
    subjects = {
        "pairwise reference": (pairwise, pairwise.reference, "solve", budget_case),
        "pairwise two_loops": (pairwise, pairwise.mistakes, "two_loops", budget_case),
        "kv_cache reference (growth)": (kv, kv.reference, "solve", growth_case),
    }
    runner = make_runner(args.isolation)
    runs = Runs(runner, Settings(given={}, isolation=args.isolation))
    runner.warm_up()
    times: dict[tuple[str, bool], list[float]] = {}
    try:
        for round_number in range(args.rounds + 1):
            for name, (exercise, solution, entry, case) in subjects.items():
                for counted in (True, False):
                    work = case.work if counted else None
                    assert solution is not None
                    job = runs.job(exercise, solution, entry, case.inputs, work=work)
                    if not counted:
                        job = replace(job, work=None)
                    time.sleep(args.settle)
                    started = time.perf_counter()
                    outcome = runner.run(job)
                    seconds = time.perf_counter() - started
                    assert outcome.kind == RETURNED, outcome
                    assert ("work" in outcome.details) == counted
                    if round_number:  # the first round warms the worker's caches
                        times.setdefault((name, counted), []).append(seconds)
    finally:
        runner.close()
    print(f"{args.isolation} mode, {args.rounds} rounds, medians per case:")
    for name in subjects:
        plain = statistics.median(times[(name, False)])
        count = statistics.median(times[(name, True)])
        print(
            f"  {name:28s} counted {count:.3f} s, not counted {plain:.3f} s "
            f"(+{count - plain:.3f} s)"
        )


if __name__ == "__main__":
    main()
