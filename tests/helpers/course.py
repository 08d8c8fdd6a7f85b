"""Copies of the course's lessons in a pytester folder, with the files they need."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from .lessons import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXERCISES = ROOT / "exercises"


def copy(pytester: pytest.Pytester, *names: str, library: bool = False) -> None:
    """Copy the course's lessons *names* into the pytester folder, with the shared files and,
    for a lesson whose reference imports it (or with *library*), the course library."""
    for name in names:
        shutil.copytree(
            EXERCISES / name, pytester.path / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    files = any(
        "../fixtures/" in (EXERCISES / name / "exercise.toml").read_text() for name in names
    )
    library = library or any(
        "course_lib" in (EXERCISES / name / "reference.py").read_text() for name in names
    )
    if files or library:
        # A lesson reading the course's shared files needs them and a course.toml above it
        # (no file climbs out of the course), one that lists only the lessons copied; a
        # lesson on the course library needs the library, which that file declares.
        shutil.copytree(EXERCISES / "fixtures", pytester.path / "fixtures")
        course = tomllib.loads((EXERCISES / "course.toml").read_text())
        text = f"[course]\ntitle = {json.dumps(course['course']['title'])}\n"
        if library:
            shutil.copytree(
                EXERCISES / "course_lib",
                pytester.path / "course_lib",
                ignore=shutil.ignore_patterns("__pycache__"),
            )
            text += '\n[library]\nfolder = "course_lib"\n'
            # The parts and loans of the lessons copied: the others' lessons are not there.
            table = course.get("library", {})
            kept = {n: f for n, f in table.get("parts", {}).items() if f in names}
            lent = {f: n for f, n in table.get("given", {}).items() if f in names}
            if kept:
                text += "parts = { " + ", ".join(f"{n} = {json.dumps(f)}" for n, f in kept.items())
                text += " }\n"
            if lent:
                text += "given = { " + ", ".join(f"{f} = {json.dumps(n)}" for f, n in lent.items())
                text += " }\n"
            # The course's shared callables, and the parts of the lessons not copied: no
            # lesson here owns those (the lesson check refuses a callable that is neither).
            shared = [
                *table.get("shared", []),
                *(n for n in table.get("parts", {}) if n not in kept),
            ]
            if shared:
                text += f"shared = {json.dumps(shared)}\n"
        for chapter in course["chapter"]:
            lessons = [lesson for lesson in chapter["lessons"] if lesson in names]
            if lessons:
                text += (
                    f"\n[[chapter]]\nnumber = {chapter['number']}\n"
                    f"title = {json.dumps(chapter['title'])}\nlessons = {json.dumps(lessons)}\n"
                )
        (pytester.path / "course.toml").write_text(text)


#: The keys of a lesson's tables that change how it is graded (a harness, draws, gradients, a
#: budget, fitted watch-outs, ...); titles, texts and a case's own input names do not.
_GRADED_BY = {
    "exercise": {"format", "harness", "parts", "preload", "entry", "timeout"},
    "case": {"draws", "hidden", "points", "atol", "rtol", "observe", "frozen", "grads"},
    "watch_out": {"code", "fit", "check", "named", "right"},
}


def features(name: str) -> frozenset[str]:
    """What lesson *name* uses that changes how it is graded: its format, each table beyond a
    version 1 lesson's, the keys in :data:`_GRADED_BY`, inputs from files and the course
    library."""
    text = (EXERCISES / name / "exercise.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    found = set()
    for table, value in data.items():
        rows = value if isinstance(value, list) else [value]
        keys = {key for row in rows if isinstance(row, dict) for key in row}
        wanted = _GRADED_BY.get(table)
        if wanted is None:  # a table of its own ([generate], [budget], [gradients], ...)
            found |= {table} | {f"{table}.hidden" for row in rows if "hidden" in row}
            continue
        for key in keys & wanted:
            row = next(r for r in rows if key in r)
            shown = row[key] if key in ("format", "parts") else ""
            found.add(f"{table}.{key}{'=' + str(shown) if shown != '' else ''}")
    if "format" not in data.get("exercise", {}):
        found.add("exercise.format=1")
    if "../fixtures/" in text:
        found.add("file inputs")
    if "course_lib" in (EXERCISES / name / "reference.py").read_text(encoding="utf-8"):
        found.add("course library")
    return frozenset(found)


def representative(names: list[str]) -> list[str]:
    """Few lessons of *names* that between them use every feature (:func:`features`) any of
    them uses, in *names*' order: a behaviour that must hold for every kind of lesson is shown
    on these, and the whole course is the lesson check's (CI's lesson-check stage). Chosen
    greedily, the lesson that adds the most features first; a tie goes to the earlier."""
    wanted = {name: features(name) for name in names}
    chosen: list[str] = []
    seen: frozenset[str] = frozenset()
    while True:
        best = max(names, key=lambda name: len(wanted[name] - seen))
        if not wanted[best] - seen:
            return [name for name in names if name in chosen]
        chosen.append(best)
        seen |= wanted[best]
