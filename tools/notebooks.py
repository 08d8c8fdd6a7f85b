"""Write one notebook per chapter of a course, like exercises/course.ipynb: a ``%%lesson``
cell per lesson with its starter code, under the lesson's task, in the course's order.

    python tools/notebooks.py                 # writes exercises/chapter_01_tensors.ipynb, ...
    python tools/notebooks.py --check         # exit 1, naming each notebook that is stale
    python tools/notebooks.py COURSE_FOLDER   # another course (its course.toml's chapters)

Run it again after a lesson is added to ``course.toml`` or a starter or task changes; a test
(tests/test_notebooks.py) fails while a committed notebook differs from what this writes. The
notebooks are nbformat 4.5 JSON written the way nbformat writes it (one-space indent, sorted
keys), without importing nbformat: the test checks them with nbformat's own validator.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_lessons.core import course, model

#: The course this repository ships.
EXERCISES = Path(__file__).resolve().parents[1] / "exercises"

INTRO = """\
Each lesson has a `%%lesson NAME` cell: write `solve` in it and run the cell. Your code is
graded as `pytest exercises/NAME` grades `solution.py`: it runs in a separate, sandboxed
process (never in this kernel), on every case of the lesson, and a wrong answer says what
went wrong in your terms. The last line of each result is your progress in the course.

Stuck? `%lesson_hints NAME` opens one hint at a time. Once every case passes,
`%lesson_solution NAME` shows the worked solution. Hints and progress are the same ones
`pytest` shows: they are kept in the course's `.pytest_cache`."""

COLAB = """\
# Google Colab only: fetch the course and install its grader (PyTorch is already there).
# COURSE is the course's git address, as your instructor gives it. Elsewhere, where the
# course is already checked out and installed, this cell does nothing.
import sys

COURSE = "https://github.com/your-org/your-course.git"

if "google.colab" in sys.modules:
    !git clone -q --depth 1 {COURSE} /content/course
    %pip install -q "/content/course[notebook]"
    %cd /content/course/exercises"""


def file_name(chapter: course.Chapter) -> str:
    """``chapter_01_tensors.ipynb``: the number first, so a listing shows the course's order."""
    words = re.sub(r"[^a-z0-9]+", "_", chapter.title.lower()).strip("_")
    return f"chapter_{chapter.number:02d}_{words}.ipynb"


def starter(exercise: model.Exercise) -> str:
    """The lesson's ``solution.py`` without its module docstring (which names the file and
    the pytest command; in the notebook the cell is the file)."""
    text = exercise.solution.read_text(encoding="utf-8")
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        text = "\n".join(text.splitlines()[first.end_lineno or 0 :])
    return text.strip("\n") + "\n"


def one_paragraph(text: str) -> str:
    """A task written over several lines of TOML, as one paragraph."""
    return " ".join(text.split())


def cell(kind: str, source: str, number: int) -> dict[str, Any]:
    """One nbformat 4.5 cell; its id is its place, so a rewrite changes nothing else."""
    lines = source.splitlines(keepends=True)
    found: dict[str, Any] = {"cell_type": kind, "id": f"cell-{number}", "metadata": {}}
    found["source"] = lines
    if kind == "code":
        found.update(execution_count=None, outputs=[])
    return found


def notebook(found: course.Course, chapter: course.Chapter) -> dict[str, Any]:
    """The notebook of *chapter*: the introduction, Colab's set-up, the extension, then each
    lesson's task and cell; the first lesson also gets the hints and solution cells."""
    title = f"# Chapter {chapter.number}: {chapter.title}, graded in the notebook"
    sources: list[tuple[str, str]] = [
        ("markdown", f"{title}\n\n{INTRO}"),
        ("code", COLAB),
        ("code", "%load_ext pytest_lessons"),
    ]
    for place, file in enumerate(chapter.lessons, start=1):
        exercise = model.load(file)
        slug = exercise.slug
        heading = f"## Lesson {place}: {exercise.title} (`{slug}`)"
        sources.append(("markdown", f"{heading}\n\n{one_paragraph(exercise.task)}"))
        sources.append(("code", f"%%lesson {slug}\n{starter(exercise)}"))
        if place == 1:
            sources += [
                ("markdown", "Stuck? Each run of the next cell opens one more hint."),
                ("code", f"%lesson_hints {slug}"),
                ("markdown", "Once every case passes, the worked solution opens:"),
                ("code", f"%lesson_solution {slug}"),
            ]
    return {
        "cells": [cell(kind, text, n) for n, (kind, text) in enumerate(sources)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def text(data: dict[str, Any]) -> str:
    """A notebook as nbformat.write writes it."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def notebooks(folder: Path = EXERCISES) -> dict[Path, str]:
    """Each chapter's notebook file in *folder* (the course's) and its text."""
    found = course.load(folder / course.COURSE_FILE)
    return {folder / file_name(c): text(notebook(found, c)) for c in found.chapters}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=EXERCISES)
    parser.add_argument("--check", action="store_true", help="only say which are stale")
    args = parser.parse_args(argv)
    stale = []
    for path, wanted in notebooks(args.folder).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == wanted:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {path}")
    if args.check and stale:
        for path in stale:
            print(f"{path} is stale: run python tools/notebooks.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
