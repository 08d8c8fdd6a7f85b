"""``python -m pytest_lessons place LEARNER EXERCISES``: a learner's solution files put into a
grading copy of the course, read as data and following no link.

A recipe grades a learner's files in a copy of the course that holds what the learner must
not have: the reference, the hidden cases. Copying the learner's files there with ``cp``
follows links, so a committed ``solution.py`` that is a link to the grading copy's
``reference.py`` (or a lesson folder that is a link) would be graded as the reference. Here
each exercise's solution file is read beneath the learner's folder with
:func:`pytest_lessons.isolation.files.read_beneath`, as a class run reads it: no link is
followed, neither the file nor a folder on its way. A link is put in place as a link, so the
grader tells that learner to hand in the file itself ("Hand in combine_heads/solution.py
itself, not a link ..."), exactly as in a class run, and grades nothing it points to.

Which file of the learner's folder is an exercise's: ``<exercise>/solution.py``, or
``exercises/<exercise>/solution.py`` (a learner's repository, a zip of it), or, for a course of
one exercise, one ``solution.py`` (the exercise's ``solution`` name, ``solution.py`` unless its
``exercise.toml`` says otherwise). An exercise the learner's folder holds no file for loses the
copy's stub, so it is graded as not handed in, never as the course's stub. Nothing else of
the learner's folder is copied (no ``conftest.py``, no ``pytest.ini``).

The Classroom recipe (docs/recipes/github-classroom) calls the command; the Gradescope
autograder (:mod:`pytest_lessons.autograder`) calls :func:`place`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePath

from pytest_lessons.core import model
from pytest_lessons.core.words import plural
from pytest_lessons.isolation import files as learner_files

#: Exit statuses of the command, as ``--help`` gives them.
EXIT_STATUS = """\
exit status:
  0  the learner's files were placed (links, missing files and all: the grading says so)
  2  a usage error
  4  EXERCISES is not a folder: nothing was placed
"""


def take(submission: Path, relative: PurePath, solution: Path) -> bool:
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
    solution.unlink(missing_ok=True)  # never write through a link the copy may hold
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
        if not any(take(submission, candidate, solution) for candidate in candidates):
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


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``place`` command, added to ``python -m pytest_lessons``'s commands."""
    command = commands.add_parser(
        "place",
        help="Put a learner's solution files into a grading copy of the course, following no link.",
        description="Put each exercise's solution file from the learner's folder LEARNER "
        "(<exercise>/solution.py, exercises/<exercise>/solution.py, or one solution.py for a "
        "course of one exercise) into the grading copy EXERCISES, in place of its stub. Each "
        "file is read as data, following no link: a link, or a file inside a linked folder, "
        "is placed as a link, and grading tells the learner to hand in the file itself. An "
        "exercise LEARNER has no file for loses its stub (graded as not handed in). Nothing "
        "else of LEARNER is copied.",
        epilog=EXIT_STATUS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("learner", type=Path, help="the learner's folder (a checkout, an upload)")
    command.add_argument(
        "exercises", type=Path, help="the grading copy's exercises/ folder, changed in place"
    )


def run(args: argparse.Namespace) -> int:
    """The ``place`` command on parsed *args*; its exit status (:data:`EXIT_STATUS`)."""
    exercises: Path = args.exercises
    if not exercises.is_dir():
        print(
            "pytest-lessons place: the grading copy holds no course: file or directory not "
            f"found: {exercises.name} (in {exercises.parent})",
            file=sys.stderr,
        )
        return 4
    for note in place(args.learner, exercises):
        print(note)
    return 0
