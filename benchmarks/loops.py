"""Loop benchmark (issue 11): a solution that loops on every case of a 10-case lesson.

    python benchmarks/loops.py                  # the default limit, 10 s a case
    python benchmarks/loops.py --timeout 3

Runs combine_heads (4 written cases, 6 generated) three ways, each a fresh ``python -m pytest``:
the stub (start-up and grading, no timeout), ``while True: pass`` as one learner, and the same
loop for 4 learners of a class (``--lesson-submissions``). Target: a looping learner costs at
most 2x the per-case limit plus start-up, because once an exercise's timeouts have spent 2x the
limit its remaining cases are reported as not run.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "exercises" / "combine_heads"
LOOP = "def solve(Q, K, V):\n    while True:\n        pass\n"


def run(work: Path, timeout: float, *extra: str) -> float:
    command = [sys.executable, "-m", "pytest", "exercises", "-q", "-p", "no:cacheprovider"]
    command += [f"--lesson-timeout={timeout:g}", *extra]
    started = time.perf_counter()
    subprocess.run(command, cwd=work, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lesson = work / "exercises" / "combine_heads"
        shutil.copytree(LESSON, lesson, ignore=shutil.ignore_patterns("__pycache__"))
        stub = run(work, args.timeout)
        (lesson / "solution.py").write_text(LOOP)
        loop = run(work, args.timeout)
        (lesson / "solution.py").write_text((LESSON / "solution.py").read_text())
        for n in range(4):
            folder = work / "submissions" / f"learner{n}" / "combine_heads"
            folder.mkdir(parents=True)
            (folder / "solution.py").write_text(LOOP)
        batch = run(work, args.timeout, "--lesson-submissions=submissions")
    limit = 2 * args.timeout
    print(f"per-case limit {args.timeout:g} s; budget 2 x limit = {limit:g} s")
    print(f"stub (start-up + grading, no timeout): {stub:6.1f} s")
    print(f"one looping learner, 10 cases:         {loop:6.1f} s  (target <= {limit + stub:.1f})")
    print(f"4 looping learners, 10 cases each:     {batch:6.1f} s  (4 x {limit:g} s + start-up)")


if __name__ == "__main__":
    main()
