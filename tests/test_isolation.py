"""Learner code cannot stop the run or fake a grade: each misbehaviour fails its own case,
the other cases still pass, and pytest exits 1."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from helpers import CASE_TIMEOUT, DOUBLE_RIGHT, DOUBLE_TOML, REFERENCE, failed, said

Make = Callable[..., Path]

#: A solution that is right on case 2 and misbehaves on case 1 (the 1-D input).
TEMPLATE = """
import os, sys
{imports}

def solve(x):
    if not isinstance(x[0], list):
{body}
    return [[2 * v for v in row] for row in x]
"""


def misbehaving(body: str, imports: str = "") -> str:
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    return TEMPLATE.format(imports=imports, body=indented)


CASES = {
    "timeout": (
        "while True:\n    pass",
        f"Make solve finish sooner: it ran longer than {CASE_TIMEOUT} s",
    ),
    "swallowing-loop": (
        "while True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass",
        f"Make solve finish sooner: it ran longer than {CASE_TIMEOUT} s",
    ),
    "sys-exit": ("sys.exit(3)", "Remove the call to sys.exit(), exit() or quit()*(exit code 3)"),
    "os-exit": (
        "os._exit(0)",
        "Remove the call that ends the process (os._exit or similar)*exit code 0",
    ),
    "segfault": (
        "import ctypes\nctypes.string_at(0)",
        "Find what crashes Python in your code*segmentation fault*",
    ),
    "kill-self": (
        "import signal\nos.kill(os.getpid(), signal.SIGKILL)",
        "*ended by being killed (SIGKILL)*",
    ),
    "keyboard-interrupt": (
        "raise KeyboardInterrupt",
        "Remove the code that raises KeyboardInterrupt*",
    ),
    "memory-error": ("raise MemoryError", "Use less memory*"),
    "memory-cap": (
        "block = bytearray(3 * 1024**3)",
        "Use less memory: your code asked for more than the 256 MiB*",
    ),
    "recursion": (
        "def f(n):\n    return f(n + 1)\nf(0)",
        "Stop the recursion*RecursionError*",
    ),
    "pytest-exit": (
        "import pytest\npytest.exit('bye', returncode=0)",
        "Remove the call to pytest.exit()*",
    ),
    "pytest-skip": ("import pytest\npytest.skip('later')", "Remove the call to pytest.skip()*"),
    "pytest-xfail": ("import pytest\npytest.xfail('known')", "Remove the call to pytest.xfail()*"),
    "pytest-fail": ("import pytest\npytest.fail('nope')", "Remove the call to pytest.fail()*"),
    # pdb finds no terminal in an isolated case: say how to debug (issue 22), not BdbQuit.
    "breakpoint": (
        "breakpoint()",
        "Remove breakpoint() or pdb.set_trace() from double/solution.py (the debugger stopped "
        "at line *), or debug with `pytest double --lesson-isolation=off -s`:*",
    ),
    "input": (
        "return [int(input())]",
        "solve raised EOFError at line * of solution.py: EOF when reading a line.*",
    ),
}


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
@pytest.mark.parametrize("name", list(CASES))
def test_misbehaviour_fails_its_case_and_the_run_goes_on(
    pytester: pytest.Pytester, make_exercise: Make, name: str, isolation: str
) -> None:
    # spawn is how Windows runs every case; here it runs on Linux, which has fork too.
    body, words = CASES[name]
    make_exercise(solution=misbehaving(body, imports="import time"))
    # Only the loop needs the clock; the others get room for `import pytest` on a busy machine.
    timeout = str(CASE_TIMEOUT) if "sooner" in words else "10"
    result = pytester.runpytest(
        "double",
        f"--lesson-timeout={timeout}",
        "--lesson-memory=256",
        f"--lesson-isolation={isolation}",
    )
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == 1
    assert fnmatch.fnmatch(said(result), f"*double: case 1 (a row)* {words}*")
    assert "Traceback" not in result.stdout.str()


@pytest.mark.usefixtures("no_preload")
def test_a_timeout_kills_processes_the_learner_started(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    body = """
pid = os.fork()
if pid == 0:
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass
print(f"pid:{pid}", flush=True)
while True:
    pass
