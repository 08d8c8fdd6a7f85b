"""Isolation benchmarks. Run from the repository root:

    python benchmarks/isolation.py                 # 1 to 3
    python benchmarks/isolation.py --rounds 10
    python benchmarks/isolation.py --only 4        # spawn mode against fork (about 3 minutes)
    python benchmarks/isolation.py --only 5        # huge pages and the cost of a fork (Linux)
    python benchmarks/isolation.py --only 6        # closing the sandbox (Linux with Landlock)

1. ``pytest exercises/combine_heads`` with a right solution, against a hand-written parametrized
   pytest file of the same four cases using ``torch.testing.assert_close``; the two commands
   alternate, each in a fresh process, and the ratio of medians is printed (target <= 1.0).
2. Isolation overhead per case: fork + fresh import of the learner's file + transfer, measured
   as the runner's round trip minus a direct call of the same ``solve``, imported once
   beforehand (target <= 10 ms median). The two alternate, one call each per round.
3. Transfer and comparison of a 1,000,000-element answer (target <= 0.5 s).
4. The 10 cases of combine_heads (the figures of docs/instructors/sandbox.md): ``pytest`` end
   to end with fork and with spawn, alternating; and the runner alone in spawn mode, with
   Pythons started ahead against each started only when its case is due.
5. Fork and exit of a process that has imported torch, with and without the worker's huge
   pages (``worker._huge_pages``): fresh processes of each kind alternate.
6. Closing the sandbox in a case's child: ``confine()`` timed in children forked from a
   process holding torch, with the fixed rules built ahead as the fork server does, and cold
   (target <= 1 ms; see benchmarks/sandbox.py).
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
from typing import Any

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
    import importlib.util
    import json

    import torch  # noqa: F401  - the direct call runs with torch already imported, as in the worker

    from pytest_lessons.isolation import sandbox
    from pytest_lessons.isolation.runner import ForkRunner, Job

    inputs = [[[[0], [0]], [[1], [1]]], [[[0], [0]], [[0], [5]]], [[[2], [4]], [[10], [30]]]]
    # In the sandbox, as a graded case runs (where this system has one).
    support = sandbox.probe()
    policy = sandbox.make_policy(support, os.environ, user=None).for_course([LESSON], ROOT)
    job = Job(LESSON / "reference.py", "solve", inputs, 10.0, 2048.0, 65536, 1, sandbox=policy)
    # The baseline: the learner's solve imported once, then called on a fresh copy of the
    # inputs, so the fork, the per-case import and the transfer are all in the difference.
    spec = importlib.util.spec_from_file_location("bench_reference", job.solution)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    solve = module.solve
    runner = ForkRunner()
    isolated, direct = [], []
    try:
        runner.run(job)  # warm: the worker has imported torch
        solve(*json.loads(json.dumps(inputs)))
        for _ in range(rounds):
            started = time.perf_counter()
            outcome = runner.run(job)
            isolated.append(time.perf_counter() - started)
            assert outcome.kind == "returned", outcome
            started = time.perf_counter()
            solve(*json.loads(json.dumps(inputs)))
            direct.append(time.perf_counter() - started)
    finally:
        runner.close()
    a, b = statistics.median(isolated), statistics.median(direct)
    boxed = f"sandbox Landlock ABI {support.abi}" if support.abi else "no sandbox here"
    print(f"2. isolated case round trip ({boxed}): median {a * 1000:.1f} ms over {rounds} cases")
    print(f"   direct call of the imported solve: median {b * 1000:.2f} ms")
    print(f"   overhead {1000 * (a - b):.1f} ms median (target <= 10 ms)")


def transfer(rounds: int) -> None:
    from pytest_lessons.core.compare import compare
    from pytest_lessons.isolation.runner import ForkRunner, Job

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


def _spread(times: list[float]) -> str:
    return f"median {statistics.median(times):.1f} s (min {min(times):.1f}, max {max(times):.1f})"


def spawn_against_fork(rounds: int) -> None:
    from pytest_lessons.core import model
    from pytest_lessons.isolation.runner import Job, SpawnRunner

    work = Path(tempfile.mkdtemp(prefix="lessons-bench-"))
    try:
        lesson = work / "combine_heads"
        shutil.copytree(LESSON, lesson, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(lesson / "reference.py", lesson / "solution.py")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "combine_heads"]
        fork, spawn = [], []
        for _ in range(rounds):
            fork.append(_time([*base, "--lesson-isolation=fork"], work))
            spawn.append(_time([*base, "--lesson-isolation=spawn"], work))
        print(f"4. pytest combine_heads (10 cases), {rounds} runs each, alternating:")
        print(f"   fork  {_spread(fork)}")
        print(f"   spawn {_spread(spawn)}")
        exercise = model.load(lesson / "exercise.toml")
        jobs = [
            Job(
                lesson / "solution.py",
                "solve",
                [c.inputs[n] for n in exercise.inputs],
                10.0,
                2048.0,
                65536,
                1,
            )
            for c in exercise.cases
        ]

        class WhenDue(SpawnRunner):
            """Each case's Python started only when the case is due: nothing ahead."""

            def warm_up(self) -> None:
                pass

            def run(self, job: Job) -> Any:
                self._waiting.append(self._start())
                return super().run(job)

        ahead, due = [], []
        for _ in range(rounds):
            for kind, times in ((SpawnRunner, ahead), (WhenDue, due)):
                runner = kind()
                started = time.perf_counter()
                try:
                    for job in jobs:
                        outcome = runner.run(job)
                        assert outcome.kind == "returned", outcome
                finally:
                    runner.close()
                times.append(time.perf_counter() - started)
        print(f"   the runner alone, {len(jobs)} cases in spawn mode, {rounds} runs each:")
        print(f"   started ahead     {_spread(ahead)}")
        print(f"   started when due  {_spread(due)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


FORK_PROBE = """
import gc, os, statistics, sys, time
import torch
from pytest_lessons.isolation.worker import _huge_pages

x = torch.nn.functional.scaled_dot_product_attention(*(torch.rand(2, 4, 8) for _ in range(3)))
gc.freeze()
if sys.argv[1] == "huge":
    _huge_pages()
times = []
for _ in range(int(sys.argv[2])):
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    times.append(time.perf_counter() - started)
print(statistics.median(times))
"""


def huge_pages(rounds: int) -> None:
    if not sys.platform.startswith("linux"):
        print("5. huge pages: Linux only")
        return
    results: dict[str, list[float]] = {"plain": [], "huge": []}
    for _ in range(max(3, rounds // 5)):
        for kind in results:
            run = subprocess.run(
                [sys.executable, "-c", FORK_PROBE, kind, "50"],
                capture_output=True,
                text=True,
                check=True,
            )
            results[kind].append(float(run.stdout.split()[-1]))
    a, b = (statistics.median(results[k]) for k in ("plain", "huge"))
    print(
        f"5. fork and exit of a process that imported torch (median of 50 forks, "
        f"{len(results['plain'])} processes each): {a * 1000:.1f} ms -> {b * 1000:.1f} ms "
        "with huge pages"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--only", choices=["1", "2", "3", "4", "5", "6"])
    args = parser.parse_args()
    python = platform.python_version()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {python}")
    if args.only in (None, "1"):
        end_to_end(max(3, args.rounds // 3))
    if args.only in (None, "2"):
        overhead(args.rounds)
    if args.only in (None, "3"):
        transfer(args.rounds)
    if args.only == "4":
        spawn_against_fork(max(3, args.rounds // 10))
    if args.only == "5":
        huge_pages(args.rounds)
    if args.only in (None, "6"):
        # What closing the sandbox costs a case, inside the overhead of 2 (benchmarks/sandbox.py).
        sys.path.insert(0, str(Path(__file__).parent))
        import sandbox as sandbox_benchmark

        sandbox_benchmark.confine_cost(args.rounds)


if __name__ == "__main__":
    main()
