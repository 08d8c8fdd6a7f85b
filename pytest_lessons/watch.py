"""``python -m pytest_lessons watch [PATH ...]`` (or ``pytest --lesson-watch``): grade a lesson
each time one of its files is saved.

It finds the lessons under *PATH* (a course, a lesson, or a folder of them; default the current
folder), shows the course's progress and the next lesson to work on, then waits. When a
lesson's Python file is saved, it grades that lesson alone, in a ``pytest`` of its own (so the
learner sees exactly what ``pytest LESSON`` shows), and then says what to do next: after a pass,
the next unsolved lesson in the course's order. Progress is read from pytest's cache, the same
one every ``pytest`` run of the course keeps, so a lesson passed earlier is never graded again
until its file changes.

Changes are seen through ``watchfiles`` (the optional extra ``watch``) or, without it, by
looking at the files' times and sizes twice a second. The system's file events never arrive
from some file systems: a Windows drive seen from WSL2 (``/mnt/c``), NFS, SMB and other
network drives. There the watch polls by itself, and ``--poll`` (or
``PYTEST_LESSONS_WATCH_POLL=1``) makes it poll anywhere. Ctrl-C ends it, exit status 0.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lessons.core import course, model, summary
from pytest_lessons.notebook.pytest_files import cache_of

#: The environment variable that makes the watch poll (any value but empty or ``0``).
POLL_ENV = "PYTEST_LESSONS_WATCH_POLL"

#: File systems whose changes the system reports to no watcher, so the watch polls there:
#: WSL's Windows drives (9p, drvfs), network drives, and a VM's shared folders.
NO_EVENTS = frozenset(
    {"9p", "drvfs", "nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "vboxsf", "afs"}
)

#: Folders never walked: not lessons, and written by every run.
SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".git", ".ipynb_checkpoints", "node_modules"})


@dataclass(frozen=True)
class Lessons:
    """The lessons watched, in the course's order."""

    files: tuple[Path, ...]
    """Each lesson's ``exercise.toml``, resolved."""
    roots: tuple[Path, ...]
    """The folders watched."""

    def lesson_of(self, changed: Path) -> Path | None:
        """The ``exercise.toml`` of the lesson that the saved file *changed* belongs to."""
        if changed.suffix not in (".py", ".toml") or SKIPPED & set(changed.parts):
            return None
        for folder in changed.parents:
            candidate = folder / model.EXERCISE_FILE
            if candidate in self.files:
                return candidate
        return None


def find_lessons(paths: Sequence[Path]) -> Lessons:
    """Every lesson under *paths*, in the order of their courses (then by path)."""
    found: list[Path] = []
    for given in paths:
        top = given.resolve()
        if top.is_file():
            top = top.parent
        for folder, names, entries in os.walk(top):
            names[:] = sorted(n for n in names if n not in SKIPPED and not n.startswith("."))
            if model.EXERCISE_FILE in entries:
                found.append(Path(folder, model.EXERCISE_FILE))
    files = list(dict.fromkeys(found))
    files.sort(key=summary.course_order(course.of(files)))
    roots = tuple(dict.fromkeys(p.resolve().parent if p.is_file() else p.resolve() for p in paths))
    return Lessons(tuple(files), roots)


def passed(lesson: Path) -> bool:
    """Whether the lesson's last complete run passed, as pytest's cache of it says."""
    return bool(cache_of(lesson.parent).get(summary.state_key(lesson), "") == "passed")


def progress_line(lessons: Lessons) -> str:
    """``lessons: 3/47 passed [#---------]``, from the cache, as the run's summary counts."""
    done = sum(passed(lesson) for lesson in lessons.files)
    total = len(lessons.files)
    filled = round(summary.BAR * done / total) if total else 0
    return f"lessons: {done}/{total} passed [{'#' * filled}{'-' * (summary.BAR - filled)}]"


