"""What Windows' Job Object holds around each case (pytest_lessons/isolation/jobs.py): the
memory cap (``--lesson-memory``) for the case's processes together, and no process a case
started outliving it.

Windows only: the GitHub workflow's Windows job runs this file (.github/workflows/ci.yml),
and everywhere else each test skips; Linux's own walls are tested in test_isolation.py and
test_sandbox_walls.py."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from helpers import CASE_TIMEOUT, running_on_windows, said

Make = Callable[..., Path]

pytestmark = [
    pytest.mark.skipif(
        sys.platform != "win32",
        reason="Job Objects are Windows': the GitHub workflow's Windows job runs these "
        "(.github/workflows/ci.yml)",
    ),
    pytest.mark.usefixtures("no_preload"),
]

#: A solution that runs *body* on case 1 (the 1-D input) and is right on both cases.
TEMPLATE = """
import subprocess, sys, time

def solve(x):
    if not isinstance(x[0], list):
{body}
        return [2 * v for v in x]
    return [[2 * v for v in row] for row in x]
"""


def solution(body: str) -> str:
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return TEMPLATE.format(body=indented)


#: Ways for a case to commit more than --lesson-memory=256 allows.
OVER_THE_CAP = {
    # Refused in the case's own Python: the MemoryError, at its line.
    "in solve": "block = bytearray(3 * 1024**3)",
    # Refused in a process solve started, which solve does not look at: the job's completion
    # port reports it, as Linux's memory cgroup reports a kill there.
    "in a process solve started": (
        'subprocess.run([sys.executable, "-c", "bytearray(3 * 1024**3)"])'
    ),
}


@pytest.mark.parametrize("where", list(OVER_THE_CAP))
def test_a_case_over_the_memory_cap_is_told_to_use_less_memory(
    pytester: pytest.Pytester, make_exercise: Make, where: str
) -> None:
    make_exercise(solution=solution(OVER_THE_CAP[where]))
    result = pytester.runpytest("double", "-p", "no:cacheprovider", "--lesson-memory=256", "-v")
    result.assert_outcomes(passed=1, failed=1)
    assert "memory for the case as a whole, and every process it starts ended with it" in said(
        result
    )
    assert re.search(
        r"double: case 1 \(a row\).*Use less memory: your code asked for more than the 256 MiB",
        said(result),
    )


#: After starting a process that would sleep for a minute, solve returns, or runs out of time.
LEFT_BEHIND = {
    "returns": "",
    "times out": "while True:\n    pass",
}


@pytest.mark.parametrize("then", list(LEFT_BEHIND))
def test_no_process_a_case_started_outlives_it(
    pytester: pytest.Pytester, make_exercise: Make, then: str
) -> None:
    body = (
        'child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])\n'
        'print(f"pid:{child.pid}", flush=True)\n' + LEFT_BEHIND[then]
    )
    make_exercise(solution=solution(body))
    result = pytester.runpytest(
        "double",
        "-p",
        "no:cacheprovider",
        f"--lesson-timeout={CASE_TIMEOUT if then == 'times out' else 10}",
        "--lesson-report=r.json",
    )
    if then == "returns":
        result.assert_outcomes(passed=2)
    else:
        result.assert_outcomes(passed=1, failed=1)
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    printed = result.stdout.str() + " ".join(str(r.get("output", "")) for r in report["results"])
    pids = {int(pid) for pid in re.findall(r"pid:(\d+)", printed)}
    assert len(pids) == 1
    deadline = time.monotonic() + 5  # ending a process is not instantaneous
    while any(running_on_windows(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running_on_windows(pid) for pid in pids)