"""
    make_exercise(solution=misbehaving(body, imports="import time"))
    result = pytester.runpytest("double", f"--lesson-timeout={CASE_TIMEOUT}")
    result.assert_outcomes(passed=1, failed=1)
    (pid,) = printed_pids(result.stdout.str())
    assert _gone(pid)


def printed_pids(text: str) -> list[int]:
    """The process ids learner code printed as ``pid:N`` (the sandbox lets it write no file
    where this test could read it)."""
    return [int(pid) for pid in re.findall(r"pid:(\d+)", text)]


#: Ways to leave a process running after solve returns; each prints that process's pid. A
#: detached one (setsid) is outside the case's process group.
LEFT_BEHIND = {
    "forked": """
    pid = os.fork()
    if pid == 0:
        while True:
            time.sleep(0.05)
""",
    "detached": """
    if os.fork() == 0:
        os.setsid()
        pid = os.fork()
        if pid == 0:
            while True:
                time.sleep(0.05)
        print(f"pid:{pid}", flush=True)
        os._exit(0)
    os.wait()
    pid = None
""",
}


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("how", list(LEFT_BEHIND))
def test_a_process_left_behind_after_returning_is_killed_too(
    pytester: pytest.Pytester, make_exercise: Make, how: str
) -> None:
    if how == "detached" and not sys.platform.startswith("linux"):
        pytest.skip("only a Linux subreaper adopts detached processes")
    solution = (
        "import os, time\n\ndef solve(x):"
        + LEFT_BEHIND[how]
        + """
    if pid:
        print(f"pid:{pid}", flush=True)
    if isinstance(x[0], list):
        return [[2 * v for v in row] for row in x]
    return [2 * v for v in x]
