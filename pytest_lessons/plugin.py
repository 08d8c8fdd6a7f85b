"""The pytest plugin, registered through the ``pytest11`` entry point as ``lessons``.

It collects ``exercise.toml`` files, resolves the run settings once, owns the runner that
executes learner code, registers the diagnosis hook (the built-in diagnosis is the core's), and
writes the ``lessons`` summary (progress, hints, worked solutions). Loading it imports neither
torch nor any learner code. It holds the hookimpls; what they write in the terminal (the
header, the fold of repeated faults, a class's progress line, the results collected from
reports) is :mod:`pytest_lessons.terminal`'s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import hooks
from pytest_lessons.core import course, model, parts, settings, summary
from pytest_lessons.core.frontend import choose_sandbox, shown_path
from pytest_lessons.core.plan import Plan, PlanError
from pytest_lessons.core.runs import LOOP_TIMEOUTS
from pytest_lessons.core.submissions import Roll, ShardError, parse_shard
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.runner import PoolRunner, make_runner, usable_cpus
from pytest_lessons.isolation.text import visible
from pytest_lessons.nodes import BrokenExercise, CaseItem, ExerciseFile, FailureText
from pytest_lessons.reports import formats, tallyfile
from pytest_lessons.reports.classreport import class_lines
from pytest_lessons.reports.options import OUTPUT_OPTIONS, PYTEST
from pytest_lessons.reports.outputs import (
    LEARNER,
    WRITE_FAILED,
    OptionError,
    Outputs,
    WriteFailed,
    check,
    write,
    write_report,
)
from pytest_lessons.session import KEY, LessonSession
from pytest_lessons.terminal import (
    UNSANDBOXED_GRADING,
    ClassProgress,
    ResultCollector,
    header_lines,
    same_way,
)

_STARTED = pytest.StashKey[float]()
_OUTPUTS = pytest.StashKey[Outputs]()
_REDIRECTED = pytest.StashKey[list[str]]()
_WRITTEN = pytest.StashKey[list[str]]()
#: The files the run was asked to write that could not be written, each with why.
_WRITE_ERROR = pytest.StashKey[WriteFailed]()


class CheckNotes:
    """What ``--lesson-check`` tells an author besides problems (snapshot changes, margins),
    gathered from the reports and shown once at the end."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.notes += getattr(report, "lessons_notes", None) or []

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.notes:
            terminalreporter.write_sep("=", "lessons: lesson check")
            for line in self.notes:
                terminalreporter.write_line(line, yellow="WARNING:" in line)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lessons", "pytest-lessons: grading exercises")
    for setting in settings.SETTINGS:
        help_text = f"{setting.help} Also ini {setting.ini}, env {setting.env}."
        group.addoption(
            setting.option,
            dest=f"lesson_{setting.name}",
            metavar=setting.metavar,
            default=None,
            help=help_text,
        )
        parser.addini(setting.ini, setting.help, default=None)
    group.addoption(
        "--lesson-submissions",
        dest="lesson_submissions",
        metavar="DIR",
        default=None,
        help="Grade a class: DIR/<learner>/<exercise>/solution.py for each learner and each "
        "collected exercise. Only the solution files are read from DIR.",
    )
    for option in OUTPUT_OPTIONS:
        group.addoption(
            option.flag(PYTEST),
            dest=f"lesson_{option.field}",
            help=option.help_in(PYTEST),
            **option.arguments(),
        )
    group.addoption(
        "--lesson-watch",
        dest="lesson_watch",
        action="store_true",
        default=False,
        help="Watch the lessons given (default: the run's paths): each time a lesson's file is "
        "saved, grade it and name the next unsolved lesson. As python -m pytest_lessons watch "
        "(docs/watch.md); Ctrl-C stops.",
    )
    group.addoption(
        "--lesson-watch-poll",
        dest="lesson_watch_poll",
        action="store_true",
        default=False,
        help="With --lesson-watch: look at the files twice a second instead of waiting for "
        "file events (WSL2 on a Windows drive, NFS, network drives).",
    )
    group.addoption(
        "--lesson-show-failures",
        dest="lesson_show_failures",
        action="store_true",
        default=False,
        help="With --lesson-submissions: show every failure's text in the terminal too, instead "
        "of a progress line and the class summary.",
    )
    group.addoption(
        "--lesson-shard",
        dest="lesson_shard",
        metavar="K/N",
        default=None,
        help="With --lesson-submissions: grade the K-th of N shards of the learners (by a hash "
        "of each folder name); merge the shards' json reports with python -m pytest_lessons "
        "merge.",
    )
    group.addoption(
        "--lesson-plan",
        dest="lesson_plan",
        metavar="PLAN.json",
        default=None,
        help="With --lesson-submissions and --lesson-shard-index: grade one shard of the plan "
        "written by python -m pytest_lessons plan, reading only its own learners' folders; "
        "merge with python -m pytest_lessons merge --plan=PLAN.json.",
    )
    group.addoption(
        "--lesson-shard-index",
        dest="lesson_shard_index",
        metavar="I",
        default=None,
        help="With --lesson-plan: the shard to grade, as the scheduler's index from 0 "
        "(JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, SLURM_ARRAY_TASK_ID, $(Process)).",
    )
    group.addoption(
        "--lesson-tally",
        dest="lesson_tally",
        metavar="PATH",
        default=None,
        help="With --lesson-plan and a json --lesson-report: also write the shard's tally to "
        "PATH, which python -m pytest_lessons merge --plan adds up instead of reading every "
        "case of the report (a class of thousands: docs/ci-grading.md).",
    )
    group.addoption(
        "--lesson-check",
        dest="lesson_check",
        action="store_true",
        default=False,
        help="Check each collected lesson instead of grading it: the reference and each "
        "variant of variants.py pass every case, the starter fails, and each mistake gets its "
        "own watch-out and no other; prints each lesson's margins to its tolerance.",
    )
    group.addoption(
        "--lesson-regenerate",
        dest="lesson_regenerate",
        action="store_true",
        default=False,
        help="With --lesson-check: first rewrite each lesson's snapshot files (expected = "
        "{ snapshot = ... }) from its reference.py, printing what changed; refused in a "
        "learner's copy.",
    )
    group.addoption(
        "--lesson-export",
        dest="lesson_export",
        metavar="DIR",
        default=None,
        help="Write the learner's copy of each collected lesson to DIR/<lesson>: the starter, "
        "public cases, generated and computed cases frozen with their answers, public "
        "snapshots, watch-outs and hints; no reference, no variants, no hidden cases, no "
        "worked solution.",
    )
    group.addoption(
        "--lesson-hints",
        dest="lesson_hints",
        nargs="?",
        const="next",
        default=None,
        choices=("next", "all", "reset"),
        help="For each failing exercise, show the hints opened so far and open the next "
        "(remembered in pytest's cache); 'all' shows every hint; 'reset' closes them again.",
    )
    group.addoption(
        "--lesson-solution",
        dest="lesson_solution",
        nargs="?",
        const="passed",
        default=None,
        choices=("passed", "show-anyway"),
        help="Show the worked solution of each exercise you have passed; 'show-anyway' shows "
        "it for exercises you have not passed yet too.",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``pytest --lesson-watch``: this process becomes ``python -m pytest_lessons watch`` on
    the run's paths, before anything is collected or graded."""
    if not config.getoption("lesson_watch"):
        return None
    here = config.invocation_params.dir
    paths = [str(Path(here, str(arg).split("::", 1)[0])) for arg in config.args]
    command = [sys.executable, "-m", "pytest_lessons", "watch", *paths]
    if config.getoption("lesson_watch_poll"):
        command.append("--poll")
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execv(sys.executable, command)  # the watch's Ctrl-C is then the terminal's own
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the watch itself stops on Ctrl-C
    return subprocess.call(command)


#: Warnings of the grader's own imports that are not the learner's, kept out of pytest's
#: warnings summary (where learner code runs in pytest, with isolation off).
FOREIGN_WARNINGS = (
    # torch without NumPy (not a dependency: nothing here uses torch's NumPy bridge).
    "ignore:Failed to initialize NumPy:UserWarning",
)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_REDIRECTED] = _grade_lessons_not_files(config)
    for line in FOREIGN_WARNINGS:
        config.addinivalue_line("filterwarnings", line)
    debugging = bool(config.getoption("usepdb", False) or config.getoption("trace", False))
    try:
        resolved = settings.resolve(
            option=lambda name: config.getoption(f"lesson_{name}"),
            ini=lambda name: config.getini(f"lesson_{name}"),
            debugging=debugging,
        )
    except settings.SettingError as error:
        raise pytest.UsageError(str(error)) from None
    submissions = config.getoption("lesson_submissions")
    if submissions is not None:
        submissions = Path(config.invocation_params.dir, submissions).resolve()
        if not submissions.is_dir():
            raise pytest.UsageError(f"--lesson-submissions={submissions}: no such folder")
    outputs = Outputs.from_values(lambda name: config.getoption(f"lesson_{name}"))
    shard = config.getoption("lesson_shard")
    try:
        check(outputs, config.invocation_params.dir, submissions is not None)
        if shard is not None and submissions is None:
            raise OptionError("Give --lesson-shard with --lesson-submissions.")
        if shard is not None and outputs.history:
            raise OptionError(
                "Give --history to the merge of the shards (python -m pytest_lessons merge), "
                "not --lesson-history to a shard: a record holds the whole class."
            )
        shards = parse_shard(shard) if shard is not None else None
        planned = _planned(config, submissions, shard)
        if config.getoption("lesson_tally") is not None:
            _check_tally(outputs, planned)
    except (OptionError, ShardError, PlanError) as error:
        raise pytest.UsageError(str(error)) from None
    if config.getoption("lesson_regenerate") and not config.getoption("lesson_check"):
        raise pytest.UsageError(
            "Give --lesson-regenerate with --lesson-check: it rewrites a lesson's snapshots "
            "from its reference, then checks the lesson."
        )
    config.stash[_OUTPUTS] = outputs
    support, policy = _sandbox(resolved)
    lessons = LessonSession(
        settings=resolved,
        runner=make_runner(
            resolved.isolation,
            resolved.value("preload"),
            env=dict(policy.env) if policy is not None else None,
            # A class's cases run side by side in this process; a pytest-xdist worker runs
            # only its share, one by one (its items are not known ahead).
            workers=(resolved.value("workers") or usable_cpus())
            if submissions is not None and not hasattr(config, "workerinput")
            else 1,
            skip_after=LOOP_TIMEOUTS,
        ),
        invocation_dir=config.invocation_params.dir,
        config=config,
        submissions=submissions,
        policy=policy,
        support=support,
        checkout=config.rootpath,
        shard=planned.shard if planned is not None else shards,
        planned=planned,
        runs_cases=_runs_cases_here(config),
    )
    config.stash[KEY] = lessons
    config.stash[_STARTED] = time.monotonic()
    if lessons.runs_cases and (submissions is not None or _names_lessons(config)):
        # Lessons are graded here: the worker's import of torch, the longest wait before the
        # first case, overlaps the rest of pytest's start-up and its collection instead of
        # following them. (It is a process of its own: pytest itself imports no torch.)
        lessons.runner.warm_up()
    config.pluginmanager.register(ResultCollector(lessons), "lessons.results")
    config.pluginmanager.register(CheckNotes(), "lessons.check_notes")
    if (
        submissions is not None
        and not config.getoption("lesson_show_failures")
        and not hasattr(config, "workerinput")
    ):
        config.pluginmanager.register(ClassProgress(), "lessons.class_progress")


