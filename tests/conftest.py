"""Shared fixtures: exercise folders built in a pytester directory."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core.results import CaseResult, Status

ROOT = Path(__file__).resolve().parent.parent
COMBINE_HEADS = ROOT / "exercises" / "combine_heads"

#: A pure-Python exercise for behaviours that need no torch: fast to grade.
DOUBLE_TOML = """
[exercise]
title = "Double every number"
inputs = ["x"]

[[case]]
name = "a row"
x = [1, 2]
expected = [2, 4]

[[case]]
x = [[1.5, 2], [3, 4]]
expected = [[3, 4], [6, 8]]
"""

#: A pure-Python exercise whose one public case is not square, so a transposed answer
#: cannot pass; tests add cases or a [generate] table to it.
TRANSPOSE_TOML = """
[exercise]
title = "Transpose"
inputs = ["m"]

[[case]]
m = [[1, 2, 3], [4, 5, 6]]
expected = [[1, 4], [2, 5], [3, 6]]
"""

TRANSPOSE_REFERENCE = "def solve(m):\n    return [list(col) for col in zip(*m)]\n"

DOUBLE_RIGHT = """
def solve(x):
    if isinstance(x[0], list):
        return [[2 * v for v in row] for row in x]
    return [2 * v for v in x]
"""


#: torch has no CPU wheel on this machine for every Python we support (only 3.11): CI runs the
#: suite on the oldest and newest Python without it, and tests that need it skip there.
HAS_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH = (
    f"needs torch, which is not installed for Python {sys.version_info[0]}.{sys.version_info[1]} "
    "here (the CPU wheel on this machine is for Python 3.11 only)"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "torch: the test runs learner or lesson code that needs torch"
    )


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


def said(result: pytest.RunResult) -> str:
    """What the run printed, with line wrapping and indentation folded into single spaces."""
    return " ".join(result.stdout.str().split())


def failed(result: pytest.RunResult) -> int:
    """How many cases failed, counting those that failed the same way as an earlier one (the
    last line says "1 failed, 9 failed the same way"; parseoutcomes keeps only one count)."""
    import re

    last = result.stdout.lines[-1] if result.stdout.lines else ""
    return sum(int(n) for n in re.findall(r"(\d+) failed", last))


def dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def case_result(case: int = 1, passed: bool = True, **changes: Any) -> CaseResult:
    """A graded case as the reports, summaries and gradebooks under test read it.

    Unless *changes* say otherwise, it is case *case* of the exercise ``combine`` (titled
    "Combine heads", its path ``/course/<exercise>/exercise.toml``), labelled ``case <case>``,
    worth 1 point; *passed* makes its status ``passed`` with every point, else ``failed`` with
    none.
    Any other field keeps :class:`CaseResult`'s own default (no learner, ``cases`` 0, no
    message). *changes* may set any field; ``status`` may be a string such as ``"error"``,
    as in a report's plain data.
    """
    exercise = changes.get("exercise", "combine")
    max_points = changes.get("max_points", 1.0)
    values: dict[str, Any] = {
        "exercise": exercise,
        "title": "Combine heads",
        "path": f"/course/{exercise}/exercise.toml",
        "status": Status.PASSED if passed else Status.FAILED,
        "points": max_points if passed else 0.0,
        "max_points": max_points,
        "case": case,
        "label": f"case {case}",
        **changes,
    }
    values["status"] = Status(values["status"])
    return CaseResult(**values)


#: Variables of the machine running this suite that change what a run under test prints or
#: writes: CI mode widens pytest's short summary, and GitHub's would collect our job summaries.
OUTSIDE_ENVIRONMENT = (
    "CI",
    "BUILD_NUMBER",
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_OUTPUT",
    "PYTEST_ADDOPTS",
    "NO_COLOR",
    "FORCE_COLOR",
)


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


REFERENCE = (COMBINE_HEADS / "reference.py").read_text()

NO_TRANSPOSE = """
import torch
import torch.nn.functional as F

def solve(Q, K, V):
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    out = F.scaled_dot_product_attention(q, k, v)
    return out.reshape(q.shape[1], -1).tolist()
"""
