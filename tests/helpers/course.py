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


def copy(pytester: pytest.Pytester, *names: str) -> None:
    for name in names:
        shutil.copytree(
            EXERCISES / name, pytester.path / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    files = any(
        "../fixtures/" in (EXERCISES / name / "exercise.toml").read_text() for name in names
    )
    library = any("course_lib" in (EXERCISES / name / "reference.py").read_text() for name in names)
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
        for chapter in course["chapter"]:
            lessons = [lesson for lesson in chapter["lessons"] if lesson in names]
            if lessons:
                text += (
                    f"\n[[chapter]]\nnumber = {chapter['number']}\n"
                    f"title = {json.dumps(chapter['title'])}\nlessons = {json.dumps(lessons)}\n"
                )
        (pytester.path / "course.toml").write_text(text)
