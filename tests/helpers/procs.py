"""Processes a run under test leaves behind (Linux: read from /proc; Windows: asked of the
kernel, :func:`running_on_windows`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any


def descendants(pid: int) -> set[int]:
    """Every living process below *pid* (Linux: read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if state[state.rindex(")") + 2] != "Z":
            living.add(pid)
    return living


def wait_until(check: Any, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return bool(check())


def running_on_windows(pid: int) -> bool:
    """Whether process *pid* still runs (Windows: its handle, waited on for no time; a pid
    Windows no longer knows, or one whose process has ended, is not running). ``os.kill(pid,
    0)`` would end it there: Windows' os.kill terminates the process whatever the signal."""
    assert sys.platform == "win32"
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    kernel32.WaitForSingleObject.restype = wintypes.DWORD
    kernel32.WaitForSingleObject.argtypes = (wintypes.HANDLE, wintypes.DWORD)
    kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    synchronize, query = 0x00100000, 0x1000  # SYNCHRONIZE, PROCESS_QUERY_LIMITED_INFORMATION
    handle = kernel32.OpenProcess(synchronize | query, False, pid)
    if not handle:
        return False
    try:
        return kernel32.WaitForSingleObject(handle, 0) == 0x102  # WAIT_TIMEOUT: still running
    finally:
        kernel32.CloseHandle(handle)
