"""The reference tables the site shows, made from the tables the code reads, so that a page
cannot drift from the options it describes.

A page says where a table goes with an HTML comment on a line of its own, which GitHub shows as
nothing and the build replaces by a Markdown table before MyST reads the page:

    <!-- table: settings -->          run settings, a section each (core/settings.py SETTINGS)
    <!-- table: report-formats -->    report formats (pytest_lessons/reports/registry.py FORMATS)
    <!-- table: gradebook-layouts --> gradebook layouts (the same module's LAYOUTS)
    <!-- table: output-options -->    output options, a section each (reports/options.py)

An unknown table name stops the build, as a misspelt marker would otherwise leave a hole.
"""

from __future__ import annotations

import re
from typing import Any, Callable

MARKER = re.compile(r"^<!-- table: ([a-z-]+) -->$", re.MULTILINE)


def _prose(text: str) -> str:
    """*text* (a help string) as Markdown prose: on one line, a ``<learner>`` kept as text
    rather than read as an HTML tag."""
    return " ".join(text.split()).replace("<", "\\<")


def _cell(text: str) -> str:
    """*text* as one Markdown table cell."""
    return _prose(text).replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def shown_default(setting: Any) -> str:
    """A setting's default as it is written on a command line: ``10`` for 10.0, ``auto`` where
    the setting reads "auto" as its default, the modules of a list, ``(none)`` for nothing."""
    try:
        if setting.convert("auto") == setting.default:
            return "`auto`"
    except ValueError:
        pass
    value = setting.default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, tuple):
        return ", ".join(f"`{v}`" for v in value) if value else "(none)"
    return f"`{value}`"


def settings() -> str:
    """A section per setting (a table of five columns is too wide to read): the option as its
    heading, then its ini key, variable, default and whether exercise.toml may set it, then its
    help."""
    from pytest_lessons.core.settings import SETTINGS

    parts = []
    for s in SETTINGS:
        option = f"{s.option}={s.metavar}" if s.metavar else s.option
        where = f"ini `{s.ini}`, environment `{s.env}`, default {shown_default(s)}"
        if s.per_exercise:
            where += f"; an exercise may set `{s.name}` in its `exercise.toml`"
        parts.append(f"### `{option}`\n\n{where}.\n\n{_prose(s.help)}\n")
    return "\n".join(parts)


def report_formats() -> str:
    from pytest_lessons.reports.registry import FORMATS

    holds = {
        "learner": "one learner (a class run writes one file per learner: `{learner}` in the path)",
        "class": "one learner, or a whole class in one file",
    }
    rows = [[f"`{f.name}`", holds[f.holds], f.help] for f in FORMATS]
    return _table(["format", "a file holds", "in `--help`"], rows)


def gradebook_layouts() -> str:
    from pytest_lessons.reports.registry import LAYOUTS

    rows = [[f"`{g.name}`", "yes" if g.needs_roster else "", g.help] for g in LAYOUTS]
    return _table(["layout", "needs `--lesson-roster`", "in `--help`"], rows)


def output_options() -> str:
    """A section per output option, as for the settings: pytest's spelling as the heading, the
    merge command's, the values and the default under it, then the help as pytest shows it."""
    from pytest_lessons.reports.options import MERGE, OUTPUT_OPTIONS, PYTEST

    parts = []
    for option in OUTPUT_OPTIONS:
        value = f"={option.metavar}" if option.metavar else ""
        facts = [f"the merge command: `{option.flag(MERGE)}{value}`"]
        if option.choices:
            facts.append("one of " + ", ".join(f"`{c}`" for c in option.choices))
        if option.default:
            facts.append(f"default `{option.default}`")
        if option.class_only:
            facts.append(f"grading a class only (`{PYTEST}submissions`)")
        heading = f"### `{option.flag(PYTEST)}{value}`"
        parts.append(f"{heading}\n\n{'; '.join(facts)}.\n\n{_prose(option.help_in(PYTEST))}\n")
    return "\n".join(parts)


TABLES: dict[str, Callable[[], str]] = {
    "settings": settings,
    "report-formats": report_formats,
    "gradebook-layouts": gradebook_layouts,
    "output-options": output_options,
}


def fill(text: str) -> str:
    """*text* with every table marker replaced by its table (KeyError for an unknown one)."""

    def table(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise KeyError(f"no table named {name!r}: one of {', '.join(TABLES)}")
        return TABLES[name]()

    return MARKER.sub(table, text)


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    source[0] = fill(source[0])


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
