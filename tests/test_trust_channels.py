"""What comes back from learner code is believed for its own answer and nothing more (issue 21,
points 1 to 3; issue 22, timings): a link is never read through, a child finds in its memory
no classmate's job, a forged or oversized result fails only its own case, and every case keeps
its result, its full points possible and the time its code ran.

One class run per isolation mode holds every attacker, beside a right solution that passes."""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core.attempt import Attempt
from pytest_lessons.isolation import channel, files
from pytest_lessons.isolation.outcome import DIED, INTERNAL, RETURNED, TIMEOUT, from_untrusted
from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner, assemble
from pytest_lessons.isolation.sandbox import Policy

from helpers import DOUBLE_RIGHT, DOUBLE_TOML, double, grader, lesson

Make = Callable[..., Path]

TOML = (
    DOUBLE_TOML
    + """
[[case]]
x = [5]
expected = [10]

[[watch_out]]
id = "unchanged"
mistake = "unchanged"
message = "multiply every number by two."
"""
)

#: Finds, from inside learner code, the request its child is running (and so its result
#: file), and forges the result.
FIND_REQUEST = """
import json, os, sys

def request():
    frame = sys._getframe()
    while frame is not None:
        for name in ("request", "job"):
            found = frame.f_locals.get(name)
            if isinstance(found, dict) and "result" in found:
                return found
        frame = frame.f_back
    raise SystemExit("no request found")

def forge(data):
    try:
        with open(request()["result"], "wb") as handle:
            handle.write(data)
    except OSError:
        pass  # beside a tmpfs-covered private folder: out of the sandbox's reach
    # Where a tmpfs covers the private folder, the runner's result file is the one the
    # child opened beneath it: written through that descriptor.
    for name in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{name}")
            if link == request()["result"]:
                os.pwrite(int(name), data, 0)
            elif link.startswith("/memfd:"):  # the result channel, with its end mark
                os.pwrite(int(name), data + b"\\0", 0)
        except OSError:
            pass
    os._exit(0)

def right(x):
    if isinstance(x[0], list):
        return [[2 * v for v in row] for row in x]
    return [2 * v for v in x]
"""

