"""The result record of a case, as every report reads it: :func:`result` builds a
:class:`~pytest_lessons.core.results.CaseResult` from what grading decided
(:class:`~pytest_lessons.core.feedback.Verdict`) and what ran; :func:`broken_result` stands for
an ``exercise.toml`` that cannot be read; :func:`call_text` is the call a case makes, as code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lessons.core import budget, datafiles, gradients, model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.detectors import Diagnosis
from pytest_lessons.core.feedback import Verdict
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.words import abbreviate
from pytest_lessons.isolation.outcome import RAISED, SETUP, Outcome


def result(
    attempt: Attempt,
    verdict: Verdict,
    outcome: Outcome | None,
    diagnosis: Diagnosis | None,
    text: str,
    work_budgets: Any = None,
    output: str = "",
) -> CaseResult:
    """The case's result as every report reads it: *verdict*'s status and whole text (*text*
    when the verdict has none), the points, and what the case ran (*outcome*, None when
    nothing ran), with *output* the case's printed output as the reports keep it and
    *work_budgets* the run's ``work_budgets`` setting."""
    exercise, case = attempt.exercise, attempt.case
    passed = verdict.status == Status.PASSED
    message = "" if passed else verdict.full or text
    # A budget case counted as feedback (--lesson-work-budgets) is worth 0: its figures
    # come from the process that runs learner code (core/budget.py says why).
    points = budget.worth(case.points, case.work, work_budgets)
    return CaseResult(
        exercise=exercise.slug,
        title=exercise.title,
        path=str(exercise.path),
        status=verdict.status,
        points=points if passed else 0.0,
        max_points=points,
        case=case.number,
        cases=len(exercise.cases),
        id=case.id,
        label=case.label,
        line=case.line,
        learner=attempt.learner,
        hidden=case.hidden,
        generated=case.generated,
        headline="" if passed else verdict.headline or message.split("\n", 1)[0],
        message=message,
        diagnosis=diagnosis.id if diagnosis and not passed else None,
        diagnosis_kind=diagnosis.kind if diagnosis and not passed else None,
        fault=verdict.fault,
        unloadable=unloadable(outcome),
        # The time its code ran, as the runner measured it: not the time this process
        # waited for a pool's worker, nor the grading around it. None for a hidden case:
        # code can run for as long as an input's value says, and so spell it in a report.
        seconds=round(outcome.seconds, 4) if outcome is not None and not case.hidden else 0.0,
        call=call_text(exercise, case),
        output=output,
        lesson_error=verdict.lesson_error,
        files=datafiles.checksums(exercise.folder, case.inputs),
    )


def broken_result(path: Path, error: model.ExerciseError, learner: str = "") -> CaseResult:
    """The result standing for an ``exercise.toml`` that cannot be read."""
    return CaseResult(
        exercise=path.parent.name,
        title=path.parent.name,
        path=str(path),
        status=Status.BROKEN,
        line=error.line,
        id="exercise",
        label="exercise.toml",
        learner=learner,
        headline=str(error),
        message=str(error),
    )


def call_text(exercise: model.Exercise, case: model.Case) -> str:
    """The call a case makes, as code a learner can paste (inputs left out when hidden)."""
    if case.hidden:
        return f"{exercise.entry}({', '.join(exercise.inputs)})  # a hidden case"
    arguments = ", ".join(f"{name}={abbreviate(case.inputs[name])}" for name in exercise.inputs)
    if exercise.gradients is not None and exercise.gradients.upstream:
        arguments += ", " + gradients.shown_upstream(exercise.gradients)
    return f"{exercise.entry}({arguments})"


def unloadable(outcome: Outcome | None) -> bool:
    """Whether the learner's file could not be used at all: missing, not importable (a syntax
    error, an exception at import) or without a usable entry function."""
    if outcome is None:
        return False
    return outcome.kind == SETUP or (outcome.kind == RAISED and outcome.phase == "import")
