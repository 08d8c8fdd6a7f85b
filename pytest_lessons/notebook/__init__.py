"""Grade lessons from Jupyter or Colab: the IPython extension ``%load_ext pytest_lessons``.

A second front end on the grading core, beside the pytest plugin. A ``%%lesson NAME`` cell's
code is written to a private file outside the course and graded as that lesson's
``solution.py`` would be by ``pytest exercises/NAME``: by the same :class:`~pytest_lessons.
grading.Grader`, in the same isolated, sandboxed worker, never in the kernel. Hints, passes
and progress live in pytest's own cache folder of the course (``.pytest_cache`` in pytest's
root folder), read and written as pytest does, so ``--lesson-hints`` and ``%lesson_hints``
open the same hints one at a time.

This module imports neither pytest, nor torch, nor IPython: magics are registered through the
shell object IPython hands to :func:`load_ipython_extension`, and results are shown through
the ``_repr_html_`` protocol, so nothing here needs IPython's own modules.
"""

from __future__ import annotations

import atexit
import configparser
import contextlib
import html
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import course, grading, model, settings, summary, words
from pytest_lessons.core.frontend import SAME_WAY, FaultGroups, grader_failed, shown_path
from pytest_lessons.core.results import DETECTOR, FAULT, WATCH_OUT, CaseResult
from pytest_lessons.core.texts import MAP_TITLE
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.runner import Runner, make_runner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old Pythons only
    import tomli as tomllib

#: The environment variable naming the course folder, for a notebook outside the course.
COURSE_ENV = "PYTEST_LESSONS_COURSE"

#: How the learner's code is named in the texts of a cell's grading.
CELL = "your cell"


class NotebookError(Exception):
    """A problem the learner can fix (an unknown lesson, no course found): shown as a short
    message, never as a traceback."""


# --- pytest's cache, without pytest ------------------------------------------------------

#: The files pytest puts in a new cache folder (``_pytest.cacheprovider``): git ignores the
#: folder, and backup tools skip it, whichever of the two made it first.
_CACHEDIR_FILES = {
    "README.md": (
        "# pytest cache directory #\n\n"
        "This directory contains data from the pytest's cache plugin,\n"
        "which provides the `--lf` and `--ff` options, as well as the `cache` fixture.\n\n"
        "**Do not** commit this to version control.\n\n"
        "See [the docs](https://docs.pytest.org/en/stable/how-to/cache.html) for more "
        "information.\n"
    ),
    ".gitignore": "# Created by pytest automatically.\n*\n",
    "CACHEDIR.TAG": (
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by pytest.\n"
        "# For information about cache directory tags, see:\n"
        "#\thttps://bford.info/cachedir/spec.html\n"
    ),
}


class PytestCache:
    """pytest's cache folder (``config.cache``), as its ``get`` and ``set`` read and write
    it: each key a JSON file under ``v/``. The :class:`~pytest_lessons.core.summary.Cache` that
    hints, passes and progress are kept in, shared with every pytest run of the course."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        path = (self.folder / "v" / key).resolve()
        if self.folder.resolve() / "v" not in path.parents:
            raise ValueError(f"cache key {key!r} leads outside the cache")
        return path

    def get(self, key: str, default: Any) -> Any:
        try:
            with self._path(key).open(encoding="utf-8") as handle:
                return json.load(handle)
        except (ValueError, OSError):
            return default

    def set(self, key: str, value: Any) -> None:
        path = self._path(key)
        try:
            if not self.folder.is_dir():
                self.folder.mkdir(parents=True)
                for name, text in _CACHEDIR_FILES.items():
                    (self.folder / name).write_text(text, encoding="utf-8")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
        except OSError:
            pass  # as pytest: a cache that cannot be written only forgets


#: pytest's configuration files, in the order it looks for them in each folder.
_INI_FILES = (
    "pytest.toml",  # pytest 9
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


def _ini_of(path: Path) -> dict[str, Any] | None:
    """The pytest options of a configuration file, or None when it is not pytest's."""
    try:
        if path.name in ("pytest.toml", ".pytest.toml"):  # always pytest's, even empty
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("pytest", {})
            return dict(table) if isinstance(table, dict) else {}
        if path.name == "pyproject.toml":
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
            options = table.get("pytest", {})
            if isinstance(options, dict) and "ini_options" in options:
                options = options["ini_options"]
            return dict(options) if "pytest" in table else None
        parser = configparser.ConfigParser(interpolation=None)
        parser.read(path, encoding="utf-8")
    except (OSError, ValueError, configparser.Error, tomllib.TOMLDecodeError):
        return None
    section = {"setup.cfg": "tool:pytest"}.get(path.name, "pytest")
    if parser.has_section(section):
        return dict(parser.items(section))
    return {} if path.name in ("pytest.ini", ".pytest.ini") else None


