"""A fake runner for the grading core: tests drive :class:`Grader` without a process."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import model, settings
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.grader import Grader
from pytest_lessons.core.results import CaseResult
from pytest_lessons.isolation.outcome import Outcome
from pytest_lessons.isolation.runner import Job, Runner

from .lessons import DOUBLE_TOML


class FakeRunner(Runner):
    """Runs no code: ``code[(file name, function)]`` computes each job's outcome from its
    inputs (a plain value is taken as the returned answer). Every job is kept."""

    def __init__(self, code: dict[tuple[str, str], Callable[..., Any]]) -> None:
        self.code = code
        self.jobs: list[Job] = []

    def run(self, job: Job) -> Outcome:
        self.jobs.append(job)
        function = self.code.get((job.solution.name, job.entry))
        if function is None:
            return Outcome("setup", error_type="missing_file")
        answer = function(*job.inputs)
        return answer if isinstance(answer, Outcome) else Outcome("returned", answer=answer)

    def ran(self, name: str) -> int:
        return sum(job.solution.name == name for job in self.jobs)


def double(x: Any) -> Any:
    return [double(v) for v in x] if isinstance(x, list) else 2 * x


def lesson(tmp_path: Path, toml: str = DOUBLE_TOML, **files: str) -> model.Exercise:
    folder = tmp_path / "double"
    folder.mkdir(exist_ok=True)
    for name, text in {"reference.py": "", **files}.items():
        (folder / name).write_text(text)
    (folder / "exercise.toml").write_text(toml)
    return model.load(folder / "exercise.toml")


def grader(code: dict[tuple[str, str], Callable[..., Any]]) -> tuple[Grader, FakeRunner]:
    runner = FakeRunner(code)
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    return Grader(runner, resolved, show=lambda path: Path(path).name), runner


def grade_all(
    exercise: model.Exercise, grader_: Grader, **attempt: Any
) -> list[tuple[CaseResult, str]]:
    out = []
    for case in exercise.cases:
        graded = grader_.grade(Attempt(exercise, case, **attempt))
        out.append((graded.result, graded.text))
    return out
