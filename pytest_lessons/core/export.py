"""A learner's copy of a lesson: what ``pytest --lesson-export=DIR`` writes.

The copy holds the starter ``solution.py``, the public cases, each generated case and each case
computed from the reference (``expected = { from = "reference" }``) frozen into a plain case
with the expected answer the reference gave, the snapshot files of its public snapshot cases
(already frozen answers), the watch-outs with their ``mistakes.py``, the lesson's harness
(author code that drives the learner's module: a copy needs it to grade, and it holds no
answer), the hints, and any ``conftest.py`` of the lesson; beside the lessons, the course's
``course.toml``, its library and its ``generate.py`` (:data:`COURSE_KEPT`). It holds no
``reference.py``, no ``variants.py`` (right answers too), no hidden case, no ``[generate]``
table (it needs the reference) and no worked solution (the ``[solution]`` steps explain the
reference): the worked solution is withheld, for the instructor to publish after the deadline.
Its first line (:data:`MARK`) says it is a learner's copy, so author-only commands
(``--lesson-regenerate``) refuse to run in it. The learner's copy grades the starter and every
mistake as the full course does on the cases it keeps; ``--lesson-check`` proves it.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pytest_lessons.core import budget, course, courselib, datafiles, model

# Where the lesson check has always found it; it lives with the other questions of judging.
from pytest_lessons.core.judge import plain_answer as plain_answer

#: Files of a lesson's folder that a learner's copy keeps besides ``exercise.toml``.
KEPT = ("conftest.py",)

#: Files of the course's folder (beside ``course.toml``) that a learners' copy keeps: the
#: course's own command for learners (``python exercises/generate.py`` runs their solutions),
#: which the course's docs tell them to run in the copy they get.
COURSE_KEPT = ("generate.py",)

#: Keys of ``[exercise]`` a learner's copy drops: the reference and the variants, and the total
#: points (each kept case carries its own points instead, as the full course scaled them).
DROPPED = ("reference", "variants", "points")

#: The first line of a learner's ``exercise.toml``: what tells a learner's copy from the course.
MARK = "# A learner's copy of this lesson, made by pytest --lesson-export: the starter, the"


def is_learner_copy(exercise: model.Exercise) -> bool:
    """Whether *exercise* is a learner's copy (made by ``--lesson-export``): its file starts
    with :data:`MARK`, or it has no reference to compute answers with."""
    if exercise.reference is None or not exercise.reference.is_file():
        return True
    return marked(exercise)


def marked(exercise: model.Exercise) -> bool:
    """Whether *exercise*'s file starts with :data:`MARK` (was written by the export)."""
    try:
        with exercise.path.open(encoding="utf-8-sig") as handle:
            return handle.readline().rstrip("\n") == MARK
    except OSError:
        return False


def learner_toml(
    raw: dict[str, Any],
    exercise: model.Exercise,
    answers: dict[int, Any],
    works: dict[int, Any] | None = None,
) -> tuple[str, list[int]]:
    """The learner's ``exercise.toml`` and, for each of its cases in order, the number of the
    case of the full course it comes from.

    *raw* is the full course's file as TOML data, *exercise* its model, *answers* the expected
    answer (as :func:`plain_answer` gives it) of each case the reference computes (generated or
    ``from = "reference"``) that is not hidden, by case number."""
    head = {k: v for k, v in raw["exercise"].items() if k not in DROPPED}
    cases: list[dict[str, Any]] = []
    origin: list[int] = []
    written = list(raw.get("case", []))
    for case in exercise.cases:
        if case.hidden:
            continue
        if case.work is not None:  # a [budget] case: its reference's figures frozen in it
            entry: dict[str, Any] = {"name": case.name, **case.inputs}
            entry["expected"] = answers[case.number]
            entry["work"] = budget.frozen_table(case.work, (works or {})[case.number])
        elif case.generated:
            entry = {"name": "drawn at random"}
            entry.update(case.inputs)
            entry["expected"] = answers[case.number]
        else:
            entry = {k: v for k, v in written[case.number - 1].items() if k != "hidden"}
            if case.source in ("reference", "distribution"):
                entry["expected"] = answers[case.number]
        entry["points"] = case.points
        if case.rtol != exercise.rtol:
            entry["rtol"] = case.rtol
        if case.atol != exercise.atol:
            entry["atol"] = case.atol
        cases.append(entry)
        origin.append(case.number)
    lines = [
        MARK,
        "# public cases and computed ones frozen with their answers. No reference, no hidden",
        "# cases, no worked solution.",
        "",
        "[exercise]",
    ]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in head.items()]
    if "gradients" in raw:  # forward stays: it says the cases' answers are gradients
        lines += [
            "",
            "[gradients]",
            *(f"{_key(k)} = {_value(v)}" for k, v in raw["gradients"].items()),
        ]
    for case_table in cases:
        lines += ["", "[[case]]", *(f"{_key(k)} = {_value(v)}" for k, v in case_table.items())]
    for table in ("watch_out", "hint"):
        for entry in raw.get(table, []):
            lines += ["", f"[[{table}]]", *(f"{_key(k)} = {_value(v)}" for k, v in entry.items())]
    return "\n".join(lines) + "\n", origin


