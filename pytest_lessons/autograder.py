"""Gradescope's autograder: ``python -m pytest_lessons gradescope SOURCE SUBMISSION RESULTS``.

Gradescope unpacks a learner's upload in ``SUBMISSION`` and reads ``RESULTS``. This grades a
fresh copy of the course in ``SOURCE/exercises`` with only the learner's solution files in
it: ``<exercise>/solution.py`` for each exercise (also inside an ``exercises/`` folder, as a
zip of the learner's repository holds them), or one ``solution.py`` for an assignment of one
exercise. An exercise the upload holds no file for is graded as not handed in (0 points, said
so), never as the course's stub; a single ``solution.py`` for an assignment of several
exercises is explained at the top of the results. Nothing else of the upload is copied (no
``conftest.py``, no ``pytest.ini``).

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
from pathlib import Path, PurePath

from pytest_lessons.core import model
from pytest_lessons.core.words import plural
from pytest_lessons.isolation import files as learner_files


def _take(submission: Path, relative: PurePath, solution: Path) -> bool:
    """Put the learner's file *relative* (beneath *submission*) in place of *solution*; False
    where they handed in nothing there. The file is read as data, following no link: a link
    (to the lesson's reference, say) is put in place as a link, so the grader tells the
    learner to hand in the file itself instead of grading what it points to."""
    try:
        data = learner_files.read_beneath(submission, relative)
    except learner_files.Unreadable as problem:
        if problem.problem == "missing":
            return False
        solution.unlink(missing_ok=True)
        if problem.problem == "link":
            solution.symlink_to(problem.path)
        elif problem.problem == "too_large":
            # Past the bound whatever its real size, so the grader says it is too large.
            solution.write_bytes(b"#" * (learner_files.MAX_SOURCE_BYTES + 1))
        else:
            solution.mkdir()  # not a plain file: the grader says so
        return True
    solution.write_bytes(data)
    return True


def place(submission: Path, exercises: Path) -> list[str]:
    """Put the learner's files from *submission* into the course copy *exercises*, and remove
    the stub of every exercise they handed in nothing for. Returns what the learner is told
    about the upload itself (empty when it is as asked)."""
    lessons = sorted(toml.parent for toml in exercises.rglob(model.EXERCISE_FILE))
    files: dict[Path, Path] = {}
    for lesson in lessons:
        try:
            files[lesson] = model.load(lesson / model.EXERCISE_FILE).solution
        except model.ExerciseError:
            continue  # graded as broken by pytest, which says why
    flat = submission / "solution.py"
    missing: list[str] = []
    for lesson, solution in files.items():
        name = lesson.relative_to(exercises).as_posix()
        relative = solution.relative_to(lesson)
        candidates = [PurePath(name, relative), PurePath("exercises", name, relative)]
        if len(files) == 1:
            candidates.append(PurePath("solution.py"))
        if not any(_take(submission, candidate, solution) for candidate in candidates):
            solution.unlink(missing_ok=True)
            missing.append(name)
    notes = []
    if flat.is_file() and len(files) > 1:
        names = ", ".join(
            f"{lesson.relative_to(exercises).as_posix()}/{solution.name}"
            for lesson, solution in files.items()
        )
        notes.append(
            f"Upload one folder per exercise, each with its solution.py ({names}): you "
            f"uploaded a single solution.py, and this assignment has {len(files)} exercises, so "
            "it cannot tell which one it is. It was not graded."
        )
    if missing and len(missing) == len(files) and not notes:
        notes.append(
            f"Upload your solution.py in a folder named after its exercise (such as "
            f"{missing[0]}/solution.py): your submission holds no file of this assignment's "
            f"{plural(len(files), 'exercise')}."
        )
    return notes


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
