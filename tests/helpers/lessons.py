"""Lesson texts, learner answers and readers of a run's output that many test files share."""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core.results import CaseResult, Status

ROOT = Path(__file__).resolve().parent.parent.parent
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


def said(result: pytest.RunResult) -> str:
    """What the run printed, with line wrapping and indentation folded into single spaces."""
    return " ".join(result.stdout.str().split())


def failed(result: pytest.RunResult) -> int:
    """How many cases failed, counting those that failed the same way as an earlier one (the
    last line says "1 failed, 9 failed the same way"; parseoutcomes keeps only one count)."""
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


REFERENCE = (COMBINE_HEADS / "reference.py").read_text()

NO_TRANSPOSE = """
import torch
import torch.nn.functional as F

def solve(Q, K, V):
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    out = F.scaled_dot_product_attention(q, k, v)
    return out.reshape(q.shape[1], -1).tolist()
"""


def _case_timeout() -> int:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import pytest_lessons.isolation.child"], check=True)
    return max(1, math.ceil(3 * (time.perf_counter() - started)))


#: The case timeout, in whole seconds, for runs where a loop must time out while honest code
#: beside it passes: three times what a fresh Python takes, when the suite starts, to import
#: the child's module (the start of a spawned case), so a loaded machine (1.4 s at load 20
#: here) does not time out the honest case; 1 on an idle machine.
CASE_TIMEOUT = _case_timeout()
