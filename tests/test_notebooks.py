"""The chapter notebooks (exercises/chapter_*.ipynb): what tools/notebooks.py writes from
course.toml, valid by nbformat's own validator, one %%lesson cell per lesson in order."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_lessons.core import course

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "notebooks.py"


def test_the_committed_notebooks_are_what_the_script_writes_and_nbformat_accepts_them(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    nbformat = pytest.importorskip("nbformat")
    found = course.load(ROOT / "exercises" / course.COURSE_FILE)
    written = sorted((ROOT / "exercises").glob("chapter_*.ipynb"))
    assert len(written) == len(found.chapters)
    for path, chapter in zip(written, found.chapters):
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        cells = [c.source.split("\n")[0] for c in notebook.cells if c.cell_type == "code"]
        lessons = [line.split()[1] for line in cells if line.startswith("%%lesson ")]
        assert lessons == [file.parent.name for file in chapter.lessons]
        assert notebook.cells[0].source.startswith(f"# Chapter {chapter.number}: {chapter.title}")
    # A stale notebook is named, and the script's run rewrites it.
    spec = importlib.util.spec_from_file_location("notebooks_tool", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    course_copy = tmp_path / "course"
    for name in ["course_lib", *(f.parent.name for f in found.chapters[0].lessons)]:
        shutil.copytree(ROOT / "exercises" / name, course_copy / name)
    text = (ROOT / "exercises" / "course.toml").read_text()
    # Chapter 1 alone: the library's parts and loans of later chapters are not its lessons.
    head, library = text.split("[library]")[0], '[library]\nfolder = "course_lib"\n\n'
    first = text.split("[[chapter]]")[1]
    (course_copy / "course.toml").write_text(f"{head}{library}[[chapter]]{first}")
    assert tool.main([str(course_copy), "--check"]) == 1
    assert tool.main([str(course_copy)]) == 0
    assert tool.main([str(course_copy), "--check"]) == 0
    assert [p.name for p in course_copy.glob("*.ipynb")] == ["chapter_01_tensors.ipynb"]
