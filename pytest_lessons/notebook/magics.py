"""The magics (``%%lesson``, ``%lesson_hints``, ``%lesson_solution``, ``%lesson_course``):
each a few lines on the kernel's :class:`~pytest_lessons.notebook.kernel.Lessons`. A problem
the learner can fix, or a failure of the grader itself, is said in words, never with the
grader's traceback."""

from __future__ import annotations

from typing import Any, Callable

from pytest_lessons.core.frontend import grader_failed
from pytest_lessons.notebook.display import Text
from pytest_lessons.notebook.kernel import Lessons, NotebookError, find_course, split_line

_LESSONS: Lessons | None = None


def lessons() -> Lessons:
    """The kernel's :class:`Lessons`, made when first needed."""
    global _LESSONS
    if _LESSONS is None:
        _LESSONS = Lessons()
    return _LESSONS


def _safely(run: Callable[[], Any]) -> Any:
    """A magic's result; a problem the learner can fix, or a failure of the grader itself, is
    said in words, never with the grader's traceback (an interrupt still stops the cell)."""
    try:
        return run()
    except NotebookError as error:
        return Text([str(error)])
    except Exception as error:  # the grader's own bug: its traceback is not the learner's
        then = "Run the cell again, and if it happens again, tell your instructor."
        return Text(grader_failed("this cell", error, then))


def lesson_cell(line: str, cell: str | None = None) -> Any:
    """``%%lesson NAME_OR_PATH``: grade this cell's code as the lesson's solution. The code
    runs isolated and sandboxed, as ``pytest`` runs ``solution.py``; never in this kernel."""
    words = split_line(line)
    if not words:
        return Text(["Name the lesson: for example `%%lesson combine_heads`."])
    try:
        return _safely(lambda: lessons().grade(words[0], cell or ""))
    except KeyboardInterrupt:
        # Still an interrupt (a "Run all" stops here), without the grader's frames in it.
        raise KeyboardInterrupt(
            "the cell's grading was stopped, and the processes running its code with it"
        ) from None


def lesson_hints(line: str) -> Any:
    """``%lesson_hints NAME [all|reset]``: show the hints opened so far and open one more."""
    words = split_line(line)
    if not words:
        return Text(["Name the lesson: for example `%lesson_hints combine_heads`."])
    return _safely(lambda: lessons().hints(words[0], *(words[1:2] or ["next"])))


def lesson_solution(line: str) -> Any:
    """``%lesson_solution NAME [show-anyway]``: the worked solution, once you have passed."""
    words = split_line(line)
    if not words:
        return Text(["Name the lesson: for example `%lesson_solution combine_heads`."])
    return _safely(lambda: lessons().solution(words[0], *(words[1:2] or ["passed"])))


def lesson_course(line: str) -> Any:
    """``%lesson_course PATH``: where the course is, when it is not the nearest one."""
    words = split_line(line)
    if not words:
        folder = lessons().course_folder or find_course(lessons().cwd)
        if folder is None:
            return Text(
                [
                    f"Give the course's folder with `%lesson_course PATH`: there is no "
                    f"course.toml in {lessons().cwd} or the folders above it."
                ]
            )
        return Text([f"lessons: the course in {folder}"])
    return _safely(lambda: lessons().set_course(words[0]))


def forget() -> None:
    """Stop the kernel's :class:`Lessons` and its worker, if any (``%unload_ext``)."""
    global _LESSONS
    if _LESSONS is not None:
        _LESSONS.close()
        _LESSONS = None