def _planned(config: pytest.Config, submissions: Path | None, shard: str | None) -> Roll | None:
    """The shard of a plan this run grades (``--lesson-plan``, ``--lesson-shard-index``)."""
    path, index = config.getoption("lesson_plan"), config.getoption("lesson_shard_index")
    if path is None and index is None:
        return None
    if path is None or index is None or submissions is None:
        raise OptionError(
            "Give --lesson-plan, --lesson-shard-index and --lesson-submissions together: the "
            "plan says who is in each shard, the index which shard this run grades."
        )
    if shard is not None:
        raise OptionError(
            "Give --lesson-shard-index instead of --lesson-shard with --lesson-plan: the plan "
            "says how many shards there are."
        )
    plan = Plan.read(Path(config.invocation_params.dir, path))
    shown = shown_path(submissions, config.invocation_params.dir)
    return plan.roll(plan.index(index), shown)


def _check_tally(outputs: Outputs, planned: Roll | None) -> None:
    """``--lesson-tally`` needs a planned shard's json report: it is made from it."""
    if planned is None:
        raise OptionError(
            "Give --lesson-tally with --lesson-plan and --lesson-shard-index: a tally is a "
            "planned shard's, which the merge checks against the plan."
        )
    if not outputs.report or LEARNER in outputs.report or outputs.report_format != "json":
        raise OptionError(
            "Give --lesson-report=PATH (the json format, one file for the shard) with "
            "--lesson-tally: the tally is made from that report."
        )


