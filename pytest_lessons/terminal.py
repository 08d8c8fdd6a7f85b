"""What the pytest front end writes in the terminal besides pytest's own lines: the header
(how learner code runs, the sandbox), the fold of a case that failed as an earlier one did,
a class run's progress line (:class:`ClassProgress`), and the results gathered from every
report (:class:`ResultCollector`, also for JUnit XML). The ``lessons`` section at the end is
:mod:`pytest_lessons.core.summary`'s; the hookimpls that call these are in
:mod:`pytest_lessons.plugin`.
"""

from __future__ import annotations

import importlib.metadata
import json
import time
from typing import Any, cast

import pytest

from pytest_lessons.core.frontend import SAME_WAY
from pytest_lessons.core.results import CaseResult
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.text import visible
from pytest_lessons.reports import formats, tallies
from pytest_lessons.reports.classreport import progress_line
from pytest_lessons.session import KEY, LessonSession


def header_lines(
    lessons: LessonSession, grading: bool, redirected: list[str], detail: bool = False
) -> list[str]:
    """The header's lines: one line on how learner code runs (isolated or not, the sandbox,
    torch, the limits); with *detail* (``-v``) a second one on what the sandbox denies, its
    layers, the user and the limits, which would otherwise start every run with some 600
    characters a learner does not need; a warning when a grading run has no sandbox, and
    *redirected* (the files named on the command line that are graded as their lessons)."""
    resolved = lessons.settings
    try:
        torch = f"torch {importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        torch = "torch not installed"
    timeout = resolved.value("timeout")
    if resolved.isolation == "off":
        why = f" because {resolved.isolation_reason}" if resolved.isolation_reason else ""
        return [
            f"lessons: NOT isolated{why}: learner code runs inside pytest ({torch}); "
            "use this for debugging, never for grading",
            *redirected,
        ]
    support = lessons.support
    if support.abi:
        boxed = f"sandbox Landlock ABI {support.abi}" + (" + seccomp" if support.seccomp else "")
    else:
        boxed = "sandbox OFF"
    lines = [
        f"lessons: learner code runs isolated ({resolved.isolation}, {boxed}, {torch}, "
        f"timeout {timeout:g} s a case, answers up to {resolved.value('answer_size'):g} MiB)"
    ]
    if detail:
        lines.append("lessons: " + sandbox_line(lessons))
    if grading and not lessons.support.abi:
        lines.append(UNSANDBOXED_GRADING)
    return lines + redirected


#: Said at the start and the end of a grading run without the sandbox.
UNSANDBOXED_GRADING = (
    "lessons: WARNING: grading without a sandbox. Learner code can read the expected answers "
    "and change the course's files; run the grader as a separate user or in a container "
    "(docs/ci-grading.md, 'What the sandbox protects')."
)


def sandbox_line(lessons: LessonSession) -> str:
    """What protects the course from learner code in this run, in one line."""
    if lessons.policy is None:
        return "sandbox off"
    return sandbox.describe(lessons.support, lessons.policy)


def same_way(report: pytest.TestReport, config: pytest.Config) -> Any:
    """``pytest_report_teststatus`` for a case that failed for the same fault as an earlier
    case of its exercise: counted as :data:`~pytest_lessons.core.frontend.SAME_WAY` in the last
    line, not shown again (None for any other report)."""
    if report.when != "call" or not report.failed or config.option.verbose > 1:
        return None
    data = getattr(report, "lessons", None)
    lessons = config.stash.get(KEY, None)
    if not data or not data.get("fault") or lessons is None:
        return None
    result = CaseResult.from_dict(data)
    first = lessons.fault_reports.first(result, (report.nodeid, result.label))
    if first is None or first[0] == report.nodeid:
        return None
    return SAME_WAY, "F", (f"FAILED (as {first[1]})", {"red": True})


