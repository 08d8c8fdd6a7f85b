"""Shared fixtures (exercise folders built in a pytester directory) and the suite's hooks.

Shared constants and functions live in ``tests/helpers``; no test module imports another."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

from helpers import (
    COMBINE_HEADS,
    DOUBLE_RIGHT,
    DOUBLE_TOML,
    HAS_TORCH,
    NO_TORCH,
    OUTSIDE_ENVIRONMENT,
    dedent,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "torch: the test runs learner or lesson code that needs torch"
    )
    config.addinivalue_line("markers", "slow: the test starts a real process (the slow tier)")


def _init_cgroups() -> str:
    """The machine's init's cgroups, which nothing the suite runs may change."""
    try:
        return Path("/proc/1/cgroup").read_text()
    except OSError:
        return ""


_INIT_CGROUPS = _init_cgroups()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run if anything it started moved the machine's init into another cgroup:
    a pids cap there caps every process the machine starts afterwards, CI's included."""
    now = _init_cgroups()
    if now != _INIT_CGROUPS:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"the suite moved pid 1 into other cgroups:\n{now}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``torch``, and those that grade the combine_heads lesson, skip where torch
    is not installed; everywhere else they run."""
    if HAS_TORCH:
        return
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if item.get_closest_marker("torch") or "combine_heads" in fixtures:
            item.add_marker(pytest.mark.skip(reason=NO_TORCH))


@pytest.fixture(autouse=True)
def same_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs under test behave the same on a laptop and in CI: what this suite's own
    environment says about CI, colour or lesson settings does not reach them."""
    for name in OUTSIDE_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith("PYTEST_LESSONS_"):
            monkeypatch.delenv(name)


@pytest.fixture
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers import nothing up front: for lessons whose learner code needs no torch."""
    monkeypatch.setenv("PYTEST_LESSONS_PRELOAD", "none")


@pytest.fixture
def make_exercise(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Write an exercise folder: ``make_exercise(name, solution=code, toml=text)``."""

    def make(
        name: str = "double",
        solution: str | None = DOUBLE_RIGHT,
        toml: str = DOUBLE_TOML,
        **files: str,
    ) -> Path:
        folder = pytester.path / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "exercise.toml").write_text(dedent(toml))
        if solution is not None:
            (folder / "solution.py").write_text(dedent(solution))
        for filename, text in files.items():
            (folder / filename.replace("__", ".")).write_text(dedent(text))
        return folder

    return make


@pytest.fixture
def combine_heads(pytester: pytest.Pytester) -> Callable[[str | None], Path]:
    """A copy of the combine_heads lesson; call it with a solution's code (None: the stub)."""

    def make(solution: str | None = None) -> Path:
        folder = pytester.path / "combine_heads"
        if not folder.exists():
            shutil.copytree(COMBINE_HEADS, folder, ignore=shutil.ignore_patterns("__pycache__"))
        if solution is not None:
            (folder / "solution.py").write_text(dedent(solution))
        return folder

    return make
