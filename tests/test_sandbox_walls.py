"""The sandbox's walls of issue 21: deny by default, no privileges, limits learner code cannot
raise, namespaces of its own. A class of attackers runs in one pytest run per isolation mode:
each attack fails its own case only, while a right solution in the same run passes and the
gradebook keeps every learner's full maximum points."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from pytest_lessons.isolation import sandbox, walls

from helpers import DOUBLE_RIGHT, DOUBLE_TOML, ROOT, said, wait_until

if TYPE_CHECKING:
    from pytest_lessons.isolation.outcome import Outcome
    from pytest_lessons.isolation.runner import Job, Runner

Make = Callable[..., Path]

SUPPORT = sandbox.probe()
pytestmark = pytest.mark.skipif(
    not (SUPPORT.abi and SUPPORT.seccomp), reason=f"no Landlock and seccomp here: {SUPPORT.reason}"
)

#: Right on every case; on case 1 (the 1-D input) it first runs the attack, which raises when
#: it is refused, so only a refused attack fails the case.
ATTACKER = """
import ctypes, os, resource, signal, socket, sys, time
from pathlib import Path

def attack():
{attack}

def solve(x):
    if not isinstance(x[0], list):
        attack()
        return [2 * v for v in x]
    return [[2 * v for v in row] for row in x]
"""

#: One learner a Why bullet or numbered point of issue 21; each attack raises when refused.
ATTACKS = {
    # Root stays root / No privileges: reboot() passes its capability check only with
    # CAP_SYS_BOOT (then the zero magic numbers make it EINVAL, and nothing happens).
    "reboot": """
libc = ctypes.CDLL(None, use_errno=True)
number = {"x86_64": 169, "aarch64": 142}[os.uname().machine]
if libc.syscall(number, 0, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
    raise OSError(ctypes.get_errno(), "reboot refused")
""",
    "capabilities": """
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
if all(int(status[k], 16) == 0 for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb")):
    assert status["NoNewPrivs"].strip() == "1"
    raise PermissionError(1, "no capabilities")
""",
    "realtime": "os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))",
    # Sockets: netlink, and a unix socket the grader listens on.
    "netlink": "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)",
    "unix_connect": """
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
client.connect({listening!r})
""",
    # Other processes: the worker's (fork) or pytest's (spawn) limits.
    "prlimit_parent": "resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (16, 16))",
    # Limits learner code can lift, or that do not exist.
    "memory_raise": """
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
""",
    # The same through prlimit on the process itself (EPERM, not setrlimit's ValueError), and
    # a limit that is no setting of the run.
    "prlimit_raise": "resource.prlimit(0, resource.RLIMIT_NOFILE, (4096, 4096))",
    "core_raise": "resource.setrlimit(resource.RLIMIT_CORE, (1 << 20, 1 << 20))",
    "fork_bomb": """
for _ in range(400):
    if os.fork() == 0:
        time.sleep(30)
        os._exit(0)
""",
    "disk_fill": """
with open("filler", "wb") as handle:
    for _ in range(64):
        handle.write(b"x" * (1 << 20))
""",
    # Files each under the per-file cap, over the case's budget in all.
    "disk_total": """
for number in range(4):
    with open(f"part-{number}", "wb") as handle:
        for _ in range(3):
            handle.write(b"x" * (1 << 20))
""",
    # Learners can talk to each other: each channel a learner would publish answers on.
    "sysv_shm": """
libc = ctypes.CDLL(None, use_errno=True)
if libc.shmget(0x5eed, 4096, 0o1666) < 0:
    raise OSError(ctypes.get_errno(), "shmget")
""",
    "posix_shm": """
from multiprocessing import shared_memory
shared_memory.SharedMemory(name="lessons-answers", create=True, size=4096)
""",
    "abstract_socket": """
server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
server.bind("\\0lessons-answers")
""",
    "tmp_socket": """
server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
server.bind("/tmp/lessons-answers.sock")
""",
    "posix_shm_read": """
from multiprocessing import shared_memory
shared_memory.SharedMemory(name="lessons-answers")
""",
    # A record lock on a file every case may read: its range is a word another case, of this
    # run or of another run on the machine, reads with F_GETLK (a red team's round H).
    "record_lock": """
import fcntl
handle = open(os.__file__, "rb")
fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, (1 << 40) + 13)
""",
    "lock_query": """
import fcntl, struct
handle = open(os.__file__, "rb")
fcntl.fcntl(handle, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
""",
    "open_file_lock": """
import fcntl, struct
handle = open(os.__file__, "rb")
fcntl.fcntl(handle, 37, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 1 << 40, 1, 0))  # F_OFD_SETLK
""",
    "flock": """
import fcntl
fcntl.flock(open(os.__file__, "rb"), fcntl.LOCK_SH | fcntl.LOCK_NB)
""",
    # The machine's counters through sysinfo(2): free memory, load, processes, which a case
    # of another run on the machine moves (a red team's round I).
    "sysinfo": """
libc = ctypes.CDLL(None, use_errno=True)
if libc.sysinfo(ctypes.create_string_buffer(128)) != 0:
    raise OSError(ctypes.get_errno(), "sysinfo")
""",
    # Which pages of a runtime file the page cache holds, and dropping them: a store that
    # outlives the case and the run (a red team's round J).
    "mincore": """
import mmap
view = mmap.mmap(-1, mmap.PAGESIZE)
start = ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(view)))
libc = ctypes.CDLL(None, use_errno=True)
if libc.mincore(start, ctypes.c_size_t(mmap.PAGESIZE), ctypes.create_string_buffer(8)) != 0:
    raise OSError(ctypes.get_errno(), "mincore")