"""
    )
    make_exercise(solution=solution)
    result = pytester.runpytest("double", "-p", "no:cacheprovider", "--lesson-report=r.json")
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "r.json").read_text())
    pids = printed_pids(" ".join(r["output"] for r in report["results"]))
    assert len(pids) == 2 and all(_gone(pid) for pid in pids)


def _gone(pid: int, seconds: float = 5.0) -> bool:
    """Whether process *pid* ends within *seconds* (killing is not instantaneous)."""
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie counts as gone
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.mark.usefixtures("no_preload")
def test_fake_summary_lines_and_monkeypatching_change_nothing(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    solution = """
    import sys

    try:  # where the sandbox lets it read the grader's files at all
        import pytest_lessons.core.compare as judge
        import _pytest.runner

        judge.compare = lambda *args, **kwargs: None
        _pytest.runner.call_and_report = None
    except PermissionError:
        pass
    print("=================== 2 passed in 0.01s ===================")
    print("2 passed, 0 failed")

    def solve(x):
        return [0 for v in x]
    """
    make_exercise(solution=solution)
    result = pytester.runpytest("double")
    assert failed(result) == 2
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*| 2 passed, 0 failed", "*= * failed* in *"])
    assert "\n2 passed, 0 failed" not in result.stdout.str()


@pytest.mark.usefixtures("no_preload")
def test_an_always_equal_object_is_not_a_pass(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    solution = """
    class Anything(list):
        def __eq__(self, other):
            return True

    def solve(x):
        return Anything()
    """
    make_exercise(solution=solution)
    result = pytester.runpytest("double")
    # Both cases fail; the second for the same reason, so it is counted, not explained again.
    result.stdout.fnmatch_lines(["*= 1 failed, 1 failed the same way in *"])
    assert "solve returned a solution.Anything" in said(result)


@pytest.mark.usefixtures("no_preload")
def test_printed_output_is_shown_for_failing_cases_only_capped_and_without_escapes(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    solution = """
    import sys

    def solve(x):
        print("\\x1b[31mred\\x1b[0m and \\x1b]0;title\\x07 done")
        if isinstance(x[0], list):
            print("second case says hello")
            return [[2 * v for v in row] for row in x]
        print("to stderr", file=sys.stderr)
        sys.stdout.write("y" * 5000)
        return [0, 0]
    """
    make_exercise(solution=solution)
    result = pytester.runpytest("double", "--lesson-output-cap=1000")
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    assert "second case says hello" not in text
    assert "\x1b" not in text and "\x07" not in text
    assert "red and  done" in text
    kept, cut = text.split("what your code printed:")[1].split("[… ")
    assert 3900 < int(cut.split(" bytes cut]")[0]) < 4100
    assert kept.index("red and  done") < kept.index("to stderr") < kept.index("yyy")
    assert "what your code printed:" in text


@pytest.mark.usefixtures("no_preload")
def test_the_learner_file_is_imported_anew_for_every_case(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    solution = """
    calls = []

    def solve(x):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("state from an earlier case leaked")
        if isinstance(x[0], list):
            return [[2 * v for v in row] for row in x]
        return [2 * v for v in x]
    """
    make_exercise(solution=solution)
    pytester.runpytest("double").assert_outcomes(passed=2)


def test_a_thread_count_in_the_environment_does_not_hang_forked_children(
    pytester: pytest.Pytester, combine_heads: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    combine_heads(REFERENCE)
    result = pytester.runpytest("combine_heads", "--lesson-threads=2", "--lesson-timeout=20")
    result.assert_outcomes(passed=10)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's tunables: Linux")
@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize(
    ("users", "workers"),
    [(None, "glibc.malloc.hugetlb=1"), ("glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=0")],
)
def test_the_worker_asks_malloc_for_huge_pages_unless_the_user_said_otherwise(
    pytester: pytest.Pytester,
    make_exercise: Make,
    monkeypatch: pytest.MonkeyPatch,
    users: str | None,
    workers: str,
) -> None:
    # Read from the worker (the case's parent); the case itself gets the user's environment.
    seen = pytester.path / "tunables.txt"
    make_exercise(
        solution="import os\n"
        "with open(f'/proc/{os.getppid()}/environ', 'rb') as worker:\n"
        "    found = [v for v in worker.read().split(bytes(1)) if v.startswith(b'GLIBC_')]\n"
        f"open({str(seen)!r}, 'w').write(repr((found, os.environ.get('GLIBC_TUNABLES'))))\n"
        + DOUBLE_RIGHT
    )
    if users is None:
        monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    else:
        monkeypatch.setenv("GLIBC_TUNABLES", users)
    result = pytester.runpytest(
        "double", "--lesson-sandbox=off", "--lesson-pass-env=GLIBC_TUNABLES"
    )
    result.assert_outcomes(passed=2)
    assert seen.read_text() == repr(([f"GLIBC_TUNABLES={workers}".encode()], users))


def test_a_right_solution_passes_on_one_thread_and_on_several(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(REFERENCE)
    for threads in ("1", "2"):
        result = pytester.runpytest("combine_heads", f"--lesson-threads={threads}")
        result.assert_outcomes(passed=10)


@pytest.mark.usefixtures("no_preload")
def test_cases_are_seeded_so_random_answers_repeat(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    solution = """
    import random

    def solve(x):
        print(random.random())
        return [0]
    """
    make_exercise(solution=solution)
    result = pytester.runpytest("double")
    printed = [line for line in result.stdout.lines if line.startswith("  | 0.")]
    assert len(printed) == 2 and printed[0] == printed[1]


@pytest.mark.usefixtures("no_preload")
def test_isolation_off_says_so_and_still_grades(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(solution=DOUBLE_RIGHT)
    result = pytester.runpytest("double", "--lesson-isolation=off")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["lessons: NOT isolated: learner code runs inside pytest*"])


def test_pdb_turns_isolation_off(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--pdb", "--collect-only")
    result.stdout.fnmatch_lines(
        ["lessons: NOT isolated because --pdb or --trace was given*never for grading"]
    )


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["--lesson-timeout=0"], {}, "--lesson-timeout='0' must be greater than 0"),
        (
            [],
            {"PYTEST_LESSONS_THREADS": "many"},
            "PYTEST_LESSONS_THREADS='many' is not a valid value",
        ),
        (["--lesson-isolation=docker"], {}, "must be one of auto, fork, spawn, off"),
    ],
)
def test_bad_settings_are_usage_errors(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: dict[str, str],
    words: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert words in result.stderr.str()


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_exercise_toml_limits_apply_and_the_command_line_overrides_them(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    # In spawn mode too the limit holds to the second: a case's clock starts once its Python
    # is ready (starting one can take seconds on Windows).
    make_exercise(
        solution=misbehaving(
            f"time.sleep({CASE_TIMEOUT + 0.5})\nreturn [2 * v for v in x]", imports="import time"
        ),
        toml=DOUBLE_TOML.replace('inputs = ["x"]', f'inputs = ["x"]\ntimeout = {CASE_TIMEOUT}'),
    )
    mode = f"--lesson-isolation={isolation}"
    result = pytester.runpytest("double", mode)
    result.assert_outcomes(passed=1, failed=1)
    assert f"it ran longer than {CASE_TIMEOUT} s and was stopped" in said(result)
    longer = f"--lesson-timeout={CASE_TIMEOUT + 4}"
    pytester.runpytest("double", mode, longer).assert_outcomes(passed=2)


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_without_a_sandbox_learner_code_that_kills_or_stops_the_worker_fails_only_its_case(
    pytester: pytest.Pytester, make_exercise: Make, how: str
) -> None:
    # Where there is no Landlock (macOS, old kernels), learner code can signal its parent;
    # with it, the signal is refused (tests/test_sandbox.py).
    pidfile = pytester.path / "child.pid"
    body = f"""