#: Each learner of the class, by what it does; its cases are 1 ([1, 2]), 2 (2-D) and 3 ([5]).
LEARNERS: dict[str, str] = {
    # Right, and the first in the queue; prints what no classmate may find in memory.
    "ada": 'def solve(x):\n    print("ada-was-" + "here-7f3a9")\n'
    + DOUBLE_RIGHT.replace("def solve(x):\n", ""),
    # A wrong answer, so that the lesson's mistake function runs in the worker.
    "abe": "def solve(x):\n    return x\n",
    # A forged timeout and a forged grader error: each is that case's own failure only, and
    # no timeout is counted (case 3 still runs).
    "eve": FIND_REQUEST
    + """
def solve(x):
    if x == [1, 2]:
        forge(json.dumps({"kind": "timeout", "seconds": 0}).encode())
    if isinstance(x[0], list):
        forge(json.dumps({"kind": "internal", "message": "the grader broke"}).encode())
    return right(x)
""",
    # Forged kinds only the runner may decide (red team round N): a case not run, a skipped
    # one, a grader error. Each is that case's own failure; case 3 still runs.
    "ned": FIND_REQUEST
    + """
def solve(x):
    if x == [1, 2]:
        forge(json.dumps({"kind": "not-run", "message": "too many timeouts"}).encode())
    if isinstance(x[0], list):
        forge(json.dumps({"kind": "grader-error", "message": "the grader broke"}).encode())
    return right(x)
""",
    # An answer larger than the run accepts, sent and forged; the third case is right.
    "fay": FIND_REQUEST
    + """
def solve(x):
    if x == [1, 2]:
        return [0.5] * 300_000
    if isinstance(x[0], list):
        forge(b'{"kind": "returned", "answer": "' + b"a" * 3_000_000 + b'"}')
    return right(x)
""",
    # Malformed results: nested past any parser, fields of the wrong type, and no result.
    "gus": FIND_REQUEST
    + """
def solve(x):
    if x == [1, 2]:
        forge(b"[" * 200_000)
    if isinstance(x[0], list):
        forge(json.dumps({"kind": "raised", "phase": "call", "frames": [{"line": "x"}]}).encode())
    for name in ("pytest_lessons.isolation.child", "pytest_lessons.isolation.worker", "__main__"):
        if name in sys.modules:
            sys.modules[name].write_result = lambda *a, **k: None
    return right(x)
""",
    # Leaves a deep tree, a FIFO and a locked folder behind (where the sandbox lets it).
    "hal": """
import os

def solve(x):
    with open("keep", "w") as handle:
        handle.write("x")
    for _ in range(200):  # deeper ones: test_a_case_folder_is_removed_whatever...
        os.mkdir("d")
        os.chdir("d")
    for attempt in (lambda: os.mkfifo("fifo"), lambda: os.mkdir("locked", 0)):
        try:
            attempt()
        except OSError:
            pass  # the sandbox may refuse it
    if isinstance(x[0], list):
        return [[2 * v for v in row] for row in x]
    return [2 * v for v in x]
""",
    # Looks through its own memory for a classmate's output, a classmate's path and the
    # lesson's mistakes file; finds its own text, to show that the search works.
    "ivy": """
def found(needles):
    # Each needle in two parts: the whole would be in this very memory.
    seen = [False] * len(needles)
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith("rw"):
                continue
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            try:
                mem.seek(low)
                chunk = mem.read(high - low)
            except (OSError, OverflowError, ValueError):
                continue
            for number, (first, second) in enumerate(needles):
                at = chunk.find(first)
                while at >= 0:
                    if chunk[at + len(first) : at + len(first) + len(second)] == second:
                        seen[number] = True
                        break
                    at = chunk.find(first, at + 1)
    return seen

def solve(x):
    own = "ivy-own-" + "c0ffee"
    seen = found(
        [
            (b"ivy-own-", b"c0ffee"),
            (b"ada-was-", b"here-7f3a9"),
            (b"/submissions/a", b"da/double"),
            (b"/double/mist", b"akes.py"),
        ]
    )
    if seen != [True, False, False, False]:
        print("found:", seen)
        return x
    if isinstance(x[0], list):
        return [[2 * v for v in row] for row in x]
    return [2 * v for v in x]
""",
    # Answers that would cost the grader's own CPU and memory: a set of ints that share one
    # hash (quadratic as a frozenset) and more values than 1 MiB allows; the third is right.
    "lou": FIND_REQUEST
    + """
def solve(x):
    if x == [1, 2]:
        items = ",".join(str(1 + i * (2**61 - 1)) for i in range(20_000))
        forge(('{"kind": "returned", "answer": {"$": "set", "type": "set", "items": ['
               + items + "]}}").encode())
    if isinstance(x[0], list):
        forge(b'{"kind": "returned", "answer": [' + b"[]," * 300_000 + b"[]]}")
    return right(x)
""",
    # Returns 200,000 short strings where two or four numbers are expected: read as Python
    # objects, a set of 900,000 of them cost the grader 65 MB of its own memory a case (a red
    # team's round H); the case's bound on values refuses it before it is parsed.
    "max": 'def solve(x):\n    return ["x"] * 200_000\n',
    # Raises on line 3 of its file: the traceback names it.
    "jo": "def solve(x):\n    y = 0\n    return 1 / y\n",
    # Loops: its timeouts last as long as they ran, and its third case is not run.
    "kim": "def solve(x):\n    while True:\n        pass\n",
}