def _lesson_folder(path: Path, top: Path) -> Path | None:
    """The lesson folder (the one with ``exercise.toml``) that holds the Python file *path*,
    looking no higher than *top*; None for a file of no lesson."""
    for folder in path.parents:
        if (folder / model.EXERCISE_FILE).is_file():
            return folder
        if folder == top or (folder / "course.toml").is_file():
            return None
    return None


def _grade_lessons_not_files(config: pytest.Config) -> list[str]:
    """``pytest exercises/split_heads/solution.py``: the lesson is graded, and the file never
    imported into pytest (it is learner code). pytest collects a ``.py`` named on the command
    line as a test module whatever its name, so each such argument becomes its lesson's folder.
    Returns, per file, the line that says so."""
    base = Path(config.invocation_params.dir).resolve()
    said = []
    for index, argument in enumerate(config.args):
        path = Path(base, argument.split("::", 1)[0])
        if path.suffix != ".py" or not path.is_file():
            continue
        folder = _lesson_folder(path.resolve(), config.rootpath.resolve().parent)
        if folder is None:
            continue
        shown = os.path.relpath(folder, base) if folder.is_relative_to(base) else str(folder)
        config.args[index] = str(folder)
        said.append(
            f"lessons: {path.name} is graded as its lesson: this runs `pytest {shown}` "
            f"(pytest never imports {path.name} itself)"
        )
    return said