""",
    # A file's inode generation, settable by its owner on a read-only descriptor: a store on
    # the host's disk (a red team's round L). FS_IOC_GETVERSION first: refused as well.
    "inode_version": """
import fcntl, struct
with open(os.__file__, "rb") as handle:
    fcntl.ioctl(handle, 0x80087601, struct.pack("q", 0))
""",
    "fadvise": """
with open(os.__file__, "rb") as handle:
    os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
""",
    "nowait_read": """
with open(os.__file__, "rb") as handle:
    handle.read(16)  # cached now: a read that must not wait for the disk then succeeds
    os.preadv(handle.fileno(), [bytearray(16)], 0, os.RWF_NOWAIT)
""",
}

#: What a case does with fcntl every day (a descriptor's flags, its duplicates): it passes.
FCNTL_EVERYDAY = DOUBLE_RIGHT.replace(
    "def solve(x):",
    """import fcntl, os


def _everyday():
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_inheritable(write, True)
    copy = fcntl.fcntl(read, fcntl.F_DUPFD_CLOEXEC, 10)
    assert fcntl.fcntl(copy, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    for fd in (read, write, copy):
        os.close(fd)


def solve(x):
    _everyday()""",
    1,
)


def attacker(attack: str) -> str:
    body = "\n".join("    " + line for line in attack.strip().splitlines())
    return ATTACKER.format(attack=body)


@pytest.fixture
def listening(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A unix socket the grader listens on, as /var/run/docker.sock would be."""
    path = tmp_path_factory.mktemp("host") / "service.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    path.chmod(0o777)
    yield str(path)
    server.close()


@pytest.mark.parametrize("isolation", ["fork", "spawn"])
@pytest.mark.usefixtures("no_preload")
def test_every_attack_fails_its_own_case_and_the_gradebook_keeps_full_maximums(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str, listening: str
) -> None:
    exercise = make_exercise(toml=DOUBLE_TOML)
    submissions = pytester.path / "class"
    learners = {"ada": DOUBLE_RIGHT, "fcntl_everyday": FCNTL_EVERYDAY}
    learners.update(
        {
            name: attacker(code.replace("{listening!r}", repr(listening)))
            for name, code in ATTACKS.items()
        }
    )
    for name, code in learners.items():
        (submissions / name / "double").mkdir(parents=True)
        (submissions / name / "double" / "solution.py").write_text(code)
    # A hard link to the author's right file: the same file under a second name.
    (submissions / "hard_link" / "double").mkdir(parents=True)
    os.link(exercise / "solution.py", submissions / "hard_link" / "double" / "solution.py")
    result = pytester.runpytest_subprocess(
        "double",
        "--lesson-submissions=class",
        f"--lesson-isolation={isolation}",
        "--lesson-gradebook=gradebook.csv",
        "--lesson-show-failures",
        "--lesson-disk=8",
        "--lesson-processes=32",
        "-v",
        "-p",
        "no:cacheprovider",
    )
    text = said(result)
    # With -v the header names every layer and limit in force.
    assert "layers: Landlock ABI" in text and "seccomp allow-list" in text
    kept = (
        "its own tmpfs" if sandbox.make_policy(SUPPORT, {}).namespaces else "counted when it ends"
    )
    assert (
        f"limits: a case's files up to 8 MiB in all ({kept}), 256 open files, "
        "32 processes and threads" in text
    )
    book = sorted((pytester.path / "gradebook.csv").read_text().splitlines()[1:])
    expected = ["ada,double,2,2,", "fcntl_everyday,double,2,2,", "hard_link,double,0,2,"]
    assert book == sorted(expected + [f"{name},double,1,2," for name in ATTACKS]), text
    assert (
        "Hand in class/hard_link/double/solution.py itself, not a link: it is a hard link "
        "(one file under 2 names)" in text
    )
    # Words that say what to do, for a refused call and for the network.
    assert "Remove the call that the system refused (below)" in text
    assert "Remove the code that uses the network" in text
    # A limit names what to do, the limit and its setting.
    assert (
        "Start fewer processes or threads: a case may run at most 32 at once, itself included "
        "(--lesson-processes), and your code asked for more." in text
    )
    assert (
        "Write less to disk: a case's files may take 8 MiB in all (--lesson-disk), and your "
        "code wrote more." in text
    )
    assert (
        "Remove the call that raises the memory limit: a case may use 2048 MiB "
        "(--lesson-memory), and cannot raise it." in text
    )
    assert (
        "Remove the call that raises the open file limit: a case may hold 256 files open "
        "(--lesson-open-files), and cannot raise it." in text
    )
    assert (
        "Remove the call that raises the core dump size limit (RLIMIT_CORE): a case cannot "
        "raise it." in text
    )
    # Another process's limits: what it did, whether it lowered or raised them.
    assert "Remove the code that signals or controls another process" in text
    assert "grader itself failed" not in text


def test_a_wide_set_of_torch_and_numpy_operators_passes_inside_the_sandbox(
    pytester: pytest.Pytester, combine_heads: Callable[[str | None], Path]
) -> None:
    combine_heads((ROOT / "tools" / "wide_ops.py").read_text())
    # -v: the header line that names the seccomp allow-list is the detailed one.
    result = pytester.runpytest(
        "combine_heads", "--lesson-timeout=120", "-v", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=10)
    assert "seccomp allow-list" in said(result)


@pytest.mark.torch
@pytest.mark.course
def test_the_lesson_check_passes_inside_the_sandbox(pytester: pytest.Pytester) -> None:
    # With -m course only: .ci/run's lesson-check stage runs this command over exercises/,
    # spread over the cores, with --lesson-sandbox=require as here.
    shutil.copytree(ROOT / "exercises", pytester.path / "exercises")
    result = pytester.runpytest_subprocess(
        "--lesson-check", "exercises", "--lesson-sandbox=require", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, said(result)


# --- the filter and the walls, without pytest ------------------------------------------------


#: Writes *parts* files of 3 MiB, each linked *links* more times, then returns its input.
WRITER = """
import os

def solve(parts, links):
    for number in range(parts):
        with open(f"part-{number}", "wb") as handle:
            handle.write(b"x" * (3 << 20))
        for link in range(links):
            os.link(f"part-{number}", f"part-{number}-{link}")
    return parts
"""


def test_without_a_tmpfs_the_runner_counts_a_cases_files_against_its_budget(
    tmp_path: Path,
) -> None:
    from pytest_lessons.core.texts import Context, describe
    from pytest_lessons.isolation.outcome import DIED, RETURNED
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    # No namespace, so no tmpfs: each file is capped, the total counted once the case ends.
    policy = sandbox.Policy(abi=0, limits={"disk_mb": 8})
    solution = tmp_path / "solution.py"
    solution.write_text(WRITER)
    ctx = Context("disk", "solve", solution, {}, 10.0, 0, sandbox_limits=policy.limits)
    for runner in (ForkRunner(preload=()), SpawnRunner(preload=(), spares=1)):
        found = []
        try:
            for parts, links in ((3, 0), (2, 20)):
                job = Job(solution, "solve", [parts, links], 10.0, 0, 1000, 1, sandbox=policy)
                found.append(runner.run(job))
        finally:
            runner.close()
        over, linked = found
        assert over.kind == DIED, over
        assert describe(over, None, ctx).headline == (
            "Write less to disk: a case's files may take 8 MiB in all (--lesson-disk), and "
            "your code left 9.0 MiB."
        )
        # A file linked twenty times takes its room once.
        assert linked.kind == RETURNED, linked


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_allow_lists_numbers_are_the_kernels(machine: str) -> None:
    headers = {
        "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        "aarch64": Path("/usr/include/asm-generic/unistd.h"),
    }
    if not headers[machine].exists():
        pytest.skip(f"no kernel headers for {machine} here")
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import syscalls
    finally:
        sys.path.remove(str(ROOT / "tools"))
    known = syscalls.numbers(machine)
    table = sandbox._NUMBERS[machine]
    assert {name: known[name] for name in table} == table
    program = sandbox.seccomp_filter(machine, 4321)
    assert program is not None and len(program) < 4096
    # Every jump lands inside the program (BPF's offsets are one byte).
    assert all(jt < 256 and jf < 256 for _, jt, jf, _ in program)
    jumps = [(i, jt, jf) for i, (code, jt, jf, _) in enumerate(program) if code & 0x07 == 0x05]
    assert all(i + 1 + max(jt, jf) < len(program) for i, jt, jf in jumps)
    assert program[-1] == (0x06, 0, 0, 0x00050001)  # anything else: EPERM


def test_calls_on_the_process_itself_pass_and_on_its_parent_fail() -> None:
    import json
    import os
    import resource
    import tempfile
    from dataclasses import replace

    # No runner here to make the case's memory cgroup with its job's limit (the tests of
    # the memory cap below have one): a confined process never makes one without it.
    policy = sandbox.make_policy(SUPPORT, {}, user=None, limits={"processes": 16})
    policy = replace(policy, memory_cap="")
    private = Path(tempfile.mkdtemp(prefix="pytest-lessons-test-"))
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reports through the pipe
        found: dict[str, object] = {}
        try:
            sandbox.confine(policy.request(private, private / "solution.py"))
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)
            for name, action in (
                ("own limit", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, limit)),
                ("own pid", lambda: resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, limit)),
                ("parent", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, limit)),
                ("nicer", lambda: os.setpriority(os.PRIO_PROCESS, 0, 5)),
                ("user", lambda: os.setpriority(os.PRIO_USER, 0, 5)),
                ("batch", lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))),
                ("pair", lambda: socket.socketpair()),
                ("unshare", lambda: _unshare_user()),
            ):
                try:
                    action()
                    found[name] = "allowed"
                except OSError as exc:
                    found[name] = exc.errno
        except BaseException as exc:
            found["error"] = repr(exc)
        os.write(writable, json.dumps(found).encode())
        os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as handle:
        found = json.loads(handle.read())
    os.waitpid(pid, 0)
    shutil.rmtree(private)
    assert found == {
        "own limit": "allowed",
        "own pid": "allowed",
        "parent": 1,
        "nicer": "allowed",
        "user": 1,
        "batch": "allowed",
        "pair": "allowed",
        "unshare": 1,
    }


