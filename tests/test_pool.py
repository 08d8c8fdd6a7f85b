"""Cases of a class run side by side (``--lesson-workers``): the same verdicts as one by one."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

import pytest

from pytest_lessons.core.runs import LOOP_TIMEOUTS
from pytest_lessons.isolation.outcome import RETURNED, TIMEOUT, Outcome
from pytest_lessons.isolation.runner import (
    AHEAD_PER_WORKER,
    SWITCH_INTERVAL,
    Job,
    PoolRunner,
    Runner,
)

from helpers import CASE_TIMEOUT, DOUBLE_RIGHT

Make = Callable[..., Path]


class Recording(Runner):
    """A runner that answers with the job's inputs (a file named "loop" times out), and
    records what it ran and on which thread."""

    mode = "fork"

    def __init__(self, log: list[tuple[str, str]]) -> None:
        self.log = log

    def run(self, job: Job) -> Outcome:
        time.sleep(0.01)
        self.log.append((job.solution.name + str(job.inputs), threading.current_thread().name))
        if job.solution.name == "loop":
            return Outcome(kind=TIMEOUT)
        return Outcome(kind=RETURNED, answer=job.inputs)


def job(name: str, x: int) -> Job:
    return Job(Path(name), "solve", [x], 1.0, 0, 1000, 1)


def test_prefetched_outcomes_are_taken_once_and_asked_jobs_go_first() -> None:
    log: list[tuple[str, str]] = []
    pool = PoolRunner([Recording(log), Recording(log)])
    try:
        pool.prefetch([job("a", n) for n in range(6)])
        assert pool.run(job("a", 5)).answer == [5]
        assert pool.run(job("other", 1)).answer == [1]
        for n in range(5):
            assert pool.run(job("a", n)).answer == [n]
        # Taken once: asking again runs it again, as one by one would.
        assert pool.run(job("a", 0)).answer == [0]
    finally:
        pool.close()
    ran = [what for what, _ in log]
    assert ran.count("a[0]") == 2 and ran.count("a[5]") == 1
    assert len({thread for _, thread in log}) == 2


def test_a_pool_runs_only_a_few_cases_ahead_of_what_pytest_takes() -> None:
    # Answers waiting for the judge are held in memory: a class of large answers must not
    # pile up there when the judge is slower than the workers.
    log: list[tuple[str, str]] = []
    pool = PoolRunner([Recording(log), Recording(log)])
    try:
        pool.prefetch([job("a", n) for n in range(80)])
        time.sleep(1.0)  # time for every job, were the pool not to wait
        ahead = len(log)
        for n in range(80):
            assert pool.run(job("a", n)).answer == [n]
    finally:
        pool.close()
    assert ahead <= AHEAD_PER_WORKER * 2
    assert len(log) == 80


def test_a_pool_shortens_the_interpreter_switch_interval_only_while_it_runs() -> None:
    # pytest's thread holds the interpreter lock while a worker's runner thread waits to
    # hand over the next job; the pytest process's own setting comes back at the end.
    before = sys.getswitchinterval()
    pool = PoolRunner([Recording([]), Recording([])])
    try:
        pool.prefetch([job("a", 0)])
        assert sys.getswitchinterval() == min(before, SWITCH_INTERVAL)
        assert pool.run(job("a", 0)).answer == [0]
    finally:
        pool.close()
    assert sys.getswitchinterval() == before


class Timing(Runner):
    """A runner that takes a while and records when each job started and ended."""

    mode = "fork"

    def __init__(self, spans: dict[str, tuple[float, float]]) -> None:
        self.spans = spans

    def run(self, job: Job) -> Outcome:
        start = time.monotonic()
        time.sleep(0.05)
        self.spans[f"{job.solution.name}{job.inputs}"] = (start, time.monotonic())
        return Outcome(kind=RETURNED, answer=job.inputs)


def test_a_hidden_case_runs_only_once_every_other_case_has_ended() -> None:
    """Code that runs after or beside a hidden case could print what it saw of it (its time,
    the process ids it used up): on two workers, however the cases were handed in, no other
    case is still running or yet to run when a hidden one starts."""
    spans: dict[str, tuple[float, float]] = {}
    pool = PoolRunner([Timing(spans), Timing(spans)])
    hidden = [replace(job("h", n), hidden=True) for n in range(3)]
    public = [job("p", n) for n in range(5)]
    try:
        pool.prefetch([hidden[0], public[0], public[1], hidden[1], public[2], public[3]])
        assert pool.run(hidden[2]).answer == [2]  # asked for before the rest: still last
        for one in [*public[:4], hidden[0], hidden[1]]:
            assert pool.run(one).answer == one.inputs
        assert pool.run(public[4]).answer == [4]
    finally:
        pool.close()
    hidden_start = min(start for name, (start, _) in spans.items() if name.startswith("h"))
    public_end = max(
        end for name, (_, end) in spans.items() if name.startswith("p[") and name != "p[4]"
    )
    assert public_end <= hidden_start, spans
    assert len(spans) == 8


def test_after_the_loop_budgets_timeouts_a_files_cases_are_not_run_ahead() -> None:
    # The count is the grading core's (runs.LOOP_TIMEOUTS, given by the front end): the pool
    # runs ahead no case that the loop budget would leave out.
    log: list[tuple[str, str]] = []
    pool = PoolRunner([Recording(log)], skip_after=LOOP_TIMEOUTS)
    try:
        pool.prefetch([job("loop", n) for n in range(10)])
        for n in range(LOOP_TIMEOUTS):
            assert pool.run(job("loop", n)).kind == TIMEOUT
        time.sleep(0.2)
    finally:
        pool.close()
    assert sum(1 for what, _ in log if what.startswith("loop")) == LOOP_TIMEOUTS


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_class_graded_on_two_workers_equals_one_by_one(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    # Under spawn (macOS's and Windows's default) too: each worker keeps Pythons of its own
    # started ahead, and the class's verdicts are those of one by one.
    make_exercise()
    halved = "def solve(x):\n    return [v / 2 for v in x] if not isinstance(x[0], list) else x\n"
    loop = "def solve(x):\n    while True:\n        pass\n"
    for n in range(8):
        code = [DOUBLE_RIGHT, halved, "def solve(x):\n    raise NotImplementedError\n", loop][n % 4]
        folder = pytester.path / "submissions" / f"l{n}" / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(code)
    runs = {}
    for workers in (1, 2):
        pytester.runpytest(
            "double",
            "--lesson-submissions=submissions",
            f"--lesson-workers={workers}",
            f"--lesson-isolation={isolation}",
            f"--lesson-timeout={CASE_TIMEOUT}",
            f"--lesson-report=w{workers}.json",
            f"--lesson-gradebook=w{workers}.csv",
        )
        report = json.loads((pytester.path / f"w{workers}.json").read_text())
        for r in report["results"]:
            r.pop("seconds")
        runs[workers] = ((pytester.path / f"w{workers}.csv").read_text(), report["results"])
    assert runs[1] == runs[2]
    assert "l3,double,0,2," in runs[2][0]


@pytest.mark.usefixtures("no_preload")
def test_learner_code_that_kills_its_worker_costs_only_its_own_cases_on_two_workers(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # The second worker is forked by the first; whichever of the two a case kills (possible
    # only without the sandbox), its runner starts a new worker and the class goes on.
    make_exercise()
    pids = pytester.path / "killed.pid"
    killer = (
        "import os, signal\n"
        "def solve(x):\n"
        f"    open({str(pids)!r}, 'a').write(f'{{os.getppid()}}\\n')\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n"
    )
    for n in range(6):
        folder = pytester.path / "submissions" / f"l{n}" / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(killer if n in (1, 4) else DOUBLE_RIGHT)
    books = {}
    for workers in (1, 2):
        result = pytester.runpytest(
            "double",
            "--lesson-submissions=submissions",
            "--lesson-sandbox=off",
            f"--lesson-workers={workers}",
            f"--lesson-gradebook=w{workers}.csv",
        )
        assert result.ret == 1
        books[workers] = (pytester.path / f"w{workers}.csv").read_text()
    assert books[1] == books[2]
    for n in range(6):
        points = "0" if n in (1, 4) else "2"
        assert f"l{n},double,{points},2," in books[2]
    killed = {int(pid) for pid in pids.read_text().split()}
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in killed) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in killed if Path(f"/proc/{pid}").exists()]


@pytest.mark.usefixtures("no_preload")
def test_two_spawn_workers_run_a_class_s_cases_side_by_side(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # Each case says it arrived, then waits (up to 15 s) until a case in another process has
    # arrived too: one by one, the first case waits alone and answers wrong; on two spawn
    # workers it meets the case running beside it and every case is right.
    make_exercise()
    arrived = pytester.path / "arrived"
    arrived.mkdir()
    meets = (
        "import os, time\n"
        "def solve(x):\n"
        f"    folder = {str(arrived)!r}\n"
        "    open(os.path.join(folder, str(os.getpid())), 'w').close()\n"
        "    deadline = time.monotonic() + 15\n"
        "    while len(os.listdir(folder)) < 2 and time.monotonic() < deadline:\n"
        "        time.sleep(0.02)\n"
        "    met = len(os.listdir(folder)) >= 2\n"
        "    if isinstance(x[0], list):\n"
        "        return [[2 * v if met else v for v in row] for row in x]\n"
        "    return [2 * v if met else v for v in x]\n"
    )
    for n in range(2):
        folder = pytester.path / "submissions" / f"l{n}" / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(meets)
    result = pytester.runpytest(
        "double",
        "--lesson-submissions=submissions",
        "--lesson-isolation=spawn",
        "--lesson-sandbox=off",  # the cases meet in a folder outside their own
        "--lesson-workers=2",
        "--lesson-timeout=60",
        "--lesson-gradebook=grades.csv",
    )
    assert result.ret == 0, result.stdout.str()
    book = (pytester.path / "grades.csv").read_text()
    assert "l0,double,2,2," in book and "l1,double,2,2," in book
