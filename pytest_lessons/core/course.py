"""A course: the lessons of a folder, in the order its author gives in ``course.toml``.

```toml
[course]
title = "Attention in PyTorch"
lessons = ["split_heads", "causal_attention", "combine_heads"]
```

Each entry is a lesson's folder, relative to ``course.toml``. Collection runs the lessons in this
order, the ``lessons`` summary lists them in it, and the progress line counts every lesson of the
course, also those the run did not select. Without a ``course.toml`` lessons run in folder order
and the progress line counts the lessons of the run.

A longer course groups its lessons in chapters instead of one list; the course's order is the
chapters' order, and the summary counts each chapter the run touched (``chapter 2: 3/5``):

```toml
[course]
title = "A GPT workshop"

[[chapter]]
title = "Tensors"
lessons = ["outer_product", "causal_mask"]

[[chapter]]
number = 7            # optional: chapters are numbered 1, 2, ... in order otherwise
title = "Attention"
lessons = ["split_heads", "causal_attention"]
```

A ``[library]`` table declares the course library (:mod:`pytest_lessons.core.courselib`).
``preload = ["torch._dynamo"]`` in ``[course]`` names modules every lesson of the course needs
imported before its code runs, as a lesson's own ``preload`` does (docs/authors/preload.md).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old Pythons only
    import tomli as tomllib

from pytest_lessons.core.courselib import CourseLibrary, read_library
from pytest_lessons.core.model import EXERCISE_FILE, modules_problem

#: The file that declares a course, in the folder that holds its lessons.
COURSE_FILE = "course.toml"


class CourseError(Exception):
    """``course.toml`` cannot be used; the message says why and where."""


@dataclass(frozen=True)
class Chapter:
    """A named group of a course's lessons, in the course's order."""

    number: int
    """As the learner reads it: ``chapter 2``."""
    title: str
    lessons: tuple[Path, ...]
    """The chapter's lessons' ``exercise.toml`` files, in order."""


@dataclass(frozen=True)
class Course:
    """A course file and its lessons' ``exercise.toml`` files, in the author's order."""

    path: Path
    title: str
    lessons: tuple[Path, ...]
    chapters: tuple[Chapter, ...] = ()
    """The course's chapters (empty for a course of one list of lessons)."""
    library: CourseLibrary | None = None
    """The course library (``[library]``), if the course has one."""
    preload: tuple[str, ...] = ()
    """Modules each of its lessons' code needs imported before it runs (``[course]
    preload``)."""

    def chapter(self, exercise: Path) -> Chapter | None:
        """The chapter holding the lesson whose file is *exercise* (None: no chapters, or
        not in the course)."""
        resolved = Path(exercise).resolve()
        for chapter in self.chapters:
            if resolved in chapter.lessons:
                return chapter
        return None

    def position(self, exercise: Path) -> int | None:
        """Where the lesson whose file is *exercise* comes in the course (None: not in it)."""
        try:
            return self.lessons.index(Path(exercise).resolve())
        except ValueError:
            return None


def find(exercise: Path) -> Course | None:
    """The course the exercise file *exercise* belongs to: the nearest ``course.toml`` in one
    of its folders' parents that lists it."""
    folder = Path(exercise).resolve().parent
    for parent in folder.parents:
        candidate = parent / COURSE_FILE
        if candidate.is_file():
            course = load(candidate)
            if course.position(folder / EXERCISE_FILE) is not None:
                return course
    return None


def of(exercises: Iterable[Path]) -> list[Course]:
    """The courses the exercise files *exercises* belong to, each once, in order of first
    appearance (raises :class:`CourseError` for a ``course.toml`` that cannot be used)."""
    found: list[Course] = []
    for exercise in exercises:
        mine = find(exercise)
        if mine is not None and mine not in found:
            found.append(mine)
    return found


#: Each course file read so far: its modification time and size then, and its course.
_READ: dict[Path, tuple[tuple[int, int], Course]] = {}


def load(path: Path) -> Course:
    """Read *path*; raise :class:`CourseError` naming the file, line and problem.

    A file read before is read again only once it changed (its modification time or size):
    a pytest run reads its course once, and a notebook kernel, which lives for hours, sees
    an edited ``course.toml`` at the next cell."""
    try:
        found = path.stat()
    except OSError:
        return _read(path)  # says why it cannot be read
    stamp = (found.st_mtime_ns, found.st_size)
    known = _READ.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    course = _read(path)
    _READ[path] = (stamp, course)
    return course


