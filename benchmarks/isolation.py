"""Isolation benchmarks (issue 3). Run from the repository root:

    python benchmarks/isolation.py            # all three
    python benchmarks/isolation.py --rounds 10

1. ``pytest exercises/combine_heads`` with a right solution, against a hand-written parametrized
   pytest file of the same four cases using ``torch.testing.assert_close``; the two commands
   alternate, each in a fresh process, and the ratio of medians is printed (target <= 1.0).
2. Isolation overhead per case: fork + fresh import of the learner's file + transfer, measured
   as the runner's round trip minus a direct in-process call of the same function (target
   <= 10 ms median).
3. Transfer and comparison of a 1,000,000-element answer (target <= 0.5 s).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "exercises" / "combine_heads"

PLAIN_TEST = textwrap.dedent(
    """
    import pytest
    import torch

    from reference import solve

    CASES = [
        ([[[0], [0]], [[1], [1]]], [[[0], [0]], [[0], [5]]], [[[2], [4]], [[10], [30]]],
         [[3, 29.8661], [3, 29.8661]]),
        ([[[0]]], [[[0]]], [[[5]]], [[5]]),
        ([[[0, 0], [0, 0]], [[2, 0], [2, 0]]], [[[0, 0], [0, 0]], [[0, 0], [2, 0]]],
         [[[1, 2], [3, 4]], [[10, 20], [30, 40]]],
         [[2, 3, 28.8839, 38.8839], [2, 3, 28.8839, 38.8839]]),
        ([[[0]], [[0]]], [[[0]], [[0]]], [[[2]], [[3]]], [[2, 3]]),
    ]


    @pytest.mark.parametrize(("Q", "K", "V", "expected"), CASES)
    def test_combine_heads(Q, K, V, expected):
        got = torch.tensor(solve(Q, K, V), dtype=torch.float64)
        torch.testing.assert_close(
            got, torch.tensor(expected, dtype=torch.float64), rtol=1e-4, atol=1e-4
        )
    """
)


def _time(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    run = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{run.stdout}\n{run.stderr}")
    return elapsed


def end_to_end(rounds: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="lessons-bench-"))
    try:
        lesson = work / "combine_heads"
        shutil.copytree(LESSON, lesson, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(lesson / "reference.py", lesson / "solution.py")
        plain = work / "plain"
        plain.mkdir()
        shutil.copy(lesson / "reference.py", plain / "reference.py")
        (plain / "test_plain.py").write_text(PLAIN_TEST)
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        ours, theirs = [], []
        for _ in range(rounds):
            # The four seed cases only, like the plain file (the lesson also has generated ones).
            ours.append(_time([*base, "combine_heads", "-k", "case-"], work))
            theirs.append(_time([*base, "-p", "no:lessons", "plain"], work))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"1. pytest exercises/combine_heads -k case-: median {a:.2f} s over {rounds} runs")
        print(f"   plain parametrized assert_close:  median {b:.2f} s")
        print(f"   ratio {a / b:.2f}x (target <= 1.0x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def overhead(rounds: int) -> None:
    from pytest_lessons.child import run_case
    from pytest_lessons.runner import ForkRunner, Job

    inputs = [[[[0], [0]], [[1], [1]]], [[[0], [0]], [[0], [5]]], [[[2], [4]], [[10], [30]]]]
    job = Job(LESSON / "reference.py", "solve", inputs, 10.0, 2048.0, 65536, 1)
    runner = ForkRunner()
    try:
        runner.run(job)  # warm: the worker has imported torch
        isolated = []
        for _ in range(rounds):
            started = time.perf_counter()
            outcome = runner.run(job)
            isolated.append(time.perf_counter() - started)
            assert outcome.kind == "returned", outcome
    finally:
        runner.close()
    import torch  # noqa: F401  - the direct call runs with torch already imported, as in the worker

    direct = []
    for _ in range(rounds):
        started = time.perf_counter()
        run_case(job.request())
        direct.append(time.perf_counter() - started)
    a, b = statistics.median(isolated), statistics.median(direct)
    print(f"2. isolated case round trip: median {a * 1000:.1f} ms over {rounds} cases")
    print(f"   direct call (import + solve): median {b * 1000:.1f} ms")
    print(f"   overhead {1000 * (a - b):.1f} ms median (target <= 10 ms)")


def transfer(rounds: int) -> None:
    from pytest_lessons.compare import compare
    from pytest_lessons.runner import ForkRunner, Job

    work = Path(tempfile.mkdtemp(prefix="lessons-bench-"))
    try:
        solution = work / "solution.py"
        solution.write_text(
            "import torch\n\ndef solve(n):\n"
            "    return torch.arange(n * n, dtype=torch.float64).reshape(n, n).tolist()\n"
        )
        expected = [[float(i * 1000 + j) for j in range(1000)] for i in range(1000)]
        job = Job(solution, "solve", [1000], 30.0, 2048.0, 65536, 1)
        runner = ForkRunner()
        runner.run(job)
        sends, compares = [], []
        for _ in range(max(3, rounds // 10)):
            started = time.perf_counter()
            outcome = runner.run(job)
            sent = time.perf_counter()
            verdict = compare(expected, outcome.answer, 1e-4, 1e-4)
            done = time.perf_counter()
            assert verdict.passed
            sends.append(sent - started - outcome.seconds)
            compares.append(done - sent)
        runner.close()
        a, b = statistics.median(sends), statistics.median(compares)
        print(
            f"3. 1,000,000-element answer: transfer {a:.3f} s (excluding solve itself), "
            f"compare {b:.3f} s, total {a + b:.3f} s (target <= 0.5 s)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--only", choices=["1", "2", "3"])
    args = parser.parse_args()
    python = platform.python_version()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {python}")
    if args.only in (None, "1"):
        end_to_end(max(3, args.rounds // 3))
    if args.only in (None, "2"):
        overhead(args.rounds)
    if args.only in (None, "3"):
        transfer(args.rounds)


if __name__ == "__main__":
    main()
