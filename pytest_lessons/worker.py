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
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from typing import Any

from pytest_lessons.child import run_case, write_result
from pytest_lessons.outcome import DIED


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # not Linux: macOS does not enforce RLIMIT_AS anyway


def _limit_memory(memory_mb: float | None) -> None:
    """Allow learner code *memory_mb* MiB of address space on top of what torch already holds.

    A cap on the whole address space would break torch, which reserves far more than it uses;
    a cap on growth stops a runaway allocation with a MemoryError instead.
    """
    if not memory_mb:
        return
    import resource

    current = _address_space()
    if current is None:
        return
    limit = current + int(memory_mb * 1024 * 1024)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _child(job: dict[str, Any], output_fd: int, keep_closed: list[int]) -> None:
    """Runs in the forked child: never returns."""
    result: dict[str, Any]
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
        sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115
        _limit_memory(job.get("memory_mb"))
        result = run_case(job)
    except BaseException as exc:  # learner code broke this process's own machinery
        result = {"kind": DIED, "message": f"{type(exc).__name__}: {exc}"}
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        write_result(result, job["result"])
    finally:
        os._exit(0)


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

    def __init__(self, protocol_fd: int) -> None:
        self.protocol_fd = protocol_fd
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        # SIGCHLD wakes select() the moment a child ends, so a finished case costs no polling.
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w)

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode("utf-8")
        while data:
            written = os.write(self.protocol_fd, data)
            data = data[written:]

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """Fork a child for *job*, supervise it, and say how it ended."""
        cap = int(job.get("output_cap", 65536))
        timeout = float(job.get("timeout", 10.0))
        out_r, out_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; measured through its report
            os.close(out_r)
            _child(job, out_w, [self.protocol_fd, self.wake_r, self.wake_w])
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or already ended
        os.close(out_w)
        os.set_blocking(out_r, False)
        output = bytearray()
        cut = 0
        timed_out = False
        status: int | None = None
        reading = True
        deadline = started + timeout
        while True:
            ended, status = _poll(pid)
            if ended:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            watched = [self.wake_r, out_r] if reading else [self.wake_r]
            ready, _, _ = select.select(watched, [], [], remaining)
            if self.wake_r in ready:
                self._drain_wake()
            if out_r in ready:
                reading, cut = self._read(out_r, output, cap, cut)
        # Kill the whole group before reaping, so whatever the learner forked goes too.
        _kill_group(pid)
        if status is None:
            _, status = os.waitpid(pid, 0)
        elapsed = time.monotonic() - started
        while reading:
            ready, _, _ = select.select([out_r], [], [], 0.5)
            if not ready:
                break
            reading, cut = self._read(out_r, output, cap, cut)
        os.close(out_r)
        report: dict[str, Any] = {
            "output": output.decode("utf-8", errors="replace"),
            "output_cut": cut,
            "elapsed": elapsed,
        }
        if timed_out:
            report["status"] = "timeout"
        elif os.WIFSIGNALED(status):
            report["status"] = "died"
            report["signal"] = _signal_name(os.WTERMSIG(status))
        else:
            report["status"] = "exited"
            report["exit_code"] = os.WEXITSTATUS(status)
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


def main() -> None:  # pragma: no cover - runs as the worker process; tested through the runner
    """Entry point: ``python -m pytest_lessons.worker [module to preload ...]``."""
    protocol_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    # Ctrl-C is pytest's to handle; it ends the worker by closing its stdin.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started = time.monotonic()
    versions: dict[str, str | None] = {}
    for name in sys.argv[1:]:
        try:
            module = __import__(name)
            versions[name] = str(getattr(module, "__version__", ""))
        except Exception:
            versions[name] = None
    worker = Worker(protocol_fd)
    worker.send({"ready": True, "versions": versions, "seconds": time.monotonic() - started})
    for line in sys.stdin.buffer:
        try:
            job = json.loads(line)
            report = worker.run(job)
        except Exception as exc:
            report = {"status": "worker_error", "message": f"{type(exc).__name__}: {exc}"}
        report["id"] = job.get("id") if isinstance(job, dict) else None
        worker.send(report)


if __name__ == "__main__":  # pragma: no cover
    main()
