"""pytest collection nodes: an ``exercise.toml`` file and one item per case.

Thin glue: reading the file is :mod:`~pytest_lessons.model`'s job, running learner code the
runner's, judging :mod:`~pytest_lessons.compare`'s and the words :mod:`~pytest_lessons.report`'s.
Collection parses TOML only; it imports neither torch nor learner code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_lessons import model
from pytest_lessons.compare import Comparison, compare
from pytest_lessons.outcome import RETURNED, Outcome
from pytest_lessons.report import Context, render
from pytest_lessons.runner import Job

if TYPE_CHECKING:
    from pytest_lessons.plugin import LessonSession


class LessonFailure(Exception):
    """A case failed; the message is the whole text the learner sees."""


class ExerciseFile(pytest.File):
    """An ``exercise.toml``: one item per case, or one failing item if the file is broken."""

    def collect(self) -> Any:
        try:
            exercise = model.load(self.path)
        except model.ExerciseError as error:
            yield BrokenExercise.from_parent(self, name="exercise", error=error)
            return
        lessons = _lessons(self.config)
        if not self.config.option.collectonly:
            lessons.runner.warm_up()
        for case in exercise.cases:
            yield CaseItem.from_parent(
                self, name=f"case-{case.number}", exercise=exercise, case=case
            )


def _lessons(config: pytest.Config) -> LessonSession:
    from pytest_lessons.plugin import session_of

    return session_of(config)


class BrokenExercise(pytest.Item):
    """Stands for an ``exercise.toml`` that cannot be read, so the run fails and says why."""

    def __init__(self, *, error: model.ExerciseError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise LessonFailure(
            f"Fix {_lessons(self.config).show(self.error.path)}: this exercise cannot be "
            f"graded until its file is valid.\n\n  {self.error}\n"
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return _repr_failure(self, excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.error.line - 1 if self.error.line else 0
        return self.path, line, f"{self.path.parent.name}: exercise.toml is broken"


class CaseItem(pytest.Item):
    """One case of an exercise: run the learner's function, compare, report."""

    def __init__(self, *, exercise: model.Exercise, case: model.Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise
        self.case = case
        self.outcome: Outcome | None = None
        self.comparison: Comparison | None = None

    def runtest(self) -> None:
        lessons = _lessons(self.config)
        exercise, case = self.exercise, self.case
        limits = lessons.settings.limits(exercise.limits)
        job = Job(
            solution=exercise.solution,
            entry=exercise.entry,
            inputs=[case.inputs[name] for name in exercise.inputs],
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            output_cap=limits.output_cap,
            threads=limits.threads,
        )
        outcome = lessons.runner.run(job)
        self.outcome = outcome
        if outcome.kind == RETURNED:
            self.comparison = compare(case.expected, outcome.answer, case.rtol, case.atol)
            if self.comparison.passed:
                return
        context = Context(
            slug=exercise.slug,
            entry=exercise.entry,
            solution=exercise.solution,
            inputs=case.inputs,
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            show=lessons.show,
        )
        raise LessonFailure(render(outcome, self.comparison, context))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return _repr_failure(self, excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line - 1 if self.case.line else 0
        return self.path, line, f"{self.exercise.slug}: {self.case.label}"


def _repr_failure(
    item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException], style: Any
) -> Any:
    if isinstance(excinfo.value, LessonFailure):
        return str(excinfo.value)
    if item.config.option.verbose > 1:
        return pytest.Item.repr_failure(item, excinfo, style)
    # The learner never sees the grader's own traceback; -vv shows it to its developers.
    return (
        "The grader itself failed on this case, not your code "
        f"({excinfo.typename}: {excinfo.value}).\n"
        "Run again with -vv to see where, and tell your instructor.\n"
    )