def pytest_root(start: Path) -> tuple[Path, dict[str, Any]]:
    """pytest's root folder for a run given *start* (a lesson folder), and its ini options:
    the first folder from *start* up with a pytest configuration file; else the first with a
    ``pyproject.toml``, else with a ``setup.py``; else *start* itself (pytest's rules)."""
    start = start.resolve()
    folders = [start, *start.parents]
    for folder in folders:
        for name in _INI_FILES:
            candidate = folder / name
            if candidate.is_file():
                options = _ini_of(candidate)
                if options is not None:
                    return folder, options
    for marker in ("pyproject.toml", "setup.py"):
        for folder in folders:
            if (folder / marker).is_file():
                return folder, {}
    return start, {}


def cache_of(lesson_folder: Path) -> PytestCache:
    """The cache a pytest run of *lesson_folder* uses (``cache_dir`` honoured)."""
    root, options = pytest_root(lesson_folder)
    return PytestCache(root / str(options.get("cache_dir") or ".pytest_cache"))


# --- finding lessons ---------------------------------------------------------------------


def find_course(start: Path) -> Path | None:
    """The course folder nearest *start*: the first of *start* and its parents that holds a
    ``course.toml``, or an ``exercises/course.toml``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        for candidate in (folder, folder / "exercises"):
            if (candidate / course.COURSE_FILE).is_file():
                return candidate
    return None


@dataclass(frozen=True)
class Lesson:
    """A lesson found by name or path: its ``exercise.toml`` and its course, if any."""

    path: Path
    course: course.Course | None

    @property
    def folder(self) -> Path:
        return self.path.parent


def find_lesson(name: str, cwd: Path, course_folder: Path | None) -> Lesson:
    """The lesson *name* (a lesson folder's name, or a path to its folder or its
    ``exercise.toml``), looked up in *course_folder* or the course nearest *cwd*."""
    given = Path(name).expanduser()
    if not given.is_absolute():
        given = cwd / given
    for candidate in (given, given / model.EXERCISE_FILE):
        if candidate.name == model.EXERCISE_FILE and candidate.is_file():
            path = candidate.resolve()
            return Lesson(path, _course_of(path))
    folder = course_folder or find_course(cwd)
    if folder is not None:
        candidate = folder / name / model.EXERCISE_FILE
        if candidate.is_file():
            path = candidate.resolve()
            return Lesson(path, _course_of(path))
    where = f"the course in {folder}" if folder is not None else f"{cwd} or its parents"
    known = ""
    if folder is not None:
        names = sorted(p.parent.name for p in folder.glob(f"*/{model.EXERCISE_FILE}"))
        if names:
            known = f" Its lessons: {', '.join(names)}."
    raise NotebookError(
        f"Name a lesson of the course, or give the path of its folder: there is no lesson "
        f"{name!r} in {where}.{known} `%lesson_course PATH` says where the course is."
    )


def _course_of(path: Path) -> course.Course | None:
    try:
        return course.find(path)
    except course.CourseError as error:
        raise NotebookError(str(error)) from None


# --- the words -----------------------------------------------------------------------------


def magic_words(line: str, name: str) -> str:
    """A line of the ``lessons`` summary with its pytest command as the notebook's magic."""
    return (
        line.replace(f"`pytest {name} --lesson-hints`", f"`%lesson_hints {name}`")
        .replace(
            f"`pytest {name} --lesson-solution=show-anyway`",
            f"`%lesson_solution {name} show-anyway`",
        )
        .replace("--lesson-solution=show-anyway", f"%lesson_solution {name} show-anyway")
    )


