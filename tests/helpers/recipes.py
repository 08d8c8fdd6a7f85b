"""A class laid out as the recipes' container sees it: the course, the work folder with one
submission folder per learner, and a PATH whose ``python`` is the one under test."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from .lessons import DOUBLE_TOML, dedent


def container_class(root: Path, codes: list[str | None]) -> tuple[Path, Path, dict[str, str]]:
    """Under *root*: ``course/double`` and ``work/submissions/l0..`` (learner *n* hands in
    ``codes[n]`` as its ``double/solution.py``, nothing for None), and a ``bin`` folder first
    on PATH. Returns the course, the work folder, and the environment the recipes' scripts
    read (``LESSONS_WORK``, ``LESSONS_COURSE``); put scripts in ``PATH``'s first folder."""
    course, work, bin_ = root / "course", root / "work", root / "bin"
    (course / "double").mkdir(parents=True)
    (course / "double" / "exercise.toml").write_text(dedent(DOUBLE_TOML))
    for n, code in enumerate(codes):
        folder = work / "submissions" / f"l{n}"
        folder.mkdir(parents=True)
        if code is not None:
            (folder / "double").mkdir()
            (folder / "double" / "solution.py").write_text(code)
    bin_.mkdir()
    (bin_ / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    (bin_ / "python").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}",
        "LESSONS_WORK": str(work),
        "LESSONS_COURSE": str(course),
    }
    return course, work, env
