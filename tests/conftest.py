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

#: The suite's tiers (tests/README.md). A test that requests ``pytester`` is in both ``slow``
#: and ``plugin`` without a mark of its own; others carry them by hand.
MARKERS = {
    "torch": "the test runs learner or lesson code that needs torch",
    "slow": "the test starts processes (a pytest run, a runner's worker, a kernel): the fast "
    "tier, -m 'not slow', leaves it out",
    "plugin": "the test runs pytest with the plugin (its hooks, options and output): the tier "
    "CI runs on the oldest pytest and on the other Pythons",
    "course": "the test grades the whole course: CI runs the same check as a command over "
    "exercises/ and deselects it",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


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


#: Why a ``course`` test skips unless ``-m`` names its tier.
COURSE_SKIP = (
    "grades the whole course: `python -m pytest --lesson-check exercises -n auto` runs the "
    "same check (as .ci/run does); `-m course` runs this test"
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A pytester test is in the slow and plugin tiers (before ``-m`` selects). A ``course``
    test runs only when ``-m`` names that tier. Tests marked ``torch``, and those that grade
    the combine_heads lesson, skip where torch is not installed; everywhere else they run."""
    chosen = "course" in config.getoption("markexpr", "")
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "pytester" in fixtures:
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.plugin)
        if item.get_closest_marker("course") and not chosen:
            item.add_marker(pytest.mark.skip(reason=COURSE_SKIP))
        if not HAS_TORCH and (item.get_closest_marker("torch") or "combine_heads" in fixtures):
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