@dataclass
class Shown:
    """One failing case as the cell shows it, and the later cases that failed as it did."""

    result: CaseResult
    text: str
    repeats: list[tuple[CaseResult, str]] = field(default_factory=list)
    """Cases with the same fault (counted, not shown, as in the terminal) or the same
    diagnosis (shown in short): collapsed under this one in the HTML."""


class Feedback:
    """What a ``%%lesson`` cell shows: HTML in a notebook, the terminal's text elsewhere."""

    def __init__(
        self,
        slug: str,
        graded: Sequence[tuple[CaseResult, str]],
        progress: Sequence[str],
        notes: Sequence[str] = (),
        seconds: float = 0.0,
    ) -> None:
        self.slug = slug
        self.results = [result for result, _ in graded]
        """Every case's result, in order."""
        self.progress = list(progress)
        """The ``lessons`` lines: the lesson's state, then the course line."""
        self.notes = list(notes)
        self.seconds = seconds
        """Wall time the grading of the cell took."""
        self.shown: list[Shown] = []
        self.same_way = 0
        """Failing cases counted as failing the same way as an earlier one."""
        groups = FaultGroups[Shown]((WATCH_OUT, FAULT, DETECTOR))
        for result, text in graded:
            if result.passed:
                continue
            shown = Shown(result, text)
            first = groups.first(result, shown)
            if first is None or first is shown:
                self.shown.append(shown)
                continue
            first.repeats.append((result, text))
            if result.fault:
                self.same_way += 1

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def points(self) -> float:
        return sum(r.points for r in self.results)

    @property
    def max_points(self) -> float:
        return sum(r.max_points for r in self.results)

    def counts(self) -> str:
        """``10 passed`` or ``2 passed, 1 failed, 7 failed the same way``, as pytest's last
        line counts them."""
        passed = sum(1 for r in self.results if r.passed)
        failed = len(self.results) - passed - self.same_way
        parts = [f"{passed} passed"] if passed else []
        if failed:
            parts.append(f"{failed} failed")
        if self.same_way:
            parts.append(f"{self.same_way} {SAME_WAY}")
        return ", ".join(parts) or "no cases"

    def headline(self) -> str:
        if self.passed:
            return f"{self.slug}: every case passed ({self.counts()})."
        return f"{self.slug}: {self.counts()}"

    def text(self) -> str:
        """The plain text: the failures as the terminal shows them (a case that failed the
        same way as an earlier one is counted, not shown), then the progress."""
        lines = [self.headline()]
        for shown in self.shown:
            for result, text in [(shown.result, shown.text), *shown.repeats]:
                if result is not shown.result and result.fault:
                    continue
                lines += ["", f"____ {self.slug}: {result.label} ____", text.rstrip("\n")]
        if self.notes or self.progress:
            lines.append("")
        lines += [*self.notes, *self.progress]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text().rstrip("\n"))

    def _repr_html_(self) -> str:
        """The headline first, then each failure: its headline, its evidence with the
        mismatch map as a coloured grid, the cases that failed the same way collapsed; the
        lesson's progress last."""
        # What to do comes first: a failing cell's counts stay small, above its first
        # failure's headline; a passing cell's line is its headline.
        top = "font-weight:bold;color:#1a7f37" if self.passed else "color:#cf222e;font-size:90%"
        parts = [
            f'<div class="pytest-lessons" style="{_BOX}">',
            f'<div style="{top}">{_e(self.headline())}</div>',
        ]
        for shown in self.shown:
            parts.append(_case_html(shown.result, shown.text))
            if shown.repeats:
                numbers = [r.case for r, _ in shown.repeats]
                how = "failed as" if shown.result.fault else "made the same mistake as"
                inner = "".join(_case_html(r, t, nested=True) for r, t in shown.repeats)
                parts.append(
                    '<details style="margin:0 0 0.6em 1em">'
                    f"<summary>{_e(words.case_list(numbers))} "
                    f"{how} {_e(shown.result.label)}</summary>{inner}</details>"
                )
        tail = [*self.notes, *self.progress]
        if tail:
            parts.append(f'<pre style="{_PRE}">{_e(chr(10).join(tail))}</pre>')
        parts.append("</div>")
        return "".join(parts)


