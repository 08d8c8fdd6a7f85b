"""Typed results: how one case of one learner went, as every report, summary and gradebook
reads it.

A :class:`CaseResult` is made by the grading core (:mod:`pytest_lessons.core.grader`) and travels
between processes as plain data (:meth:`CaseResult.to_dict`, :meth:`CaseResult.from_dict`):
pytest-xdist workers put the dict on their test reports, shards write it into the ``json``
report, and the merge step reads it back.
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


class FaultKind(str, Enum):
    """What kind of failure a :attr:`CaseResult.fault` key records, read by :func:`fault_kind`.

    Each value is the key's first words as the grading core writes them
    (:func:`pytest_lessons.core.texts.fault_key`, the runner's "not run", the grader's
    "internal"), so the key itself (a report field) stays as it is, and reports ask for the
    kind here instead of reading prefixes."""

    NONE = ""
    """No fault: the case passed, or its answer was wrong (evidence differs case to case)."""
    MISSING_FILE = "setup missing_file"
    """The learner handed in no file for the exercise."""
    SETUP = "setup"
    """The learner's file could not be used (not importable, no such function ...)."""
    TIMEOUT = "timeout"
    NOT_RUN = "not run"
    """Not run: the exercise's loop budget was spent on earlier timeouts."""
    DIED = "died"
    """The learner's code ended its process (a signal, an exit, out of memory)."""
    NOT_IMPLEMENTED = "raised NotImplementedError"
    """The starter's stub, still in place."""
    RAISED = "raised"
    RETURNED = "returned"
    """An answer of the wrong kind (a tensor, a missing size-1 dimension ...)."""
    CHECK = "check"
    """A check of the lesson's harness failed (its detail is the check's id)."""
    INTERNAL = "internal"
    OTHER = "other"
    """A key of none of these kinds (written by a newer grader, say)."""


#: The kinds whose key is the kind alone.
_WHOLE = (
    FaultKind.NONE,
    FaultKind.MISSING_FILE,
    FaultKind.TIMEOUT,
    FaultKind.NOT_RUN,
    FaultKind.INTERNAL,
)
#: The kinds whose key is the kind, a space and its detail.
_PREFIXED = (FaultKind.RAISED, FaultKind.SETUP, FaultKind.RETURNED, FaultKind.CHECK)


def fault_kind(fault: str) -> FaultKind:
    """The kind of the fault key *fault* (:attr:`CaseResult.fault`)."""
    for kind in _WHOLE:
        if fault == kind.value:
            return kind
    for kind in (FaultKind.DIED, FaultKind.NOT_IMPLEMENTED):
        if fault.startswith(kind.value):
            return kind
    for kind in _PREFIXED:
        if fault.startswith(kind.value + " "):
            return kind
    return FaultKind.OTHER


def fault_detail(fault: str) -> str:
    """What the fault key says after its kind: ``ValueError at solution.py:3`` of a raised
    exception, ``syntax_error`` of a file that cannot be loaded (empty for a whole key)."""
    kind = fault_kind(fault)
    if kind in (
        FaultKind.RAISED,
        FaultKind.SETUP,
        FaultKind.RETURNED,
        FaultKind.DIED,
        FaultKind.CHECK,
    ):
        return fault[len(kind.value) :].strip()
    return ""


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
    out; 0 when it did not run, and for a hidden case (whose time could spell its inputs)."""
    call: str = ""
    """The call the case makes, as code a learner can paste (inputs left out when hidden)."""
    output: str = ""
    """What the learner's code printed, capped (empty for hidden cases)."""
    lesson_error: str = ""
    """When the lesson's own code failed on this case (its reference on a generated case):
    the author's account of it, with the exception, the author's file and line, and the
    case's inputs. Never part of ``headline`` or ``message``, which learners read."""
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    """The case's inputs read from files: input name -> the file's sha256 (hex), as the grader
    read it, so a report says which fixture was graded (no file name: hidden cases have these
    too, and their files are not named to learners)."""

    @property
    def passed(self) -> bool:
        return self.status == Status.PASSED

    @property
    def fault_kind(self) -> FaultKind:
        """The kind of :attr:`fault` (derived from it, so the report's fields are unchanged)."""
        return fault_kind(self.fault)

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
