"""``core/stubs.py``: a starter left as shipped is run once per lesson, not once per case; any
other file runs every case (the grading core through the fake runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core.stubs import MAX_STUB_BYTES, is_stub
from pytest_lessons.isolation.outcome import Frame, Outcome

from helpers.fake import grade_all, grader, lesson

STARTER = '''"""Double every number: your solution goes here."""

import math  # noqa: F401

LIMIT: int = 3


def helper(x):
    return x


def solve(x):
    """Return x with every number doubled."""
    raise NotImplementedError("write solve")
'''


def test_the_course_starters_are_stubs_and_a_started_solution_is_not() -> None:
    assert is_stub(STARTER.encode(), "solve")
    assert is_stub(b"def solve(x):\n    raise NotImplementedError\n", "solve")
    assert not is_stub(STARTER.encode(), "other")  # no such entry


@pytest.mark.parametrize(
    "source",
    [
        "def solve(x):\n    if x:\n        raise NotImplementedError\n    return x\n",
        "def solve(x):\n    return x\n",
        "def solve(x):\n    raise NotImplementedError(x)\n",  # not a constant
        "def solve(x):\n    raise NotImplementedError from None\n",
        "def solve(x):\n    raise ValueError\n",
        "@cache\ndef solve(x):\n    raise NotImplementedError\n",
        "def solve(x):\n    raise NotImplementedError\nsolve = print\n",
        "def solve(x):\n    raise NotImplementedError\ndef solve(x):\n    return x\n",
        "NotImplementedError = ValueError\ndef solve(x):\n    raise NotImplementedError\n",
        "from helpers import solve\ndef solve(x):\n    raise NotImplementedError\n",
        "from m import *\ndef solve(x):\n    raise NotImplementedError\n",
        "import builtins\nbuiltins.x = 1\ndef solve(x):\n    raise NotImplementedError\n",
        "print(1)\ndef solve(x):\n    raise NotImplementedError\n",
        "if True:\n    def solve(x):\n        raise NotImplementedError\n",
        "X = f()\ndef solve(x):\n    raise NotImplementedError\n",
        "class A(Base):\n    pass\ndef solve(x):\n    raise NotImplementedError\n",
        "def solve(x)\n    raise NotImplementedError\n",  # not Python
        "def solve(x):\n    raise NotImplementedError\n" + "#" * MAX_STUB_BYTES,
    ],
)
def test_a_file_that_could_do_anything_else_is_no_stub(source: str) -> None:
    assert not is_stub(source.encode(), "solve")


def not_implemented(*_: Any) -> Outcome:
    frame = Frame(
        "/course/double/solution.py", 14, "solve", 'raise NotImplementedError("write solve")'
    )
    return Outcome(
        "raised", error_type="NotImplementedError", message="write solve", phase="call",
        frames=(frame,),
    )  # fmt: skip


def test_a_starter_runs_once_and_every_case_says_what_to_write(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, **{"solution.py": STARTER})
    grade, runner = grader({("solution.py", "solve"): not_implemented})
    graded = grade_all(exercise, grade, solution=exercise.folder / "solution.py")
    assert runner.ran("solution.py") == 1
    assert len(graded) == 2 and all(not result.passed for result, _ in graded)
    assert all("Write your solution" in result.message for result, _ in graded)


def test_a_started_solution_that_raises_not_implemented_runs_every_case(tmp_path: Path) -> None:
    started = STARTER.replace('    raise NotImplementedError("write solve")', (
        "    if isinstance(x[0], list):\n        return x\n    raise NotImplementedError"
    ))  # fmt: skip
    exercise = lesson(tmp_path, **{"solution.py": started})
    grade, runner = grader({("solution.py", "solve"): not_implemented})
    grade_all(exercise, grade, solution=exercise.folder / "solution.py")
    assert runner.ran("solution.py") == 2