_BOX = "font-family:var(--jp-ui-font-family,sans-serif);line-height:1.4"
_PRE = "margin:0.2em 0;white-space:pre;overflow-x:auto;font-size:90%"
_RED, _GREEN = "#ffd7d5", "#d3f5d8"


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _split(text: str) -> tuple[str, list[str]]:
    """A failure's text as its headline paragraph (on one line) and its evidence lines."""
    lines = text.rstrip("\n").split("\n")
    end = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    return " ".join(" ".join(lines[:end]).split()), lines[end:]


def _case_html(result: CaseResult, text: str, nested: bool = False) -> str:
    headline, evidence = _split(text)
    while evidence and not evidence[0].strip():
        evidence.pop(0)
    label = f'<div style="color:#57606a;font-size:90%">{_e(result.label)}</div>'
    body = f'<div style="font-weight:bold">{_e(headline)}</div>'
    body += "".join(_evidence_html(evidence))
    margin = "0.3em 0" if nested else "0.6em 0"
    return f'<div style="margin:{margin}">{label}{body}</div>'


def _evidence_html(lines: list[str]) -> list[str]:
    """The evidence: the table of mismatches as a table, the mismatch map as a grid of
    coloured cells, everything else as the terminal's text."""
    parts: list[str] = []
    plain: list[str] = []

    def flush() -> None:
        while plain and not plain[-1].strip():
            plain.pop()
        if any(line.strip() for line in plain):
            parts.append(f'<pre style="{_PRE}">{_e(chr(10).join(plain))}</pre>')
        plain.clear()

    at = 0
    while at < len(lines):
        line = lines[at]
        if line.startswith(MAP_TITLE):
            rows = _block(lines, at + 2)
            if at + 1 < len(lines) and rows:
                flush()
                parts.append(_map_html(line.strip(), lines[at + 1], rows))
                at += 2 + len(rows)
                continue
        if line.split() == ["at", "got", "expected"]:
            rows = _block(lines, at + 1)
            flush()
            parts.append(_table_html(rows))
            at += 1 + len(rows)
            continue
        plain.append(line)
        at += 1
    flush()
    return parts


def _block(lines: list[str], start: int) -> list[str]:
    """The lines from *start* to the next empty one."""
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    return lines[start:end]


_CELL = "padding:0 0.6em;text-align:right;font-family:monospace"


def _table_html(rows: list[str]) -> str:
    head = "".join(f'<th style="{_CELL}">{word}</th>' for word in ("at", "got", "expected"))
    body = []
    for row in rows:
        cells = [cell for cell in row.strip().split("   ") if cell.strip()]
        if len(cells) != 3:
            body.append(f'<tr><td colspan="3" style="{_CELL}">{_e(row.strip())}</td></tr>')
            continue
        body.append("<tr>" + "".join(f'<td style="{_CELL}">{_e(c.strip())}</td>' for c in cells))
    return (
        '<table style="border-collapse:collapse;margin:0.3em 1em;font-size:90%">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _map_html(title: str, header: str, rows: list[str]) -> str:
    """The mismatch map: red where a value is outside tolerance, green where it matches."""
    square = "width:1.4em;height:1.4em;text-align:center;font-family:monospace;font-size:80%"
    columns = header.split()
    out = [f'<tr><td style="{square}"></td>']
    out += [f'<td style="{square};color:#57606a">{c}</td>' for c in columns]
    out.append("</tr>")
    for row in rows:
        label, *cells = row.split()
        out.append(f'<tr><td style="{square};color:#57606a">{_e(label)}</td>')
        for cell in cells:
            wrong = cell == "x"
            colour = _RED if wrong else _GREEN
            out.append(
                f'<td style="{square};background:{colour};border:1px solid #fff" '
                f'title="{"outside tolerance" if wrong else "matches"}">{_e(cell)}</td>'
            )
        out.append("</tr>")
    return (
        f'<div style="margin:0.4em 0 0 1em;font-size:90%">{_e(title)}</div>'
        f'<table class="lessons-map" style="border-collapse:collapse;margin:0.2em 1em">'
        f"{''.join(out)}</table>"
    )


@dataclass
class Text:
    """Lines to show as they are (hints, the worked solution, a message)."""

    lines: list[str]

    def text(self) -> str:
        return "\n".join(self.lines).strip("\n") + "\n"

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text().rstrip("\n"))

    def _repr_html_(self) -> str:
        return f'<pre style="{_PRE}">{_e(self.text())}</pre>'