import signal
open({str(pidfile)!r}, "a").write(f"{{os.getpid()}} {{os.getppid()}}\\n")
os.kill(os.getppid(), signal.{how})
while True:
    pass
"""
    make_exercise(solution=misbehaving(body))
    result = pytester.runpytest(
        "double", f"--lesson-timeout={CASE_TIMEOUT}", "--lesson-sandbox=off"
    )
    result.assert_outcomes(passed=1, failed=1)
    pids = [int(pid) for pid in pidfile.read_text().split()]
    if how == "SIGKILL":
        # Its parent is the zygote its child was forked from: the worker ends with it, and a
        # fresh worker tries the case once more.
        assert (
            "Leave the grader's machinery alone: your code broke the process that runs it (the "
            "supervising process stopped on both tries of this case)."
        ) in said(result)
        assert len(pids) == 4  # two tries: each a child and the zygote it killed
    else:
        # A stopped zygote stops nothing: the worker still times the case, then starts afresh.
        # On a loaded machine the spinning child can wait for a CPU half its timeout, and a
        # case starved so runs once more (runner.starved): one try, or two, never the zygote
        # killed on each.
        assert f"Make solve finish sooner: it ran longer than {CASE_TIMEOUT} s" in said(result)
        assert len(pids) in (2, 4), pids
    assert all(_gone(pid) for pid in pids)


@pytest.mark.usefixtures("no_preload")
def test_a_worker_lost_once_is_replaced_and_the_case_graded(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # As when the system's out-of-memory killer picks the worker: the case is run again. (The
    # learner code plays the killer, which only works without the sandbox.)
    marker = pytester.path / "killed-once"
    body = f"""