#: What each learner's cases must say (a word of the message of cases 1, 2, 3; None: passed).
EXPECTED: dict[str, list[str | None]] = {
    "ada": [None, None, None],
    "abe": ["multiply every number by two"] * 3,
    "ben": ["is a symbolic link"] * 3,
    "cy": ["is a symbolic link"] * 3,
    "dee": ["is a symbolic link"] * 3,
    "eve": ["could not be read", "could not be read", None],
    "ned": ["could not be read", "could not be read", None],
    # Case 2's forged 3 MB result: a sealed result channel (Linux's memfd) takes none of it,
    # so nothing the case left can be read; a result file on the disk is read as too large.
    "fay": [
        "larger than the grader accepts",
        "could not be read" if channel.available() else "larger than the grader accepts",
        None,
    ],
    "gus": ["could not be read", "could not be read", "exit code 0"],
    "hal": [None, None, None],
    "ivy": [None, None, None],
    "jo": ["jo/double/solution.py, line 3"] * 3,
    # Case 1's forged set of 20,000 ints is over the case's bound on values (4 times the
    # expected answer's and 10,000 more), case 2's list over the answer size's.
    "lou": ["more values than the grader reads", "more values than the grader reads", None],
    "max": ["more values than the grader reads for this case"] * 3,
    "kim": ["ran longer than 2 s", "ran longer than 2 s", "was not run"],
}

#: A module the workers import first that takes seconds: the start-up wait a case's time
#: must not include.
SLOW_START = "import time\ntime.sleep(3)\n"


def make_class(pytester: pytest.Pytester, make_exercise: Make) -> Path:
    exercise = make_exercise(solution=DOUBLE_RIGHT, toml=TOML)
    (exercise / "reference.py").write_text(DOUBLE_RIGHT)
    (exercise / "mistakes.py").write_text("def unchanged(x):\n    return x\n")
    submissions = pytester.path / "submissions"
    for learner, code in LEARNERS.items():
        folder = submissions / learner / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(code)
    # A link to the lesson's reference, one through /proc/self/cwd, a linked learner folder.
    for learner, target in {
        "ben": exercise / "reference.py",
        "dee": Path("/proc/self/cwd/double/reference.py"),
    }.items():
        (submissions / learner / "double").mkdir(parents=True)
        (submissions / learner / "double" / "solution.py").symlink_to(target)
    (submissions / "cy").symlink_to(submissions / "ada")
    return submissions