# --- the extension's state in one kernel ---------------------------------------------------


class Lessons:
    """Everything the magics share in one kernel: where the course is, and the runner that
    runs learner code (its worker starts the first time a cell is graded, once per kernel,
    and stops with the kernel)."""

    def __init__(self, cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ
        self._cwd = cwd
        self.course_folder: Path | None = None
        given = self.environ.get(COURSE_ENV)
        if given:
            self.course_folder = Path(given).expanduser().resolve()
        self.runner: Runner | None = None
        self.support: sandbox.Support | None = None
        self._policy: sandbox.Policy | None = None
        self._fenced: dict[tuple[str, ...], sandbox.Policy] = {}
        self._exit_hook = False
        self._warned = False
        self._notes: list[str] = []
        """Said once, under the next graded cell (the sandbox being off)."""

    @property
    def cwd(self) -> Path:
        return self._cwd or Path.cwd()

    # - the course

    def set_course(self, path: str) -> Text:
        """``%lesson_course PATH``: the course whose lessons names refer to."""
        folder = Path(path).expanduser()
        folder = (folder if folder.is_absolute() else self.cwd / folder).resolve()
        if folder.is_file():
            folder = folder.parent
        found = find_course(folder)
        if found is not None and (found == folder or found == folder / "exercises"):
            folder = found
        elif not any(folder.glob(f"*/{model.EXERCISE_FILE}")):
            raise NotebookError(
                f"Give the folder of the course (its course.toml, or its lesson folders): "
                f"{folder} holds no lesson."
            )
        self.course_folder = folder
        names = sorted(p.parent.name for p in folder.glob(f"*/{model.EXERCISE_FILE}"))
        return Text([f"lessons: the course in {folder}: {', '.join(names)}"])

    def lesson(self, name: str) -> Lesson:
        name = name.strip()
        if not name:
            raise NotebookError("Name the lesson: for example `%%lesson combine_heads`.")
        return find_lesson(name, self.cwd, self.course_folder)

    def show(self, path: Path | str) -> str:
        return shown_path(path, self.cwd)

    # - running learner code

    def run_settings(self, lesson: Lesson) -> settings.Settings:
        _, options = pytest_root(lesson.folder)
        try:
            resolved = settings.resolve(
                option=lambda name: None,
                ini=lambda name: options.get(f"lesson_{name}"),
                environ=dict(self.environ),
            )
        except settings.SettingError as error:
            raise NotebookError(str(error)) from None
        if resolved.isolation == "off":
            # A cell's code never runs in the kernel: the kernel holds the expected answers.
            mode = settings.default_isolation()
            resolved = settings.Settings(resolved.given, mode, "")
        return resolved

    def _start(self, resolved: settings.Settings) -> Runner:
        """The runner, made and warmed up the first time a cell is graded."""
        if self.runner is None:
            self._policy, self.support = self._sandbox(resolved)
            self._fenced.clear()
            if not self.support.abi and not self._warned:
                self._warned = True
                self._notes.append(
                    f"lessons: sandbox OFF ({self.support.reason}): your cells still run "
                    "isolated, outside this kernel, but can read and change what you can."
                )
            self.runner = make_runner(
                resolved.isolation,
                resolved.value("preload"),
                env=dict(self._policy.env),
            )
            if not self._exit_hook:
                # The kernel's exit (a restart, a shutdown) stops the worker.
                atexit.register(self.close)
                self._exit_hook = True
        self.runner.warm_up()
        return self.runner

    def _sandbox(self, resolved: settings.Settings) -> tuple[sandbox.Policy, sandbox.Support]:
        try:
            support, policy = sandbox.choose(
                resolved.value("sandbox"),
                self.environ,
                passed=resolved.value("pass_env"),
                user=resolved.value("sandbox_user"),
                off_reason="PYTEST_LESSONS_SANDBOX=off was given",
                limits={key: resolved.value(name) for name, key in sandbox.LIMITS.items()},
            )
        except sandbox.Unavailable as error:
            raise NotebookError(
                f"The sandbox is required but cannot be had here: {error}."
            ) from None
        except sandbox.NoSuchUser as error:
            raise NotebookError(f"PYTEST_LESSONS_SANDBOX_USER: {error}") from None
        return policy, support

    def policy(self, lesson: Lesson) -> sandbox.Policy:
        """The sandbox around a cell of *lesson*: every lesson of its course and pytest's root
        folder out of reach, as in a pytest run of the course."""
        assert self._policy is not None
        folders = {lesson.folder}
        if lesson.course is not None:
            folders |= {path.parent for path in lesson.course.lessons}
        checkout, _ = pytest_root(lesson.folder)
        key = (*sorted(str(f) for f in folders), str(checkout))
        if key not in self._fenced:
            self._fenced[key] = self._policy.for_course(sorted(folders), checkout)
        return self._fenced[key]

    def grade(self, name: str, code: str) -> Feedback:
        """``%%lesson NAME``: grade *code* as the lesson's solution, case by case."""
        lesson = self.lesson(name)
        try:
            exercise = model.load(lesson.path)
        except model.ExerciseError as error:
            raise NotebookError(
                f"Tell your instructor: this lesson cannot be graded until its file is "
                f"valid. {error}"
            ) from None
        resolved = self.run_settings(lesson)
        runner = self._start(resolved)
        started = time.perf_counter()
        private = Path(tempfile.mkdtemp(prefix="pytest-lessons-cell-"))
        try:
            cell = private / exercise.solution.name
            cell.write_text(code, encoding="utf-8")
            policy = self.policy(lesson)
            _hand_over(private, cell, policy)

            def show(path: Path | str) -> str:
                return CELL if Path(path) == cell else self.show(path)

            graded = grade_cells(runner, resolved, policy, show, exercise, cell)
        except KeyboardInterrupt:
            # The case's processes must not outlive the cell, nor a half-read answer the
            # next cell: the worker is stopped and starts afresh when next needed.
            self.abort()
            raise
        finally:
            shutil.rmtree(private, ignore_errors=True)
        seconds = time.perf_counter() - started
        return self.feedback(lesson, exercise, graded, seconds)

    def feedback(
        self,
        lesson: Lesson,
        exercise: model.Exercise,
        graded: Sequence[tuple[CaseResult, str]],
        seconds: float = 0.0,
    ) -> Feedback:
        """The cell's output; passes and the lesson's state are remembered in pytest's cache,
        as a pytest run of the lesson remembers them."""
        cache = cache_of(lesson.folder)
        results = [result for result, _ in graded]
        states = summary.collect(results)
        courses = [lesson.course] if lesson.course is not None else []
        progress = summary.progress_lines(states, courses, cache)
        summary.solution_lines(states, None, cache, self.show, [])
        name = self._name(lesson)
        notes = [
            magic_words(line, name)
            for line in summary.hint_lines(states, None, cache, [name])
            if line
        ]
        notes = [*self._notes, *notes]
        self._notes.clear()
        return Feedback(exercise.slug, graded, progress, notes, seconds)

    def _name(self, lesson: Lesson) -> str:
        """What the learner types to name *lesson* in a magic."""
        folder = self.course_folder or find_course(self.cwd)
        if folder is not None and lesson.folder.parent == folder.resolve():
            return lesson.folder.name
        return self.show(lesson.folder)

    # - hints and the worked solution

    def _state(self, lesson: Lesson, cache: PytestCache) -> summary.ExerciseState:
        """The lesson as the last pytest run or graded cell left it (passed or not)."""
        try:
            exercise = model.load(lesson.path)
        except model.ExerciseError as error:
            raise NotebookError(f"Tell your instructor: {error}") from None
        state = summary.ExerciseState(exercise.slug, lesson.path, len(exercise.cases))
        if cache.get(summary.state_key(lesson.path), "") != "passed":
            state.seen.add(1)  # failing, as far as anyone knows
        return state

    def hints(self, name: str, mode: str = "next") -> Text:
        """``%lesson_hints NAME [all|reset]``: the hints opened so far and the next one, kept
        in pytest's cache as ``--lesson-hints`` keeps them."""
        if mode not in ("next", "all", "reset"):
            raise NotebookError(f"`%lesson_hints NAME {mode}`: say next, all or reset.")
        lesson = self.lesson(name)
        cache = cache_of(lesson.folder)
        state = self._state(lesson, cache)
        lines = summary.hint_lines([state], mode, cache, [self._name(lesson)])
        if not lines:
            if state.failing:
                lines = [f"{state.slug} has no hints."]
            else:
                lines = [
                    f"You have passed {state.slug}: `%lesson_solution {self._name(lesson)}` "
                    "shows its worked solution."
                ]
        return Text([magic_words(line, self._name(lesson)) for line in lines])

    def solution(self, name: str, mode: str = "passed") -> Text:
        """``%lesson_solution NAME [show-anyway]``: the worked solution, once every case of
        the lesson passed (in a cell or a pytest run), as ``--lesson-solution`` gates it."""
        if mode not in ("passed", "show-anyway"):
            raise NotebookError(f"`%lesson_solution NAME {mode}`: say show-anyway or nothing.")
        lesson = self.lesson(name)
        cache = cache_of(lesson.folder)
        state = self._state(lesson, cache)
        lines = summary.solution_lines([state], mode, cache, self.show, [self._name(lesson)])
        return Text([magic_words(line, self._name(lesson)) for line in lines])

    # - processes

    def abort(self) -> None:
        """Stop every process that runs learner code, at once (an interrupted cell)."""
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.abort()

    def close(self) -> None:
        """Stop the worker (the kernel ends, or the extension is unloaded)."""
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()


def _hand_over(private: Path, cell: Path, policy: sandbox.Policy) -> None:
    """Let the user learner code runs as (when the kernel runs as root, as in Colab) read the
    cell's file, and no one else."""
    os.chmod(private, 0o711)
    os.chmod(cell, 0o600)
    if policy.uid is not None and hasattr(os, "chown"):
        os.chown(cell, policy.uid, policy.gid if policy.gid is not None else -1)


def grade_cells(
    runner: Runner,
    resolved: settings.Settings,
    policy: sandbox.Policy,
    show: Callable[[Path | str], str],
    exercise: model.Exercise,
    solution: Path,
) -> list[tuple[CaseResult, str]]:
    """Every case of *exercise* graded with *solution* as the learner's file, in order, by a
    new :class:`~pytest_lessons.core.grading.Grader` (what it remembers, such as which fault was
    already explained, belongs to this one grading): each case's result and its text as the
    terminal shows it."""
    grader = grading.Grader(runner, resolved, sandbox=lambda: policy, show=show)
    graded = []
    for case in exercise.cases:
        done = grader.grade(grading.Attempt(exercise, case, solution))
        graded.append((done.result, done.text))
    return graded


# --- a learner's notebook as submission files ---------------------------------------------


def lesson_cells(notebook_file: Path) -> dict[str, str]:
    """The code of each lesson's last ``%%lesson NAME`` cell in a ``.ipynb`` file, by the
    lesson's folder name: the code the learner last graded (or would have) for it."""
    try:
        data = json.loads(notebook_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise NotebookError(f"{notebook_file}: not a notebook that can be read ({error})") from None
    found: dict[str, str] = {}
    for cell in data.get("cells", []) if isinstance(data, dict) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        first, _, code = text.partition("\n")
        if first.split()[:1] != ["%%lesson"]:
            continue
        words = _words(first.strip()[len("%%lesson") :])
        if words:
            found[Path(words[0].rstrip("/\\")).name] = code
    return found


def write_submission(
    notebook_file: Path, folder: Path, solution: str = "solution.py"
) -> list[Path]:
    """Write *notebook_file*'s lesson cells as ``folder/<lesson>/solution.py``: one learner's
    folder of ``pytest --lesson-submissions``. Returns the files written."""
    written = []
    for name, code in lesson_cells(notebook_file).items():
        target = folder / name / solution
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_lessons.notebook NOTEBOOK FOLDER``: a learner's notebook as their
    folder of submissions, to grade a class with ``pytest --lesson-submissions``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0].startswith("-"):
        print(
            "usage: python -m pytest_lessons.notebook NOTEBOOK.ipynb SUBMISSIONS/LEARNER\n"
            "Writes the code of each lesson's last %%lesson cell as LEARNER/<lesson>/solution.py.",
            file=sys.stderr,
        )
        return 2
    try:
        written = write_submission(Path(args[0]), Path(args[1]))
    except NotebookError as error:
        print(error, file=sys.stderr)
        return 1
    for path in written:
        print(path)
    if not written:
        print(f"{args[0]}: no %%lesson cell", file=sys.stderr)
    return 0


# --- IPython -------------------------------------------------------------------------------

_LESSONS: Lessons | None = None


def lessons() -> Lessons:
    """The kernel's :class:`Lessons`, made when first needed."""
    global _LESSONS
    if _LESSONS is None:
        _LESSONS = Lessons()
    return _LESSONS


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, posix=os.name != "nt")
    except ValueError:
        return line.split()


