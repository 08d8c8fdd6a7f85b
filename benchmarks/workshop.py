"""The whole workshop on one machine (issue 41): every lesson of ``exercises/``, graded the way
a learner runs it (``pytest exercises``), twice over:

    python benchmarks/workshop.py              # 3 rounds of each, alternating
    python benchmarks/workshop.py --rounds 1

- **references**: each lesson's ``solution.py`` is its ``reference.py`` (a learner who has
  solved the whole course; every case passes, pytest exits 0). Target: 30 s wall.
- **starters**: the course as shipped, every ``solution.py`` the starter (what a learner's
  first ``pytest exercises`` runs; no case passes, pytest exits 1). Target: 20 s wall.

Each run is a fresh ``python -m pytest`` on a copy of the course in a temporary folder, with
the default isolation and sandbox. Printed: the median wall time, the CPU time of the whole
process tree, the machine's load before the runs, and pytest's own count of cases. A run
whose exit status is not the expected one stops the benchmark: a course that failed fast
cannot read as a fast course.
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
COURSE = ROOT / "exercises"


def copy_course(work: Path, references: bool) -> Path:
    """The course under *work*, its solutions the references when *references*."""
    course = work / ("references" if references else "starters") / "exercises"
    shutil.copytree(COURSE, course, ignore=shutil.ignore_patterns("__pycache__", ".*cache*"))
    if references:
        for reference in course.glob("*/reference.py"):
            shutil.copyfile(reference, reference.with_name("solution.py"))
    return course


def run(course: Path, expect: int) -> tuple[float, float, str]:
    """Wall time, CPU time of the process tree, and pytest's last line of one graded run."""
    command = [sys.executable, "-m", "pytest", "exercises", "-q", "-p", "no:cacheprovider"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=course.parent, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        raise SystemExit(
            f"pytest exited {done.returncode}, not {expect}:\n{done.stdout[-4000:]}\n{done.stderr}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    return elapsed, cpu, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lessons-workshop-"))
    try:
        ways = {
            "references": (copy_course(work, True), 0, 30.0),
            "starters": (copy_course(work, False), 1, 20.0),
        }
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        runs: dict[str, list[tuple[float, float, str]]] = {way: [] for way in ways}
        for _ in range(args.rounds):
            for way, (course, expect, _) in ways.items():
                runs[way].append(run(course, expect))
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load {load:.2f} before")
        for way, (_, _, target) in ways.items():
            walls = [wall for wall, _, _ in runs[way]]
            cpu = statistics.median(c for _, c, _ in runs[way])
            print(
                f"{way:>10}: {statistics.median(walls):5.1f} s wall (target <= {target:.0f} s; "
                f"each {', '.join(f'{w:.1f}' for w in walls)}), {cpu:5.1f} s CPU; "
                f"{runs[way][-1][2]}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