def _runs_cases_here(config: pytest.Config) -> bool:
    """Whether this pytest process will run cases: not for --collect-only, --help, --markers
    or --fixtures, nor in a pytest-xdist controller, whose workers run them."""
    listing = ("collectonly", "help", "markers", "showfixtures", "show_fixtures_per_test")
    if any(getattr(config.option, name, False) for name in listing):
        return False
    distributed = getattr(config.option, "dist", "no") != "no"
    return not distributed or hasattr(config, "workerinput")


def _names_lessons(config: pytest.Config) -> bool:
    """Whether pytest's arguments name lessons: an ``exercise.toml``, or a folder that is a
    lesson or a course or holds one (a look one level down, no walk). Where they do not, the
    worker starts when the first lesson is collected, if any is."""
    names = (model.EXERCISE_FILE, "course.toml")
    for argument in config.args:
        path = Path(config.invocation_params.dir, argument.split("::", 1)[0])
        if path.name == model.EXERCISE_FILE:
            return True
        try:
            if any((path / name).is_file() for name in names):
                return True
            with os.scandir(path) as entries:
                folders = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:  # not a folder
            continue
        if any((folder / name).is_file() for folder in folders for name in names):
            return True
    return False


def _sandbox(resolved: settings.Settings) -> tuple[sandbox.Support, sandbox.Policy | None]:
    """What the kernel offers and the session's sandbox policy, as the settings ask."""
    if resolved.isolation == "off":
        return sandbox.Support(0, "learner code runs inside pytest"), None
    try:
        return choose_sandbox(resolved, os.environ, "--lesson-sandbox=off was given")
    except sandbox.Unavailable as error:
        raise pytest.UsageError(
            f"--lesson-sandbox=require: no sandbox can be had here: {error}. "
            "Grade as a separate user or in a container, or drop 'require'."
        ) from None
    except sandbox.NoSuchUser as error:
        raise pytest.UsageError(f"--lesson-sandbox-user: {error}") from None


