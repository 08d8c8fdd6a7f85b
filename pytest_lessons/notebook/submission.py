"""A learner's notebook as their folder of submissions: ``python -m pytest_lessons.notebook
NOTEBOOK FOLDER`` writes each lesson's last ``%%lesson`` cell as that lesson's
``solution.py``, to grade a class with ``pytest --lesson-submissions``."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_lessons.isolation.text import visible
from pytest_lessons.notebook.kernel import NotebookError, split_line

#: A lesson's name as a ``%%lesson`` cell may give it: a lesson folder's name (letters,
#: digits, ``_`` and ``-``), never ``.``, ``..``, a file's name or a path's way out.
LESSON_NAME = re.compile(r"\w[\w-]*")


def lesson_name(argument: str) -> str | None:
    """The lesson a ``%%lesson`` cell's *argument* names: the name itself, or the last folder
    of a lesson folder's path (``./combine_heads/``, as the kernel takes it); None when that
    is no lesson's name."""
    name = re.split(r"[/\\]", argument.rstrip("/\\"))[-1]
    return name if LESSON_NAME.fullmatch(name) else None


def refusal(cell: int, argument: str) -> str:
    """Why the *cell*-th cell (from 1) was not handed in, in the learner's words."""
    return (
        f"cell {cell}: write the lesson's name after %%lesson, such as `%%lesson "
        f"combine_heads`: `{argument}` is no lesson's name (a lesson's folder name: letters, "
        "digits, _ and -). This cell's code was not handed in."
    )


def lesson_cells(notebook_file: Path, refused: list[str] | None = None) -> dict[str, str]:
    """The code of each lesson's last ``%%lesson NAME`` cell in a ``.ipynb`` file, by the
    lesson's folder name: the code the learner last graded (or would have) for it. A cell
    whose argument names no lesson (:func:`lesson_name`) is left out, and *refused* gets
    why."""
    try:
        data = json.loads(notebook_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise NotebookError(f"{notebook_file}: not a notebook that can be read ({error})") from None
    found: dict[str, str] = {}
    cells = data.get("cells", []) if isinstance(data, dict) else []
    for number, cell in enumerate(cells if isinstance(cells, list) else [], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(str(t) for t in text) if isinstance(text, list) else str(text)
        first, _, code = text.partition("\n")
        if first.split()[:1] != ["%%lesson"]:
            continue
        words = split_line(first.strip()[len("%%lesson") :])
        if not words:
            continue
        name = lesson_name(words[0])
        if name is None:
            if refused is not None:
                refused.append(refusal(number, visible(words[0])))
            continue
        found[name] = code
    return found


def write_submission(
    notebook_file: Path,
    folder: Path,
    solution: str = "solution.py",
    refused: list[str] | None = None,
) -> list[Path]:
    """Write *notebook_file*'s lesson cells as ``folder/<lesson>/solution.py``: one learner's
    folder of ``pytest --lesson-submissions``. Returns the files written; *refused* gets why
    each cell that names no lesson was not."""
    written = []
    for name, code in lesson_cells(notebook_file, refused).items():
        target = folder / name / solution
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_lessons.notebook NOTEBOOK FOLDER``: a learner's notebook as their
    folder of submissions, to grade a class with ``pytest --lesson-submissions``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0].startswith("-"):
        print(
            "usage: python -m pytest_lessons.notebook NOTEBOOK.ipynb SUBMISSIONS/LEARNER\n"
            "Writes the code of each lesson's last %%lesson cell as LEARNER/<lesson>/solution.py.",
            file=sys.stderr,
        )
        return 2
    refused: list[str] = []
    try:
        written = write_submission(Path(args[0]), Path(args[1]), refused=refused)
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 1
    for path in written:
        print(path)
    for why in refused:
        print(visible(f"{args[0]}: {why}"), file=sys.stderr)
    if not written:
        print(f"{args[0]}: no %%lesson cell", file=sys.stderr)
    return 0
