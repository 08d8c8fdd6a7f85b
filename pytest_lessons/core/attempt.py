"""What is graded: one piece of code on one case of one exercise (:class:`Attempt`).

Every part of the grader takes an attempt: :mod:`~pytest_lessons.core.grader` (the flow of one
case), :mod:`~pytest_lessons.core.runs` (running and caching code),
:mod:`~pytest_lessons.core.watchouts` and :mod:`~pytest_lessons.core.shrink`. It sits here, below
them all, so that none of them imports another's module to read it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lessons.core import fit, model


@dataclass(frozen=True)
class Attempt:
    """One piece of code graded on one case of one exercise."""

    exercise: model.Exercise
    case: model.Case
    solution: Path = Path()
    """The graded file: the exercise's ``solution.py`` unless given (a learner's submission,
    a notebook cell's file, the reference or mistakes file under ``--lesson-check``)."""
    learner: str = ""
    """Whose code it is, in batch grading; empty for one's own. Caches are kept per learner."""
    entry: str = ""
    """The function to call: the exercise's entry unless given (a mistake function's name)."""
    argument: str | None = None
    """``--lesson-check`` of a fitted watch-out: an expression of axis sizes whose value is
    given to the graded function as its last argument."""
    folder: Path | None = None
    """The learner's folder, which the graded file is read beneath with no link followed
    (a class run's ``submissions/<learner>``); the file's own folder when None."""

    def __post_init__(self) -> None:
        if self.solution == Path():
            object.__setattr__(self, "solution", self.exercise.solution)
        if not self.entry:
            object.__setattr__(self, "entry", self.exercise.entry)

    @property
    def mine(self) -> tuple[str, str]:
        """The key of this learner's work on this exercise, for per-exercise budgets."""
        return str(self.exercise.path), self.learner

    def on(self, case: model.Case) -> Attempt:
        """The same code on another case of the exercise."""
        return dataclasses.replace(self, case=case)


def sizes(exercise: model.Exercise, inputs: dict[str, Any]) -> dict[str, int]:
    """The sizes of the lesson's named axes in a case with *inputs*."""
    if exercise.generate is None:
        return {}
    return fit.axis_sizes(exercise.generate.inputs, inputs)
