"""The fork server: a process that imports torch once, then forks one fresh child per case.

Started by :class:`pytest_lessons.isolation.runner.ForkRunner` while pytest collects, so the cost of
``import torch`` overlaps collection. The worker itself never runs learner code: each case runs
in a child forked from it, in a process group of its own, which the worker kills whole when the
case ends or its time is up. This works against loops that swallow ``BaseException``, hangs in
native code and processes the learner forks.

Protocol (one JSON document per line): the runner writes *jobs* to the worker's stdin (each a
frame: its JSON line, then the raw bytes of its large inputs that the line's ``blobs`` counts,
passed on to the child as they are; see :mod:`pytest_lessons.isolation.arguments`); the worker
first writes ``{"ready": ...}``, then one *report* per job to the file descriptor that was its
stdout (its own fd 1 then points at /dev/null, so stray prints cannot corrupt the protocol). A
job holds the child request (see :func:`pytest_lessons.isolation.child.run_case`) plus ``timeout``,
``memory_mb``, ``output_cap`` and ``result`` (the file the child writes its outcome to). The
expected answers are never part of a job. POSIX only; see the runner for Windows.

A class graded on several cores (``--lesson-workers``) needs one fork server per core. Only the
first is started by the runner; once it has imported torch it forks the others (*siblings*),
which share its memory and so cost no second import::

    pytest process                          worker 1 (imports torch once)
      runner 1  --jobs/reports on stdio-->    | fork per case --> child, child, ...
      runner 2  --jobs/reports on pipes-->  worker 2 (forked from worker 1 after the import)
                                              | fork per case --> child, child, ...

A sibling reads jobs on its own pipes (``--sibling=JOB_FD,REPORT_FD``, inherited from the
runner through worker 1) and lives on if worker 1 dies.

Besides jobs, the runner may write ``{"ahead": SHARED}``: the part of the sandbox every coming
job shares (:func:`pytest_lessons.isolation.sandbox.shared_part`), once pytest has collected the
course and before the first job. The waiting child then builds its walls before its job
arrives, the first case's included; the worker answers nothing to it.

And ``{"preload": [MODULE, ...]}``: modules the collected lessons need (their ``preload``)
beyond those the worker was started with. Its zygote imports them, once, and every child
forked from then on has them (the child forked before is replaced); the worker answers
nothing to it either.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any, NoReturn

from pytest_lessons.isolation import channel, walls
from pytest_lessons.isolation.arguments import frame_length, unframe
from pytest_lessons.isolation.child import (
    gate_writer,
    limit_memory,
    prepare,
    run_case,
    use_channel,
    write_result,
)
from pytest_lessons.isolation.outcome import DIED
from pytest_lessons.isolation.sandbox import prepare_rules, shared_part

#: Seconds the worker waits for its zygote to fork a child before it gives up (and ends, so
#: the runner starts a fresh worker).
ZYGOTE_GRACE = 10.0
#: Seconds the worker waits to hear how a child that ended did.
RUNNING_GRACE = 2.0
#: Seconds the worker waits for its zygote to import a lesson's ``preload`` (torch._dynamo:
#: 5-10 s on a loaded 2-core machine) before it gives up (and ends, as above).
IMPORT_GRACE = 100.0
#: The largest sandbox policy written ahead into a waiting child's job pipe (a pipe holds
#: 64 KiB on Linux and macOS).
_POLICY_ROOM = 60_000

#: Linux's 2 MiB page size, and madvise(2)'s advice numbers for it (Linux >= 6.1 collapses).
_HUGE, _MADV_HUGEPAGE, _MADV_COLLAPSE = 2 << 20, 14, 25


def _huge_pages() -> None:
    """Back the worker's anonymous memory (the heap torch filled) with 2 MiB pages, where
    Linux allows it.

    Each case's fork copies the worker's page tables and each child's exit frees them; with
    huge pages there are ~500 times fewer entries. ``python benchmarks/isolation.py --only 5``
    measures the gain (fork and exit of a process that imported torch, with and without);
    docs/contributors/architecture.md quotes its last result. A copy-on-write fault in a child still
    copies 4 KiB, not 2 MiB.
    Best effort: on other systems, or when the kernel says no, nothing changes.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        madvise = ctypes.CDLL(None, use_errno=True).madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/maps") as handle:
            regions = handle.read().splitlines()
    except (OSError, AttributeError):
        return
    for region in regions:
        fields = region.split()
        if len(fields) < 5 or not fields[1].startswith("rw"):
            continue
        if len(fields) > 5 and fields[5] != "[heap]":
            continue  # file-backed or a stack
        low, high = (int(bound, 16) for bound in fields[0].split("-"))
        low, high = -(-low // _HUGE) * _HUGE, high // _HUGE * _HUGE
        if high > low and madvise(low, high - low, _MADV_HUGEPAGE) == 0:
            madvise(low, high - low, _MADV_COLLAPSE)


#: prctl(2): make this process the reaper of its descendants' orphans (Linux >= 3.4).
_PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans() -> bool:
    """Become the subreaper of every process the children start (Linux).

    A learner's process that calls ``setsid()`` leaves the case's process group, so killing
    the group misses it; but once its parent is gone it becomes the worker's child instead of
    init's, where :meth:`Worker.reap` finds and kills it.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        done = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        return bool(done == 0)
    except (OSError, AttributeError):
        return False


def _children() -> set[int]:
    """This process's children, from /proc (Linux): the kernel's lists of each thread's
    children where it keeps them, else every process's parent."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as handle:
                found.update(int(pid) for pid in handle.read().split())
        return found
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN
        pass
    except (OSError, ValueError):
        return found
    me = os.getpid()
    return {int(name) for name in os.listdir("/proc") if name.isdigit() and _parent(name) == me}


def _parent(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            # The command name may hold spaces and parentheses: parse after the last ")".
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _text_stream(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of *data*: a pipe write that a signal interrupts returns early."""
    view, done = memoryview(data), 0
    while done < len(data):
        done += os.write(fd, view[done:])


def _read_line(fd: int) -> tuple[bytes, bytes]:
    """The first line from *fd*, and what was read after it."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return data, b""
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line, rest


def _child(
    zygote: int, job_fd: int, done_fd: int, output_fd: int, gate_fd: int, result_fd: int = -1
) -> None:
    """Runs in a child the zygote forked: wait for a job, run it, never return.

    The child exists before its job (see :meth:`Worker.spare`), so the cost of fork is paid
    while pytest is busy elsewhere; so is building the fixed part of the sandbox, from the
    first line on its job pipe (the session's sandbox policy, which every job shares). It says
    on *gate_fd*, and closes it, once its sandbox is closed and before learner code loads;
    it writes one byte to *done_fd* once its result file is complete, so the worker need not
    wait for the process to tear down. *result_fd*: the sealed memory file its result goes
    into (:mod:`pytest_lessons.isolation.channel`), -1 for the result file at its path.
    """
    # A child outlives its zygote only as an orphan, whose parent is the machine's init: it
    # must neither wait for a job nor build walls (the process cap would move init).
    if not walls.die_with_parent(zygote):
        os._exit(0)
    result: dict[str, Any]
    job: dict[str, Any] = {}
    try:
        if result_fd >= 0:
            use_channel(result_fd)
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.close(output_fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        # Unbuffered, so stdout and stderr interleave as the learner wrote them.
        sys.stdout = _text_stream(1)
        sys.stderr = _text_stream(2)
        # While waiting for its job, take the copy-on-write page faults a case would take
        # (torch's operators, JSON, importlib): paid here, off the case's clock.
        prepare()
        line, rest = _read_line(job_fd)
        policy = json.loads(line or b"null")
        prepare_rules(policy if isinstance(policy, dict) else None, zygote)
        job = unframe(rest + _read_all(job_fd))
        os.close(job_fd)
        limit_memory(job.get("memory_mb"))
        result = run_case(job, gate_writer(gate_fd))
    except BaseException as exc:  # learner code broke this process's own machinery
        result = {"kind": DIED, "message": f"{type(exc).__name__}: {exc}"}
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        if "result" in job:
            write_result(result, job["result"], job.get("answer_bytes"))
            # Whatever the learner printed is in the pipe now; closing our ends lets the
            # worker read it to the end without waiting for this process to exit.
            os.close(1)
            os.close(2)
            os.write(done_fd, b"1")
    finally:
        os._exit(0)


@dataclass
class _Spare:
    """A forked child waiting for its job, and the worker's ends of its pipes."""

    pid: int
    job_w: int
    done_r: int
    out_r: int
    gate_r: int
    result: int = -1
    """The worker's descriptor of the child's result channel (-1: none)."""
    told: bytes | None = None
    """The first line written into its job pipe (the sandbox it builds its walls for, or
    ``null``); None: nothing yet, it waits to be told."""


def _policy_line(shared: dict[str, Any] | None) -> bytes:
    """The first line of a child's job pipe: the sandbox's shared part, or ``null``."""
    line = (json.dumps(shared) + "\n").encode("utf-8")
    if shared is None or len(line) > _POLICY_ROOM:  # it must fit the pipe: nobody reads it yet
        return b"null\n"
    return line


def _module_name(name: str) -> bool:
    """Whether *name* is a module's dotted name (what a ``preload`` list may hold)."""
    return all(part.isidentifier() for part in name.split("."))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    """One message, a line of JSON (a stream socket: the lines are the framing)."""
    data = (json.dumps(message) + "\n").encode("utf-8")
    if fds:
        sent = socket.send_fds(sock, [data], fds)
        data = data[sent:]
    if data:
        sock.sendall(data)


class Zygote:
    """The process every case's child is forked from: forked from the worker once torch is
    imported and before the worker reads any job, it never reads a job, an answer, a path or
    a learner's output. A child forked from the worker itself would find in its own memory
    what the worker handled for earlier cases (a classmate's printed output, the paths of the
    lesson's files); a child of the zygote finds only what the zygote ever held.

    It does one thing on the worker's word: fork a child onto the pipes the worker made for
    it (passed over a Unix socket; their contents never pass here). It reaps its children, and
    says how each ended; as the subreaper of the children's descendants (Linux) it kills what
    they leave behind. The worker keeps the data side: it writes each job into its child's
    pipe, reads its output, times it and kills its process group on a timeout.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.cases: set[int] = set()
        """The children it forked that have not ended."""
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w)
        self.adopting = _adopt_orphans()

    @staticmethod
    def start(keep_closed: tuple[int, ...]) -> tuple[int, socket.socket]:
        """Fork the zygote; in the worker, its pid and the worker's end of its socket. The
        zygote closes *keep_closed* (the worker's protocol descriptors: were it to hold them,
        the runner would not see the worker end)."""
        # A stream: either end sees the other's end as end of file.
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the zygote; tested through the runner
            try:
                ours.close()
                for fd in keep_closed:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.close(devnull)
                Zygote(theirs).serve()
            finally:
                os._exit(0)
        theirs.close()
        return pid, ours

    def serve(self) -> None:  # pragma: no cover - runs in the zygote
        while True:
            ready, _, _ = select.select([self.sock.fileno(), self.wake_r], [], [])
            if self.wake_r in ready:
                with contextlib.suppress(BlockingIOError):
                    while os.read(self.wake_r, 512):
                        pass
                self.reap()
            if self.sock.fileno() in ready:
                try:
                    data, fds, _, _ = socket.recv_fds(self.sock, 4096, 8)
                except OSError:
                    data, fds = b"", []
                if not data:  # the worker ended: so does everything of the cases
                    self.end()
                    return
                if fds:
                    self.fork(fds)
                else:  # the only message without pipes; the worker waits for its answer
                    self.load(data)

    def load(self, data: bytes) -> None:  # pragma: no cover - runs in the zygote
        """Import the modules the worker's message *data* names (a lesson's ``preload``),
        so that every child forked from now on has them, and say so. A module that fails
        is imported (and fails) in the child instead."""
        names: list[str] = []
        for line in data.splitlines():
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                names += [n for n in json.loads(line).get("import", []) if isinstance(n, str)]
        gc.disable()
        for name in names:
            with contextlib.suppress(Exception):
                __import__(name)
        # As the worker did for torch: their objects stay out of the children's collections.
        gc.freeze()
        gc.enable()
        with contextlib.suppress(OSError):
            _send(self.sock, {"imported": names})

    def fork(self, fds: list[int]) -> None:  # pragma: no cover - runs in the zygote
        """Fork a child onto *fds* (its job, done, output and gate pipes, and maybe its result
        channel) and say its pid."""
        if len(fds) not in (4, 5):
            for fd in fds:
                os.close(fd)
            return
        sys.stdout.flush()
        sys.stderr.flush()
        zygote = os.getpid()
        pid = os.fork()
        if pid == 0:
            self.sock.close()
            for fd in (self.wake_r, self.wake_w):
                os.close(fd)
            _child(zygote, *fds)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # unless the child did it first
        for fd in fds:
            os.close(fd)
        self.cases.add(pid)
        _send(self.sock, {"pid": pid})

    def reap(self) -> None:  # pragma: no cover - runs in the zygote
        """Say how each child that ended did, after killing its process group (the group
        cannot be reused while its leader is unreaped), then kill the orphans."""
        for pid in list(self.cases):
            try:
                if hasattr(os, "waitid"):
                    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                    if info is None:
                        continue
                    _kill_group(pid)
                    _, status = os.waitpid(pid, 0)
                else:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done != pid:
                        continue
                    _kill_group(pid)
            except ChildProcessError:
                status = 0
            self.cases.discard(pid)
            with contextlib.suppress(OSError):
                _send(self.sock, {"ended": pid, "status": status})
        if self.adopting:
            self._kill_orphans()

    def end(self) -> None:  # pragma: no cover - runs in the zygote
        """Kill every child and what they left behind, and collect them."""
        for pid in self.cases:
            _kill_group(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.cases.clear()
        if self.adopting:
            self._kill_orphans()

    def _kill_orphans(self) -> None:  # pragma: no cover - runs in the zygote
        """Kill the adopted orphans of finished cases: any child that is not one of its
        cases. Their own children are adopted in turn."""
        for _ in range(100):
            orphans = _children() - self.cases
            if not orphans:
                return
            for pid in orphans:
                _kill_group(pid)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for pid in orphans:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)


class Worker:
    """The fork server's data side: its protocol descriptors, and its zygote's socket."""

    def __init__(
        self, protocol_fd: int, siblings: tuple[int, ...] = (), modules: tuple[str, ...] = ()
    ) -> None:
        self.protocol_fd = protocol_fd
        self.modules = set(modules)
        """The modules its zygote has imported (or tried to): those it started with, and those
        the runner added (:meth:`preload`)."""
        self._imported = False
        self.siblings = set(siblings)
        """The fork servers this one forked: children of its own, collected when they end."""
        self.zygote, self.sock = Zygote.start((protocol_fd,))
        self._spare: _Spare | None = None
        self._sandbox: dict[str, Any] | None = None
        """The sandbox's shared part, as announced or as the last job had it: the next child
        builds its walls from it while it waits. None: not known, so a child waits untold."""
        self._ended: dict[int, int] = {}
        """Children the zygote said ended, with their wait status."""
        self._live: set[int] = set()
        """The children whose end matters: the waiting one and the one running a case."""
        self._forked: int | None = None
        self._asked: _Spare | None = None
        """The child asked for (its pid still 0) with the worker's ends of its pipes, until
        its pid arrives."""
        self._inbox = b""
        self._cgroups: set[str] = set()
        """The memory cgroups of cases and waiting children that ended, not yet removed
        (their last processes were still leaving)."""

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode("utf-8")
        while data:
            written = os.write(self.protocol_fd, data)
            data = data[written:]

    def _end(self) -> NoReturn:
        """End this worker at once (its zygote is lost or stopped), collecting the zygote
        first so that no zombie of it outlives the worker; the runner starts a fresh one."""
        with contextlib.suppress(OSError):
            os.kill(self.zygote, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.zygote, 0)
        os._exit(3)

    def _hear(self, block: bool) -> None:
        """Read the zygote's messages: a forked child's pid, or how a child ended. A zygote
        that is gone ends this worker: the runner then starts a fresh one."""
        self.sock.setblocking(block)
        try:
            data = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._end()
        self._inbox += data
        *lines, self._inbox = self._inbox.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "ended" in message:
                if int(message["ended"]) in self._live:
                    self._ended[int(message["ended"])] = int(message["status"])
            elif "imported" in message:
                self._imported = True
            else:
                self._forked = int(message["pid"])

    def ask_spare(self) -> None:
        """Ask the zygote for the child that will run the next job (unless there is one or
        it was asked for), on fresh pipes that hold the session's sandbox policy already
        where it is known. Its pid arrives later (:meth:`_hear`): a case is supervised
        meanwhile."""
        if self._spare is not None or self._asked is not None:
            return
        job_r, job_w = os.pipe()
        done_r, done_w = os.pipe()
        out_r, out_w = os.pipe()
        gate_r, gate_w = os.pipe()
        theirs = [job_r, done_w, out_w, gate_w]
        result = channel.make()
        if result is not None:
            theirs.append(os.dup(result))
        asked = _Spare(0, job_w, done_r, out_r, gate_r, -1 if result is None else result)
        if self._sandbox is not None:
            self._tell(asked, _policy_line(self._sandbox))
        try:
            _send(self.sock, {"fork": True}, theirs)
        except OSError:
            self._end()
        finally:
            for fd in theirs:
                os.close(fd)
        os.set_blocking(out_r, False)
        self._asked = asked

    @staticmethod
    def _tell(child: _Spare, line: bytes) -> None:
        """Write *line* (see :func:`_policy_line`) first into *child*'s job pipe."""
        child.told = line
        with contextlib.suppress(OSError):  # it is gone already; its status tells the rest
            os.write(child.job_w, line)

    def announce(self, shared: Any) -> None:
        """The sandbox every coming job shares, from the runner before its first job: the
        waiting child, if it was not told yet, builds its walls from it now."""
        if not isinstance(shared, dict):
            return
        self._sandbox = shared
        for child in (self._spare, self._asked):
            if child is not None and child.told is None:
                self._tell(child, _policy_line(shared))

    def preload(self, names: Any) -> None:
        """The runner's modules *names* that coming jobs need: the zygote imports those it
        has not, and the child forked before that (which lacks them) is replaced. A zygote
        that does not answer ends this worker, as in :meth:`spare`."""
        if not isinstance(names, list):
            return
        new = [
            n
            for n in dict.fromkeys(names)
            if isinstance(n, str) and n not in self.modules and _module_name(n)
        ]
        if not new:
            return
        self.modules.update(new)
        # No fork may be asked for meanwhile: the child in the making is waited for first.
        stale = self.spare()
        self._spare = None
        self._discard(stale)
        self._imported = False
        try:
            _send(self.sock, {"import": new})
        except OSError:
            self._end()
        deadline = time.monotonic() + IMPORT_GRACE
        while not self._imported:
            remaining = deadline - time.monotonic()
            if not select.select([self.sock.fileno()], [], [], max(remaining, 0))[0]:
                self._end()
            self._hear(block=False)
        self.ask_spare()

    def _settle(self) -> None:
        """The asked-for child, once the zygote said its pid."""
        if self._forked is None or self._asked is None:
            return
        pid, self._forked = self._forked, None
        self._live.add(pid)
        self._asked.pid = pid
        self._spare, self._asked = self._asked, None

    def _discard(self, child: _Spare) -> None:
        """Kill a waiting child that built walls for another sandbox than its job's."""
        _kill_group(child.pid)
        self._cgroups.add(walls.memory_cgroup(child.pid, self.zygote))
        self._live.discard(child.pid)
        self._ended.pop(child.pid, None)
        for fd in (child.job_w, child.done_r, child.out_r, child.gate_r, child.result):
            with contextlib.suppress(OSError):
                os.close(fd)

    def spare(self) -> _Spare:
        """The child that will run the next job, asked for now if need be. A zygote that
        does not answer (stopped by learner code) ends this worker: the runner starts a
        fresh one and the case runs there."""
        self.ask_spare()
        deadline = time.monotonic() + ZYGOTE_GRACE
        while self._spare is None:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.sock.fileno()], [], [], max(remaining, 0))
            if not ready:
                self._end()
            self._hear(block=False)
            self._settle()
        return self._spare

    def check_zygote(self) -> None:
        """End this worker if its zygote is stopped or gone (learner code can signal it where
        no sandbox forbids that); the runner starts a fresh worker for the next case."""
        try:
            pid, _ = os.waitpid(self.zygote, os.WNOHANG | os.WUNTRACED)
        except ChildProcessError:
            self._end()
        if pid == self.zygote:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.zygote, signal.SIGKILL)
            self._end()

    def stop(self) -> None:
        """Kill the waiting child, end the zygote, and collect the siblings."""
        for child in (self._spare, self._asked):
            if child is not None and child.pid:
                _kill_group(child.pid)
                self._cgroups.add(walls.memory_cgroup(child.pid, self.zygote))
            if child is not None and child.result >= 0:
                os.close(child.result)
        self._spare = None
        self.sock.close()
        # It ends on the socket's end, unless learner code stopped it.
        deadline = time.monotonic() + RUNNING_GRACE
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(self.zygote, os.WNOHANG)[0] != self.zygote:
                if time.monotonic() > deadline:
                    os.kill(self.zygote, signal.SIGKILL)
                    os.waitpid(self.zygote, 0)
                    break
                time.sleep(0.005)
        # The memory cgroups of its cases, where they had them: nothing of the run is left
        # in the system.
        # Those of children it forked whose pid this worker never heard included.
        # A killed case's last processes can take seconds to leave on a loaded machine.
        left = self._cgroups | set(walls.memory_cgroups(self.zygote))
        deadline = time.monotonic() + walls.CGROUP_GRACE
        while left:
            wait = max(0.0, deadline - time.monotonic())
            left = {name for name in left if not walls.remove_memory_cgroup(name, wait=wait)}
            if time.monotonic() >= deadline:
                break
        self._cgroups.clear()
        # The siblings end when their runners close them, which happens now too; waiting for
        # them keeps their time counted in this process tree's, as a separate worker's would be.
        for pid in self.siblings:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)

    def reap(self) -> None:
        """Collect siblings that ended, so none is left a zombie."""
        for pid in list(self.siblings):
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] != pid:
                    continue
            self.siblings.discard(pid)

    def run(self, job: dict[str, Any], raw: bytes | None = None) -> dict[str, Any]:
        """Hand *job* (its frame *raw*, as the runner sent it) to a fresh child, supervise
        it, and say how it ended."""
        cap = int(job.get("output_cap", 65536))
        timeout = float(job.get("timeout", 10.0))
        sandbox = job.get("sandbox")
        shared = shared_part(sandbox) if isinstance(sandbox, dict) else None
        line = _policy_line(shared)
        child = self.spare()
        self._spare = None
        if child.told is not None and child.told != line:
            # Its walls are another sandbox's (the announced one was not this job's): a fresh
            # child, told this job's, runs the case.
            self._discard(child)
            self._sandbox = shared
            child = self.spare()
            self._spare = None
        if child.told is None:
            self._tell(child, line)
        pid, out_r = child.pid, child.out_r
        # The runner kills this group itself should the worker die (learner code can kill or
        # stop it), so it learns the group before the child has its job and can act.
        self.send({"id": job.get("id"), "pgid": pid})
        # The case's memory cgroup holds this job's memory, written before the child reads
        # the job (it joins the cgroup before that: see walls.join_memory).
        memory = walls.case_memory(job.get("memory_mb"), sandbox)
        group = walls.memory_cgroup(pid, self.zygote)
        if memory is not None:
            try:
                walls.limit_memory_cgroup(group, memory)
            except walls.WallError as error:
                self._discard(child)
                return {"status": "worker_error", "message": str(error)}
        if child.result >= 0:
            try:
                channel.seal(child.result, int(job.get("answer_bytes") or 32 << 20))
            except OSError as error:
                self._discard(child)
                return {"status": "worker_error", "message": f"the result channel: {error}"}
        started = time.monotonic()
        try:
            _write_all(child.job_w, raw if raw is not None else json.dumps(job).encode("utf-8"))
        except OSError:
            pass  # the child is gone already; its status tells the rest
        os.close(child.job_w)
        # The next case's child is forked now, while this one runs on another core, and
        # prepares this job's sandbox: only what every case shares, so a learner's folder or
        # file never reaches the next case's child.
        self._sandbox = shared
        self.ask_spare()
        output = bytearray()
        cut = 0
        gate = b""
        timed_out = done = False
        reading = gating = True
        deadline = started + timeout
        while not done and pid not in self._ended:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            watched = [self.sock.fileno(), child.done_r]
            watched += ([out_r] if reading else []) + ([child.gate_r] if gating else [])
            ready, _, _ = select.select(watched, [], [], remaining)
            if self.sock.fileno() in ready:
                self._hear(block=False)
                self._settle()
            if child.gate_r in ready:
                chunk = os.read(child.gate_r, 4096)
                gate += chunk
                gating = bool(chunk) and len(gate) < 4096
            if out_r in ready:
                reading, cut = self._read(out_r, output, cap, cut)
            if child.done_r in ready:
                done = os.read(child.done_r, 1) == b"1"
        elapsed = time.monotonic() - started
        # How long its processes waited for a CPU, read while they live: the runner tries a
        # case that others starved once more before it calls it a timeout.
        cpu = walls.case_cpu(pid) if timed_out else None
        # Kill the whole group, so whatever the learner forked goes too.
        _kill_group(pid)
        if gating:
            os.set_blocking(child.gate_r, False)
            with contextlib.suppress(BlockingIOError):
                gate += os.read(child.gate_r, 4096)
        status: int | None = self._ended.pop(pid, None)
        if not done and not timed_out:
            # It ended: the zygote is saying how (unless learner code stopped it).
            until = time.monotonic() + RUNNING_GRACE
            while status is None and time.monotonic() < until:
                if select.select([self.sock.fileno()], [], [], until - time.monotonic())[0]:
                    self._hear(block=False)
                    self._settle()
                status = self._ended.pop(pid, None)
        # Read what is left: at once when the child closed its ends, else until the group's
        # death closes them.
        while reading:
            ready, _, _ = select.select([out_r], [], [], 0 if done else 0.5)
            if not ready:
                break
            reading, cut = self._read(out_r, output, cap, cut)
        for fd in (out_r, child.done_r, child.gate_r):
            os.close(fd)
        if child.result >= 0:
            # The whole group is dead: nothing writes the channel any more.
            if "result" in job:
                channel.deliver(child.result, str(job["result"]))
            else:
                os.close(child.result)
        report: dict[str, Any] = {
            "output": output.decode("utf-8", errors="replace"),
            "output_cut": cut,
            "elapsed": elapsed,
            "gate": gate[:1].decode("ascii", errors="replace"),
        }
        if gate.startswith(b"!"):
            report["gate_message"] = gate[1:].decode("utf-8", errors="replace")
        if timed_out:
            report["status"] = "timeout"
            if cpu is not None:
                report["cpu"] = list(cpu)
        elif done:
            report["status"] = "exited"
            report["exit_code"] = 0
        elif status is not None and os.WIFSIGNALED(status):
            report["status"] = "died"
            report["signal"] = _signal_name(os.WTERMSIG(status))
        else:
            report["status"] = "exited"
            report["exit_code"] = os.WEXITSTATUS(status) if status is not None else None
        if memory is not None and walls.oom_kills(group) > 0:
            report["memory"] = True
        # Removed once its processes are gone, which the kill above makes a matter of
        # moments: tried now, else after the next case.
        self._cgroups.add(group)
        self._cgroups = {name for name in self._cgroups if not walls.remove_memory_cgroup(name)}
        self._live.discard(pid)
        self._ended.pop(pid, None)
        return report

    @staticmethod
    def _read(fd: int, output: bytearray, cap: int, cut: int) -> tuple[bool, int]:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True, cut
        if not chunk:
            return False, cut
        room = max(cap - len(output), 0)
        output += chunk[:room]
        return True, cut + max(len(chunk) - room, 0)


