"""The fork server: a process that imports torch once, then forks one fresh child per case.

Started by :class:`pytest_lessons.runner.ForkRunner` while pytest collects, so the cost of
``import torch`` overlaps collection. The worker itself never runs learner code: each case runs
in a child forked from it, in a process group of its own, which the worker kills whole when the
case ends or its time is up. This works against loops that swallow ``BaseException``, hangs in
native code and processes the learner forks.

Protocol (one JSON document per line): the runner writes *jobs* to the worker's stdin; the worker
first writes ``{"ready": ...}``, then one *report* per job to the file descriptor that was its
stdout (its own fd 1 then points at /dev/null, so stray prints cannot corrupt the protocol). A
job holds the child request (see :func:`pytest_lessons.child.run_case`) plus ``timeout``,
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
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import select
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

from pytest_lessons.child import limit_memory, prepare, run_case, write_result
from pytest_lessons.outcome import DIED
from pytest_lessons.sandbox import prepare_rules

#: Linux's 2 MiB page size, and madvise(2)'s advice numbers for it (Linux >= 6.1 collapses).
_HUGE, _MADV_HUGEPAGE, _MADV_COLLAPSE = 2 << 20, 14, 25


def _huge_pages() -> None:
    """Back the worker's anonymous memory (the heap torch filled) with 2 MiB pages, where
    Linux allows it.

    Each case's fork copies the worker's page tables and each child's exit frees them; with
    huge pages there are ~500 times fewer entries. ``python benchmarks/isolation.py --only 5``
    measures the gain (fork and exit of a process that imported torch, with and without);
    README.md, Development, quotes its last result. A copy-on-write fault in a child still
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


