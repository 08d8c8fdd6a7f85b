"""The plugin's state for one pytest run, kept in ``config.stash`` (pytest layer).

It holds what the pytest front end adds around the grading core: the resolved settings, the
runner and the :class:`~pytest_lessons.core.grader.Grader` that owns every grading cache, the
sandbox as the collected course makes it, and the results gathered from test reports (also
from pytest-xdist workers) for the summary and the report files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_lessons.core import model, settings, summary
from pytest_lessons.core.frontend import FaultGroups, shown_path
from pytest_lessons.core.grader import Grader
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.runner import Runner


@dataclass
class LessonSession:
    """The plugin's per-run state."""

    settings: settings.Settings
    runner: Runner
    invocation_dir: Path
    config: pytest.Config | None = None
    fault_reports: FaultGroups[tuple[str, str]] = field(default_factory=FaultGroups)
    """The first report of each fault: its (node id, label), as the terminal saw them (also
    from pytest-xdist workers)."""
    results: list[CaseResult] = field(default_factory=list)
    """Every case's result, as it arrived on its report (also from xdist workers)."""
    submissions: Path | None = None
    """Batch grading: the folder of learners' folders."""
    policy: sandbox.Policy | None = None
    """The sandbox around learner code, before the course is known; None when isolation is
    off."""
    support: sandbox.Support = field(default_factory=lambda: sandbox.Support(0))
    """What the kernel offers, as probed (for the header)."""
    checkout: Path | None = None
    """pytest's root folder: none of it is readable to learner code."""
    course: set[Path] = field(default_factory=set)
    """Every exercise folder collected: none of it is readable to learner code."""
    exercises: dict[Path, model.Exercise | None] = field(default_factory=dict)
    """Every exercise collected, by its file (None for one that cannot be read): what the
    summary reads (:meth:`exercise`)."""
    shard: tuple[int, int] | None = None
    """Batch grading: (K, N) to grade the K-th of N shards of the learners."""
    planned: Roll | None = None
    """Batch grading, one shard of a plan (``--lesson-plan``): its own learners only, so the
    submissions folder is never listed."""
    runs_cases: bool = True
    """Whether this pytest process runs cases (not a listing, the help or an xdist
    controller): only then is the worker started."""
    grader: Grader = field(init=False)
    _course_policy: sandbox.Policy | None = None

    def __post_init__(self) -> None:
        self.grader = Grader(
            self.runner, self.settings, sandbox=self.sandbox_policy, show=self.show
        )

    def sandbox_policy(self) -> sandbox.Policy | None:
        """The sandbox for every job of this run, with the whole course out of reach
        (computed once, after collection, when the first job is made)."""
        if self.policy is None:
            return None
        if self._course_policy is None:
            fenced = set(self.course)
            if self.submissions is not None:
                fenced.add(self.submissions)
            self._course_policy = self.policy.for_course(sorted(fenced), self.checkout)
        return self._course_policy

    def roll(self) -> Roll | None:
        """Batch grading: the class (every learner of the submissions folder, this run's
        shard, what was skipped); None for one learner's run."""
        if self.submissions is None:
            return None
        if self.planned is not None:
            return self.planned
        return Roll.of(self.submissions, self.shard, self.show(self.submissions))

    def exercise(self, path: Path) -> model.Exercise | None:
        """The exercise of *path* as collection read it, so the summary parses nothing again
        (the file may have changed or gone since). Only a process that collected nothing, a
        pytest-xdist controller, reads the file itself, once per exercise."""
        if path not in self.exercises:
            self.exercises[path] = summary.load(path)
        return self.exercises[path]

    def show(self, path: Path | str) -> str:
        """*path* as the learner should see it: relative to where pytest was started (a
        class's feedback files then name each learner's own files as they handed them in:
        :func:`~pytest_lessons.reports.outputs.own_files`)."""
        return shown_path(path, self.invocation_dir)


KEY = pytest.StashKey[LessonSession]()


def session_of(config: pytest.Config) -> LessonSession:
    """The plugin's state for *config*."""
    return config.stash[KEY]