def pytest_unconfigure(config: pytest.Config) -> None:
    lessons = config.stash.get(KEY, None)
    if lessons is not None:
        lessons.runner.close()


def pytest_report_header(config: pytest.Config) -> str | list[str] | None:
    lessons = config.stash.get(KEY, None)
    if lessons is None:
        return None
    return header_lines(
        lessons,
        _grading(config),
        config.stash.get(_REDIRECTED, []),
        detail=config.option.verbose > 0,
    )


def _courses(paths: Any) -> list[course.Course]:
    """The courses of the exercise files *paths*, each once, in order of first appearance."""
    try:
        return course.of(paths)
    except course.CourseError as error:
        raise pytest.UsageError(str(error)) from None


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Lessons of a course run in the order its ``course.toml`` gives (stable otherwise), and
    every hidden case after every other test of the run."""
    _in_course_order(items)
    # Learner code that runs after a hidden case (a later public case, another lesson's)
    # could print what it saw of it: the time it took, the process ids it used up. So none
    # runs after one; a pool of workers holds each hidden case's job until the rest have
    # ended too (isolation.runner.PoolRunner).
    items[:] = [
        *(item for item in items if not _hidden(item)),
        *(item for item in items if _hidden(item)),
    ]


def _hidden(item: pytest.Item) -> bool:
    return isinstance(item, CaseItem) and item.case.hidden


def _in_course_order(items: list[pytest.Item]) -> None:
    files = [item.path for item in items if item.path.name == model.EXERCISE_FILE]
    courses = _courses(dict.fromkeys(files))
    if not courses:
        return
    order = summary.course_order(courses)
    first: dict[Any, int] = {}
    for index, item in enumerate(items):
        if item.path.name == model.EXERCISE_FILE:
            found = order(item.path)
            first.setdefault(found[0] if found[0] < len(courses) else item.path, index)

    def key(pair: tuple[int, pytest.Item]) -> tuple[int, int, int]:
        index, item = pair
        if item.path.name != model.EXERCISE_FILE:
            return index, 0, index
        number, position, _ = order(item.path)
        group = number if number < len(courses) else item.path
        return first[group], position, index

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Tell the runner the modules the collected lessons preload and the sandbox, now that
    the course is known, so that the worker imports them once and the first case's walls go
    up ahead too; grading a class on several workers, hand the pool every learner case, in
    run order."""
    lessons = session.config.stash.get(KEY, None)
    if lessons is None or not lessons.runs_cases:
        return
    if any(item.path.name == model.EXERCISE_FILE for item in session.items):
        lessons.runner.preload(_preload(session.items))
        lessons.runner.announce(lessons.sandbox_policy())
    if not isinstance(lessons.runner, PoolRunner):
        return
    grader = lessons.grader
    jobs = [
        grader.runs.learner_job(item.attempt)
        for item in session.items
        if isinstance(item, CaseItem)
    ]
    lessons.runner.prefetch(jobs)


def _preload(items: list[pytest.Item]) -> tuple[str, ...]:
    """The union of the ``preload`` lists of the lessons *items* run, in order."""
    exercises: dict[Path, model.Exercise] = {}
    for item in items:
        exercise = getattr(item, "exercise", None)
        if isinstance(exercise, model.Exercise):
            exercises.setdefault(exercise.path, exercise)
    return tuple(dict.fromkeys(m for e in exercises.values() for m in parts.preload(e)))


def _submissions_of(config: pytest.Config) -> Path | None:
    """The ``--lesson-submissions`` folder, resolved (None: not a class run, or not a folder).
    Read from the options as parsed so far, so it works before ``pytest_configure`` too."""
    given = getattr(config.known_args_namespace, "lesson_submissions", None)
    if given is None:
        given = config.getoption("lesson_submissions", None)
    if not given:
        return None
    folder = Path(config.invocation_params.dir, given).resolve()
    return folder if folder.is_dir() else None