def _safely(run: Callable[[], Any]) -> Any:
    """A magic's result; a problem the learner can fix, or a failure of the grader itself, is
    said in words, never with the grader's traceback (an interrupt still stops the cell)."""
    try:
        return run()
    except NotebookError as error:
        return Text([str(error)])
    except Exception as error:  # the grader's own bug: its traceback is not the learner's
        then = "Run the cell again, and if it happens again, tell your instructor."
        return Text(grader_failed("this cell", error, then))


def lesson_cell(line: str, cell: str | None = None) -> Any:
    """``%%lesson NAME_OR_PATH``: grade this cell's code as the lesson's solution. The code
    runs isolated and sandboxed, as ``pytest`` runs ``solution.py``; never in this kernel."""
    words = _words(line)
    if not words:
        return Text(["Name the lesson: for example `%%lesson combine_heads`."])
    try:
        return _safely(lambda: lessons().grade(words[0], cell or ""))
    except KeyboardInterrupt:
        # Still an interrupt (a "Run all" stops here), without the grader's frames in it.
        raise KeyboardInterrupt(
            "the cell's grading was stopped, and the processes running its code with it"
        ) from None


def lesson_hints(line: str) -> Any:
    """``%lesson_hints NAME [all|reset]``: show the hints opened so far and open one more."""
    words = _words(line)
    if not words:
        return Text(["Name the lesson: for example `%lesson_hints combine_heads`."])
    return _safely(lambda: lessons().hints(words[0], *(words[1:2] or ["next"])))


