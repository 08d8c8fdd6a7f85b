"""``core/stubs.py``: a starter left as shipped is run once per lesson, not once per case; any
other file runs every case (the grading core through the fake runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core.stubs import MAX_STUB_BYTES, is_stub
from pytest_lessons.isolation.outcome import Frame, Outcome

from helpers.fake import double, grade_all, grader, lesson

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


FROM_REFERENCE_TOML = """
[exercise]
title = "Double every number"
inputs = ["x"]

[[case]]
x = [1, 2]
expected = { from = "reference" }

[[case]]
x = [3]
expected = { from = "reference" }

[[case]]
x = [4, 5, 6]
expected = { from = "reference" }
"""


def test_a_starter_runs_the_reference_for_its_first_case_only(tmp_path: Path) -> None:
    """The other cases say "write your code" whatever the expected answer: the reference
    need not run for them."""
    exercise = lesson(tmp_path, FROM_REFERENCE_TOML, **{"solution.py": STARTER})
    code = {("solution.py", "solve"): not_implemented, ("reference.py", "solve"): double}
    grade, runner = grader(code)
    graded = grade_all(exercise, grade, solution=exercise.folder / "solution.py")
    assert (runner.ran("solution.py"), runner.ran("reference.py")) == (1, 1)
    assert all("Write your solution" in result.message for result, _ in graded)
    assert [result.max_points for result, _ in graded] == [1, 1, 1]

    # A learner's own code that raises the same error is graded against every answer.
    started = STARTER.replace("    raise", "    if x == [3]:\n        return [6]\n    raise")
    (exercise.folder / "solution.py").write_text(started)
    code[("solution.py", "solve")] = lambda x: [6] if x == [3] else not_implemented()
    grade, runner = grader(code)
    graded = grade_all(exercise, grade, solution=exercise.folder / "solution.py")
    assert (runner.ran("solution.py"), runner.ran("reference.py")) == (3, 3)
    assert [result.passed for result, _ in graded] == [False, True, False]


def test_a_started_solution_that_raises_not_implemented_runs_every_case(tmp_path: Path) -> None:
    started = STARTER.replace('    raise NotImplementedError("write solve")', (
        "    if isinstance(x[0], list):\n        return x\n    raise NotImplementedError"
    ))  # fmt: skip
    exercise = lesson(tmp_path, **{"solution.py": started})
    grade, runner = grader({("solution.py", "solve"): not_implemented})
    grade_all(exercise, grade, solution=exercise.folder / "solution.py")
    assert runner.ran("solution.py") == 2