def _unshare_user() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")


@pytest.mark.skipif(
    not (hasattr(os, "fork") and os.geteuid() == 0 and os.access(walls.CGROUP_PIDS, os.W_OK)),
    reason="the process cgroup needs root and cgroup v1's pids controller",
)
def test_a_waiting_child_whose_fork_server_ended_moves_nobody_into_its_cgroup() -> None:
    # An orphan's parent is init (or a subreaper): moving it would cap the whole machine.
    import json

    before = Path("/proc/1/cgroup").read_text()
    readable, writable = os.pipe()
    go_r, go_w = os.pipe()
    server = os.fork()
    if server == 0:  # pragma: no cover - the stand-in fork server, which ends at once
        server = os.getpid()
        if os.fork() == 0:
            os.close(go_w)
            os.read(go_r, 1)  # end of file once the test collected the server
            found: dict[str, object] = {"goes on": walls.die_with_parent(server)}
            for name, pid in (("server", server), ("init", 1)):
                try:
                    walls.join_cgroup(8, server=pid)
                    found[name] = "moved"
                except walls.WallError as exc:
                    found[name] = str(exc)
            os.write(writable, json.dumps(found).encode())
            os._exit(0)
        os._exit(0)
    os.close(go_r)
    os.waitpid(server, 0)
    os.close(go_w)
    os.close(writable)
    with os.fdopen(readable, "rb") as handle:
        found = json.loads(handle.read() or b"{}")
    assert found == {
        "goes on": False,
        "server": f"the fork server {server} is no longer this process's parent",
        "init": "the fork server 1 is no longer this process's parent",
    }
    assert Path("/proc/1/cgroup").read_text() == before


