"""The result channel: a sealed memory file (Linux's memfd) that a case's child writes its
result into, instead of a file on the host's disk.

A result file beneath the case's tmpfs was a file on the host's disk that the child held
open, so learner code could write it as far as ``RLIMIT_FSIZE`` (the disk budget) let it,
whatever the runner would read of it. The memory file is made by the worker (fork) or the
runner (spawn), which then sets its size to what the runner reads (the answer size and its
envelope) and seals it (no growing, no shrinking, no unsealing) before the job is sent:
learner code runs only once the child has read its job, so it can write no more than that,
and the bytes are the case's memory (charged to its memory cgroup where it has one), never
the host's disk. Once the case ended, the worker or runner copies what the file holds, up to
the child's end mark, to the result file the runner reads. Where the system has no memfd
(macOS, Windows), the child writes the result file at its path, as before.

This module imports neither pytest nor torch.
"""

from __future__ import annotations

import contextlib
import os

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: Room for a result's envelope (its traceback, message, names) beside the answer.
ENVELOPE = 256 << 10
#: What ends a result in the memory file: JSON as the child writes it is ASCII, so holds none.
END = b"\0"


def available() -> bool:
    """Whether results travel in a sealed memory file here."""
    return hasattr(os, "memfd_create") and fcntl is not None and hasattr(fcntl, "F_ADD_SEALS")


def make() -> int | None:
    """A new, empty memory file for one case's result (None where there is none): the
    worker's or runner's descriptor, inheritable so a child can be handed it."""
    if not available():
        return None
    try:
        fd = os.memfd_create("lessons-result", os.MFD_ALLOW_SEALING)
    except OSError:
        return None
    return fd


def seal(fd: int, answer_bytes: int) -> None:
    """Let the memory file *fd* hold a result of up to *answer_bytes* (its envelope and end
    mark beside), for good: done before the job is sent, so before learner code runs."""
    os.ftruncate(fd, answer_bytes + ENVELOPE + len(END))
    seals = fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)


def deliver(fd: int, path: str) -> None:
    """Copy the result in memory file *fd* (up to its end mark, never more than its sealed
    size) to the runner's result file *path*, then close *fd*. Nothing before an end mark
    means no result (the file is left empty: the runner reads an empty file as none)."""
    try:
        size = os.fstat(fd).st_size
        chunks, done, ended = [], 0, False
        while done < size and not ended:
            chunk = os.pread(fd, min(1 << 20, size - done), done)
            if not chunk:
                break
            at = chunk.find(END)
            if at >= 0:
                chunk, ended = chunk[:at], True
            chunks.append(chunk)
            done += len(chunk)
        data = b"".join(chunks) if ended else b""
    finally:
        os.close(fd)
    # What was at *path* goes first, whatever it is (without namespaces it is in the
    # learner's folder: a link, or a FIFO that an open would wait on for ever), and a new
    # file takes its place; removed and made, not truncated or renamed over, which on ext4
    # waits for the disk.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError):  # a folder stays, and the open below fails
        os.unlink(path)
    with contextlib.suppress(OSError):  # made again meanwhile: no result, the case's own
        out = os.open(path, flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
        finally:
            os.close(out)


def write(fd: int, data: bytes) -> None:
    """Write *data* and its end mark into the memory file *fd* from its start (in the child,
    after learner code: what learner code wrote there is overwritten up to the mark, and
    what it wrote beyond is never read)."""
    view, done = memoryview(data + END), 0
    while done < len(view):
        done += os.pwrite(fd, view[done:], done)
