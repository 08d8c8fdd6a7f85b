"""The pytest plugin, registered through the ``pytest11`` entry point as ``lessons``.

It collects ``exercise.toml`` files, resolves the run settings once, owns the runner that
executes learner code, and closes it at the end. Loading it imports neither torch nor any
learner code.
"""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import model, settings
from pytest_lessons.nodes import ExerciseFile
from pytest_lessons.runner import Runner, make_runner


@dataclass
class LessonSession:
    """The plugin's per-session state, kept in ``config.stash``."""

    settings: settings.Settings
    runner: Runner
    invocation_dir: Path

    def show(self, path: Path | str) -> str:
        """*path* as the learner should see it: relative to where pytest was started."""
        try:
            return os.path.relpath(path, self.invocation_dir)
        except ValueError:  # another drive on Windows
            return str(path)


_KEY = pytest.StashKey[LessonSession]()


def session_of(config: pytest.Config) -> LessonSession:
    """The plugin's state for *config*."""
    return config.stash[_KEY]


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
    )


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