def _run_filter(program: list[tuple[int, int, int, int]], data: dict[int, int]) -> int:
    """What a classic BPF seccomp program returns for the call *data* (offset -> 32-bit word
    of ``struct seccomp_data``): a small interpreter of the instructions the filter uses."""
    at, accumulator = 0, 0
    while True:
        code, jt, jf, k = program[at]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = data.get(k, 0)
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        elif code in (0x15, 0x35, 0x45):  # BPF_JMP | BPF_JEQ, BPF_JGE, BPF_JSET (with K)
            taken = {
                0x15: accumulator == k,
                0x35: accumulator >= k,
                0x45: bool(accumulator & k),
            }[code]
            at += jt if taken else jf
        else:
            raise AssertionError(f"an instruction the interpreter does not know: {code:#x}")
        at += 1


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_allows_exactly_the_allow_list_and_checks_the_arguments(machine: str) -> None:
    allow, eperm, enosys = 0x7FFF0000, 0x00050001, 0x00050026
    pid, other = 4321, 4322
    program = sandbox.seccomp_filter(machine, pid)
    assert program is not None
    arch = sandbox._SECCOMP_ARCH[machine]
    numbers = sandbox._NUMBERS[machine]
    allowed = {numbers[name] for name in sandbox.ALLOWED if name in numbers}
    checked = {numbers[name]: name for name in sandbox.CHECKED if name in numbers}

    def call(number: int, *arguments: int, architecture: int = arch) -> int:
        data = {0: number, 4: architecture}
        data.update({16 + 8 * i: value for i, value in enumerate(arguments)})
        return _run_filter(program, data)

    for number in range(sandbox._NEWER + 64):
        if number >= sandbox._NEWER or number == sandbox._CLONE3:
            expected = enosys
        elif number in allowed:
            expected = allow
        elif number not in checked:
            expected = eperm
        else:
            continue
        assert call(number) == expected, (machine, number)
        assert call(number, architecture=0x40000003) == eperm  # i386's calls
    if machine == "x86_64":
        assert call(0x40000000 + numbers["read"]) == eperm  # x32's calls
    # Each checked call: allowed when every condition holds, refused when one does not.
    # Values each condition is tried with: pids, small numbers, fcntl's F_SETLK (6) and
    # F_OFD_SETLK (37), madvise's PAGEOUT (21), RWF_NOWAIT (8).
    samples = (0, pid, other, 1, 3, 5, 6, 7, 8, 21, 37)
    for number, name in checked.items():
        conditions = dict(sandbox.CHECKED[name])
        places = sorted(conditions)  # the arguments the conditions read, at most two
        for first in samples:
            for second in samples:
                if name == "clone":
                    flags = first | (0x10000000 if second == other else 0)  # CLONE_NEWUSER
                    want = allow if not flags & sandbox._NAMESPACE_FLAGS else eperm
                    assert call(number, flags) == want, (name, flags)
                    continue
                given = dict(zip(places, (first, second)))
                holds = all(
                    given[argument]
                    in {pid if v == "self" else v for v in wanted}
                    | ({0} if "self" in wanted else set())
                    for argument, wanted in conditions.items()
                )
                arguments = [given.get(index, 0) for index in range(6)]
                assert call(number, *arguments) == (allow if holds else eperm), (
                    name,
                    first,
                    second,
                )


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_a_sandbox_announced_before_the_first_job_closes_around_it_and_another_still_runs(
    tmp_path: Path, mode: str
) -> None:
    from dataclasses import replace

    from pytest_lessons.isolation.outcome import RETURNED
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    solution = tmp_path / "solution.py"
    solution.write_text(
        "import resource\n\ndef solve(x):\n"
        "    return f'{resource.getrlimit(resource.RLIMIT_NOFILE)[1]} files, {x}'\n"
    )
    announced = sandbox.make_policy(SUPPORT, {}, user=None, limits={"open_files": 100})
    announced = announced.for_course([], None)
    other = replace(announced, limits={"open_files": 50})
    job = Job(solution, "solve", [[7]], 20.0, 0, 1000, 1, sandbox=announced, beneath=tmp_path)
    runner: Runner = ForkRunner(preload=()) if mode == "fork" else SpawnRunner((), spares=1)
    try:
        runner.warm_up()
        runner.announce(announced)
        # The first case's walls were built from the announcement; the second case's
        # sandbox is not that one, so it gets a child of its own.
        outcomes = [runner.run(job), runner.run(replace(job, sandbox=other)), runner.run(job)]
    finally:
        runner.close()
    assert [(o.kind, o.answer) for o in outcomes] == [
        (RETURNED, "100 files, [7]"),
        (RETURNED, "50 files, [7]"),
        (RETURNED, "100 files, [7]"),
    ], outcomes