class ClassProgress:
    """A class run's quiet terminal: no letter per case and no failure texts (they are in the
    feedback files and reports), but a progress line: learners done, cases, time left."""

    def __init__(self) -> None:
        self.cases: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.shown = 0
        self.hidden = False
        """Whether the hidden cases began (the line that says so is written)."""
        self.started = time.monotonic()
        self.reporter: Any = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if self.reporter is not None:
            self.reporter.showfspath = False
            # Warnings stay; the failures' lines go to the feedback files and reports.
            self.reporter.reportchars = "w" if "w" in self.reporter.reportchars else ""
        session.config.option.tbstyle = "no"

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            learner = getattr(item, "learner", None)
            if learner is not None:
                self.cases[learner] = self.cases.get(learner, 0) + 1
        self.started = time.monotonic()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under pytest-xdist the workers collect: count a class's cases from one's ids
        (``path::learner/case-id``)."""
        if self.cases:
            return
        for nodeid in ids:
            name = nodeid.rsplit("::", 1)[-1]
            if "/" in name:
                learner = name.rsplit("/", 1)[0]
                self.cases[learner] = self.cases.get(learner, 0) + 1
        self.started = time.monotonic()

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        if report.when != "call":
            return None
        same = same_way(report, config)
        return (same[0] if same else report.outcome), "", ""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "lessons", None)
        if report.when != "call" or not data or self.reporter is None:
            return
        learner = str(data["learner"])
        self.done[learner] = self.done.get(learner, 0) + 1
        done, total = sum(self.done.values()), sum(self.cases.values()) or 1
        finished = sum(1 for who, n in self.done.items() if n >= self.cases.get(who, 0))
        line = progress_line(
            done, total, finished, len(self.cases), time.monotonic() - self.started
        )
        if data.get("hidden") and done < total:
            # Hidden cases run last: a clock read between two of them would time the one in
            # between, which can sleep for as long as its inputs say. One line as they start,
            # the next once every case is done.
            if not self.hidden:
                self.hidden = True
                self.reporter.write_line(f"{line}; hidden cases now, shown once all are done")
            return
        if _on_a_terminal(self.reporter):
            self.reporter.rewrite(line)
            if done >= total:
                self.reporter.write_line("")
        elif done * 10 // total > self.shown:
            # Without a terminal to redraw (a CI log), a line at each tenth.
            self.shown = done * 10 // total
            self.reporter.write_line(line)


def _on_a_terminal(reporter: pytest.TerminalReporter) -> bool:
    """Whether pytest writes to a terminal. pytest 7 has ``isatty`` as a bool attribute,
    pytest 8 and newer as a method."""
    isatty: Any = cast(Any, reporter).isatty
    return bool(isatty() if callable(isatty) else isatty)


class ResultCollector:
    """Gathers each case's result from its report, also from pytest-xdist workers, and hands
    each to pytest's JUnit XML writer as a suite-level property (see :func:`junit_property`)."""

    def __init__(self, lessons: LessonSession) -> None:
        self.lessons = lessons
        self.junit: Any = None
        self.looked = False

    def _junit(self, config: pytest.Config) -> Any:
        # pytest's JUnit writer (--junitxml) is registered without a public name; its public
        # method add_global_property is what the record_testsuite_property fixture calls.
        if not self.looked:
            self.looked = True
            self.junit = next(
                (
                    plugin
                    for plugin in config.pluginmanager.get_plugins()
                    if callable(getattr(plugin, "add_global_property", None))
                ),
                None,
            )
        return self.junit

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "lessons", None)
        if data and report.when == "call":
            result = CaseResult.from_dict(data)
            self.lessons.results.append(result)
            config = self.lessons.config
            junit = self._junit(config) if config is not None else None
            if junit is not None:
                junit.add_global_property(*junit_property(report.nodeid, result))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        junit = self._junit(session.config)
        if junit is not None and self.lessons.results:
            totals = tallies.totals(self.lessons.results)
            junit.add_global_property("lessons:points", f"{totals['points']:g}")
            junit.add_global_property("lessons:max_points", f"{totals['max_points']:g}")


def junit_property(nodeid: str, result: CaseResult) -> tuple[str, str]:
    """A case's grading data as a JUnit ``<property>`` of the test suite: name ``lessons:`` and
    the test's node id, value a JSON object. Properties inside a ``<testcase>`` are not valid
    for Jenkins' xUnit (junit-10.xsd) nor pytest's default ``junit_family`` (xunit2); a
    suite's ``<properties>`` is valid for both."""
    data: dict[str, Any] = {
        "exercise": result.exercise,
        "points": result.points,
        "max_points": result.max_points,
    }
    if result.diagnosis_kind == "watch_out":
        data["watch_out"] = result.diagnosis
    if result.learner:
        data["learner"] = result.learner
    # XML 1.0 holds no control character and no lone surrogate, and pytest escapes a
    # property's value but not its name: a folder name may hold either, so both are made
    # text here (the name's as escapes a reader sees, the value's as JSON's and U+FFFD).
    value = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return visible(f"lessons:{nodeid}"), formats.encoded(value).decode("utf-8")
