"""The pytest plugin, registered through the ``pytest11`` entry point as ``lessons``.

It collects ``exercise.toml`` files, resolves the run settings once, owns the runner that
executes learner code, registers the diagnosis hooks and their built-in implementations, and
writes the ``lessons`` summary (progress, hints, worked solutions). Loading it imports neither
torch nor any learner code.
"""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import diagnose, model, settings, summary
from pytest_lessons.compare import Numbers, read_numbers
from pytest_lessons.nodes import BrokenExercise, CaseItem, ExerciseFile
from pytest_lessons.outcome import RETURNED
from pytest_lessons.runner import Runner, make_runner


@dataclass
class LessonSession:
    """The plugin's per-session state, kept in ``config.stash``."""

    settings: settings.Settings
    runner: Runner
    invocation_dir: Path
    config: pytest.Config | None = None
    first_seen: dict[tuple[str, str], str] = field(default_factory=dict)
    """(exercise file, diagnosis headline) -> the label of the first case that had it."""
    mistakes: dict[tuple[str, int, str], Numbers | None] = field(default_factory=dict)

    @property
    def color(self) -> bool:
        """Whether the mismatch map may use colour: as pytest's own output does."""
        if self.config is None:
            return False
        try:
            return self.config.get_terminal_writer().hasmarkup
        except AssertionError:  # no terminal reporter (an xdist worker): follow --color
            return self.config.getoption("color", "auto") == "yes"

    def show(self, path: Path | str) -> str:
        """*path* as the learner should see it: relative to where pytest was started."""
        try:
            return os.path.relpath(path, self.invocation_dir)
        except ValueError:  # another drive on Windows
            return str(path)

    def mistake_answer(self, item: CaseItem, watch: model.WatchOut) -> Numbers | None:
        """What the author's mistake function returns on *item*'s case (None if it fails).

        Author code, but it runs like learner code (in the worker), on fresh inputs: the judge
        only ever reads plain data, whoever wrote the code.
        """
        exercise = item.exercise
        key = (str(exercise.path), item.case.number, watch.id)
        if key not in self.mistakes:
            answer: Numbers | None = None
            if exercise.mistakes is not None and watch.mistake:
                outcome = self.runner.run(item.job(exercise.mistakes, watch.mistake))
                if outcome.kind == RETURNED:
                    try:
                        answer = read_numbers(outcome.answer)
                    except Exception:  # not numbers: this mistake cannot be matched
                        answer = None
            self.mistakes[key] = answer
        return self.mistakes[key]


_KEY = pytest.StashKey[LessonSession]()


def session_of(config: pytest.Config) -> LessonSession:
    """The plugin's state for *config*."""
    return config.stash[_KEY]


class WatchOutMatcher:
    """Built-in: the lesson's ``[[watch_out]]`` entries (plugin name ``lessons.watch_outs``)."""

    @pytest.hookimpl(trylast=True)
    def pytest_lessons_diagnose(
        self, item: CaseItem, evidence: diagnose.Evidence
    ) -> diagnose.Diagnosis | None:
        watch_outs = item.exercise.watch_outs
        if not watch_outs:
            return None
        lessons = session_of(item.config)
        answers = {w.id: lessons.mistake_answer(item, w) for w in watch_outs if w.mistake}
        generic = diagnose.detect(evidence) if any(w.detector for w in watch_outs) else None
        return diagnose.match_watch_outs(evidence, watch_outs, answers, generic)


class GenericDetectors:
    """Built-in: layout, scaling, mask, row and order detectors (``lessons.detectors``)."""

    @pytest.hookimpl(trylast=True)
    def pytest_lessons_diagnose(
        self, item: CaseItem, evidence: diagnose.Evidence
    ) -> diagnose.Diagnosis | None:
        return diagnose.detect(evidence)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_lessons import hooks

    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lessons", "pytest-lessons: grading exercises")
    for setting in settings.SETTINGS:
        help_text = f"{setting.help} Also ini {setting.ini}, env {setting.env}."
        group.addoption(
            setting.option,
            dest=f"lesson_{setting.name}",
            metavar=setting.metavar,
            default=None,
            help=help_text,
        )
        parser.addini(setting.ini, setting.help, default=None)
    group.addoption(
        "--lesson-hints",
        dest="lesson_hints",
        nargs="?",
        const="next",
        default=None,
        choices=("next", "all", "reset"),
        help="For each failing exercise, show the hints opened so far and open the next "
        "(remembered in pytest's cache); 'all' shows every hint; 'reset' closes them again.",
    )
    group.addoption(
        "--lesson-solution",
        dest="lesson_solution",
        nargs="?",
        const="passed",
        default=None,
        choices=("passed", "show-anyway"),
        help="Show the worked solution of each exercise you have passed; 'show-anyway' shows "
        "it for exercises you have not passed yet too.",
    )


def pytest_configure(config: pytest.Config) -> None:
    debugging = bool(config.getoption("usepdb", False) or config.getoption("trace", False))
    try:
        resolved = settings.resolve(
            option=lambda name: config.getoption(f"lesson_{name}"),
            ini=lambda name: config.getini(f"lesson_{name}"),
            debugging=debugging,
        )
    except settings.SettingError as error:
        raise pytest.UsageError(str(error)) from None
    config.stash[_KEY] = LessonSession(
        settings=resolved,
        runner=make_runner(resolved.isolation, resolved.value("preload")),
        invocation_dir=config.invocation_params.dir,
        config=config,
    )
    config.pluginmanager.register(WatchOutMatcher(), "lessons.watch_outs")
    config.pluginmanager.register(GenericDetectors(), "lessons.detectors")


def pytest_unconfigure(config: pytest.Config) -> None:
    lessons = config.stash.get(_KEY, None)
    if lessons is not None:
        lessons.runner.close()


def pytest_report_header(config: pytest.Config) -> str | None:
    lessons = config.stash.get(_KEY, None)
    if lessons is None:
        return None
    resolved = lessons.settings
    try:
        torch = f"torch {importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        torch = "torch not installed"
    timeout = resolved.value("timeout")
    if resolved.isolation == "off":
        why = f" because {resolved.isolation_reason}" if resolved.isolation_reason else ""
        return (
            f"lessons: NOT isolated{why}: learner code runs inside pytest ({torch}); "
            "use this for debugging, never for grading"
        )
    return (
        f"lessons: learner code runs isolated ({resolved.isolation}, {torch}, "
        f"timeout {timeout:g} s a case)"
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if file_path.name == model.EXERCISE_FILE:
        return ExerciseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    if call.when == "call" and isinstance(item, (CaseItem, BrokenExercise)):
        # Plain data on the report, so the summary also works under pytest-xdist.
        outcome.get_result().lessons = item.lesson_result


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if hasattr(config, "workerinput"):
        return
    results = [
        report.lessons
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "lessons", None)
    ]
    if not results:
        return
    lessons = config.stash.get(_KEY, None)
    show = lessons.show if lessons is not None else str
    lines = summary.render(
        results,
        show=show,
        cache=getattr(config, "cache", None),
        hints=config.getoption("lesson_hints"),
        solution=config.getoption("lesson_solution"),
        # The paths of this run, without its options (-p no:cacheprovider would lose hints).
        rerun=[arg for arg in config.invocation_params.args if not str(arg).startswith("-")],
    )
    terminalreporter.write_sep("=", "lessons")
    for line in lines:
        terminalreporter.write_line(line)