def lesson_solution(line: str) -> Any:
    """``%lesson_solution NAME [show-anyway]``: the worked solution, once you have passed."""
    words = _words(line)
    if not words:
        return Text(["Name the lesson: for example `%lesson_solution combine_heads`."])
    return _safely(lambda: lessons().solution(words[0], *(words[1:2] or ["passed"])))


def lesson_course(line: str) -> Any:
    """``%lesson_course PATH``: where the course is, when it is not the nearest one."""
    words = _words(line)
    if not words:
        folder = lessons().course_folder or find_course(lessons().cwd)
        if folder is None:
            return Text(
                [
                    f"Give the course's folder with `%lesson_course PATH`: there is no "
                    f"course.toml in {lessons().cwd} or the folders above it."
                ]
            )
        return Text([f"lessons: the course in {folder}"])
    return _safely(lambda: lessons().set_course(words[0]))


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics with *ipython* (``%load_ext pytest_lessons``)."""
    ipython.register_magic_function(lesson_cell, "cell", "lesson")
    ipython.register_magic_function(lesson_hints, "line", "lesson_hints")
    ipython.register_magic_function(lesson_solution, "line", "lesson_solution")
    ipython.register_magic_function(lesson_course, "line", "lesson_course")


def unload_ipython_extension(ipython: Any) -> None:
    """Stop the worker (``%unload_ext pytest_lessons``)."""
    global _LESSONS
    if _LESSONS is not None:
        _LESSONS.close()
        _LESSONS = None
    with contextlib.suppress(Exception):
        magics = ipython.magics_manager.magics
        for kind, name in (
            ("cell", "lesson"),
            ("line", "lesson_hints"),
            ("line", "lesson_solution"),
            ("line", "lesson_course"),
        ):
            magics[kind].pop(name, None)