def next_unsolved(lessons: Lessons, after: Path | None = None) -> Path | None:
    """The first lesson not passed yet in course order, looking from the one after *after*
    and round to the start."""
    files = list(lessons.files)
    start = files.index(after) + 1 if after in files else 0
    for lesson in files[start:] + files[:start]:
        if lesson != after and not passed(lesson):
            return lesson
    return None


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive, on Windows
        return str(path)


def _learner_file(lesson: Path) -> Path:
    try:
        return model.load(lesson).solution
    except model.ExerciseError:
        return lesson.parent / "solution.py"


def next_lines(lessons: Lessons, graded: Path | None) -> list[str]:
    """What to do now: work on the next unsolved lesson, or, all passed, nothing."""
    lesson = next_unsolved(lessons, graded)
    if lesson is None:
        return [progress_line(lessons), "Every lesson passes: the course is done."]
    return [
        progress_line(lessons),
        f"Next: {lesson.parent.name}: edit and save {_shown(_learner_file(lesson))}",
    ]


def polling_reason(roots: Iterable[Path], forced: bool, watcher: bool) -> str:
    """Why the watch polls instead of waiting for the system's file events (empty: it does
    not)."""
    if forced:
        return "asked for (--poll or PYTEST_LESSONS_WATCH_POLL)"
    for root in roots:
        kind = file_system(root)
        if kind in NO_EVENTS:
            return f"{_shown(root)} is on a {kind} file system, which sends no file events"
    if not watcher:
        return "watchfiles is not installed (pip install 'pytest-lessons[watch]')"
    return ""


def file_system(path: Path) -> str:
    """The type of the file system *path* is on, as ``/proc/self/mounts`` gives it (empty
    where the system has no such file)."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as handle:
            mounts = [line.split() for line in handle]
    except OSError:
        return ""
    best, kind = "", ""
    target = str(path.resolve())
    for fields in mounts:
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def _snapshot(lessons: Lessons) -> dict[Path, tuple[int, int]]:
    """Each watched file's modification time and size."""
    seen: dict[Path, tuple[int, int]] = {}
    for lesson in lessons.files:
        for folder, names, files in os.walk(lesson.parent):
            names[:] = [n for n in names if n not in SKIPPED and not n.startswith(".")]
            for name in files:
                path = Path(folder, name)
                if path.suffix in (".py", ".toml"):
                    try:
                        stat = path.stat()
                    except OSError:
                        continue
                    seen[path] = (stat.st_mtime_ns, stat.st_size)
    return seen


def poll(lessons: Lessons, interval: float, ready: Callable[[], None]) -> Iterator[set[Path]]:
    """The files changed (saved, added or removed) since the last look, each time some are;
    *ready* is called once the first look is taken."""
    before = _snapshot(lessons)
    ready()
    while True:
        time.sleep(interval)
        now = _snapshot(lessons)
        changed = {p for p in before.keys() | now.keys() if before.get(p) != now.get(p)}
        before = now
        if changed:
            yield changed


def events(lessons: Lessons, ready: Callable[[], None]) -> Iterator[set[Path]]:
    """The files changed, as the system reports them through watchfiles; *ready* is called
    once the system watches them (a save before that would go unseen)."""
    import watchfiles  # the optional extra `watch`; checked before this is called

    # yield_on_timeout: an empty batch comes after each quiet 0.2 s, the first one once the
    # watcher is set up, which is when a save starts to count.
    batches = watchfiles.watch(
        *lessons.roots, debounce=300, step=50, rust_timeout=200, yield_on_timeout=True
    )
    waiting = True
    for batch in batches:
        if waiting:
            ready()
            waiting = False
        if batch:
            yield {Path(path) for _, path in batch}


