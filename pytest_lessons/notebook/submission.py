"""A learner's notebook as their folder of submissions: ``python -m pytest_lessons.notebook
NOTEBOOK FOLDER`` writes each lesson's last ``%%lesson`` cell as that lesson's
``solution.py``, to grade a class with ``pytest --lesson-submissions``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_lessons.notebook.kernel import NotebookError, split_line


def lesson_cells(notebook_file: Path) -> dict[str, str]:
    """The code of each lesson's last ``%%lesson NAME`` cell in a ``.ipynb`` file, by the
    lesson's folder name: the code the learner last graded (or would have) for it."""
    try:
        data = json.loads(notebook_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise NotebookError(f"{notebook_file}: not a notebook that can be read ({error})") from None
    found: dict[str, str] = {}
    for cell in data.get("cells", []) if isinstance(data, dict) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        first, _, code = text.partition("\n")
        if first.split()[:1] != ["%%lesson"]:
            continue
        words = split_line(first.strip()[len("%%lesson") :])
        if words:
            found[Path(words[0].rstrip("/\\")).name] = code
    return found


def write_submission(
    notebook_file: Path, folder: Path, solution: str = "solution.py"
) -> list[Path]:
    """Write *notebook_file*'s lesson cells as ``folder/<lesson>/solution.py``: one learner's
    folder of ``pytest --lesson-submissions``. Returns the files written."""
    written = []
    for name, code in lesson_cells(notebook_file).items():
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
    try:
        written = write_submission(Path(args[0]), Path(args[1]))
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 1
    for path in written:
        print(path)
    if not written:
        print(f"{args[0]}: no %%lesson cell", file=sys.stderr)
    return 0
