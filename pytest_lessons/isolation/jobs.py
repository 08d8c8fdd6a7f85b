"""Job Objects: the walls Windows keeps around one case's processes.

Windows has no fork, so every case runs in a Python the spawn runner started for it
(:class:`~pytest_lessons.isolation.runner.SpawnRunner`). That Python is created suspended,
put in a Job Object of its own (:func:`contain`) and only then resumed: every process it
starts, and every process those start, is in the job from its first instruction. Suspended,
because a venv's ``python.exe`` is a launcher that starts the real interpreter at once; a
job given afterwards could miss it. Learner code arrives later still, on stdin. The job:

* ends every process in it when the case ends (:meth:`CaseJob.kill`), and when its last
  handle closes (``KILL_ON_JOB_CLOSE``), so also when pytest itself is killed;
* holds what the case's processes together commit to ``--lesson-memory`` on top of what the
  waiting Python had committed when its case was handed over, and :data:`MEMORY_SLACK` for
  the grader's own work after the call (:meth:`CaseJob.limit_memory`; set then, as Linux sets
  its memory cgroup). An allocation beyond it fails (a ``MemoryError``, or torch's "not
  enough memory"); the job's completion port reports it even when the process that failed
  was one learner code started (:meth:`CaseJob.over_memory`), so the case fails as Linux's
  memory cgroup fails it;
* keeps Windows' crash dialog from its processes (``DIE_ON_UNHANDLED_EXCEPTION``): a crash
  ends the process at once, where the dialog would have held the case until its timeout.

One cap for the job, not one per process (``JOB_OBJECT_LIMIT_PROCESS_MEMORY``): each
process's commit is part of the job's, and a per-process cap would give each process
learner code starts the torch-loaded Python's whole allowance. No active-process limit
(``JOB_OBJECT_LIMIT_ACTIVE_PROCESS``): it counts processes, not the processes and threads
``--lesson-processes`` counts on Linux, and Windows runs learner code without a sandbox, on
the learner's own machine, so the job is for mistakes, not attacks (learner code can do what
the learner can, this job included): a loop that starts processes is held by the memory cap
(each Python commits megabytes) and ended with its case.

ctypes, not pywin32: five kernel32 calls and three structures, which ctypes declares with
their prototypes (64-bit handles as ``c_void_p``), against an optional dependency of some
30 MB in every learner's install; ``_winapi`` has no call to make a job. Everything here is
for ``sys.platform == "win32"``: elsewhere nothing calls :func:`contain`, and :func:`probe`
says Job Objects are a Windows feature. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import ctypes
import functools
import subprocess
import sys
from typing import Any

from pytest_lessons.isolation.walls import MEMORY_SLACK, WallError

__all__ = ["CREATE_SUSPENDED", "MEMORY_SLACK", "CaseJob", "JobError", "contain", "probe"]

#: The creation flag that starts a process suspended (winbase.h): what :func:`contain` resumes.
CREATE_SUSPENDED = 0x00000004
#: The most completion messages :meth:`CaseJob.over_memory` reads at once (a process each
#: start and end; a runaway loop of starts leaves thousands).
_MESSAGES = 100_000
#: The most processes :meth:`CaseJob.committed` counts: a waiting Python is one or two.
_LISTED = 256
#: Why there is no job on another system.
_ELSEWHERE = "Job Objects are a Windows feature"


class JobError(WallError):
    """A Job Object could not be made, given its process or its limit; the message says
    which step and Windows' own words for why."""