def _beneath(path: Path, folder: Path) -> bool:
    """Whether *path* is *folder* or inside it, links resolved (a link into the folder is
    inside it)."""
    try:
        return Path(path).resolve().is_relative_to(folder)
    except OSError:
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """A class run refuses a path inside its submissions folder before pytest imports any
    ``conftest.py`` for it: each file there is a learner's, and pytest would import the
    ``conftest.py`` of every folder above a path it is given. (A learner's ``pytest.ini``
    there would even be read before any plugin: docs/ci-grading.md says never to name one.)"""
    folder = _submissions_of(early_config)
    if folder is None:
        return
    named = [a.split("::", 1)[0] for a in early_config.known_args_namespace.file_or_dir]
    base = early_config.invocation_params.dir
    for path in [Path(base, a) for a in named] or [Path(base)]:
        if _beneath(path, folder):
            shown = path if named else f"{path} (where pytest was started)"
            raise pytest.UsageError(
                f"Name the course, not a folder inside --lesson-submissions: run pytest from "
                f"the course's folder, or give its path. {shown} is inside {folder}, whose "
                "files are the learners' own and are never collected or imported."
            )
        # pytest also imports the conftest.py of each test* folder in a path it is given.
        planted = folder / "conftest.py"
        test_named = folder.name.startswith("test") and folder.parent == path.resolve()
        if test_named and planted.is_file():
            raise pytest.UsageError(
                f"Move {planted} out of the submissions folder, or give the folder a name that "
                "does not start with 'test': pytest imports the conftest.py of each test* "
                "folder in the paths it is given, and every file in the submissions folder is "
                "the learners' own."
            )


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Nothing inside a class's submissions folder is collected, whatever folder pytest
    walks: a learner's ``conftest.py``, ``__init__.py``, ``test_*.py`` or ``exercise.toml``
    would otherwise be imported into this process or graded as a lesson. The grader reads
    each learner's solution files itself, as data."""
    lessons = config.stash.get(KEY, None)
    folder = lessons.submissions if lessons is not None else _submissions_of(config)
    if folder is not None and _beneath(collection_path, folder):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if file_path.name == model.EXERCISE_FILE:
        return ExerciseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    result = getattr(item, "lesson_result", None) if call.when == "call" else None
    if isinstance(item, CaseItem) and item.case.hidden:
        # A hidden case's time could spell its inputs (code that sleeps for as long as an
        # input says): JUnit's time, --durations and every report of pytest's show none.
        report.duration = 0.0
        if hasattr(report, "start"):
            report.stop = report.start
    if isinstance(item, (CaseItem, BrokenExercise)) and result is not None:
        # Plain data on the report, so the summary also works under pytest-xdist.
        report.lessons = result.to_dict()
    notes = getattr(item, "lesson_notes", None) if call.when == "call" else None
    if notes:
        report.lessons_notes = notes  # plain lines, so they also travel from xdist workers
    if isinstance(report.longrepr, FailureText):
        crash = report.longrepr.reprcrash
        report.lessons_crash = [crash.path, crash.lineno, crash.message]


@pytest.hookimpl(hookwrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: dict[str, Any]) -> Any:
    outcome = yield
    report = outcome.get_result()
    crash = getattr(report, "lessons_crash", None)
    # pytest-xdist sends a failure's text as a string; give it back its one-line headline.
    if crash and isinstance(getattr(report, "longrepr", None), str):
        path, lineno, headline = crash
        report.longrepr = FailureText(report.longrepr, headline, path, lineno)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    return same_way(report, config)


def _grading(config: pytest.Config) -> bool:
    return bool(config.getoption("lesson_report") or config.getoption("lesson_submissions"))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly:
        return  # a listing grades nothing, so it neither fails nor writes (or empties) a file
    lessons = config.stash.get(KEY, None)
    if lessons is None:
        return
    results = lessons.results
    seconds = time.monotonic() - config.stash.get(_STARTED, time.monotonic())
    if _grading(config) and not results and session.exitstatus == pytest.ExitCode.OK:
        # Grading that graded nothing must not look like success.
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
    failed = _write_files(config, lessons, seconds)
    if failed.failed:
        # A report that cannot be written must not pass for a failed case (exit 1), which a
        # grading script reads as "graded": every other file is written, the run ends with
        # its own status, and says which file and why.
        config.stash[_WRITE_ERROR] = failed
        session.exitstatus = WRITE_FAILED


