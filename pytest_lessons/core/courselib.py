"""The course library: a package of reference building blocks beside the lessons, which
learner, reference and mistake code may import (``from course_lib import triu``).

```toml
# course.toml
[library]
folder = "course_lib"                # a package beside course.toml; its name is the import
parts = { triu = "triu", eye = "eye" }   # optional: name in the package -> the lesson it solves
```

A later lesson then runs on the reference's parts, so one early bug does not fail every
later lesson. A lesson that says ``parts = "own"`` in ``[exercise]`` runs the learner's code
on the learner's own solutions instead: each name of ``parts`` becomes the entry function of
the learner's file of that lesson (the reference and the mistakes still run on the library).

The grader reads the package's ``.py`` files here, and the job carries them as text
(:class:`pytest_lessons.isolation.library.Library`): the sandbox opens nothing new, so the
lessons' folders, the references and ``mistakes.py`` stay out of reach, and no learner code
can change the library's files through it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lessons.core import model

#: ``exercise.parts``: which parts a lesson's learner code imports from the course library.
PARTS = ("library", "own")
#: The most library source the grader reads and sends with every job.
MAX_LIBRARY_BYTES = 1 << 20


@dataclass(frozen=True)
class CourseLibrary:
    """``[library]`` of a ``course.toml``, checked."""

    folder: Path
    """The package's folder (absolute); its name is the import name."""
    parts: tuple[tuple[str, Path], ...] = ()
    """(name in the package, that lesson's ``exercise.toml``) for ``parts = "own"``."""

    @property
    def package(self) -> str:
        """The name learner code imports."""
        return self.folder.name


def read_library(course: Path, raw: Any, lessons: tuple[Path, ...]) -> CourseLibrary:
    """``[library]`` of the course file *course*, whose lessons are *lessons*; raises
    ValueError naming the file and the problem."""
    if not isinstance(raw, dict):
        raise ValueError(f"{course}: [library] must be a table with a folder")
    unknown = sorted(set(raw) - {"folder", "parts"})
    if unknown:
        raise ValueError(f"{course}: unknown key library.{unknown[0]} (known: folder, parts)")
    name = raw.get("folder")
    if not isinstance(name, str) or not name.isidentifier() or "/" in name:
        raise ValueError(
            f"{course}: library.folder must name a folder beside course.toml whose name is a "
            'Python name, such as "course_lib": learner code imports it by that name'
        )
    folder = course.parent / name
    if not (folder / "__init__.py").is_file():
        raise ValueError(f"{course}: library.folder {name!r} needs an __init__.py (a package)")
    table = raw.get("parts", {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and k.isidentifier() and isinstance(v, str) for k, v in table.items()
    ):
        raise ValueError(f'{course}: library.parts must be a table of name = "lesson folder"')
    parts = []
    for part, lesson in table.items():
        file = (course.parent / lesson / model.EXERCISE_FILE).resolve()
        if file not in lessons:
            raise ValueError(
                f"{course}: library.parts.{part} names {lesson!r}, which is not a lesson of "
                "the course"
            )
        parts.append((part, file))
    return CourseLibrary(folder.resolve(), tuple(parts))


#: Each library read so far: its folder -> (its files' stamps, the modules).
_READ: dict[Path, tuple[tuple[Any, ...], tuple[tuple[str, str, str], ...]]] = {}


def modules(library: CourseLibrary) -> tuple[tuple[str, str, str], ...]:
    """(module name, file, source) of every module of the package, read again only once a
    file changed (a notebook kernel lives for hours)."""
    files, stamps = _walk(library.folder)
    known = _READ.get(library.folder)
    if known is not None and known[0] == stamps:
        return known[1]
    found = []
    total = 0
    for path in files:
        relative = path.relative_to(library.folder).with_suffix("")
        names = [library.package, *relative.parts]
        if names[-1] == "__init__":
            names.pop()
        source = path.read_text(encoding="utf-8")
        total += len(source)
        if total > MAX_LIBRARY_BYTES:
            raise ValueError(f"{library.folder}: the course library holds more than 1 MiB")
        found.append((".".join(names), str(path), source))
    result = tuple(found)
    _READ[library.folder] = (stamps, result)
    return result


def _walk(folder: Path) -> tuple[list[Path], tuple[Any, ...]]:
    """The package's module files below *folder* (names Python can import; no
    ``__pycache__``), in order, and a stamp of each file and folder (its time and size)."""
    files: list[Path] = []
    stamps: list[Any] = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            name, _, suffix = entry.name.partition(".")
            if not name.isidentifier() or entry.is_symlink():
                continue
            if entry.is_dir():
                inner, marks = _walk(Path(entry.path))
                files += inner
                stamps += [entry.name, entry.stat().st_mtime_ns, marks]
            elif suffix == "py" and entry.is_file():
                found = entry.stat()
                files.append(Path(entry.path))
                stamps += [entry.name, found.st_mtime_ns, found.st_size]
    return files, tuple(stamps)


def export(library: CourseLibrary | None, target: Path, copied: dict[Path, str]) -> list[str]:
    """Copy *library* into the learners' course folder *target* (``--lesson-export``), and
    the lines of its ``[library]`` table; *copied* maps each lesson copied to its folder
    there (a part whose lesson is not copied is left out of ``parts``)."""
    if library is None:
        return []
    for _, file, source in modules(library):
        copy = target / library.package / Path(file).relative_to(library.folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(source, encoding="utf-8")
    lines = ["", "[library]", f'folder = "{library.package}"']
    kept = [(name, copied[file]) for name, file in library.parts if file in copied]
    if kept:
        lines.append("parts = { " + ", ".join(f'{n} = "{s}"' for n, s in kept) + " }")
    return lines
