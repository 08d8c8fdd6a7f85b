"""Batch grading benchmark (issue 5): 40 submissions of combine_heads, serial vs ``-n 2``.

    python benchmarks/batch.py              # 40 learners, 3 rounds each way
    python benchmarks/batch.py --learners 20 --rounds 1

Each run is a fresh ``python -m pytest`` process; the two ways alternate. The learners are a
mix: right, missing transpose, causal mask, stub. Target: ``-n 2`` at least 1.7x faster on
2 cores.
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


def run(work: Path, extra: list[str]) -> float:
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
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest failed:\n{done.stdout}\n{done.stderr}")
    return elapsed


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
        a, b = statistics.median(serial), statistics.median(parallel)
        cases = args.learners * 10
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores")
        print(
            f"{args.learners} submissions ({cases} cases): serial {a:.1f} s, -n 2 {b:.1f} s, "
            f"speed-up {a / b:.2f}x (target >= 1.7x)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