def _read(path: Path) -> Course:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseError(f"{path}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path}: not valid TOML ({exc})") from None
    table = data.get("course")
    if not isinstance(table, dict):
        raise CourseError(f"{path}: a [course] table with a lessons list is required")
    unknown = sorted(set(data) - {"course", "chapter", "library"})
    if unknown:
        raise CourseError(
            f"{path}: unknown table [{unknown[0]}] (known: [course], [[chapter]], [library])"
        )
    unknown = sorted(set(table) - {"title", "lessons", "preload"})
    if unknown:
        raise CourseError(
            f"{path}: unknown key course.{unknown[0]} (known: title, lessons, preload)"
        )
    preload = table.get("preload", [])
    problem = modules_problem(preload)
    if problem:
        raise CourseError(f"{path}: course.preload {problem}")
    raw_chapters = data.get("chapter")
    if raw_chapters is None:
        listed = _lessons(path, table.get("lessons"), "course.lessons", [])
        found = Course(path.resolve(), str(table.get("title", "")), tuple(listed))
        return _with_library(replace(found, preload=tuple(preload)), data.get("library"))
    if "lessons" in table:
        raise CourseError(
            f"{path}: give the lessons either in course.lessons or in [[chapter]] tables, not both"
        )
    if not isinstance(raw_chapters, list) or not raw_chapters:
        raise CourseError(f"{path}: [[chapter]] must be tables, each with a title and lessons")
    files: list[Path] = []
    chapters: list[Chapter] = []
    for place, raw in enumerate(raw_chapters, start=1):
        where = f"chapter {place}"
        unknown = sorted(set(raw) - {"number", "title", "lessons"})
        if unknown:
            raise CourseError(
                f"{path}: unknown key {unknown[0]} in the {where} table (known: number, title, "
                "lessons)"
            )
        number = raw.get("number", chapters[-1].number + 1 if chapters else place)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise CourseError(f"{path}: the {where} table's number must be a whole number")
        if chapters and number <= chapters[-1].number:
            raise CourseError(
                f"{path}: chapter numbers must increase; the {where} table's number {number} "
                f"comes after {chapters[-1].number}"
            )
        title = raw.get("title")
        if not isinstance(title, str) or not title.strip():
            raise CourseError(f"{path}: the {where} table needs a title")
        mine = _lessons(path, raw.get("lessons"), f"the lessons of chapter {number}", files)
        chapters.append(Chapter(number, title.strip(), tuple(mine)))
        files.extend(mine)
    found = Course(path.resolve(), str(table.get("title", "")), tuple(files), tuple(chapters))
    return _with_library(replace(found, preload=tuple(preload)), data.get("library"))


def _with_library(found: Course, raw: Any) -> Course:
    if raw is None:
        return found
    try:
        return replace(found, library=read_library(found.path, raw, found.lessons))
    except ValueError as exc:
        raise CourseError(str(exc)) from None


def _lessons(path: Path, lessons: Any, named: str, before: list[Path]) -> list[Path]:
    """The ``exercise.toml`` files of a list of lesson folders, *named* as the message says
    it, none of them among *before* (the course's lessons so far)."""
    if not isinstance(lessons, list) or not all(isinstance(x, str) for x in lessons):
        raise CourseError(f"{path}: {named} must be a list of lesson folder names")
    files: list[Path] = []
    for name in lessons:
        file = (path.parent / name / EXERCISE_FILE).resolve()
        if not file.is_file():
            raise CourseError(f"{path}: {named} names {name!r}, which has no {EXERCISE_FILE}")
        if file in files or file in before:
            raise CourseError(f"{path}: {named} names {name!r}, which the course already lists")
        files.append(file)
    return files


@dataclass(frozen=True)
class Unlisted:
    """A lesson in a course's folder that its ``course.toml`` does not list."""

    exercise: Path
    """The lesson's ``exercise.toml``."""
    course: Path
    """The ``course.toml`` nearest above it."""

    @property
    def name(self) -> str:
        """The lesson as ``course.lessons`` would name it: its folder, from the course's."""
        return self.exercise.resolve().parent.relative_to(self.course.parent).as_posix()

    def advice(self, shown: str) -> str:
        """What to do, then why, with *shown* the course file as the reader sees it."""
        try:
            where = "a chapter's lessons" if load(self.course).chapters else "course.lessons"
        except CourseError:
            where = "course.lessons"
        return (
            f"add {self.name!r} to {where} in {shown}, or move the lesson out of the "
            "course's folder: it is beside the course's lessons but not in the course, so it "
            "runs outside the course's order and its progress"
        )


def unlisted(exercises: Iterable[Path]) -> list[Unlisted]:
    """The exercise files among *exercises* that sit below a ``course.toml`` none of whose
    folders' courses lists them (raises :class:`CourseError` for a file that cannot be used)."""
    found: list[Unlisted] = []
    for exercise in exercises:
        if find(exercise) is not None:
            continue
        folder = Path(exercise).resolve().parent
        for parent in folder.parents:
            candidate = parent / COURSE_FILE
            if candidate.is_file():
                found.append(Unlisted(Path(exercise), candidate.resolve()))
                break
    return found