def cases(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    by: dict[str, list[dict[str, Any]]] = {}
    for result in report["results"]:
        by.setdefault(result["learner"], []).append(result)
    return {who: sorted(rs, key=lambda r: r["case"]) for who, rs in by.items()}


@pytest.mark.parametrize(
    "mode, workers",
    [("fork", "2"), ("fork", "1"), ("spawn", "1")],
    ids=["fork-pool", "fork-serial", "spawn"],
)
def test_attacks_on_the_result_channel_fail_only_their_own_cases(
    pytester: pytest.Pytester,
    make_exercise: Make,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    workers: str,
) -> None:
    submissions = make_class(pytester, make_exercise)
    temp = pytester.path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    preload = "none"
    if mode == "fork":
        (pytester.path / "slow_start.py").write_text(SLOW_START)
        monkeypatch.setenv("PYTHONPATH", str(pytester.path))
        preload = "slow_start"
    result = pytester.runpytest(
        "double",
        "-p",
        "no:cacheprovider",
        f"--lesson-submissions={submissions}",
        f"--lesson-isolation={mode}",
        f"--lesson-workers={workers}",
        f"--lesson-preload={preload}",
        "--lesson-timeout=2",
        "--lesson-answer-size=1",
        "--lesson-report=class.json",
        "--lesson-gradebook=grades.csv",
    )
    assert result.ret == 1  # some learners failed; nothing else went wrong
    report = json.loads((pytester.path / "class.json").read_text())
    by = cases(report)
    assert sorted(by) == sorted(EXPECTED)
    wrong = []
    for learner, words in EXPECTED.items():
        got = by[learner]
        assert [r["case"] for r in got] == [1, 2, 3], learner
        for r, word in zip(got, words):
            assert r["max_points"] == 1, (learner, r)
            message = " ".join(r["message"].split())
            # Nothing learner code wrote made a grader error of its case.
            if r["status"] == "internal" or (
                r["status"] != "passed" if word is None else word not in message
            ):
                wrong.append((learner, r["case"], r["status"], message[:300]))
    assert wrong == [], "\n".join(map(str, wrong))
    said = {who: " ".join(" ".join(r["message"] for r in rs).split()) for who, rs in by.items()}
    assert "Hand in submissions/ben/double/solution.py itself, not a link" in said["ben"]
    assert "submissions/cy is a symbolic link" in said["cy"]
    # The links opened nothing: no reference's code ran for them.
    assert all(r["points"] == 0 for who in ("ben", "cy", "dee") for r in by[who])

    # Every learner keeps every point possible in the gradebook.
    with open(pytester.path / "grades.csv", newline="") as handle:
        rows = {row["learner"]: row for row in csv.DictReader(handle)}
    assert {who: rows[who]["max_points"] for who in EXPECTED} == dict.fromkeys(EXPECTED, "3")
    assert rows["ada"]["points"] == "3" and rows["ivy"]["points"] == "3"

    # The time a case's code ran: a looping case until it was stopped, never the start-up
    # wait for the first learner in the queue.
    assert all(2.0 <= r["seconds"] < 5.0 for r in by["kim"][:2]), by["kim"]
    assert by["kim"][2]["seconds"] == 0
    assert all(r["seconds"] < 1.5 for r in by["ada"]), [r["seconds"] for r in by["ada"]]

    # Every case's private folder is gone, whatever was left in it.
    assert list(temp.iterdir()) == []


def test_a_sandbox_that_cannot_close_is_a_grader_error_and_no_code_runs(tmp_path: Path) -> None:
    # A user no system has (uid_t's -1): switching to it fails, before learner code loads.
    marker = tmp_path / "ran"
    solution = tmp_path / "solution.py"
    solution.write_text(f"open({str(marker)!r}, 'w').close()\ndef solve(x):\n    return x\n")
    policy = Policy(abi=0, uid=2**32 - 1, gid=2**32 - 1)
    job = Job(solution, "solve", [[1]], 10.0, 0, 1000, 1, sandbox=policy, beneath=tmp_path)
    for runner in (ForkRunner(preload=()), SpawnRunner(preload=(), spares=1)):
        try:
            outcome = runner.run(job)
        finally:
            runner.close()
        assert outcome.kind == INTERNAL, outcome
        assert outcome.message.startswith("the sandbox could not be set up: cannot switch")
    assert not marker.exists()


def test_what_the_runner_did_not_see_is_never_a_timeout_or_a_grader_error(
    tmp_path: Path,
) -> None:
    job = Job(tmp_path / "solution.py", "solve", [], 2.0, 0, 1000, 1, answer_bytes=100)

    def outcome(data: bytes | None, status: str = "exited", gate: str = "open") -> Any:
        folder = tmp_path / "case"
        folder.mkdir()
        if data is not None:
            (folder / "result.json").write_bytes(data)
        return assemble(status, folder / "result.json", job, 1.25, gate=gate)

    forged = outcome(b'{"kind": "timeout"}')
    assert (forged.kind, forged.seconds) == (DIED, 1.25)
    assert outcome(b'{"kind": "internal", "message": "x"}').kind == DIED
    assert outcome(b'{"kind": "returned", "answer": [1], "seconds": 99}').seconds == 1.25
    big = outcome(b'{"kind": "returned", "answer": "' + b"a" * 200 + b'"}')
    assert big.kind == RETURNED and "larger than the grader accepts" in big.answer["reason"]
    timed = outcome(b'{"kind": "returned", "answer": [1]}', status="timeout")
    assert (timed.kind, timed.seconds) == (TIMEOUT, 1.25)
    # No gate: learner code never loaded, whatever the result file says.
    assert outcome(b'{"kind": "returned", "answer": [1]}', gate="").kind == INTERNAL
    assert not (tmp_path / "case").exists()
    # Parsed without ever raising, whatever the bytes.
    for data in (
        b"\xff",
        b"[" * 100_000,
        b'{"kind": "returned", "answer": {"$": "dense", "shape": [3], "float64le": "AAAA"}}',
        b'{"kind": "returned", "answer": {"$": "tensor", "shape": "x"}}',
        b'{"kind": "raised", "phase": "call", "details": []}',
        b'{"kind": "setup", "error_type": "link"}',
        b'{"kind": "returned", "answer": ' + b"[" * 90 + b"1" + b"]" * 90 + b"}",
    ):
        assert from_untrusted(data, 1 << 20).kind == DIED, data[:60]


def test_a_learner_file_is_read_beneath_its_folder_and_never_through_a_link(
    tmp_path: Path,
) -> None:
    learner = tmp_path / "ada"
    (learner / "double").mkdir(parents=True)
    secret = tmp_path / "reference.py"
    secret.write_text("the author's answer")
    (learner / "double" / "solution.py").write_text("mine")
    assert files.read_beneath(learner, Path("double/solution.py")) == b"mine"
    cases = {
        "file": (learner / "double" / "solution.py", secret),
        "folder": (learner / "double", tmp_path),
    }
    for what, (link, target) in cases.items():
        other = tmp_path / f"{what}-learner"
        shutil.copytree(learner, other)
        moved = other / link.relative_to(learner)
        _replace_with_link(moved, target)
        with pytest.raises(files.Unreadable) as raised:
            files.read_beneath(other, Path("double/solution.py"))
        assert (raised.value.problem, raised.value.path) == ("link", moved)
    linked = tmp_path / "linked"
    linked.symlink_to(learner)
    with pytest.raises(files.Unreadable) as raised:
        files.read_beneath(linked, Path("double/solution.py"))
    assert raised.value.problem == "link"
    fifo = tmp_path / "fifo-learner" / "double"
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / "solution.py")
    with pytest.raises(files.Unreadable) as raised:  # and it does not block
        files.read_beneath(fifo.parent, Path("double/solution.py"))
    assert (raised.value.problem, raised.value.what) == ("not_file", "a FIFO")
    # A folder opens for reading: it is told apart on the descriptor, which is then closed.
    folder = tmp_path / "directory-learner" / "double" / "solution.py"
    folder.mkdir(parents=True)
    open_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    for _ in range(3):
        with pytest.raises(files.Unreadable) as raised:
            files.read_beneath(tmp_path / "directory-learner", Path("double/solution.py"))
        assert (raised.value.problem, raised.value.what) == ("not_file", "a folder")
    if open_before:
        assert len(os.listdir("/proc/self/fd")) == open_before
    (learner / "double" / "solution.py").write_bytes(b"x" * (files.MAX_SOURCE_BYTES + 1))
    with pytest.raises(files.Unreadable) as raised:
        files.read_beneath(learner, Path("double/solution.py"))
    assert raised.value.problem == "too_large"


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    path.symlink_to(target)


