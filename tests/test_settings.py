"""Run settings: command line > environment > ini file > exercise.toml > default."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons import settings

from conftest import DOUBLE_TOML, said

Make = Callable[..., Path]


def header(result: pytest.RunResult) -> str:
    lines = [line for line in result.stdout.lines if line.startswith("lessons: ")]
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


# The core, without pytest: resolve() reads three sources through plain functions.


def resolve(
    option: dict[str, Any] | None = None,
    ini: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
    debugging: bool = False,
) -> settings.Settings:
    return settings.resolve(
        option=lambda name: (option or {}).get(name),
        ini=lambda name: (ini or {}).get(name),
        environ=environ or {},
        debugging=debugging,
    )


def test_each_source_wins_over_the_ones_below_it() -> None:
    every = resolve({"threads": "3"}, {"threads": "5"}, {"PYTEST_LESSONS_THREADS": "4"})
    assert every.value("threads") == 3
    assert resolve(None, {"threads": "5"}, {"PYTEST_LESSONS_THREADS": "4"}).value("threads") == 4
    assert resolve(None, {"threads": "5"}).value("threads") == 5
    assert resolve().value("threads") == 1
    assert resolve({"threads": ""}, {"threads": "5"}).value("threads") == 5


def test_limits_take_the_exercise_value_only_when_no_setting_is_given() -> None:
    exercise = {"timeout": 2.0, "memory": 100.0}
    assert resolve().limits(exercise) == settings.Limits(
        timeout=2.0, memory_mb=100.0, output_cap=65536, threads=1
    )
    assert resolve().limits({}) == settings.Limits(
        timeout=10.0, memory_mb=2048.0, output_cap=65536, threads=1
    )
    given = resolve(ini={"timeout": "7", "memory": "0", "output_cap": "9", "threads": "2"})
    assert given.limits(exercise) == settings.Limits(
        timeout=7.0, memory_mb=0.0, output_cap=9, threads=2
    )
    limits = given.limits(exercise)
    assert isinstance(limits.timeout, float) and isinstance(limits.output_cap, int)


@pytest.mark.parametrize(
    "name, raw, message",
    [
        ("timeout", "0", "--lesson-timeout='0' must be greater than 0"),
        ("timeout", "-1", "--lesson-timeout='-1' must be greater than 0"),
        ("timeout", "soon", "--lesson-timeout='soon' is not a valid value"),
        ("memory", "-1", "--lesson-memory='-1' must be 0 or more"),
        ("memory", "nan", "--lesson-memory='nan' must be 0 or more"),
        ("output_cap", "0", "--lesson-output-cap='0' must be 1 or more"),
        ("threads", "1.5", "--lesson-threads='1.5' is not a valid value"),
        ("preload", "torch, 9lives", "--lesson-preload='torch, 9lives' must be module names"),
        (
            "isolation",
            "docker",
            "--lesson-isolation='docker' must be one of auto, fork, spawn, off",
        ),
    ],
)
def test_a_bad_value_names_its_source_and_what_is_allowed(
    name: str, raw: str, message: str
) -> None:
    with pytest.raises(settings.SettingError) as error:
        resolve({name: raw})
    assert str(error.value).startswith(message)


def test_bad_values_from_the_environment_and_ini_name_the_variable_and_key() -> None:
    with pytest.raises(settings.SettingError, match=r"^PYTEST_LESSONS_TIMEOUT='0' must"):
        resolve(environ={"PYTEST_LESSONS_TIMEOUT": "0"})
    with pytest.raises(settings.SettingError, match=r"^lesson_threads='x' is not a valid value$"):
        resolve(ini={"threads": "x"})


def test_edge_values_are_accepted() -> None:
    assert resolve({"memory": "0"}).value("memory") == 0.0
    assert resolve({"timeout": "0.001"}).value("timeout") == 0.001
    assert resolve({"output_cap": "1", "threads": "1"}).value("output_cap") == 1


def test_preload_reads_module_names_or_none() -> None:
    assert resolve().value("preload") == ("torch",)
    assert resolve({"preload": "none"}).value("preload") == ()
    assert resolve({"preload": " none "}).value("preload") == ()
    assert resolve({"preload": "torch, numpy os.path"}).value("preload") == (
        "torch",
        "numpy",
        "os.path",
    )


def test_isolation_auto_is_fork_here_and_off_when_debugging() -> None:
    assert resolve().isolation == "fork"
    assert resolve().isolation_reason == ""
    assert resolve({"isolation": "auto"}).isolation == "fork"
    debugging = resolve(debugging=True)
    assert debugging.isolation == "off"
    assert debugging.isolation_reason == "--pdb or --trace was given"
    assert resolve({"isolation": "spawn"}, debugging=True).isolation == "spawn"
    assert resolve({"isolation": "off"}).isolation_reason == ""


def test_each_setting_has_an_option_an_ini_key_and_a_variable() -> None:
    setting = settings.BY_NAME["output_cap"]
    assert (setting.option, setting.ini, setting.env) == (
        "--lesson-output-cap",
        "lesson_output_cap",
        "PYTEST_LESSONS_OUTPUT_CAP",
    )
    assert [s.name for s in settings.SETTINGS if s.per_exercise] == ["timeout", "memory"]