def write_files(folder: Path, exercise: model.Exercise, text: str) -> Path:
    """Write the learner's copy of *exercise* into *folder* (made if need be): *text* (from
    :func:`learner_toml`) as its ``exercise.toml``, and the files a learner needs. Returns the
    new ``exercise.toml``."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / model.EXERCISE_FILE
    target.write_text(text, encoding="utf-8")
    solution = exercise.solution.relative_to(exercise.folder)
    (folder / solution).parent.mkdir(parents=True, exist_ok=True)
    if exercise.solution.is_file():
        shutil.copyfile(exercise.solution, folder / solution)
    if exercise.mistakes is not None and exercise.mistakes.is_file():
        mistakes = folder / exercise.mistakes.relative_to(exercise.folder)
        mistakes.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(exercise.mistakes, mistakes)
    if exercise.harness is not None and exercise.harness.is_file():
        # Author code, but no answer: the learner's copy needs it to grade at all.
        harness = folder / exercise.harness.relative_to(exercise.folder)
        harness.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(exercise.harness, harness)
    for name in KEPT:
        if (exercise.folder / name).is_file():
            shutil.copyfile(exercise.folder / name, folder / name)
    for case in exercise.cases:
        # A public snapshot is a frozen answer already; a hidden case's stays with the course.
        if case.snapshot is not None and not case.hidden:
            source = exercise.folder / case.snapshot
            if source.is_file():
                (folder / case.snapshot).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, folder / case.snapshot)
    # The public cases' input files, where exercise.toml names them (none only a hidden case reads).
    for source, name in datafiles.shipped(exercise.folder, exercise.cases):
        copy = Path(os.path.normpath(folder / name))
        if copy.is_relative_to(folder.parent):
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    write_course(folder.parent, exercise)
    return target


def write_course(target: Path, exercise: model.Exercise) -> Path | None:
    """The learners' ``course.toml`` in *target*: the course of *exercise* (if it has one),
    listing in its order those of its lessons that *target* holds a copy of, so the copy runs
    and counts its lessons as the full course does. Rewritten after each lesson, whole and
    atomically, so a lesson exported later joins it and a lesson not exported is never named
    (a ``course.toml`` naming a missing lesson would stop the learners' run). The course's
    library and its files for learners (:data:`COURSE_KEPT`) are copied beside it."""
    try:
        found = course.find(exercise.path)
    except course.CourseError:
        return None  # the run itself stops on a broken course.toml, and says why
    if found is None:
        return None
    copied: dict[Path, str] = {}
    for file in found.lessons:
        try:
            slug = model.load(file).slug
        except (model.ExerciseError, OSError):
            continue
        if (target / slug / model.EXERCISE_FILE).is_file():
            copied[file] = slug
    lines = [
        "# The learners' copy of the course, made by pytest --lesson-export.",
        "",
        "[course]",
        f"title = {_value(found.title)}",
    ]
    if found.preload:
        lines.append(f"preload = {_value(list(found.preload))}")
    if not found.chapters:
        lines.append(f"lessons = {_value(list(copied.values()))}")
    for chapter in found.chapters:
        mine = [copied[file] for file in chapter.lessons if file in copied]
        if mine:  # a chapter none of whose lessons is copied would be an empty list
            lines += [
                "",
                "[[chapter]]",
                f"number = {chapter.number}",
                f"title = {_value(chapter.title)}",
                f"lessons = {_value(mine)}",
            ]
    lines += courselib.export(found.library, target, copied)
    for name in COURSE_KEPT:
        source = found.path.parent / name
        # A link is left out, as everywhere a copy is made: its target is not the course's.
        copy = target / name
        if source.is_file() and not source.is_symlink() and source.resolve() != copy.resolve():
            shutil.copyfile(source, copy)
    text = "\n".join([*lines, ""])
    path = target / course.COURSE_FILE
    handle, temporary = tempfile.mkstemp(dir=target, prefix=".course-", suffix=".toml")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)
    return path


def _key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    """*value* as TOML: strings, booleans, numbers (float64 written to round-trip), arrays and
    inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