def _has_watchfiles() -> bool:
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def grade(lesson: Path, pytest_args: Sequence[str]) -> int:
    """Grade one lesson in a pytest of its own; its output goes to ours as it comes."""
    # -q: the verdict and the lessons summary, without the run's header on every save.
    command = [sys.executable, "-m", "pytest", "-q", str(lesson.parent), *pytest_args]
    if sys.stdout.isatty():
        command.append("--color=yes")
    env = dict(os.environ)
    # The child prints through a pipe: tell it the terminal's width, as it would see it.
    env.setdefault("COLUMNS", str(_columns()))
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        # Its own process group: Ctrl-C reaches the watch alone, which then stops the child
        # quietly instead of letting it print its own interruption.
        start_new_session=os.name == "posix",
    )
    assert child.stdout is not None
    try:
        for line in iter(child.stdout.readline, b""):
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        return child.wait()
    except KeyboardInterrupt:
        _stop(child)
        raise


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return 80


def _stop(child: subprocess.Popen[bytes]) -> None:
    """End a grading run cut short by Ctrl-C, and its workers with it."""
    try:
        if os.name == "posix":
            os.killpg(child.pid, signal.SIGINT)
        else:
            child.terminate()
        child.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        child.kill()
        child.wait()


def watch(
    paths: Sequence[Path],
    force_poll: bool = False,
    interval: float = 0.5,
    pytest_args: Sequence[str] = (),
) -> int:
    """The watch loop; returns the exit status (0 when stopped with Ctrl-C)."""
    try:
        lessons = find_lessons(paths)
    except course.CourseError as error:
        print(f"watch: {error}", file=sys.stderr)
        return 2
    if not lessons.files:
        shown = ", ".join(_shown(p) for p in paths)
        print(
            f"watch: give a course or lesson folder: no exercise.toml under {shown}",
            file=sys.stderr,
        )
        return 2
    watcher = _has_watchfiles()
    reason = polling_reason(lessons.roots, force_poll, watcher)
    how = f"polling every {interval:g} s: {reason}" if reason else "file events"
    try:
        print(f"watch: {len(lessons.files)} lessons under {', '.join(map(_shown, lessons.roots))}")
        print(f"watch: sees saved files by {how}. Ctrl-C stops it.")

        def ready() -> None:
            for line in next_lines(lessons, None):
                print(line)
            sys.stdout.flush()

        changes = poll(lessons, interval, ready) if reason else events(lessons, ready)
        for changed in changes:
            touched = {found for path in changed if (found := lessons.lesson_of(path))}
            for lesson in (f for f in lessons.files if f in touched):
                name = lesson.parent.name
                print(f"\nwatch: {name} changed: grading it")
                sys.stdout.flush()
                grade(lesson, pytest_args)
                if passed(lesson):
                    print(f"watch: {name} passes.")
                    for line in next_lines(lessons, lesson):
                        print(line)
                else:
                    file = _shown(_learner_file(lesson))
                    print(f"watch: save {file} again once changed: {name} does not pass yet.")
                sys.stdout.flush()
    except KeyboardInterrupt:
        print("\nwatch: stopped.")
        return 0
    return 0


def add_parser(commands: Any) -> None:
    """The ``watch`` command, on the subcommands of ``python -m pytest_lessons``."""
    command = commands.add_parser(
        "watch",
        help="Grade a lesson each time one of its files is saved (Ctrl-C stops).",
        description="Watch the lessons under PATH: each time a lesson's file is saved, grade "
        "that lesson and say what to do next; after a pass, name the next unsolved lesson "
        "in the course's order. Ctrl-C stops it (exit status 0).",
    )
    command.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[Path(".")],
        metavar="PATH",
        help="a course, a lesson, or a folder holding them (default: the current folder)",
    )
    command.add_argument(
        "--poll",
        action="store_true",
        default=bool(os.environ.get(POLL_ENV, "") not in ("", "0")),
        help="look at the files twice a second instead of waiting for the system's file "
        f"events (for WSL2 on a Windows drive, NFS and network drives; also {POLL_ENV}=1)",
    )
    command.add_argument(
        "--interval",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="seconds between two looks when polling (default 0.5)",
    )
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return watch(args.paths, args.poll, max(args.interval, 0.05))
