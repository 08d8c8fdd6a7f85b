"""Batch grading benchmark (issues 5 and 13): 40 submissions of combine_heads, graded by the
documented command on one core (``taskset -c 0``), on every core (its default: as many workers
as usable CPUs, in one pytest), and with ``-n 2`` (pytest-xdist).

    python benchmarks/batch.py              # 40 learners, 3 rounds each way
    python benchmarks/batch.py --learners 20 --rounds 1
    python benchmarks/batch.py --isolation spawn   # macOS's and Windows's way (issue 41)

Each run is a fresh ``python -m pytest`` process; the ways alternate. The learners are a
mix: right, missing transpose, causal mask, stub; the class table must name both mistakes.
Target (issue 13): every core at least 1.6x faster than one core on 2 cores. Also printed:
how many cores each way kept busy (CPU time of the whole process tree over wall time) and
cases graded per second per core.

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
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "exercises" / "combine_heads"

# A learner's code is one file: the sandbox lets it read nothing else of its folder, so the
# mistakes are the lesson's own mistake functions copied in, not imported.
MISTAKES = (LESSON / "mistakes.py").read_text()
KINDS = [
    (LESSON / "reference.py").read_text(),
    MISTAKES + "\n\nsolve = reshape_without_transpose\n",
    MISTAKES + "\n\nsolve = with_causal_mask\n",
    (LESSON / "solution.py").read_text(),
]


def make_class(work: Path, learners: int) -> Path:
    submissions = work / "submissions"
    for n in range(learners):
        folder = submissions / f"learner{n:02d}" / "combine_heads"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(KINDS[n % len(KINDS)])
    shutil.copytree(
        LESSON, work / "exercises" / "combine_heads", ignore=shutil.ignore_patterns("__pycache__")
    )
    return submissions


def run(work: Path, extra: list[str], prefix: Sequence[str] = ()) -> tuple[float, float, str]:
    """Wall time of one grading run, the CPU time of its whole process tree, its gradebook."""
    (work / "grades.csv").unlink(missing_ok=True)
    command = [
        *prefix,
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
    for named in ("watch out: missing-transpose", "watch out: causal-mask"):
        if named not in done.stdout:  # each mistake must be graded as such, not crash
            raise SystemExit(f"the class table lacks {named!r}:\n{done.stdout}")
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
    parser.add_argument("--isolation", choices=["auto", "fork", "spawn"], default="auto")
    args = parser.parse_args()
    isolation = [f"--lesson-isolation={args.isolation}"]
    work = Path(tempfile.mkdtemp(prefix="lessons-batch-"))
    try:
        make_class(work, args.learners)
        ways: dict[str, tuple[list[str], list[str]]] = {
            "one core": (["taskset", "-c", "0"], isolation),
            "every core": ([], isolation),
            "-n 2": ([], ["-n", "2", *isolation]),
        }
        if shutil.which("taskset") is None:
            raise SystemExit("needs taskset (util-linux) to pin the one-core run")
        runs: dict[str, list[tuple[float, float, str]]] = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, (prefix, extra) in ways.items():
                runs[way].append(run(work, extra, prefix))
        books = {book for results in runs.values() for _, _, book in results}
        if len(books) != 1:
            raise SystemExit("the ways gave different gradebooks:\n" + "\n".join(books))
        check_gradebook(books.pop(), args.learners)
        cases = args.learners * 10
        wall = {way: statistics.median(w for w, _, _ in results) for way, results in runs.items()}
        busy = {
            way: statistics.median(c / w for w, c, _ in results) for way, results in runs.items()
        }
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores")
        for way in ways:
            print(
                f"{way:>10}: {wall[way]:5.1f} s, {cases / wall[way]:5.1f} cases/s, "
                f"cores kept busy {busy[way]:.2f}, "
                f"{cases / wall[way] / max(busy[way], 1e-9):.1f} cases/s per busy core"
            )
        print(
            f"every core vs one core: {wall['one core'] / wall['every core']:.2f}x "
            f"(target >= 1.6x); -n 2 vs one core: {wall['one core'] / wall['-n 2']:.2f}x"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