def _write_files(config: pytest.Config, lessons: LessonSession, seconds: float) -> WriteFailed:
    """Every file the run was asked for: the report, a class's files, GitHub's job summary;
    each written on its own, so one that fails stops no other. What failed, each with why."""
    results = lessons.results
    outputs = config.stash[_OUTPUTS]
    failed = WriteFailed([])
    try:
        if lessons.submissions is None:
            write_report(outputs, results, seconds, config.invocation_params.dir)
        else:
            # Always, as a single learner's report is: an empty class still gets its files.
            config.stash[_WRITTEN] = write(
                outputs, results, seconds, config.invocation_params.dir, lessons.roll()
            )
    except WriteFailed as error:
        failed.failed += error.failed
        config.stash[_WRITTEN] = error.lines
    except Exception as error:  # a fault of ours before any file: said, never a crash
        failed.failed.append((str(outputs.report or "the class's files"), formats.why(error)))
    tally = config.getoption("lesson_tally")
    if tally is not None and lessons.submissions is not None:
        here = config.invocation_params.dir
        report, target = Path(here, str(outputs.report)), Path(here, tally)
        if any(path == str(report) for path, _ in failed.failed):
            failed.failed.append((str(target), "its json report could not be written"))
        else:
            try:
                line = tallyfile.write_beside(report, target)
                config.stash[_WRITTEN] = [*config.stash.get(_WRITTEN, []), line]
            except Exception as error:  # the tally alone: the report is written
                failed.failed.append((str(target), formats.why(error)))
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and results:
        try:
            with open(step_summary, "ab") as handle:
                handle.write(formats.encoded(formats.step_summary(results)))
        except Exception as error:  # the job summary alone: the reports are written
            failed.failed.append((step_summary, formats.why(error)))
    return failed


def _paths(config: pytest.Config) -> list[str]:
    """The paths this run was given, without its options (repeating `-p no:cacheprovider`
    would lose the hints it suggests opening)."""
    here = config.invocation_params.dir
    return [
        str(arg)
        for arg in config.invocation_params.args
        if not str(arg).startswith("-") and Path(here, str(arg).split("::")[0]).exists()
    ]


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if hasattr(config, "workerinput"):
        return
    failed_write = config.stash.get(_WRITE_ERROR, None)
    if failed_write is not None:
        for line in failed_write.error_lines():
            terminalreporter.write_line(visible(line), red=True, bold=True)
    lessons = config.stash.get(KEY, None)
    if lessons is None or not lessons.results:
        return
    results = lessons.results
    if _grading(config) and not lessons.support.abi:
        terminalreporter.write_line(UNSANDBOXED_GRADING, yellow=True, bold=True)
    if lessons.submissions is not None:
        terminalreporter.write_sep("=", "lessons: the class")
        for line in class_lines(results):
            terminalreporter.write_line(line)
        terminalreporter.write_line(visible(formats.summary_text(results)))
        for line in config.stash.get(_WRITTEN, []):
            terminalreporter.write_line(visible(line))
        return
    show = lessons.show
    lines = summary.render(
        results,
        show=show,
        cache=getattr(config, "cache", None),
        hints=config.getoption("lesson_hints"),
        solution=config.getoption("lesson_solution"),
        rerun=_paths(config),
        courses=_courses(Path(r.path) for r in results),
        find=lessons.exercise,
    )
    terminalreporter.write_sep("=", "lessons")
    for line in lines:
        terminalreporter.write_line(line)
    if any(r.hidden for r in results) or _grading(config):
        terminalreporter.write_line(visible(formats.summary_text(results)))


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    """A lesson folder beside a course's lessons that its ``course.toml`` does not list."""
    lessons = config.stash.get(KEY, None)
    files = dict.fromkeys(item.path for item in items if item.path.name == model.EXERCISE_FILE)
    if lessons is None or config.getoption("lesson_check"):
        return []  # --lesson-check reports it as a problem of the lesson
    try:
        outside = course.unlisted(files)
    except course.CourseError:
        return []  # collection has already stopped the run, and said why
    return [f"lessons: WARNING: {x.advice(lessons.show(x.course))}." for x in outside]
