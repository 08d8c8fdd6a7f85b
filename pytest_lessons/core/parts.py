"""What of its course a job carries: the course library (its parts, or the learner's own
solutions for a lesson that says ``parts = "own"``; see :mod:`pytest_lessons.core.courselib`),
and the modules its code needs imported first (:func:`preload`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lessons.core import course, courselib, model
from pytest_lessons.isolation.library import Library, OwnPart


def code(
    exercise: model.Exercise, own: bool = False, learner: Path | None = None
) -> Library | None:
    """The library a job of *exercise* carries (None: its course has none). With *own* and a
    lesson whose parts are the learner's own, the library's parts are the learner's solutions:
    those of the learner's folder *learner* in a class (``submissions/<learner>``), else the
    course's own lesson folders."""
    found = _course(exercise.path)
    if found is None or found.library is None:
        return None
    library = found.library
    mine: list[OwnPart] = []
    if own and exercise.parts == "own":
        for name, lesson_file in library.parts:
            try:
                lesson = model.load(lesson_file)
            except (model.ExerciseError, OSError):
                continue
            if learner is None:
                folder = found.path.parent
                relative = lesson.solution.relative_to(folder)
            else:  # a class: submissions/<learner>/<lesson>/solution.py
                folder = learner
                relative = Path(lesson.slug) / lesson.solution.relative_to(lesson.folder)
            mine.append(OwnPart(name, folder, relative, lesson.entry, lesson.slug))
    return Library(library.package, courselib.modules(library), tuple(mine))


def preload(exercise: model.Exercise) -> tuple[str, ...]:
    """The modules *exercise*'s code needs imported before it runs: its course's ``preload``,
    then its own, each once."""
    found = _course(exercise.path)
    mine = (found.preload if found is not None else ()) + exercise.preload
    return tuple(dict.fromkeys(mine))


#: Each lesson's course so far: its exercise file -> (its course file's stamp, the course).
_COURSES: dict[Path, tuple[Any, course.Course | None]] = {}


def _course(exercise: Path) -> course.Course | None:
    """:func:`pytest_lessons.core.course.find`, asked once per lesson while its course file
    stays as it was (a job is made for every case: the walk up the folders is not redone)."""
    known = _COURSES.get(exercise)
    if known is not None:
        stamp, found = known
        if _stamp(found) == stamp:
            return found
    try:
        found = course.find(exercise)
    except course.CourseError:
        found = None  # the run itself says why course.toml cannot be used
    _COURSES[exercise] = (_stamp(found), found)
    return found


def _stamp(found: course.Course | None) -> Any:
    if found is None:
        return None
    try:
        status = found.path.stat()
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size)
