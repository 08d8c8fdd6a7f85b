"""Gradescope's autograder: ``python -m pytest_lessons gradescope SOURCE SUBMISSION RESULTS``.

Gradescope unpacks a learner's upload in ``SUBMISSION`` and reads ``RESULTS``. This grades a
fresh copy of the course in ``SOURCE/exercises`` with only the learner's solution files in
it: ``<exercise>/solution.py`` for each exercise (also inside an ``exercises/`` folder, as a
zip of the learner's repository holds them), or one ``solution.py`` for an assignment of one
exercise. An exercise the upload holds no file for is graded as not handed in (0 points, said
so), never as the course's stub; a single ``solution.py`` for an assignment of several
exercises is explained at the top of the results. Nothing else of the upload is copied (no
``conftest.py``, no ``pytest.ini``), and no link is followed: :func:`pytest_lessons.place.place`
puts the files in place.

pytest runs in a new process, from inside the course's copy, so every path a message names is
the learner's own (``combine_heads/solution.py``). The exit status is 0 when the learner's
results were written (pytest's 0 or 1), else pytest's own: the grader failed, not the
learner.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_lessons.place import place


def grade(source: Path, submission: Path, results: Path, python: str = sys.executable) -> int:
    """Grade *submission* against the course in *source*; write Gradescope's *results*."""
    course = source / "exercises"
    if not course.is_dir():
        print(
            f"pytest-lessons gradescope: the autograder holds no course: file or directory not "
            f"found: exercises (in {source})",
            file=sys.stderr,
        )
        return 4
    with tempfile.TemporaryDirectory(prefix="lessons-gradescope-") as work:
        copy = Path(work, "exercises")
        shutil.copytree(course, copy, ignore=shutil.ignore_patterns("__pycache__"))
        notes = place(submission, copy)
        results.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                python,
                "-m",
                "pytest",
                ".",
                "-p",
                "no:cacheprovider",
                f"--lesson-report={results.resolve()}",
                "--lesson-report-format=gradescope",
            ],
            cwd=copy,
        )
    if done.returncode > 1:
        return done.returncode
    if notes:
        report = json.loads(results.read_text(encoding="utf-8"))
        report["output"] = "\n\n".join([*notes, report.get("output", "")])
        results.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0
