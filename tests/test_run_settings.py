"""Run settings in a real run: command line > environment > ini file > exercise.toml."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from helpers import DOUBLE_TOML, said

Make = Callable[..., Path]


def header(result: pytest.RunResult) -> str:
    lines = [line for line in result.stdout.lines if line.startswith("lessons: learner code")]
    assert len(lines) == 1, result.stdout.str()
    return lines[0]


INI_FILES = {
    "pytest.ini": "[pytest]\nlesson_timeout = 5\n",
    "pyproject.toml": '[tool.pytest.ini_options]\nlesson_timeout = "5"\n',
    "setup.cfg": "[tool:pytest]\nlesson_timeout = 5\n",
}


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("ini_file", list(INI_FILES))
def test_the_command_line_beats_the_environment_which_beats_the_ini_file(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch, ini_file: str
) -> None:
    make_exercise()
    (pytester.path / ini_file).write_text(INI_FILES[ini_file])
    assert "timeout 5 s a case" in header(pytester.runpytest("--co"))
    monkeypatch.setenv("PYTEST_LESSONS_TIMEOUT", "4")
    assert "timeout 4 s a case" in header(pytester.runpytest("--co"))
    assert "timeout 3 s a case" in header(pytester.runpytest("--co", "--lesson-timeout=3"))
    monkeypatch.delenv("PYTEST_LESSONS_TIMEOUT")
    assert "timeout 3 s a case" in header(pytester.runpytest("--co", "--lesson-timeout=3"))


SLOW = """
import time

def solve(x):
    time.sleep(1.5)
    if isinstance(x[0], list):
        return [[2 * v for v in row] for row in x]
    return [2 * v for v in x]
"""


@pytest.mark.usefixtures("no_preload")
def test_the_ini_file_beats_the_exercise_timeout(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = DOUBLE_TOML.replace('inputs = ["x"]', 'inputs = ["x"]\ntimeout = 0.5')
    make_exercise(solution=SLOW, toml=toml)
    result = pytester.runpytest("double", "-k", "case-1")
    result.assert_outcomes(failed=1, deselected=1)
    assert "Make solve finish sooner: it ran longer than 0.5 s and was stopped." in said(result)
    pytester.makeini("[pytest]\nlesson_timeout = 30\n")
    pytester.runpytest("double", "-k", "case-1").assert_outcomes(passed=1, deselected=1)


def test_a_bad_ini_value_names_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlesson_threads = many\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "lesson_threads='many' is not a valid value" in result.stderr.str()
