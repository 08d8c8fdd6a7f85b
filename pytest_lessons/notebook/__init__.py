"""Grade lessons from Jupyter or Colab: the IPython extension ``%load_ext pytest_lessons``.

A second front end on the grading core, beside the pytest plugin. A ``%%lesson NAME`` cell's
code is written to a private file outside the course and graded as that lesson's
``solution.py`` would be by ``pytest exercises/NAME``: by the same :class:`~pytest_lessons.
core.grader.Grader`, in the same isolated, sandboxed worker, never in the kernel. Hints, passes
and progress live in pytest's own cache folder of the course (``.pytest_cache`` in pytest's
root folder), read and written as pytest does, so ``--lesson-hints`` and ``%lesson_hints``
open the same hints one at a time.

The package's modules, by job: :mod:`.magics` (the magics, each a few lines),
:mod:`.kernel` (:class:`Lessons`, the state of one kernel: finding lessons, run settings,
the worker), :mod:`.display` (what a cell shows), :mod:`.pytest_files` (pytest's root,
ini and cache folder, without pytest) and :mod:`.submission` (a notebook as a learner's
submission folder). Its rules are the core's (:mod:`pytest_lessons.core.frontend`), shared
with the terminal.

Import rule: the notebook front end imports the core, the isolation layer's runner and
sandbox, and its own modules; never pytest, torch, IPython or the pytest front end
(``tests/test_layers.py`` checks it). Magics are registered through the shell object IPython
hands to :func:`load_ipython_extension`, and results are shown through the ``_repr_html_``
protocol, so nothing here needs IPython's own modules.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pytest_lessons.notebook import magics
from pytest_lessons.notebook.display import Feedback, Shown, Text
from pytest_lessons.notebook.kernel import (
    CELL,
    COURSE_ENV,
    Lesson,
    Lessons,
    NotebookError,
    find_course,
    find_lesson,
    grade_cells,
    magic_words,
)
from pytest_lessons.notebook.magics import (
    lesson_cell,
    lesson_course,
    lesson_hints,
    lesson_solution,
    lessons,
)
from pytest_lessons.notebook.pytest_files import PytestCache, cache_of, pytest_root
from pytest_lessons.notebook.submission import lesson_cells, main, write_submission

__all__ = [
    "CELL",
    "COURSE_ENV",
    "Feedback",
    "Lesson",
    "Lessons",
    "NotebookError",
    "PytestCache",
    "Shown",
    "Text",
    "cache_of",
    "find_course",
    "find_lesson",
    "grade_cells",
    "lesson_cell",
    "lesson_cells",
    "lesson_course",
    "lesson_hints",
    "lesson_solution",
    "lessons",
    "load_ipython_extension",
    "magic_words",
    "main",
    "pytest_root",
    "unload_ipython_extension",
    "write_submission",
]


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics with *ipython* (``%load_ext pytest_lessons``)."""
    ipython.register_magic_function(lesson_cell, "cell", "lesson")
    ipython.register_magic_function(lesson_hints, "line", "lesson_hints")
    ipython.register_magic_function(lesson_solution, "line", "lesson_solution")
    ipython.register_magic_function(lesson_course, "line", "lesson_course")


def unload_ipython_extension(ipython: Any) -> None:
    """Stop the worker (``%unload_ext pytest_lessons``)."""
    magics.forget()
    with contextlib.suppress(Exception):
        registered = ipython.magics_manager.magics
        for kind, name in (
            ("cell", "lesson"),
            ("line", "lesson_hints"),
            ("line", "lesson_solution"),
            ("line", "lesson_course"),
        ):
            registered[kind].pop(name, None)