@pytest.mark.slow
def test_a_case_folder_is_removed_whatever_learner_code_left_in_it(tmp_path: Path) -> None:
    case = tmp_path / "case"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("the grader's")
    deep = os.open(case.parent, os.O_RDONLY)
    os.mkdir("case", dir_fd=deep)
    here = os.open("case", os.O_RDONLY, dir_fd=deep)
    os.close(deep)
    for _ in range(3000):  # deeper than PATH_MAX and than Python's recursion limit
        os.mkdir("d", dir_fd=here)
        below = os.open("d", os.O_RDONLY, dir_fd=here)
        os.close(here)
        here = below
    os.mkfifo("fifo", dir_fd=here)
    os.close(here)
    (case / "locked").mkdir()
    (case / "locked" / "file").write_text("x")
    os.chmod(case / "locked", 0)
    (case / "read-only").mkdir()
    (case / "read-only" / "file").write_text("x")
    os.chmod(case / "read-only" / "file", 0o400)
    os.chmod(case / "read-only", 0o500)
    (case / "link").symlink_to(outside)
    os.chmod(case, 0)
    assert files.remove_tree(case) is True
    assert not case.exists()
    assert (outside / "keep").read_text() == "the grader's"
    assert files.remove_tree(tmp_path / "never-there") is True


def test_a_class_keeps_no_answers_of_learners_already_graded(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    grade, _ = grader({("solution.py", "solve"): double})
    for learner in ("ada", "bo", "cy"):
        solution = tmp_path / learner / "double" / "solution.py"
        for case in exercise.cases:
            assert grade.grade(Attempt(exercise, case, solution, learner)).passed
    # Only the learner graded now has answers in memory.
    assert {key[0] for key, o in grade.runs.outcomes.items() if o.kind == RETURNED} == {
        str(tmp_path / "cy" / "double" / "solution.py")
    }