def _child(
    job_fd: int,
    done_fd: int,
    output_fd: int,
    keep_closed: list[int],
    sandbox: dict[str, Any] | None = None,
) -> None:
    """Runs in the forked child: wait for a job, run it, never return.

    The child is forked before its job exists (see :meth:`Worker.spare`), so the cost of fork
    is paid while pytest is busy elsewhere; so is building the fixed part of the sandbox, from
    the previous job's *sandbox*. It writes one byte to *done_fd* once its result file is
    complete, so the worker need not wait for the process to tear down.
    """
    result: dict[str, Any]
    job: dict[str, Any] = {}
    try:
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in keep_closed:
            os.close(fd)
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
        prepare_rules(sandbox)
        job = json.loads(_read_all(job_fd))
        os.close(job_fd)
        limit_memory(job.get("memory_mb"))
        result = run_case(job)
    except BaseException as exc:  # learner code broke this process's own machinery
        result = {"kind": DIED, "message": f"{type(exc).__name__}: {exc}"}
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        if "result" in job:
            write_result(result, job["result"])
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


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _poll(pid: int) -> tuple[bool, int | None]:
    """Has *pid* ended? Where the platform allows, leave it unreaped (status None) so its
    process group id cannot be reused before the group is killed."""
    if hasattr(os, "waitid"):
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None, None
    done, status = os.waitpid(pid, os.WNOHANG)  # pragma: no cover - macOS
    return done == pid, (status if done == pid else None)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class Worker:
    """The fork server's state: its protocol descriptors and the SIGCHLD wake-up pipe."""

    def __init__(self, protocol_fd: int, siblings: tuple[int, ...] = ()) -> None:
        self.protocol_fd = protocol_fd
        self.siblings = set(siblings)
        """The fork servers this one forked: children of its own that are no case's orphans."""
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        # SIGCHLD wakes select() the moment a child ends, so a finished case costs no polling.
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w)
        self._spare: _Spare | None = None
        self._sandbox: dict[str, Any] | None = None
        """The last job's sandbox: the next child builds its fixed part while it waits."""
        self._reap: list[int] = []
        self._adopting = _adopt_orphans()

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode("utf-8")
        while data:
            written = os.write(self.protocol_fd, data)
            data = data[written:]

    def spare(self, close: tuple[int, ...] = ()) -> _Spare:
        """Fork the child that will run the next job, unless it exists already; the new child
        closes *close* (the worker's ends of a running child's pipes) first."""
        if self._spare is not None:
            return self._spare
        job_r, job_w = os.pipe()
        done_r, done_w = os.pipe()
        out_r, out_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; measured through its report
            for fd in (job_w, done_r, out_r, *close):
                os.close(fd)
            _child(
                job_r, done_w, out_w, [self.protocol_fd, self.wake_r, self.wake_w], self._sandbox
            )
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first
        for fd in (job_r, done_w, out_w):
            os.close(fd)
        os.set_blocking(out_r, False)
        self._spare = _Spare(pid, job_w, done_r, out_r)
        return self._spare

    def reap(self, wait: bool = False) -> None:
        """Collect children that have ended (their teardown runs on another core meanwhile),
        then kill what they left behind outside their process group."""
        for pid in list(self._reap):
            try:
                done, _ = os.waitpid(pid, 0 if wait else os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done == pid:
                self._reap.remove(pid)
        for pid in list(self.siblings):  # a sibling that ended is collected, never left a zombie
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] != pid:
                    continue
            self.siblings.discard(pid)
        if self._adopting:
            self._kill_orphans()

    def _kill_orphans(self) -> None:
        """Kill the adopted orphans of finished cases: any child that is neither the waiting
        child nor a case still being collected. Their own children are adopted in turn."""
        for _ in range(100):
            spare = self._spare.pid if self._spare is not None else None
            orphans = _children() - {spare} - set(self._reap) - self.siblings
            if not orphans:
                return
            for pid in orphans:
                _kill_group(pid)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for pid in orphans:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)

    def stop(self) -> None:
        """Kill the waiting child, if any, and collect every child."""
        if self._spare is not None:
            _kill_group(self._spare.pid)
            self._reap.append(self._spare.pid)
            self._spare = None
        self.reap(wait=True)
        # The siblings end when their runners close them, which happens now too; waiting for
        # them keeps their time counted in this process tree's, as a separate worker's would be.
        for pid in self.siblings:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """Hand *job* to a fresh child, supervise it, and say how it ended."""
        cap = int(job.get("output_cap", 65536))
        timeout = float(job.get("timeout", 10.0))
        child = self.spare()
        self._spare = None
        self._sandbox = job.get("sandbox")
        pid, out_r = child.pid, child.out_r
        # The runner kills this group itself should the worker die (learner code can kill or
        # stop it), so it learns the group before the child has its job and can act.
        self.send({"id": job.get("id"), "pgid": pid})
        started = time.monotonic()
        try:
            os.write(child.job_w, json.dumps(job).encode("utf-8"))
        except OSError:
            pass  # the child is gone already; its status tells the rest
        os.close(child.job_w)
        # Fork the next case's child now, while this one runs on another core.
        self.spare(close=(child.done_r, child.out_r))
        output = bytearray()
        cut = 0
        timed_out = done = False
        status: int | None = None
        reading = True
        deadline = started + timeout
        while not done:
            ended, status = _poll(pid)
            if ended:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            watched = [self.wake_r, child.done_r] + ([out_r] if reading else [])
            ready, _, _ = select.select(watched, [], [], remaining)
            if self.wake_r in ready:
                self._drain_wake()
            if out_r in ready:
                reading, cut = self._read(out_r, output, cap, cut)
            if child.done_r in ready:
                done = os.read(child.done_r, 1) == b"1"
        # Kill the whole group before reaping, so whatever the learner forked goes too.
        _kill_group(pid)
        elapsed = time.monotonic() - started
        if done:
            self._reap.append(pid)  # reaped later, after the report is on its way
        elif status is None:
            _, status = os.waitpid(pid, 0)
        # Read what is left: at once when the child closed its ends, else until the group's
        # death closes them.
        while reading:
            ready, _, _ = select.select([out_r], [], [], 0 if done else 0.5)
            if not ready:
                break
            reading, cut = self._read(out_r, output, cap, cut)
        os.close(out_r)
        os.close(child.done_r)
        report: dict[str, Any] = {
            "output": output.decode("utf-8", errors="replace"),
            "output_cut": cut,
            "elapsed": elapsed,
        }
        if timed_out:
            report["status"] = "timeout"
        elif done:
            report["status"] = "exited"
            report["exit_code"] = 0
        elif status is not None and os.WIFSIGNALED(status):
            report["status"] = "died"
            report["signal"] = _signal_name(os.WTERMSIG(status))
        else:
            report["status"] = "exited"
            report["exit_code"] = os.WEXITSTATUS(status) if status is not None else None
        return report

    def _drain_wake(self) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass

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
    """Entry point: ``python -m pytest_lessons.worker [--sibling=J,R ...] [module ...]``."""
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
    for name in sys.argv[1:]:
        if name.startswith("--"):
            continue
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
    worker = Worker(protocol_fd, tuple(born))
    worker.spare()
    worker.send({"ready": True, "seconds": time.monotonic() - started, "pid": os.getpid()})
    for line in sys.stdin.buffer:
        job: Any = None
        try:
            job = json.loads(line)
            report = worker.run(job)
        except Exception as exc:
            report = {"status": "worker_error", "message": f"{type(exc).__name__}: {exc}"}
        report["id"] = job.get("id") if isinstance(job, dict) else None
        worker.send(report)
        worker.reap()
    worker.stop()
    # Nothing is left to save, and tearing torch down would keep pytest waiting at its end.
    os._exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
