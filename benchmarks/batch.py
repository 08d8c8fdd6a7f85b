"""Batch grading benchmark (issue 5): 40 submissions of combine_heads, serial vs ``-n 2``.

    python benchmarks/batch.py              # 40 learners, 3 rounds each way
    python benchmarks/batch.py --learners 20 --rounds 1

Each run is a fresh ``python -m pytest`` process; the two ways alternate. The learners are a
mix: right, missing transpose, causal mask, stub. Target: ``-n 2`` at least 1.7x faster on
2 cores. Also printed: how many cores each way kept busy (CPU time of the whole process tree
over wall time). A serial run that already keeps c cores busy caps the speed-up of ``-n 2`` on
2 cores at 2/c.

Every run must give the same gradebook, and the expected one: the right answers full marks,
the stubs none. pytest must exit 1 (some learners fail), never anything else. A broken
parallel run that failed everything fast cannot read as a speed-up.
"""

from __future__ import annotations

import argparse
import csv
import io
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


def run(work: Path, extra: list[str]) -> tuple[float, float, str]:
    """Wall time of one grading run, the CPU time of its whole process tree, its gradebook."""
    (work / "grades.csv").unlink(missing_ok=True)
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
    if done.returncode != 1:  # the class has stubs: exactly "some cases failed"
        raise SystemExit(f"pytest exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, (work / "grades.csv").read_text()


def check_gradebook(book: str, learners: int) -> None:
    """The gradebook a right grading gives: right answers 10 of 10, stubs 0, each learner once."""
    rows = {row["learner"]: row for row in csv.DictReader(io.StringIO(book))}
    if len(rows) != learners:
        raise SystemExit(f"the gradebook has {len(rows)} learners, not {learners}:\n{book}")
    for n in range(learners):
        row = rows[f"learner{n:02d}"]
        want = {0: "10", len(KINDS) - 1: "0"}.get(n % len(KINDS))
        if want is not None and row["points"] != want:
            raise SystemExit(f"learner{n:02d} got {row['points']} points, not {want}:\n{book}")


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
        books = {book for _, _, book in serial + parallel}
        if len(books) != 1:
            raise SystemExit("serial and -n 2 gave different gradebooks:\n" + "\n".join(books))
        check_gradebook(books.pop(), args.learners)
        a, b = (statistics.median(wall for wall, _, _ in runs) for runs in (serial, parallel))
        busy_a, busy_b = (
            statistics.median(cpu / wall for wall, cpu, _ in runs) for runs in (serial, parallel)
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
