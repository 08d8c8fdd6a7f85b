"""Every report format and gradebook layout, one row each: the one list that the options,
the merge command and the writer read.

A :class:`Format` row says what the rest of the code used to ask four places for: the
renderer, whether its file holds one learner or a whole class (a class run writes a
``holds="learner"`` format once per learner), and the phrase ``--help`` shows for it. A
:class:`Layout` row does the same for a gradebook. To add a format: one row here, one renderer
in :mod:`~pytest_lessons.reports.formats`, one consumer test in tests/test_consumers.py and
its row in docs/ci-grading.md (docs/contributors/recipes.md, "Add a report format", lists
every place). This module imports neither pytest nor torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_lessons.core.results import CaseResult
from pytest_lessons.reports import formats, gradebook
from pytest_lessons.reports.formats import Options


@dataclass(frozen=True)
class Format:
    """A report format: its name (``--lesson-report-format=NAME``) and how to write it."""

    name: str
    render: Callable[[Sequence[CaseResult], Options], str]
    """Results (and the run's :class:`~pytest_lessons.reports.formats.Options`) to the file's
    text."""
    holds: Literal["learner", "class"]
    """``learner``: the file holds one learner (a class run writes one per learner, and needs
    ``{learner}`` in the report's path); ``class``: one file may hold a whole class."""
    help: str
    """The format in ``--help``'s list, such as ``gradescope (results.json)``."""


@dataclass(frozen=True)
class Layout:
    """A gradebook layout (``--lesson-gradebook-format=NAME``)."""

    name: str
    render: Callable[[gradebook.Book], str]
    needs_roster: bool
    """Whether the layout is an LMS import that joins each folder to the LMS's identity."""
    help: str


#: Every report format, in ``--help``'s order (the default, json, last).
FORMATS: tuple[Format, ...] = (
    Format(
        "gradescope",
        lambda rs, o: formats.json_text(
            formats.gradescope(rs, o.seconds, o.hidden_visibility, o.order)
        ),
        "learner",
        "gradescope (results.json)",
    ),
    Format(
        "classroom",
        # Compact: it travels in one environment variable.
        lambda rs, o: formats.classroom_text(formats.classroom(rs, order=o.order)),
        "learner",
        "classroom (the GitHub Classroom runner result)",
    ),
    Format(
        "exercism",
        lambda rs, o: formats.json_text(formats.exercism(rs, o.order)),
        "learner",
        "exercism (results.json version 3)",
    ),
    Format(
        "json",
        lambda rs, o: formats.json_text(formats.full(rs, o.seconds, o.order, o.roll)),
        "class",
        "json (ours; default)",
    ),
)

#: Every gradebook layout, the default first.
LAYOUTS: tuple[Layout, ...] = (
    Layout("long", gradebook.long, False, "long (a row per learner and exercise; default)"),
    Layout("wide", gradebook.wide, False, "wide (a row per learner)"),
    Layout("canvas", gradebook.canvas, True, "canvas (its grade import)"),
    Layout("moodle", gradebook.moodle, True, "moodle (its grade import)"),
)


def format_named(name: str) -> Format:
    """The row of format *name* (one of :data:`FORMATS`)."""
    for row in FORMATS:
        if row.name == name:
            return row
    raise ValueError(f"unknown report format {name!r}: one of {', '.join(names(FORMATS))}")


def layout_named(name: str) -> Layout:
    """The row of gradebook layout *name* (one of :data:`LAYOUTS`)."""
    for row in LAYOUTS:
        if row.name == name:
            return row
    raise ValueError(f"unknown gradebook layout {name!r}: one of {', '.join(names(LAYOUTS))}")


def names(rows: Sequence[Format] | Sequence[Layout]) -> tuple[str, ...]:
    """The rows' names, in the table's order (an option's choices)."""
    return tuple(row.name for row in rows)


def render(
    fmt: str,
    results: Sequence[CaseResult],
    seconds: float = 0.0,
    hidden_visibility: str = "after_published",
) -> str:
    """The report file's text in format *fmt* (a name in :data:`FORMATS`)."""
    return format_named(fmt).render(results, Options(seconds, hidden_visibility))


def render_gradebook(layout: str, book: gradebook.Book) -> str:
    """The gradebook's text in *layout* (a name in :data:`LAYOUTS`)."""
    return layout_named(layout).render(book)
