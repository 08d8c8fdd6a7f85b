"""The settings core without pytest: command line > environment > ini > exercise.toml > default.

Run settings in a real pytest run, through real ini files, are in test_run_settings.py.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from pytest_lessons.core import settings


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


def test_workers_are_auto_by_default_or_a_count() -> None:
    assert resolve().value("workers") == 0  # auto: the usable CPUs, decided by the runner
    assert resolve({"workers": "auto"}).value("workers") == 0
    assert resolve({"workers": " auto "}).value("workers") == 0
    assert resolve({"workers": "3"}).value("workers") == 3
    assert resolve({"workers": "1"}).value("workers") == 1
    with pytest.raises(settings.SettingError, match=r"--lesson-workers='0' must be 1 or more"):
        resolve({"workers": "0"})


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


def test_debugging_is_off_unless_said() -> None:
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    assert (resolved.isolation, resolved.isolation_reason) == ("fork", "")


def test_isolation_auto_is_spawn_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert resolve().isolation == "spawn"
    assert resolve({"isolation": "fork"}).isolation == "fork"  # os.fork exists here


def test_without_fork_auto_is_spawn_and_fork_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    assert resolve().isolation == "spawn"
    assert resolve({"isolation": "spawn"}).isolation == "spawn"
    with pytest.raises(settings.SettingError) as error:
        resolve({"isolation": "fork"})
    assert str(error.value) == (
        "--lesson-isolation=fork is not available on this system; use spawn"
    )


def test_the_environment_is_read_from_os_environ_when_not_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTEST_LESSONS_THREADS", "6")
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None)
    assert resolved.value("threads") == 6


def test_sandbox_settings_read_their_values() -> None:
    assert resolve().value("sandbox") == "auto"
    assert resolve({"sandbox": "require"}).value("sandbox") == "require"
    assert resolve({"sandbox": "off"}).value("sandbox") == "off"
    assert resolve().value("sandbox_user") == "nobody"
    assert resolve({"sandbox_user": "  grader "}).value("sandbox_user") == "grader"
    assert resolve().value("pass_env") == ()
    assert resolve({"pass_env": "HF_HOME, MY_VAR2 _x"}).value("pass_env") == (
        "HF_HOME",
        "MY_VAR2",
        "_x",
    )


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("sandbox", "on", "--lesson-sandbox='on' must be one of auto, require, off"),
        ("sandbox_user", "a b", "--lesson-sandbox-user='a b' must be a user name, or 'none'"),
        ("sandbox_user", "a:b", "--lesson-sandbox-user='a:b' must be a user name, or 'none'"),
        ("sandbox_user", "a/b", "--lesson-sandbox-user='a/b' must be a user name, or 'none'"),
        ("pass_env", "2FA", "--lesson-pass-env='2FA' must be environment variable names"),
        ("pass_env", "A-B", "--lesson-pass-env='A-B' must be environment variable names"),
        ("pass_env", "A=B", "--lesson-pass-env='A=B' must be environment variable names"),
    ],
)
def test_bad_sandbox_settings_say_what_is_allowed(name: str, raw: str, message: str) -> None:
    with pytest.raises(settings.SettingError) as error:
        resolve({name: raw})
    assert str(error.value).startswith(message)


def test_isolation_auto_is_spawn_on_macos(monkeypatch: pytest.MonkeyPatch) -> None:
    # A forked child of a process that imported torch may crash there (docs/instructors/sandbox.md, Isolation).
    monkeypatch.setattr(sys, "platform", "darwin")
    assert resolve().isolation == "spawn"
    assert resolve({"isolation": "fork"}).isolation == "fork"  # still allowed when asked
    assert settings.default_isolation("linux") == ("fork" if hasattr(os, "fork") else "spawn")
    assert settings.default_isolation("win32") == settings.default_isolation() == "spawn"


def test_the_sandbox_limits_read_their_values_and_refuse_what_they_cannot_be() -> None:
    defaults = resolve()
    assert [defaults.value(n) for n in ("disk", "open_files", "processes")] == [512.0, 256, 64]
    given = resolve({"disk": "0", "open_files": "1", "processes": "0"})
    assert [given.value(n) for n in ("disk", "open_files", "processes")] == [0.0, 1, 0]
    assert resolve({"processes": "7"}).value("processes") == 7
    for raw, message in (
        ("-1", "--lesson-processes='-1' must be 0 or more"),
        ("2.5", "--lesson-processes='2.5' is not a valid value"),
    ):
        with pytest.raises(settings.SettingError) as error:
            resolve({"processes": raw})
        assert str(error.value).startswith(message)
    # A name with the letters the check is written with is still a name.
    assert resolve({"sandbox_user": "Xavier"}).value("sandbox_user") == "Xavier"
    assert resolve({"pass_env": "_, A_1,X"}).value("pass_env") == ("_", "A_1", "X")
    for raw in ("A.B", "1A"):
        with pytest.raises(settings.SettingError):
            resolve({"pass_env": raw})


def test_the_answer_size_is_a_limit_of_its_own() -> None:
    assert resolve().limits({}).answer_mb == 32.0
    assert resolve({"answer_size": "0.5"}).limits({}).answer_mb == 0.5
    assert resolve({"answer_size": "3"}).limits({"timeout": 2.0}) == settings.Limits(
        timeout=2.0, memory_mb=2048.0, output_cap=65536, threads=1, answer_mb=3.0
    )
