"""Notebook benchmark (issue 14): what grading a ``%%lesson`` cell costs, against pytest.

    python benchmarks/notebook.py             # combine_heads, 5 gradings of each kind
    python benchmarks/notebook.py --repeat 9

Grades combine_heads (4 written cases, 6 generated) with the reference and with the
missing-transpose mistake, the way the ``%%lesson`` magic does (``notebook.Lessons.grade``: a
fresh Grader over the kernel's one worker), then the same code as solution.py with ``python -m
pytest``, whose json report gives each case's own grading time. The first cell also pays for
the worker's start (its import of torch), once per kernel; the figures after it are medians.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_lessons.notebook import Lessons  # noqa: E402

LESSON = "combine_heads"


def codes() -> dict[str, str]:
    folder = ROOT / "exercises" / LESSON
    mistakes = (folder / "mistakes.py").read_text()
    return {
        "reference": (folder / "reference.py").read_text(),
        "missing transpose": f"{mistakes}\n\nsolve = reshape_without_transpose\n",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "exercises", work / "exercises")
        shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
        lessons = Lessons(cwd=work / "exercises")
        started = time.perf_counter()
        first = lessons.grade(LESSON, codes()["reference"])
        print(f"first cell (worker start included): {time.perf_counter() - started:.2f} s")
        cases = len(first.results)
        for kind, code in codes().items():
            times = [lessons.grade(LESSON, code).seconds for _ in range(args.repeat)]
            cell = statistics.median(times)
            (work / "exercises" / LESSON / "solution.py").write_text(code)
            report = work / "report.json"
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "pytest", f"exercises/{LESSON}", "-q", "-p",
                 "no:cacheprovider", f"--lesson-report={report}", "--lesson-report-format=json"],
                cwd=work, capture_output=True, check=False,
            )  # fmt: skip
            wall = time.perf_counter() - started
            seconds = [r["seconds"] for r in json.loads(report.read_text())["results"]]
            print(
                f"{kind}: a cell {cell:.2f} s ({cell / cases * 1000:.0f} ms a case, median of "
                f"{args.repeat}); pytest's cases {sum(seconds):.2f} s "
                f"(median {statistics.median(seconds) * 1000:.0f} ms a case; the first case waits "
                f"for the worker's start), its whole run {wall:.1f} s"
            )
        lessons.close()


if __name__ == "__main__":
    main()
