"""What of its course a job carries: the course library as the lesson may see it (the parts
of the lessons before it; its own parts the learner's solutions for a lesson that says
``parts = "own"``; see :mod:`pytest_lessons.core.courselib`), and the modules its code needs
imported first (:func:`preload`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import course, courselib, model
from pytest_lessons.isolation.library import Library, OwnPart
from pytest_lessons.isolation.outcome import RAISED, Outcome


@dataclass(frozen=True)
class Sight:
    """What one lesson's code may import of its course library."""

    owners: dict[str, Path]
    """Each part -> the ``exercise.toml`` of the lesson it belongs to (declared in
    ``[library] parts``, or the lesson of its name)."""
    hidden: dict[str, str]
    """Each name kept from the lesson -> the part it stands for (itself, or a hidden part
    its definition uses)."""
    earlier: tuple[str, ...]
    """The parts of the lessons before this one: those ``parts`` declares, in its order,
    then those of a lesson by their name."""
    given: frozenset[str]
    """The later lessons' parts ``[library] given`` lends to this lesson."""
    modules: tuple[tuple[str, str, str], ...]
    """The library's modules as the lesson sees them (:func:`courselib.view`)."""
    told: tuple[tuple[str, str], ...] = ()
    """(name, what the learner is told on importing it) for each name in :attr:`hidden`."""


def sight(exercise: model.Exercise) -> Sight | None:
    """What *exercise*'s code may import of its course library (None: its course has none)."""
    found = _course(exercise.path)
    if found is None or found.library is None:
        return None
    library = found.library
    read = courselib.modules(library)
    known = _SIGHTS.get(exercise.path)
    if known is not None and known[0][0] is found and known[0][1] is read:
        return known[1]
    by_folder = {lesson.parent.name: lesson for lesson in found.lessons}
    owners = dict(library.parts)
    for definition in courselib.definitions(library):  # undeclared: the lesson of its name
        if definition.name in by_folder:
            owners.setdefault(definition.name, by_folder[definition.name])
    here = found.position(exercise.path)
    place = {lesson: number for number, lesson in enumerate(found.lessons)}
    mine = exercise.path.resolve()
    given = frozenset(n for lesson, names in library.given if lesson == mine for n in names)
    later = [n for n, lesson in owners.items() if here is None or place.get(lesson, here) >= here]
    modules, hidden = courselib.view(library, [n for n in later if n not in given])
    earlier = tuple(name for name in owners if name not in later)
    result = Sight(owners, dict(hidden), earlier, given, modules)
    told = tuple((n, kept_from(mine, result, library.package, n)) for n in sorted(hidden))
    result = dataclasses.replace(result, told=told)
    _SIGHTS[exercise.path] = ((found, read), result)
    return result


#: Each lesson's sight so far: its exercise file -> ((its course, the library as read), sight).
_SIGHTS: dict[Path, tuple[tuple[course.Course, Any], Sight]] = {}


def importable(
    exercise: model.Exercise,
) -> list[tuple[courselib.Definition, str | None, bool]]:
    """The library's callables *exercise*'s code can import, for the lesson check: each with
    the lesson it belongs to (its folder's name; None: no lesson's) and whether ``[library]
    given`` lends it to this lesson."""
    seen = sight(exercise)
    found = _course(exercise.path)
    if seen is None or found is None or found.library is None:
        return []
    return [
        (
            d,
            seen.owners[d.name].parent.name if d.name in seen.owners else None,
            d.name in seen.given,
        )
        for d in courselib.definitions(found.library)
        if d.name not in seen.hidden
    ]


def code(
    exercise: model.Exercise, own: bool = False, learner: Path | None = None
) -> Library | None:
    """The library a job of *exercise* carries (None: its course has none): the parts of the
    lessons before it, and for each name kept from it what the learner is told on importing
    it. With *own* and a lesson whose parts are the learner's own, the parts of the earlier
    lessons are the learner's solutions: those of the learner's folder *learner* in a class
    (``submissions/<learner>``), else the course's own lesson folders."""
    found = _course(exercise.path)
    seen = sight(exercise)
    if found is None or found.library is None or seen is None:
        return None
    library = found.library
    mine: list[OwnPart] = []
    if own and exercise.parts == "own":
        for name in seen.earlier:
            try:
                lesson = model.load(seen.owners[name])
            except (model.ExerciseError, OSError):
                continue
            if learner is None:
                folder = found.path.parent
                relative = lesson.solution.relative_to(folder)
            else:  # a class: submissions/<learner>/<lesson>/solution.py
                folder = learner
                relative = Path(lesson.slug) / lesson.solution.relative_to(lesson.folder)
            mine.append(OwnPart(name, folder, relative, lesson.entry, lesson.slug))
    return Library(library.package, seen.modules, tuple(mine), seen.told)


def unwritten(
    exercise: model.Exercise, learner: Path | None, outcome: Outcome, show: Callable[[str], str]
) -> str | None:
    """What the learner of a lesson on their own parts is told when its case stopped at the
    starter's ``raise NotImplementedError`` of an earlier lesson's solution (the traceback's
    last line is in that file, not in this lesson's): write that lesson first, with its file
    and line, then why this lesson needs it. None for any other outcome."""
    if exercise.parts != "own" or outcome.kind != RAISED or not outcome.frames:
        return None
    if outcome.error_type != "NotImplementedError" or outcome.phase != "call":
        return None
    frame = outcome.frames[-1]
    library = code(exercise, own=True, learner=learner)
    if library is None:
        return None
    for part in library.own:
        if str(part.folder / part.relative) == frame.file:
            at = f" (line {frame.line})" if frame.line else ""
            return (
                f"Write lesson {part.lesson} first: open {show(frame.file)} and replace "
                f"`raise NotImplementedError`{at} in {part.entry} with your code. This "
                f"lesson runs on your own solutions, and {library.package}.{part.name} is "
                f"your {part.entry} of lesson {part.lesson}, which is not written yet."
            )
    return None


def kept_from(exercise: Path, seen: Sight, package: str, name: str) -> str:
    """What the learner of the lesson whose file is *exercise* is told on importing the
    library's *name*, which is kept from the lesson: what to do, then whose part it is."""
    root = seen.hidden.get(name, name)
    lesson = seen.owners.get(root)
    if lesson is None or lesson == exercise:
        whose = "this lesson's own answer"
    else:
        whose = f"the answer of lesson {lesson.parent.name}, which comes later in the course"
    why = f"it is {whose}" if root == name else f"it is built on {package}.{root}, {whose}"
    return (
        f"Write this lesson's code without {package}.{name}: {why}, and a lesson's code may "
        "import only the parts of the lessons before it."
    )


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
