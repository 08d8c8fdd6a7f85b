"""Typed results: how one case of one learner went, as every report, summary and gradebook
reads it.

A :class:`CaseResult` is made by the grading core (:mod:`pytest_lessons.core.grading`) and travels
between processes as plain data (:meth:`CaseResult.to_dict`, :meth:`CaseResult.from_dict`):
pytest-xdist workers put the dict on their test reports, shards write it into the ``json``
report, and the merge step reads it back. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any

#: The kinds of :attr:`CaseResult.reason`.
WATCH_OUT, FAULT, DETECTOR = "watch_out", "fault", "detector"


class Status(str, Enum):
    """How a case ended. A ``str`` subclass, so ``status == "passed"`` and JSON work as is."""

    PASSED = "passed"
    """The answer is right within the case's tolerance."""
    FAILED = "failed"
    """The learner's code returned an answer, and it is wrong."""
    ERROR = "error"
    """The learner's code gave no answer: it raised, ran out of time, died, could not be
    loaded, or was not run because the exercise's loop budget was spent."""
    INTERNAL = "internal"
    """The grader failed (or the lesson's reference did): not the learner's fault."""
    BROKEN = "broken"
    """The lesson's ``exercise.toml`` cannot be read, so none of its cases can be graded."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class CaseResult:
    """One case of one exercise, graded for one learner.

    Hidden cases carry no inputs or answers here: ``message`` and ``call`` were made safe to
    show before the result was built.
    """

    exercise: str
    """The exercise's slug (its folder name unless ``exercise.toml`` says otherwise)."""
    title: str
    """The exercise's title, for people."""
    path: str
    """The ``exercise.toml`` the case comes from, as an absolute path."""
    status: Status
    points: float = 0.0
    """Points earned: ``max_points`` when passed, else 0."""
    max_points: float = 0.0
    case: int = 0
    """The case's number in its exercise, from 1 (0 for a broken exercise)."""
    cases: int = 0
    """How many cases the exercise has."""
    id: str = ""
    """The case's id in test names, such as ``case-1-worked-example``."""
    label: str = ""
    """The case as a learner reads it, such as ``case 1 (worked example)``."""
    line: int | None = None
    """The line of ``exercise.toml`` where the case (or the file's error) is."""
    learner: str = ""
    """The learner's folder name in batch grading; empty for one's own solution."""
    hidden: bool = False
    generated: bool = False
    headline: str = ""
    """The failure's first paragraph on one line: what to do, then why (empty when passed)."""
    message: str = ""
    """The whole failure text, never shortened for repeats, without colour codes."""
    diagnosis: str | None = None
    """The id of the diagnosis shown (a watch-out's id or a detector's), if any."""
    diagnosis_kind: str | None = None
    """``watch_out`` for the lesson's own mistakes, ``detector`` for generic findings."""
    fault: str = ""
    """A failure no input changes (a stub, a syntax error, a returned tensor, "not run"):
    its key, so cases failing the same way can be counted once."""
    unloadable: bool = False
    """The learner's file could not be used at all (missing, not importable, no function)."""
    seconds: float = 0.0
    """How long the case's code ran (the runner's measure, in every isolation mode): not the
    time it waited for a worker, nor a worker's start; until it was stopped when it timed
    out; 0 when it did not run."""
    call: str = ""
    """The call the case makes, as code a learner can paste (inputs left out when hidden)."""
    output: str = ""
    """What the learner's code printed, capped (empty for hidden cases)."""
    lesson_error: str = ""
    """When the lesson's own code failed on this case (its reference on a generated case):
    the author's account of it, with the exception, the author's file and line, and the
    case's inputs. Never part of ``headline`` or ``message``, which learners read."""

    @property
    def passed(self) -> bool:
        return self.status == Status.PASSED

    @property
    def reason(self) -> tuple[str, str] | None:
        """Why the case failed, when other cases can fail for that same reason: the lesson's
        watch-out (``("watch_out", id)``), a fault no input changes (``("fault", key)``) or a
        generic detector's finding (``("detector", id)``). None for a pass, or for a wrong
        answer that is only its own. Every grouping of "one reason, one message" reads this
        (the terminal, a cell, the summary, the feedback files)."""
        if self.passed:
            return None
        if self.diagnosis_kind == WATCH_OUT and self.diagnosis:
            return WATCH_OUT, self.diagnosis
        if self.fault:
            return FAULT, self.fault
        if self.diagnosis:
            return DETECTOR, self.diagnosis
        return None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON types only) for another process or a file."""
        data = dataclasses.asdict(self)
        data["status"] = self.status.value
        data["passed"] = self.passed
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        """A result back from :meth:`to_dict`'s data (unknown keys, such as ``passed``, are
        ignored, so newer writers stay readable)."""
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["status"] = Status(values["status"])
        return cls(**values)
