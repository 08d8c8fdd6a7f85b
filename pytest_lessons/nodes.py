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
from pytest_lessons.compare import Comparison, compare, read_numbers
from pytest_lessons.diagnose import Diagnosis, Evidence, best
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
        self.lesson_result: dict[str, Any] = {}

    def runtest(self) -> None:
        self.lesson_result = {
            "exercise": self.path.parent.name,
            "path": str(self.path),
            "cases": 0,
            "case": 0,
            "label": "exercise.toml",
            "passed": False,
            "broken": True,
            "headline": str(self.error),
        }
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
    """One case of an exercise: run the learner's function, compare, diagnose, report."""

    def __init__(self, *, exercise: model.Exercise, case: model.Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise
        self.case = case
        self.outcome: Outcome | None = None
        self.comparison: Comparison | None = None
        self.diagnosis: Diagnosis | None = None
        self.lesson_result: dict[str, Any] = {}
        """What the terminal summary and reports need, as plain data (it travels with
        pytest-xdist); set by :meth:`runtest`."""

    def job(self, solution: Path, entry: str) -> Job:
        """A job running *entry* of *solution* on this case's inputs, with its limits."""
        lessons = _lessons(self.config)
        limits = lessons.settings.limits(self.exercise.limits)
        return Job(
            solution=solution,
            entry=entry,
            inputs=[self.case.inputs[name] for name in self.exercise.inputs],
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            output_cap=limits.output_cap,
            threads=limits.threads,
        )

    def runtest(self) -> None:
        lessons = _lessons(self.config)
        exercise, case = self.exercise, self.case
        job = self.job(exercise.solution, exercise.entry)
        outcome = lessons.runner.run(job)
        self.outcome = outcome
        if outcome.kind == RETURNED:
            self.comparison = compare(case.expected, outcome.answer, case.rtol, case.atol)
            if self.comparison.passed:
                self._record(passed=True)
                return
            if self.comparison.got is not None:
                evidence = Evidence(
                    got=self.comparison.got,
                    expected=read_numbers(case.expected),
                    rtol=case.rtol,
                    atol=case.atol,
                    inputs=case.inputs,
                    problem=self.comparison.problem,
                )
                found = self.ihook.pytest_lessons_diagnose(item=self, evidence=evidence)
                self.diagnosis = best(found)
        repeat_of = ""
        if self.diagnosis is not None:
            repeat_of = lessons.first_seen.setdefault(
                (str(exercise.path), self.diagnosis.headline), case.label
            )
            repeat_of = "" if repeat_of == case.label else repeat_of
        context = Context(
            slug=exercise.slug,
            entry=exercise.entry,
            solution=exercise.solution,
            inputs=case.inputs,
            timeout=job.timeout,
            memory_mb=job.memory_mb,
            show=lessons.show,
            color=lessons.color,
        )
        text = render(outcome, self.comparison, context, self.diagnosis, repeat_of)
        self._record(passed=False, headline=text.split("\n", 1)[0])
        raise LessonFailure(text)

    def _record(self, passed: bool, headline: str = "") -> None:
        diagnosis = self.diagnosis
        self.lesson_result = {
            "exercise": self.exercise.slug,
            "path": str(self.exercise.path),
            "cases": len(self.exercise.cases),
            "case": self.case.number,
            "label": self.case.label,
            "passed": passed,
            "headline": headline,
            "diagnosis": diagnosis.id if diagnosis else None,
            "diagnosis_kind": diagnosis.kind if diagnosis else None,
        }
        if diagnosis is not None and diagnosis.kind == "watch_out":
            self.user_properties.append(("watch_out", diagnosis.id))

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
