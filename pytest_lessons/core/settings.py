"""Run settings: each one a command-line option, an ini key and an environment variable.

Resolved once per session into a :class:`Settings`. For the limits that an exercise may also set
in ``exercise.toml`` (``timeout``, ``memory``), the order is: command line, environment, ini file,
``exercise.toml``, built-in default. That lets an instructor raise every limit on a slow CI
machine without editing lessons. The plugin feeds it what pytest parsed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

ISOLATION_CHOICES = ("auto", "fork", "spawn", "off")


def default_isolation(platform: str | None = None) -> str:
    """What ``auto`` means on *platform* when not debugging: ``fork`` where forking a process
    that has imported torch is safe, ``spawn`` on Windows (no fork) and on macOS, where a
    forked child that calls into system frameworks (Accelerate's BLAS, which torch's wheels
    use; the Objective-C runtime) may crash: CPython made spawn multiprocessing's default
    there in 3.8 for that reason (python/cpython#77906, docs/instructors/sandbox.md,
    Isolation). *platform*: a ``sys.platform`` value, this system's by default."""
    if (sys.platform if platform is None else platform) in ("win32", "darwin"):
        return "spawn"
    if not hasattr(os, "fork"):
        return "spawn"
    return "fork"


class SettingError(ValueError):
    """A setting's value cannot be used; the message names where it came from."""


@dataclass(frozen=True)
class Setting:
    """One run setting and the three ways to give it."""

    name: str
    convert: Callable[[str], Any]
    default: Any
    help: str
    metavar: str = ""
    per_exercise: bool = False

    @property
    def option(self) -> str:
        return "--lesson-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "lesson_" + self.name

    @property
    def env(self) -> str:
        return "PYTEST_LESSONS_" + self.name.upper()


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError("must be greater than 0")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise ValueError("must be 0 or more")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError("must be 1 or more")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def _workers(text: str) -> int:
    if text.strip() == "auto":
        return 0
    return _positive_int(text)


def _modules(text: str) -> tuple[str, ...]:
    if text.strip() == "none":
        return ()
    names = tuple(n.strip() for n in text.replace(",", " ").split() if n.strip())
    if not all(all(part.isidentifier() for part in n.split(".")) for n in names):
        raise ValueError("must be module names separated by commas")
    return names


def _isolation(text: str) -> str:
    if text not in ISOLATION_CHOICES:
        raise ValueError("must be one of " + ", ".join(ISOLATION_CHOICES))
    return text


SANDBOX_CHOICES = ("auto", "require", "off")


def _sandbox(text: str) -> str:
    if text not in SANDBOX_CHOICES:
        raise ValueError("must be one of " + ", ".join(SANDBOX_CHOICES))
    return text


def _user(text: str) -> str:
    name = text.strip()
    if not name or any(c.isspace() or c in ":/" for c in name):
        raise ValueError("must be a user name, or 'none'")
    return name


#: How a run counts a lesson's work budget cases (``--lesson-work-budgets``): with their
#: points, or as feedback worth none (see :func:`pytest_lessons.core.budget.worth`).
WORK_BUDGET_CHOICES = ("points", "feedback")


def _work_budgets(text: str) -> str:
    if text not in WORK_BUDGET_CHOICES:
        raise ValueError("must be one of " + ", ".join(WORK_BUDGET_CHOICES))
    return text


