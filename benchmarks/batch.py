"""Batch grading benchmark (issue 5): 40 submissions of combine_heads, serial vs ``-n 2``.

    python benchmarks/batch.py              # 40 learners, 3 rounds each way
    python benchmarks/batch.py --learners 20 --rounds 1

Each run is a fresh ``python -m pytest`` process; the two ways alternate. The learners are a
mix: right, missing transpose, causal mask, stub. Target: ``-n 2`` at least 1.7x faster on
2 cores. Also printed: how many cores each way kept busy (CPU time of the whole process tree
over wall time). A serial run that already keeps c cores busy caps the speed-up of ``-n 2`` on
2 cores at 2/c.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "exercises" / "combine_heads"

KINDS = [
    (LESSON / "reference.py").read_text(),
    "from mistakes_copy import reshape_without_transpose as solve\n",
    "from mistakes_copy import with_causal_mask as solve\n",
    (LESSON / "solution.py").read_text(),
]


def make_class(work: Path, learners: int) -> Path:
    submissions = work / "submissions"
    for n in range(learners):
        folder = submissions / f"learner{n:02d}" / "combine_heads"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(KINDS[n % len(KINDS)])
        shutil.copy(LESSON / "mistakes.py", folder / "mistakes_copy.py")
    shutil.copytree(
        LESSON, work / "exercises" / "combine_heads", ignore=shutil.ignore_patterns("__pycache__")
    )
    return submissions


def run(work: Path, extra: list[str]) -> tuple[float, float]:
    """Wall time of one grading run, and the CPU time of its whole process tree."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "exercises",
        "-q",
        "-p",
        "no:cacheprovider",
        "--lesson-submissions=submissions",
        "--lesson-gradebook=grades.csv",
        *extra,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest failed:\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lessons-batch-"))
    try:
        make_class(work, args.learners)
        serial, parallel = [], []
        for _ in range(args.rounds):
            serial.append(run(work, []))
            parallel.append(run(work, ["-n", "2"]))
        a, b = (statistics.median(wall for wall, _ in runs) for runs in (serial, parallel))
        busy_a, busy_b = (
            statistics.median(cpu / wall for wall, cpu in runs) for runs in (serial, parallel)
        )
        cases = args.learners * 10
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores")
        print(
            f"{args.learners} submissions ({cases} cases): serial {a:.1f} s, -n 2 {b:.1f} s, "
            f"speed-up {a / b:.2f}x (target >= 1.7x)"
        )
        print(
            f"cores kept busy: serial {busy_a:.2f}, -n 2 {busy_b:.2f} "
            f"(so on 2 cores -n 2 can be at most {2 / busy_a:.2f}x faster)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