# --- the memory cap for a case as a whole ------------------------------------------------------

MEMORY_CGROUPS = Path(walls.memory_hierarchy()[1] or "/nonexistent") / walls.CGROUP_FOLDER

#: Four children of 100 MiB each: each under --lesson-memory=256 (RLIMIT_AS is per process),
#: together over the case's memory cgroup (256 MiB, the 8 MiB of files, the grader's slack).
MEMORY_HOG = """
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = b"\\x01" * (100 << 20)
        time.sleep(2)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def run_watching(runner: Runner, job: Job, look: Callable[[], None], every: float) -> Outcome:
    """*runner*'s outcome of *job*, with *look* called every *every* seconds while it runs
    (what the case's files and cgroups hold is seen only then); the runner closed after."""
    import threading

    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            look()
            time.sleep(every)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        return runner.run(job)
    finally:
        done.set()
        watcher.join()
        runner.close()


def _memory_cgroups() -> set[str]:
    return set(os.listdir(MEMORY_CGROUPS)) if MEMORY_CGROUPS.is_dir() else set()


def _left_behind(before: set[str]) -> set[str]:
    """The memory cgroups this test's run made since *before* that are still there now that
    the run is over: those whose parent (a fork server, or the pytest that spawned the case)
    has ended or is this process. A classmate test on another xdist worker runs cases of its
    own meanwhile, under a parent that is alive and not this one; those are its own."""

    def gone(pid: str) -> bool:
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        return False

    def ours(name: str) -> bool:
        parts = name.split("-")
        return len(parts) == 3 and (parts[1] == str(os.getpid()) or gone(parts[1]))

    return {name for name in _memory_cgroups() - before if ours(name)}


@pytest.mark.skipif(
    not (os.geteuid() == 0 and walls.memory_hierarchy()[0]),
    reason="the memory cgroup needs root and a writable memory controller (cgroup v1 or v2)",
)
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
@pytest.mark.usefixtures("no_preload")
def test_a_case_whose_processes_together_hold_more_than_its_memory_fails_alone(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    make_exercise(toml=DOUBLE_TOML)
    submissions = pytester.path / "class"
    learners = {"ada": DOUBLE_RIGHT, "hog": attacker(MEMORY_HOG), "zoe": DOUBLE_RIGHT}
    for name, code in learners.items():
        (submissions / name / "double").mkdir(parents=True)
        (submissions / name / "double" / "solution.py").write_text(code)
    before = _memory_cgroups()
    result = pytester.runpytest_subprocess(
        "double",
        "--lesson-submissions=class",
        f"--lesson-isolation={isolation}",
        "--lesson-gradebook=gradebook.csv",
        "--lesson-show-failures",
        "--lesson-memory=256",
        "--lesson-disk=8",
        "-v",
        "-p",
        "no:cacheprovider",
    )
    text = said(result)
    assert result.ret == 1, text  # cases failed; the run itself ended as it should
    assert "memory for the case as a whole (a memory cgroup" in text
    book = sorted((pytester.path / "gradebook.csv").read_text().splitlines()[1:])
    # The hog's other case and both classmates' cases ran and passed.
    assert book == ["ada,double,2,2,", "hog,double,1,2,", "zoe,double,2,2,"], text
    assert "Use less memory: your code asked for more than the 256 MiB a case may use." in text
    assert "grader itself failed" not in text
    # Nothing of the run is left in the system's cgroups.
    assert not _left_behind(before)


@pytest.mark.parametrize("mode", ["fork", "spawn"])
@pytest.mark.parametrize("cgroup", [True, False])
def test_a_cases_processes_are_the_first_the_kernel_kills_when_memory_runs_out(
    tmp_path: Path, mode: str, cgroup: bool
) -> None:
    # With or without a memory cgroup: where the machine itself runs out of memory, a
    # case's process goes before pytest or its worker (oom_score_adj 1000, inherited by
    # what it starts, which it cannot lower).
    from dataclasses import replace

    from pytest_lessons.isolation.outcome import RETURNED
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    policy = sandbox.make_policy(SUPPORT, {}, user=None, limits={"processes": 8})
    policy = policy.for_course([], None)
    if cgroup and not policy.memory_cap:
        pytest.skip("the memory cgroup needs root and a writable memory controller")
    if not cgroup:
        policy = replace(policy, memory_cap="")
    solution = tmp_path / "solution.py"
    solution.write_text(
        "import os\n\ndef solve(x):\n"
        "    lowered = True\n"
        "    try:\n"
        "        with open('/proc/self/oom_score_adj', 'w') as handle:\n"
        "            handle.write('0')\n"
        "    except OSError:\n"
        "        lowered = False\n"
        "    with open('/proc/self/oom_score_adj') as handle:\n"
        "        return [handle.read().strip(), lowered, os.getppid() > 0]\n"
    )
    job = Job(solution, "solve", [[7]], 20.0, 256, 1000, 1, sandbox=policy, beneath=tmp_path)
    runner: Runner = ForkRunner(preload=()) if mode == "fork" else SpawnRunner((), spares=1)
    before = _memory_cgroups()
    try:
        outcome = runner.run(job)
    finally:
        runner.close()
    assert (outcome.kind, outcome.answer) == (RETURNED, ["1000", False, True]), outcome
    assert Path("/proc/self/oom_score_adj").read_text().strip() == "0"
    assert not _left_behind(before)


# --- the CPU a case takes ----------------------------------------------------------------------

#: A lesson whose one case needs a second of CPU, with time to spare for it alone.
CPU_TOML = """
[exercise]
title = "Work for a second"
inputs = ["x"]
timeout = 4

[[case]]
x = 1.0
expected = 1.0
"""

#: Runs *x* seconds on a CPU (its own CPU time, whatever the machine's speed), then answers.
CPU_HONEST = """
import time

def solve(x):
    start = time.process_time()
    while time.process_time() - start < x:
        pass
    return x
"""

#: Eight processes that spin until they are killed, and the case itself spinning beside them:
#: within the process cap, each busy, until the case runs out of time.
CPU_HOG = """
import os

def solve(x):
    for _ in range(8):
        if os.fork() == 0:
            while True:
                pass
    while True:
        pass
"""

CPU_CGROUPS = Path(walls.cpu_hierarchy()[1] or "/nonexistent") / walls.CGROUP_FOLDER


def _cpu_cgroups() -> set[str]:
    if walls.cpu_hierarchy()[0] != "v1":
        return set()  # on v2 the memory cgroup is the cpu cgroup: counted there
    return {name for name in os.listdir(CPU_CGROUPS) if name.startswith("case-")}


@pytest.mark.parametrize("isolation", ["fork", "spawn"])
@pytest.mark.usefixtures("no_preload")
def test_a_case_that_spins_many_processes_takes_no_classmates_cpu(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    # The red team's finding: a learner's processes busy on every core made a classmate's
    # honest case, run beside it, time out. Each case now gets one case's share of the CPU
    # (its cgroup's equal weight), or, without a cpu cgroup, a starved case runs once more.
    make_exercise(name="spin", solution=None, toml=CPU_TOML)
    submissions = pytester.path / "class"
    for name, code in {"ada": CPU_HONEST, "hog": CPU_HOG}.items():
        (submissions / name / "spin").mkdir(parents=True)
        (submissions / name / "spin" / "solution.py").write_text(code)
    shared = walls.probe(None).cpu
    before, cpu_before = _memory_cgroups(), _cpu_cgroups()
    for _ in range(3):
        result = pytester.runpytest_subprocess(
            "spin",
            "--lesson-submissions=class",
            f"--lesson-isolation={isolation}",
            "--lesson-workers=2",
            "--lesson-gradebook=gradebook.csv",
            "-v",
            "-p",
            "no:cacheprovider",
        )
        text = said(result)
        assert result.ret == 1, text  # the hog's case failed; the run ended as it should
        if shared:
            assert f"CPU shared per case (a cpu cgroup, {shared}: each case one equal share" in text
        else:
            assert "CPU not shared per case (" in text
            assert (
                "a case that timed out after waiting for a CPU half its time runs once more" in text
            )
        book = sorted((pytester.path / "gradebook.csv").read_text().splitlines()[1:])
        assert book == ["ada,spin,1,1,", "hog,spin,0,1,"], text
        assert "grader itself failed" not in text
    assert not _left_behind(before)
    assert not {n for n in _cpu_cgroups() - cpu_before if n.split("-")[1] == str(os.getpid())}


#: Answers with the cgroups it is in, after long enough for the test to read its cgroup's
#: weight meanwhile.
CGROUP_READER = """
import time

def solve(x):
    time.sleep(x)
    with open("/proc/self/cgroup") as handle:
        return handle.read()
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not walls.probe(None).cpu,
    reason=f"no cpu cgroup per case here: {walls.probe(None).cpu_reason}",
)
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_a_cases_cgroup_holds_its_cpu_weight(tmp_path: Path, mode: str) -> None:

    from pytest_lessons.isolation.outcome import RETURNED
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    policy = sandbox.make_policy(SUPPORT, {}, user=None, limits={"processes": 8})
    policy = policy.for_course([], None)
    solution = tmp_path / "solution.py"
    solution.write_text(CGROUP_READER)
    job = Job(solution, "solve", [1.5], 20.0, 256, 1000, 1, sandbox=policy, beneath=tmp_path)
    runner: Runner = ForkRunner(preload=()) if mode == "fork" else SpawnRunner((), spares=1)
    version, root = walls.cpu_hierarchy()
    base = Path(root) / walls.CGROUP_FOLDER
    weight_file, weight = walls.CPU_WEIGHT[version]
    seen: dict[str, str] = {}

    def look() -> None:
        for folder in base.glob("case-*"):
            with contextlib.suppress(OSError):
                seen[folder.name] = (folder / weight_file).read_text().strip()

    outcome = run_watching(runner, job, look, every=0.05)
    assert outcome.kind == RETURNED, outcome
    # v1: the cpu hierarchy's line; v2: the unified one, which memory and cpu share.
    wanted = "cpu" if version == "v1" else ""
    lines = [line.split(":", 2) for line in str(outcome.answer).splitlines()]
    own = [path for _, names, path in lines if (wanted in names.split(",")) == bool(wanted)]
    name = own[0].rpartition("/")[2]
    assert own[0] == f"/{walls.CGROUP_FOLDER}/{name}" and name.startswith("case-"), lines
    assert seen.get(name) == weight, (name, seen)


def _group_size(group: int) -> int:
    """How many processes of process group *group* are alive and not zombies."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                count += fields[2] == str(group) and fields[0] != "Z"
    return count


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_without_a_cpu_cgroup_a_case_starved_into_its_timeout_runs_once_more(
    tmp_path: Path, mode: str
) -> None:
    # No cgroup at all (as on a machine without them): the hog's nine busy processes leave
    # the honest case about a fifth of a core until the hog's case ends, and it runs out of
    # time waiting for the CPU; the runner sees that and runs it once more, alone by then.
    import threading
    from dataclasses import replace

    from pytest_lessons.isolation.outcome import RETURNED, TIMEOUT
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    policy = sandbox.make_policy(SUPPORT, {}, user=None, limits={"processes": 16})
    policy = replace(policy.for_course([], None), memory_cap="", cpu_share="")
    (tmp_path / "hog").mkdir()
    (tmp_path / "ada").mkdir()
    (tmp_path / "hog" / "solution.py").write_text(CPU_HOG)
    (tmp_path / "ada" / "solution.py").write_text(CPU_HONEST)

    def job(who: str, timeout: float) -> Job:
        folder = tmp_path / who
        return Job(folder / "solution.py", "solve", [1.0], timeout, 256, 1000, 1,
                   sandbox=policy, beneath=folder)  # fmt: skip

    def make() -> Runner:
        return ForkRunner(preload=()) if mode == "fork" else SpawnRunner((), spares=1)

    hog, honest = make(), make()
    hog.warm_up()
    honest.warm_up()
    found: list[Outcome] = []
    spinning = threading.Thread(target=lambda: found.append(hog.run(job("hog", 4.0))))
    try:
        # Warmed up first: the honest case's first try starts only once the hog spins.
        assert honest.run(job("ada", 20.0)).kind == RETURNED
        spinning.start()

        def group() -> int:
            if isinstance(hog, ForkRunner):
                return hog._group or 0
            running = getattr(hog, "_running", None)
            return running.pid if running is not None else 0

        assert wait_until(lambda: group() and _group_size(group()) >= 9, 60)
        outcome = honest.run(job("ada", 3.0))
        spinning.join()
    finally:
        hog.close()
        honest.close()
    assert (outcome.kind, outcome.answer) == (RETURNED, 1.0), outcome
    # The hog's own case is a timeout still (it ran most of its time: no second try).
    assert [o.kind for o in found] == [TIMEOUT], found


def test_the_header_says_whether_a_cases_processes_share_the_cpu_as_one() -> None:
    from dataclasses import replace

    base = sandbox.Policy(abi=4, seccomp=True, memory_cap="v2")
    shared = replace(base, cpu_share="v2").limit_words()
    assert (
        "CPU shared per case (a cpu cgroup, v2: each case one equal share, however many" in shared
    )
    alone = replace(base, cpu_reason="the cgroup v2 hierarchy has no cpu controller")
    assert (
        "CPU not shared per case (the cgroup v2 hierarchy has no cpu controller): a case that "
        "timed out after waiting for a CPU half its time runs once more"
    ) in alone.limit_words()


# --- the result's channel ---------------------------------------------------------------------

#: Writes 8 MiB into every descriptor it holds that leads to the grader's result (the file
#: beneath its tmpfs, or its memory file), then waits so the test sees what the host holds.
RESULT_FILLER = """
import os, time

def solve(x):
    written = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            where = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if "case-" not in where and "lessons-result" not in where:
            continue
        for _ in range(8):
            try:
                written += os.write(int(name), b"x" * (1 << 20))
            except OSError:
                break
    time.sleep(0.5)
    return [written, x]
"""


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_what_a_case_writes_to_its_result_takes_no_more_than_the_runner_reads(
    tmp_path: Path, mode: str
) -> None:
    # The result file was on the host's disk beneath the case's tmpfs, and learner code could
    # write it as far as the disk budget; the runner reads the answer size and its envelope.

    from pytest_lessons.isolation.channel import ENVELOPE
    from pytest_lessons.isolation.outcome import RETURNED
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    policy = sandbox.make_policy(SUPPORT, {}, user=None, limits={"disk_mb": 64})
    policy = policy.for_course([], None)
    if not policy.namespaces:
        pytest.skip(f"no tmpfs of the case's own here: {policy.namespaces_reason}")
    solution = tmp_path / "solution.py"
    solution.write_text(RESULT_FILLER)
    answer = 1 << 20
    job = Job(
        solution,
        "solve",
        [[7]],
        20.0,
        256,
        1000,
        1,
        sandbox=policy,
        beneath=tmp_path,
        answer_bytes=answer,
    )
    runner: Runner = ForkRunner(preload=()) if mode == "fork" else SpawnRunner((), spares=1)
    largest = [0]
    base = runner._temp.base()

    def look() -> None:
        for path in base.rglob("*"):
            with contextlib.suppress(OSError):
                largest[0] = max(largest[0], path.stat().st_size)

    outcome = run_watching(runner, job, look, every=0.02)
    assert outcome.kind == RETURNED, outcome
    written, echoed = outcome.answer
    # The learner's own case still answers (its writes never reached what the runner reads
    # past the result), and no more than the runner reads could be written at all.
    assert echoed == [7]
    assert written <= answer + ENVELOPE + 1, written
    assert largest[0] <= answer + ENVELOPE + 1, largest[0]


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_a_fifo_or_folder_where_the_result_goes_is_the_cases_own_failure(
    tmp_path: Path, mode: str
) -> None:
    # Without namespaces the result file is in the learner's own folder: whatever learner
    # code leaves at its name (a FIFO an open would wait on, a folder) is replaced or stays,
    # and the case fails as its own; the next case runs.
    from dataclasses import replace

    from pytest_lessons.isolation.outcome import INTERNAL, RAISED, RETURNED
    from pytest_lessons.isolation.runner import ForkRunner, Job, SpawnRunner

    policy = sandbox.make_policy(SUPPORT, {}, user=None, limits={"disk_mb": 8})
    policy = replace(policy.for_course([], None), namespaces=False)
    solution = tmp_path / "solution.py"
    solution.write_text(
        "import os\n\ndef solve(kind):\n"
        "    if kind == 'fifo':\n        os.mkfifo('result.json')\n"
        "    elif kind == 'folder':\n        os.mkdir('result.json')\n"
        "    return kind\n"
    )
    runner: Runner = ForkRunner(preload=()) if mode == "fork" else SpawnRunner((), spares=1)
    try:
        outcomes = [
            runner.run(Job(solution, "solve", [kind], 20.0, 256, 1000, 1, sandbox=policy))
            for kind in ("fifo", "folder", "plain")
        ]
    finally:
        runner.close()
    # The sandbox refuses a FIFO (mknod) where it can; where made, it is replaced.
    assert outcomes[0].kind in (RETURNED, RAISED), outcomes[0]
    assert outcomes[1].kind not in (RETURNED, INTERNAL), outcomes[1]
    assert (outcomes[2].kind, outcomes[2].answer) == (RETURNED, "plain"), outcomes[2]


@pytest.mark.skipif(os.geteuid() != 0, reason="a mount view without access times needs root")
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
@pytest.mark.usefixtures("no_preload")
def test_a_case_that_reads_a_runtime_file_leaves_its_access_time(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    """A red team's round K: a read of a runtime file set its access time on the host's disk
    (relatime), and a case of a later run read which files had been read with stat: a
    hidden case's inputs, stored as 50 such bits, passed cumsum's hidden case."""
    if not sandbox.make_policy(SUPPORT, {}).namespaces:
        pytest.skip("no namespaces here: the case has no mount view of its own")
    import sysconfig

    carrier = Path(sysconfig.get_paths()["stdlib"]) / "this.py"
    before = carrier.stat()
    old = before.st_mtime - 100_000  # older than its change: relatime would update it
    os.utime(carrier, (old, before.st_mtime))
    reader = DOUBLE_RIGHT.replace(
        "def solve(x):", f"def solve(x):\n    open({str(carrier)!r}, 'rb').read()", 1
    )
    make_exercise(solution=reader, toml=DOUBLE_TOML)
    result = pytester.runpytest_subprocess(
        "double", f"--lesson-isolation={isolation}", "--lesson-sandbox=require", "-p",
        "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == 0, said(result)
    assert carrier.stat().st_atime == old