if sys.platform == "win32":
    from ctypes import wintypes

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

    # winnt.h's limit flags, information classes and completion messages.
    _KILL_ON_JOB_CLOSE = 0x00002000
    _DIE_ON_UNHANDLED_EXCEPTION = 0x00000400
    _JOB_MEMORY = 0x00000200
    _BASIC_PROCESS_ID_LIST = 3
    _ASSOCIATE_COMPLETION_PORT = 7
    _EXTENDED_LIMIT_INFORMATION = 9
    _MSG_PROCESS_MEMORY_LIMIT = 9
    _MSG_JOB_MEMORY_LIMIT = 10
    # Access rights and tool-help flags.
    _PROCESS_TERMINATE = 0x0001
    _PROCESS_SET_QUOTA = 0x0100
    _PROCESS_VM_READ = 0x0010
    _PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
    _THREAD_SUSPEND_RESUME = 0x0002
    _TH32CS_SNAPTHREAD = 0x00000004
    _INVALID_HANDLE = ctypes.c_void_p(-1).value
    _LARGEST = ctypes.c_size_t(-1).value

    class _BasicLimits(ctypes.Structure):
        # JOBOBJECT_BASIC_LIMIT_INFORMATION; LARGE_INTEGER as int64, ULONG_PTR as size_t.
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class _IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_uint64)
            for name in (
                "ReadOperationCount",
                "WriteOperationCount",
                "OtherOperationCount",
                "ReadTransferCount",
                "WriteTransferCount",
                "OtherTransferCount",
            )
        ]

    class _ExtendedLimits(ctypes.Structure):
        # JOBOBJECT_EXTENDED_LIMIT_INFORMATION
        _fields_ = [
            ("BasicLimitInformation", _BasicLimits),
            ("IoInfo", _IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    class _CompletionPort(ctypes.Structure):
        # JOBOBJECT_ASSOCIATE_COMPLETION_PORT
        _fields_ = [("CompletionKey", ctypes.c_void_p), ("CompletionPort", wintypes.HANDLE)]

    class _ProcessIds(ctypes.Structure):
        # JOBOBJECT_BASIC_PROCESS_ID_LIST, with room for _LISTED ids (ULONG_PTR each).
        _fields_ = [
            ("NumberOfAssignedProcesses", wintypes.DWORD),
            ("NumberOfProcessIdsInList", wintypes.DWORD),
            ("ProcessIdList", ctypes.c_size_t * _LISTED),
        ]

    class _MemoryCounters(ctypes.Structure):
        # PROCESS_MEMORY_COUNTERS_EX: PrivateUsage is the process's commit, what the job counts.
        _fields_ = [
            ("cb", wintypes.DWORD),
            ("PageFaultCount", wintypes.DWORD),
            ("PeakWorkingSetSize", ctypes.c_size_t),
            ("WorkingSetSize", ctypes.c_size_t),
            ("QuotaPeakPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPeakNonPagedPoolUsage", ctypes.c_size_t),
            ("QuotaNonPagedPoolUsage", ctypes.c_size_t),
            ("PagefileUsage", ctypes.c_size_t),
            ("PeakPagefileUsage", ctypes.c_size_t),
            ("PrivateUsage", ctypes.c_size_t),
        ]

    class _ThreadEntry(ctypes.Structure):
        # THREADENTRY32
        _fields_ = [
            ("dwSize", wintypes.DWORD),
            ("cntUsage", wintypes.DWORD),
            ("th32ThreadID", wintypes.DWORD),
            ("th32OwnerProcessID", wintypes.DWORD),
            ("tpBasePri", wintypes.LONG),
            ("tpDeltaPri", wintypes.LONG),
            ("dwFlags", wintypes.DWORD),
        ]

    def _declare(name: str, restype: Any, *argtypes: Any) -> Any:
        """kernel32's *name* with its prototype: without one, ctypes passes a handle as a
        32-bit int and reads a returned one as such."""
        function = getattr(_kernel32, name)
        function.restype = restype
        function.argtypes = argtypes
        return function

    _HANDLE, _BOOL, _DWORD = wintypes.HANDLE, wintypes.BOOL, wintypes.DWORD
    _CreateJobObjectW = _declare("CreateJobObjectW", _HANDLE, wintypes.LPVOID, wintypes.LPCWSTR)
    _SetInformationJobObject = _declare(
        "SetInformationJobObject", _BOOL, _HANDLE, ctypes.c_int, wintypes.LPVOID, _DWORD
    )
    _QueryInformationJobObject = _declare(
        "QueryInformationJobObject",
        _BOOL,
        _HANDLE,
        ctypes.c_int,
        wintypes.LPVOID,
        _DWORD,
        wintypes.LPDWORD,
    )
    _AssignProcessToJobObject = _declare("AssignProcessToJobObject", _BOOL, _HANDLE, _HANDLE)
    _TerminateJobObject = _declare("TerminateJobObject", _BOOL, _HANDLE, wintypes.UINT)
    _CreateIoCompletionPort = _declare(
        "CreateIoCompletionPort", _HANDLE, _HANDLE, _HANDLE, ctypes.c_size_t, _DWORD
    )
    _GetQueuedCompletionStatus = _declare(
        "GetQueuedCompletionStatus",
        _BOOL,
        _HANDLE,
        wintypes.LPDWORD,
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.POINTER(ctypes.c_void_p),
        _DWORD,
    )
    _OpenProcess = _declare("OpenProcess", _HANDLE, _DWORD, _BOOL, _DWORD)
    _TerminateProcess = _declare("TerminateProcess", _BOOL, _HANDLE, wintypes.UINT)
    _GetProcessMemoryInfo = _declare(
        "K32GetProcessMemoryInfo", _BOOL, _HANDLE, ctypes.POINTER(_MemoryCounters), _DWORD
    )
    _CreateToolhelp32Snapshot = _declare("CreateToolhelp32Snapshot", _HANDLE, _DWORD, _DWORD)
    _Thread32First = _declare("Thread32First", _BOOL, _HANDLE, ctypes.POINTER(_ThreadEntry))
    _Thread32Next = _declare("Thread32Next", _BOOL, _HANDLE, ctypes.POINTER(_ThreadEntry))
    _OpenThread = _declare("OpenThread", _HANDLE, _DWORD, _BOOL, _DWORD)
    _ResumeThread = _declare("ResumeThread", _DWORD, _HANDLE)
    _CloseHandle = _declare("CloseHandle", _BOOL, _HANDLE)

    def _failed(step: str) -> JobError:
        """The error of Windows call *step*, in Windows' own words and number."""
        code = ctypes.get_last_error()
        return JobError(f"{step} failed: {ctypes.FormatError(code).strip()} (Windows error {code})")

    def _handle(found: int | None, step: str) -> int:
        """*found*, the handle a call returned, or the error of *step* when it returned none."""
        if not found or found == _INVALID_HANDLE:
            raise _failed(step)
        return found

    def _close(handle: int | None) -> None:
        if handle:
            _CloseHandle(handle)

    def _open_process(pid: int, access: int) -> int:
        return _handle(_OpenProcess(access, False, pid), f"OpenProcess({pid})")

    class CaseJob:
        """A Job Object that holds one case's processes, with the completion port that reports
        its memory limit's refusals (Windows only; see the module's text)."""

        def __init__(self) -> None:
            self._port: int | None = None
            self._job: int | None = _handle(_CreateJobObjectW(None, None), "CreateJobObject")
            self._memory = False
            try:
                self._port = _handle(
                    _CreateIoCompletionPort(_INVALID_HANDLE, None, 0, 1), "CreateIoCompletionPort"
                )
                port = _CompletionPort(None, self._port)
                self._set(_ASSOCIATE_COMPLETION_PORT, port, "the job's completion port")
                self._limit(0)
            except BaseException:
                self.close()
                raise

        def _set(self, kind: int, info: ctypes.Structure, step: str) -> None:
            if not _SetInformationJobObject(
                self._job, kind, ctypes.byref(info), ctypes.sizeof(info)
            ):
                raise _failed(f"SetInformationJobObject ({step})")

        def _limit(self, memory: int) -> None:
            """Set the job's limits: its processes end with it, crash without a dialog and,
            with *memory* > 0, commit at most that many bytes together."""
            info = _ExtendedLimits()
            flags = _KILL_ON_JOB_CLOSE | _DIE_ON_UNHANDLED_EXCEPTION
            if memory > 0:
                flags |= _JOB_MEMORY
                # ctypes wraps a size_t silently: a 32-bit Python's cap stays at its largest.
                info.JobMemoryLimit = min(memory, _LARGEST)
            info.BasicLimitInformation.LimitFlags = flags
            self._set(_EXTENDED_LIMIT_INFORMATION, info, "the job's limits")

        def assign(self, pid: int) -> None:
            """Put process *pid* in the job (before it runs: see :func:`contain`)."""
            process = _open_process(pid, _PROCESS_SET_QUOTA | _PROCESS_TERMINATE)
            try:
                if not _AssignProcessToJobObject(self._job, process):
                    raise _failed("AssignProcessToJobObject")
            finally:
                _close(process)

        def committed(self) -> int:
            """The bytes the job's processes have committed now, together."""
            ids = _ProcessIds()
            if not _QueryInformationJobObject(
                self._job, _BASIC_PROCESS_ID_LIST, ctypes.byref(ids), ctypes.sizeof(ids), None
            ):
                raise _failed("QueryInformationJobObject (the job's processes)")
            total = 0
            for pid in ids.ProcessIdList[: ids.NumberOfProcessIdsInList]:
                try:
                    process = _open_process(
                        int(pid), _PROCESS_QUERY_LIMITED_INFORMATION | _PROCESS_VM_READ
                    )
                except JobError:
                    continue  # it ended meanwhile: it holds nothing
                try:
                    counters = _MemoryCounters()
                    counters.cb = ctypes.sizeof(counters)
                    if not _GetProcessMemoryInfo(process, ctypes.byref(counters), counters.cb):
                        raise _failed(f"GetProcessMemoryInfo({int(pid)})")
                    total += int(counters.PrivateUsage)
                finally:
                    _close(process)
            return total

        def limit_memory(self, extra: int) -> None:
            """Let the job's processes together commit *extra* bytes beyond what they hold now
            (called as the case is handed over, with ``--lesson-memory`` and
            :data:`MEMORY_SLACK`)."""
            self._limit(self.committed() + extra)

        def over_memory(self) -> bool:
            """Whether a process of the job was refused memory for the job's limit (its own
            allocation failed): read from the job's completion port, so also for a process learner
            code started. Windows posts these messages as notices it does not promise; a refusal
            in the case's own Python also fails it as the ``MemoryError`` it raised."""
            message, key, overlapped = wintypes.DWORD(), ctypes.c_size_t(), ctypes.c_void_p()
            for _ in range(_MESSAGES):
                if self._port is None or not _GetQueuedCompletionStatus(
                    self._port,
                    ctypes.byref(message),
                    ctypes.byref(key),
                    ctypes.byref(overlapped),
                    0,
                ):
                    break
                if message.value in (_MSG_JOB_MEMORY_LIMIT, _MSG_PROCESS_MEMORY_LIMIT):
                    self._memory = True
            return self._memory

        def kill(self) -> None:
            """End every process in the job (the case's Python and all it started)."""
            if self._job is not None and not _TerminateJobObject(self._job, 1):
                raise _failed("TerminateJobObject")

        def close(self) -> None:
            """Close the job (which ends whatever is still in it) and its port."""
            job, self._job = self._job, None
            port, self._port = self._port, None
            _close(job)
            _close(port)

    def _resume(pid: int) -> None:
        """Resume the threads of process *pid*, started suspended (its one thread)."""
        snapshot = _handle(
            _CreateToolhelp32Snapshot(_TH32CS_SNAPTHREAD, 0), "CreateToolhelp32Snapshot"
        )
        resumed = 0
        try:
            entry = _ThreadEntry()
            entry.dwSize = ctypes.sizeof(entry)
            more = _Thread32First(snapshot, ctypes.byref(entry))
            while more:
                if entry.th32OwnerProcessID == pid:
                    thread = _handle(
                        _OpenThread(_THREAD_SUSPEND_RESUME, False, entry.th32ThreadID), "OpenThread"
                    )
                    try:
                        if _ResumeThread(thread) == 0xFFFFFFFF:
                            raise _failed("ResumeThread")
                        resumed += 1
                    finally:
                        _close(thread)
                more = _Thread32Next(snapshot, ctypes.byref(entry))
        finally:
            _close(snapshot)
        if not resumed:
            raise JobError(f"process {pid} has no thread to resume")

    def contain(pid: int) -> tuple[CaseJob | None, str]:
        """Put process *pid*, started with :data:`CREATE_SUSPENDED`, in a job of its own, then
        resume it: the job, or None and why none could be made (the process then runs without
        one, as the header said it would: :func:`probe`). Raises :class:`JobError` when it
        cannot be resumed; it is ended then."""
        job: CaseJob | None = None
        reason = ""
        try:
            job = CaseJob()
            job.assign(pid)
        except JobError as error:
            if job is not None:
                job.close()  # it holds no process
            job, reason = None, str(error)
        try:
            _resume(pid)
        except JobError:
            if job is not None:
                job.close()
            else:
                process = _OpenProcess(_PROCESS_TERMINATE, False, pid)
                if process:
                    _TerminateProcess(process, 1)
                    _close(process)
            raise
        return job, reason

    @functools.cache
    def probe() -> str:
        """Why a case's processes cannot be held in a Job Object here, for the run's header;
        "" where they can. Found by trying, once a session, on a Python started suspended,
        which the job ends before it has run an instruction."""
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", ""],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                creationflags=CREATE_SUSPENDED,
            )
        except OSError as error:
            return f"no process could be started to try one ({error})"
        job: CaseJob | None = None
        try:
            job = CaseJob()
            job.assign(process.pid)
            job.limit_memory(MEMORY_SLACK)
        except JobError as error:
            return str(error)
        finally:
            if job is not None:
                job.close()
            process.kill()  # where it is in no job: still suspended
            process.wait()
        return ""

else:

    class CaseJob:
        """Made on Windows only (see the module's text): elsewhere :func:`contain` raises."""

        def limit_memory(self, extra: int) -> None:
            raise JobError(_ELSEWHERE)

        def over_memory(self) -> bool:
            raise JobError(_ELSEWHERE)

        def kill(self) -> None:
            raise JobError(_ELSEWHERE)

        def close(self) -> None:
            raise JobError(_ELSEWHERE)

    def contain(pid: int) -> tuple[CaseJob | None, str]:
        """Windows only: see the Windows :func:`contain`."""
        raise JobError(_ELSEWHERE)

    def probe() -> str:
        """Why no case gets a Job Object here."""
        return _ELSEWHERE
