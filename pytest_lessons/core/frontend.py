"""What both front ends show alike: the pytest plugin's terminal and a notebook's cell.

One fault, one message: the cases of one exercise and one learner that fail for one reason
are explained under the first of them, and the others are counted or folded under it
(:class:`FaultGroups`, keyed by :attr:`~pytest_lessons.core.results.CaseResult.reason`). The
words both say the same way are here too: :data:`SAME_WAY`, the apology when the grader
itself fails (:func:`grader_failed`), and how a path is named (:func:`shown_path`); and the
sandbox both choose from the run settings (:func:`choose_sandbox`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Generic, TypeVar

from pytest_lessons.core.results import FAULT, CaseResult
from pytest_lessons.core.settings import Settings
from pytest_lessons.isolation import sandbox

#: How a case that failed as an earlier case of its exercise did is counted: pytest's last
#: line (``7 failed the same way``) and a cell's headline alike.
SAME_WAY = "failed the same way"

T = TypeVar("T")


class FaultGroups(Generic[T]):
    """The first case of each reason for failing, per exercise file and learner, each with
    what the front end keeps of it (a *mark*: a node id and label, the shown failure).

    *kinds* are the reasons that fold: the terminal folds only faults no input changes (a
    watch-out's cases each show their own numbers); a cell folds every reason."""

    def __init__(self, kinds: tuple[str, ...] = (FAULT,)) -> None:
        self.kinds = kinds
        self._first: dict[tuple[str, str, str, str], T] = {}

    def first(self, result: CaseResult, mark: T) -> T | None:
        """The mark of the first case that failed for *result*'s reason: *mark* itself when
        *result* is that first case (the same case asked again gets its own mark back); None
        when its reason is not one that folds."""
        reason = result.reason
        if reason is None or reason[0] not in self.kinds:
            return None
        return self._first.setdefault((result.path, result.learner, *reason), mark)


def grader_failed(where: str, error: BaseException, then: str) -> list[str]:
    """The apology when the grader itself failed on *where* (``this case``, ``this cell``):
    never the grader's traceback, and never the learner's fault; *then* says what to do."""
    return [
        f"The grader itself failed on {where}, not your code ({type(error).__name__}: {error}).",
        then,
    ]


def choose_sandbox(
    resolved: Settings, environ: Mapping[str, str], off_reason: str
) -> tuple[sandbox.Support, sandbox.Policy]:
    """The sandbox the run settings ask for, read alike by both front ends (its mode, the
    variables passed, the user learner code runs as, the limits); *off_reason* is what the
    header says when it is off. Raises :class:`~pytest_lessons.isolation.sandbox.Unavailable`
    or :class:`~pytest_lessons.isolation.sandbox.NoSuchUser`, which each front end words in
    its own terms (an option or an environment variable)."""
    return sandbox.choose(
        resolved.value("sandbox"),
        environ,
        passed=resolved.value("pass_env"),
        user=resolved.value("sandbox_user"),
        off_reason=off_reason,
        limits={key: resolved.value(name) for name, key in sandbox.LIMITS.items()},
    )


def shown_path(path: Path | str, start: Path | str, flavour: ModuleType = os.path) -> str:
    """*path* as a message names it: relative to *start* (where pytest or the notebook runs),
    written the way this system writes paths (``\\`` on Windows). *flavour* is the path module
    (``ntpath`` or ``posixpath``; this system's by default). A path on another drive than
    *start* (Windows) is shown whole."""
    try:
        return str(flavour.relpath(str(path), str(start)))
    except ValueError:
        return str(path)