def _fork_siblings(protocol_fd: int, siblings: list[tuple[int, int]]) -> tuple[int, list[int]]:
    """Fork one fork server per *siblings* entry (its job and report descriptors).

    Returns, in this process, its protocol descriptor and the siblings' pids; in a sibling, the
    sibling's report descriptor and no pids (its jobs are on its stdin now)."""
    pids: list[int] = []
    for job_fd, report_fd in siblings:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the sibling; tested through the pool runner
            os.dup2(job_fd, 0)
            os.close(protocol_fd)
            for fds in siblings:
                for fd in fds:
                    if fd != report_fd:
                        os.close(fd)
            return report_fd, []
        pids.append(pid)
    for fds in siblings:
        for fd in fds:
            os.close(fd)
    return protocol_fd, pids


def main() -> None:  # pragma: no cover - runs as the worker process; tested through the runner
    """Entry point: ``python -m pytest_lessons.isolation.worker [--sibling=J,R ...]
    [module ...]``."""
    protocol_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    # Ctrl-C is pytest's to handle; it ends the worker by closing its stdin.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started = time.monotonic()
    siblings = [
        (int(fds.split(",")[0]), int(fds.split(",")[1]))
        for fds in (arg.partition("=")[2] for arg in sys.argv[1:] if arg.startswith("--sibling="))
    ]
    # No collections while torch fills the heap (each would walk every object made so far);
    # its objects are frozen below, so they need none afterwards either.
    gc.disable()
    modules = tuple(name for name in sys.argv[1:] if not name.startswith("--"))
    for name in modules:
        try:
            __import__(name)
        except Exception:  # a preload that fails is imported (and fails) in the child instead
            pass
    prepare()
    # Objects from before the fork stay out of every child's garbage collections, which would
    # otherwise write to (and so copy) the pages of every object torch made.
    gc.freeze()
    gc.enable()  # for what the cases make
    _huge_pages()
    protocol_fd, born = _fork_siblings(protocol_fd, siblings)
    # From here on this process reads jobs; its zygote is forked first, so that no child is
    # ever forked from memory that has held one.
    worker = Worker(protocol_fd, tuple(born), modules)
    worker.spare()
    worker.send({"ready": True, "seconds": time.monotonic() - started, "pid": os.getpid()})
    for line in sys.stdin.buffer:
        job: Any = None
        try:
            job = json.loads(line)
            if isinstance(job, dict) and "ahead" in job:
                worker.announce(job["ahead"])
                continue
            if isinstance(job, dict) and "preload" in job:
                worker.preload(job["preload"])
                continue
            # The frame's blobs (a case's large inputs), passed on to the child as they are.
            blobs = sys.stdin.buffer.read(frame_length(job))
            report = worker.run(job, line + blobs)
        except Exception as exc:
            report = {"status": "worker_error", "message": f"{type(exc).__name__}: {exc}"}
        report["id"] = job.get("id") if isinstance(job, dict) else None
        worker.send(report)
        worker.reap()
        worker.check_zygote()
    worker.stop()
    # Nothing is left to save, and tearing torch down would keep pytest waiting at its end.
    os._exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