import signal
if not os.path.exists({str(marker)!r}):
    open({str(marker)!r}, "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
    while True:
        pass
return [2 * v for v in x]
"""
    make_exercise(solution=misbehaving(body))
    result = pytester.runpytest("double", "--lesson-sandbox=off")
    result.assert_outcomes(passed=2)
    assert marker.exists()


#: Says, before collection and at the end, whether the run's worker was started.
WORKER_PROBE = """
import pytest
from pytest_lessons.session import KEY

def _said(config, when):
    lessons = config.stash.get(KEY, None)
    started = lessons is not None and getattr(lessons.runner, "process", None) is not None
    print(f"worker {'started' if started else 'not started'} {when}")

def pytest_sessionstart(session):
    _said(session.config, "before collection")

@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    _said(config, "at the end")
"""


@pytest.mark.usefixtures("no_preload")
def test_the_worker_starts_before_collection_only_for_runs_that_grade(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """A run that grades a lesson starts the worker (a process of its own, which imports
    torch) as pytest configures, so that its start overlaps pytest's collection; a listing,
    the help and a folder without lessons start none."""
    make_exercise()
    pytester.makeconftest(WORKER_PROBE)
    pytester.mkdir("plain")
    (pytester.path / "plain" / "test_plain.py").write_text("def test_one():\n    pass\n")
    runs = {
        ("double",): "started before collection",
        (".",): "started before collection",  # a course: lessons one level down
        ("double/solution.py",): "started before collection",  # graded as its lesson
        ("double", "--collect-only"): "not started at the end",
        ("double", "--fixtures"): "not started at the end",
        ("--markers",): "not started at the end",
        ("--help",): "not started at the end",
        ("plain",): "not started at the end",
    }
    for arguments, words in runs.items():
        result = pytester.runpytest(*arguments, "-p", "no:cacheprovider", "-s")
        assert result.ret in (0, 5), (arguments, result.ret)
        assert f"worker {words}" in result.stdout.str(), arguments


PRELOAD_COURSE = """
[course]
title = "Preloads"
lessons = ["seen"]
preload = ["colorsys"]
"""

PRELOAD_TOML = """
[exercise]
title = "Seen"
inputs = ["x"]
format = 2
preload = ["wave"]

[[case]]
x = 1
expected = [true, true]
"""

# Whether the course's and the lesson's modules were there before the learner's code ran.
PRELOAD_SEEN = """
import sys

def solve(x):
    return ["colorsys" in sys.modules, "wave" in sys.modules]
"""


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_lesson_and_its_course_preload_modules_before_its_code_runs(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    """`preload` in exercise.toml and in course.toml's [course]: the process that runs the
    case has imported them before the learner's code loads (the fork worker once for the
    run, a spawned Python before its case), though --lesson-preload=none imports nothing."""
    make_exercise("seen", solution=PRELOAD_SEEN, toml=PRELOAD_TOML)
    (pytester.path / "course.toml").write_text(PRELOAD_COURSE)
    result = pytester.runpytest(".", f"--lesson-isolation={isolation}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_timeout_is_tried_again_only_when_other_processes_kept_the_case_from_the_cpu() -> None:
    from pytest_lessons.isolation.runner import Ended, starved

    def ended(status: str, cpu: tuple[float, float] | None) -> Ended:
        return Ended(status, "open", None, 1000, 4.0, cpu=cpu)

    # Ran a fifth of its 4 s, waited the rest: starved by a classmate's processes.
    assert starved(ended("timeout", (0.8, 3.2)), 4.0)
    # Nine busy processes of its own: they waited, but the case ran most of its time.
    assert not starved(ended("timeout", (6.5, 25.0)), 4.0)
    # A loop alone on its core, a case that ended, a timeout whose CPU was not read.
    assert not starved(ended("timeout", (4.0, 0.1)), 4.0)
    assert not starved(ended("exited", (0.8, 3.2)), 4.0)
    assert not starved(ended("timeout", None), 4.0)
