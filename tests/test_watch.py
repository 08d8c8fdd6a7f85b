"""The learner's watch mode (``pytest --lesson-watch``, ``python -m pytest_lessons watch``),
driven in a real terminal (a pty): save a file, see the verdict, be sent to the next unsolved
lesson after a pass, and leave with Ctrl-C (exit 0, no traceback). Lessons are pure Python and
nothing is preloaded, so each grading run is pytest's start and one case."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from pytest_lessons import watch
from pytest_lessons.core.summary import state_key
from pytest_lessons.notebook.pytest_files import PytestCache

from helpers import DOUBLE_RIGHT, DOUBLE_TOML, alive, descendants, wait_until

WRONG = "def solve(x):\n    return x\n"
STUB = "def solve(x):\n    raise NotImplementedError\n"
SLOW = "import time\n\ndef solve(x):\n    time.sleep(60)\n"


def make_course(top: Path, lessons: tuple[str, ...] = ("first", "second", "third")) -> Path:
    (top / "pytest.ini").write_text("[pytest]\n")
    listed = ", ".join(f'"{name}"' for name in lessons)
    (top / "course.toml").write_text(f'[course]\ntitle = "Doubling"\nlessons = [{listed}]\n')
    for name in lessons:
        folder = top / name
        folder.mkdir()
        (folder / "exercise.toml").write_text(DOUBLE_TOML)
        (folder / "reference.py").write_text(DOUBLE_RIGHT)
        (folder / "solution.py").write_text(STUB)
    return top


class Terminal:
    """A program in a pseudo-terminal of its own: what it wrote, and keys typed to it."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTEST_LESSONS_PRELOAD": "none", "COLUMNS": "100"}
        env.pop("PYTEST_ADDOPTS", None)
        pid, self.fd = pty.fork()
        if pid == 0:  # the child: the pty is its terminal, as a learner's shell gives it
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.pid = pid
        self.seen = ""
        self.status: int | None = None

    def read_until(self, pattern: str, seconds: float = 30.0) -> str:
        """Everything written so far, once *pattern* (a regular expression) is in it."""
        end = time.monotonic() + seconds
        while not re.search(pattern, self.seen):
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{pattern!r} never came; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the program has ended and its terminal closed
                    chunk = b""
                if not chunk and self.exited():
                    raise AssertionError(f"ended before {pattern!r}:\n{self.seen}")
                self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return self.seen

    def exited(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is not None

    def wait(self, seconds: float = 20.0) -> int:
        end = time.monotonic() + seconds
        while not self.exited():
            if time.monotonic() > end:
                raise AssertionError(f"still running:\n{self.seen}")
            try:
                self.seen += os.read(self.fd, 65536).decode("utf-8", "replace")
            except OSError:
                time.sleep(0.1)
        assert self.status is not None
        return self.status

    def close(self) -> None:
        if not self.exited():
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def save(path: Path, text: str) -> None:
    """Write as an editor saves: a whole new file, with a time of its own."""
    path.write_text(text)
    stamp = time.time_ns()
    os.utime(path, ns=(stamp, stamp))


@pytest.mark.slow
def test_pytest_lesson_watch_grades_each_saved_lesson_sends_on_after_a_pass_and_ctrl_c_leaves(
    tmp_path: Path,
) -> None:
    course = make_course(tmp_path)
    # first passed in an earlier run: the cache says so, and the watch never grades it again.
    PytestCache(tmp_path / ".pytest_cache").set(state_key(course / "first/exercise.toml"), "passed")
    shell = Terminal(
        [sys.executable, "-m", "pytest", "--lesson-watch", "--lesson-watch-poll"], course
    )
    try:
        shell.read_until(r"Next: second: edit and save second/solution\.py")
        assert "lessons: 1/3 passed" in shell.seen and "by polling" in shell.seen
        save(course / "second/solution.py", DOUBLE_RIGHT)
        shell.read_until(r"Next: third: edit and save third/solution\.py")
        assert "watch: second passes." in shell.seen and "lessons: 2/3 passed" in shell.seen
        # Ctrl-C in the middle of a grading run: the run is stopped with the watch, quietly.
        save(course / "third/solution.py", SLOW)
        shell.read_until(r"third changed: grading it")
        time.sleep(1.0)
        below = descendants(shell.pid)
        os.write(shell.fd, b"\x03")
        shell.read_until(r"watch: stopped\.")
        assert shell.wait() == 0
    finally:
        shell.close()
    assert "Traceback" not in shell.seen and "KeyboardInterrupt" not in shell.seen
    # Gone, or a zombie its reaper has not collected yet: none runs on.
    assert below and wait_until(lambda: not alive(below - {shell.pid}), 10.0)
    # Only the lesson saved was graded: first, passed before, never ran.
    assert "first changed" not in shell.seen


@pytest.mark.slow
def test_the_watch_command_sees_a_save_by_file_events_and_shows_the_verdict(
    tmp_path: Path,
) -> None:
    pytest.importorskip("watchfiles")
    course = make_course(tmp_path, ("only",))
    shell = Terminal([sys.executable, "-m", "pytest_lessons", "watch", "."], course)
    try:
        shell.read_until(r"Next: only: edit and save only/solution\.py")
        assert "by file events" in shell.seen
        save(course / "only/solution.py", WRONG)
        shell.read_until(r"watch: save only/solution\.py again once changed: only does not pass")
        # The verdict, as `pytest only` gives it.
        assert "only: case 1 (a row)" in shell.seen and "only   0 of 2 cases" in shell.seen
        os.write(shell.fd, b"\x03")
        shell.read_until(r"watch: stopped\.")
        assert shell.wait() == 0
    finally:
        shell.close()
    assert "Traceback" not in shell.seen


def test_which_saves_grade_what_and_where_the_watch_polls_by_itself(tmp_path: Path) -> None:
    course = make_course(tmp_path)
    lessons = watch.find_lessons([course])
    assert [f.parent.name for f in lessons.files] == ["first", "second", "third"]
    first = course / "first" / "exercise.toml"
    assert lessons.lesson_of(course / "first" / "solution.py") == first
    assert lessons.lesson_of(course / "first" / "helpers" / "util.py") == first
    # Editors' swap and backup files, caches and files of no lesson grade nothing.
    for other in ("first/.solution.py.swp", "first/__pycache__/solution.py", "notes.py"):
        assert lessons.lesson_of(course / other) is None
    cache = PytestCache(course / ".pytest_cache")
    cache.set(state_key(course / "second/exercise.toml"), "passed")
    # After third: round to the start, past what passed.
    assert watch.next_unsolved(lessons, course / "third/exercise.toml") == first
    assert watch.next_unsolved(lessons, first) == course / "third/exercise.toml"
    assert watch.progress_line(lessons) == "lessons: 1/3 passed [###-------]"
    for name in ("first", "third"):
        cache.set(state_key(course / name / "exercise.toml"), "passed")
    assert watch.next_lines(lessons, first)[-1] == "Every lesson passes: the course is done."
    assert watch.polling_reason([course], forced=True, watcher=True).startswith("asked for")
    assert "watchfiles is not installed" in watch.polling_reason([course], False, watcher=False)
    assert watch.file_system(Path("/proc")) == "proc"