def _names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.replace(",", " ").split() if n.strip())
    if not all(n.replace("_", "A").isalnum() and not n[0].isdigit() for n in names):
        raise ValueError("must be environment variable names separated by commas")
    return names


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "timeout",
        _positive_float,
        10.0,
        metavar="SECONDS",
        per_exercise=True,
        help="Seconds one case of learner code may run before it is stopped (default 10).",
    ),
    Setting(
        "memory",
        _non_negative_float,
        2048.0,
        metavar="MIB",
        per_exercise=True,
        help="MiB of memory learner code may allocate in one case, on top of what torch "
        "itself holds; 0 for no cap (default 2048; enforced on Linux and Windows).",
    ),
    Setting(
        "output_cap",
        _positive_int,
        65536,
        metavar="BYTES",
        help="Bytes of a case's printed output kept for the report (default 65536).",
    ),
    Setting(
        "answer_size",
        _positive_float,
        32.0,
        metavar="MIB",
        help="MiB one case's answer may take as the grader reads it; a larger answer fails "
        "its own case (default 32).",
    ),
    Setting(
        "threads",
        _positive_int,
        1,
        metavar="N",
        help="torch threads in the process that runs learner code (default 1, for "
        "answers that do not depend on the machine).",
    ),
    Setting(
        "workers",
        _workers,
        0,
        metavar="N",
        help="Grading a class: how many cases run at once in this pytest process, each in its "
        "own worker; auto (default) is the CPUs pytest may use. 1 runs them one by one.",
    ),
    Setting(
        "preload",
        _modules,
        ("torch",),
        metavar="MODULES",
        help="Modules the worker imports once, before the first case, so that no case "
        "pays for importing them; comma-separated, 'none' for none (default torch).",
    ),
    Setting(
        "isolation",
        _isolation,
        "auto",
        metavar="MODE",
        help="How learner code runs: fork (a fresh child per case, forked from a process "
        "that has imported torch), spawn (a new Python per case; slower, for systems without "
        "fork), off (inside pytest, for breakpoint() and --pdb; never for grading), or auto "
        "(fork on Linux, spawn on macOS and Windows; off with --pdb or --trace). Default auto.",
    ),
    Setting(
        "sandbox",
        _sandbox,
        "auto",
        metavar="MODE",
        help="Confine learner code with Linux's Landlock: it reads only the Python runtime and "
        "its own file, writes only a private folder, opens no TCP connection and signals "
        "nothing outside. auto (where the kernel offers it), require (stop the run where it "
        "does not: for grading), or off. Default auto.",
    ),
    Setting(
        "sandbox_user",
        _user,
        "nobody",
        metavar="NAME",
        help="When the grader runs as root, learner code runs as this user; 'none' to keep "
        "root (default nobody).",
    ),
    Setting(
        "disk",
        _non_negative_float,
        512.0,
        metavar="MIB",
        help="MiB one case's files may take in all (its private folder; no one file more); 0 "
        "for no cap (default 512; enforced on Linux with the sandbox: by a tmpfs of the "
        "case's own where it has namespaces, which holds the files in memory, else counted "
        "when the case ends).",
    ),
    Setting(
        "open_files",
        _positive_int,
        256,
        metavar="N",
        help="Files, pipes and sockets one case's process may hold open at once (default 256; "
        "enforced on Linux with the sandbox).",
    ),
    Setting(
        "processes",
        _non_negative_int,
        64,
        metavar="N",
        help="Processes and threads one case may run at once, itself included; 0 for no cap "
        "(default 64; enforced on Linux with the sandbox where a cgroup, a user namespace "
        "or the sandbox user can keep the count).",
    ),
    Setting(
        "pass_env",
        _names,
        (),
        metavar="NAMES",
        help="Environment variables passed to learner code besides the built-in allow-list "
        "(PATH, LANG, LC_*, TZ, thread settings); comma-separated.",
    ),
    Setting(
        "work_budgets",
        _work_budgets,
        "points",
        metavar="MODE",
        help="How a lesson's work budget cases ([budget]) count: points (default: each its "
        "points) or feedback (graded and shown, worth 0 points). Their work is counted in the "
        "process that runs learner code, which hostile code can forge: give feedback where "
        "the grade must hold against it (docs/ci-grading.md, What the sandbox protects).",
    ),
)

BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class Limits:
    """The limits one case runs under."""

    timeout: float
    memory_mb: float
    output_cap: int
    threads: int
    answer_mb: float = 32.0
    """The largest answer one case may give, in MiB (``answer_size``)."""


@dataclass(frozen=True)
class Settings:
    """Every setting the session resolved; ``None`` means "not given, use the exercise's"."""

    given: dict[str, Any]
    isolation: str
    """The mode in effect: ``fork``, ``spawn`` or ``off`` (``auto`` resolved)."""
    isolation_reason: str = ""
    """Why ``off`` was chosen automatically, when it was."""

    def limits(self, exercise_limits: dict[str, float]) -> Limits:
        """The limits for an exercise that sets *exercise_limits* in its ``exercise.toml``."""

        def pick(name: str) -> Any:
            if self.given.get(name) is not None:
                return self.given[name]
            if name in exercise_limits:
                return exercise_limits[name]
            return BY_NAME[name].default

        return Limits(
            timeout=float(pick("timeout")),
            memory_mb=float(pick("memory")),
            output_cap=int(pick("output_cap")),
            threads=int(pick("threads")),
            answer_mb=float(pick("answer_size")),
        )

    def value(self, name: str) -> Any:
        """A session-wide setting's value, default included."""
        given = self.given.get(name)
        return BY_NAME[name].default if given is None else given


def resolve(
    option: Callable[[str], Any],
    ini: Callable[[str], Any],
    environ: dict[str, str] | None = None,
    debugging: bool = False,
) -> Settings:
    """Resolve every setting from *option* (command line), the environment and *ini*.

    *option* and *ini* take a setting's name and return its raw value or None/"" when unset.
    Raises :class:`SettingError` naming the source of a bad value.
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    given: dict[str, Any] = {}
    for setting in SETTINGS:
        sources = (
            (setting.option, option(setting.name)),
            (setting.env, env.get(setting.env)),
            (setting.ini, ini(setting.name)),
        )
        given[setting.name] = None
        for where, raw in sources:
            if raw is None or raw == "":
                continue
            try:
                given[setting.name] = setting.convert(str(raw))
            except ValueError as exc:
                reason = str(exc) if "must" in str(exc) else "is not a valid value"
                raise SettingError(f"{where}={raw!r} {reason}") from None
            break
    mode = given["isolation"] or "auto"
    reason = ""
    if mode == "auto":
        if debugging:
            mode, reason = "off", "--pdb or --trace was given"
        else:
            mode = default_isolation()
    elif mode == "fork" and not hasattr(os, "fork"):
        raise SettingError("--lesson-isolation=fork is not available on this system; use spawn")
    return Settings(given=given, isolation=mode, isolation_reason=reason)
