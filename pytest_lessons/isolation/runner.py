"""The runner boundary: turn a :class:`Job` (the learner's file, entry and inputs) into an
:class:`~pytest_lessons.isolation.outcome.Outcome`.

Three runners, one contract:

* :class:`ForkRunner` (the default on Linux): a worker process imports torch once while pytest
  collects and forks a fresh child per case (see :mod:`pytest_lessons.isolation.worker`).
* :class:`SpawnRunner` (the default on Windows and macOS): a new Python per case. Each
  case pays for ``import torch`` again (a second or two), so a few Pythons are started ahead and
  import it while earlier cases run; a Python gets :data:`SPAWN_GRACE` seconds to be ready, and
  the case's clock starts when it is handed over. On Windows each of them is held in a Job
  Object (:mod:`pytest_lessons.isolation.jobs`): the case's memory cap, and every process it
  started ended with it.
* :class:`InProcessRunner` (``--lesson-isolation=off``): learner code runs in the pytest process
  so ``breakpoint()`` and ``--pdb`` work. Never for grading: the learner's code can then see the
  expected answers and end the session.

Whichever runs, the outcome is rebuilt from JSON, so the judge sees the same plain data.
"""

from __future__ import annotations

import base64
import contextlib
import difflib
import heapq
import io
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

# The job's input encoding, which the core packs (see arguments.py).
from pytest_lessons.isolation import channel, jobs, walls
from pytest_lessons.isolation.arguments import ARG as ARG
from pytest_lessons.isolation.arguments import DTYPES as DTYPES
from pytest_lessons.isolation.arguments import NotMirrored as NotMirrored
from pytest_lessons.isolation.arguments import as_sent, blob_key, frame
from pytest_lessons.isolation.arguments import pack_array as pack_array
from pytest_lessons.isolation.arguments import pack_data as pack_data
from pytest_lessons.isolation.arguments import pack_generator as pack_generator
from pytest_lessons.isolation.arguments import pack_mapping as pack_mapping
from pytest_lessons.isolation.arguments import pack_tensor as pack_tensor
from pytest_lessons.isolation.child import READY, run_case
from pytest_lessons.isolation.files import (
    MAX_SOURCE_BYTES,
    Unreadable,
    names_within,
    read_beneath,
    read_file,
    remove_counting,
    remove_tree,
)
from pytest_lessons.isolation.library import Library
from pytest_lessons.isolation.outcome import (
    DIED,
    INTERNAL,
    RAISED,
    RETURNED,
    SETUP,
    TIMEOUT,
    Outcome,
    clean_text,
    from_untrusted,
    over_disk,
    over_memory,
    too_large,
)
from pytest_lessons.isolation.sandbox import Policy, shared_part

#: Modules the worker imports before the first case, so no case pays for them.
PRELOAD = ("torch",)
#: The largest sandbox line written ahead into a spawned child's input (a pipe holds 64 KiB).
_POLICY_ROOM = 60_000
#: Seconds a spawned child gets to start Python and import torch before its case's clock runs.
SPAWN_GRACE = 30.0
#: The seconds it gets besides when it also imports a lesson's ``preload`` (torch._dynamo
#: takes 5-10 s on a loaded 2-core machine).
PRELOAD_GRACE = 60.0
#: How long the pytest process waits for the worker beyond a case's own limit (the first case
#: also waits for the worker's import of torch).
WORKER_GRACE = 120.0
#: The same once the worker has handed the case to its child: enough for the worker to kill
#: the child and report, short enough that a worker stopped by learner code costs little.
RUNNING_GRACE = 5.0
#: Seconds between the interpreter lock's hand-overs while a pool's threads feed its workers.
SWITCH_INTERVAL = 0.0005
#: Outcomes a pool keeps ready ahead of pytest's asks, per worker: enough that no worker waits
#: while the judge has a slow stretch (3 a worker cost a class run on 2 cores a third of its
#: speed: 5.4 s -> 8.5 s for 200 cases), few enough that a class's answers never pile up.
AHEAD_PER_WORKER = 16
#: The bytes of results a pool keeps ready ahead, per worker: a worker runs no case ahead
#: while its share of the waiting results holds this much. The results wait as the bytes the
#: child wrote (:class:`Ended`), read only when pytest asks, so the pytest process holds at
#: most this plus each worker's case in flight (up to --lesson-answer-size), per worker,
#: whatever the answers hold: measured with ``python benchmarks/answers.py --pool``.
AHEAD_BYTES_PER_WORKER = 64 << 20


def input_as_sent(packed: Any) -> Any:
    """The input *packed* (as a job carries it) in the answer encoding, as a child sends an
    input back that its call left alone: what the grader compares an ``unchanged`` input
    with (:func:`pytest_lessons.core.behaviour.unchanged`). Made without torch;
    :class:`NotMirrored` for an input it cannot make exactly (a bfloat16 tensor)."""
    return as_sent(packed)


@dataclass(frozen=True)
class Job:
    """One case to run: everything the learner's side may know. No expected answer."""

    solution: Path
    entry: str
    inputs: list[Any]
    timeout: float
    memory_mb: float
    output_cap: int
    threads: int
    seed: int = 0
    sandbox: Policy | None = None
    """What the code may touch; None: no sandbox (debugging in-process)."""
    beneath: Path | None = None
    """The learner's folder: *solution* is read beneath it with no link followed (see
    :func:`pytest_lessons.isolation.files.read_beneath`). None for the author's own files (the
    reference, the mistakes), read as they are. A folder above the solution's own (a learner's
    folder of a class, ``--lesson-submissions``) refuses a hard link too."""
    answer_bytes: int = 32 << 20
    """The largest result the runner reads back (the answer and its envelope)."""
    answer_values: int | None = None
    """The most JSON values the runner reads in the result, where the case sets a bound
    tighter than :attr:`answer_bytes`'s (the core makes it from the expected answer's size:
    :func:`pytest_lessons.core.runs.values_bound`); None: only that one."""
    behaviour: dict[str, Any] | None = None
    """A behaviour lesson's part of the request, JSON data: its harness's bytes, mutation
    rules and judged names (see :mod:`pytest_lessons.isolation.drive`); None for a plain call."""
    library: Library | None = None
    """The course library the code may import (see :mod:`pytest_lessons.isolation.library`)."""
    work: dict[str, Any] | None = None
    """Count the call's work (a lesson's work budget: :mod:`pytest_lessons.isolation.work`):
    ``{}``, or ``{"also": [inputs]}`` to count a call on those smaller inputs too."""
    gradients: dict[str, Any] | None = None
    """A gradient case's request (:mod:`pytest_lessons.isolation.gradients`); None: a call."""
    hidden: bool = False
    """A hidden case's job: a pool starts it only once no other job is queued or running, so
    no code that runs after it, or beside it, can print what it observed of it (the time it
    took, the process ids it used up). Not part of the request."""
    rules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The lesson's rules on how the answer is computed: (id, forbidden names or ``loop``)
    each (see :mod:`pytest_lessons.isolation.rules`)."""
    preload: tuple[str, ...] = ()
    """Modules the code needs imported before it runs, besides the runner's own *preload*
    (the lesson's ``preload``): imported once by a fork worker (:meth:`Runner.preload`), and
    by a spawned Python before its case is handed over. Not part of the request."""

    def request(self, **extra: Any) -> dict[str, Any]:
        """The request read by :func:`pytest_lessons.isolation.child.run_case` and the worker
        (JSON data, but for the raw bytes of packed inputs, which travel in its frame:
        :func:`pytest_lessons.isolation.arguments.frame`):
        the file's name (for tracebacks) but never its path to open; its bytes are added by
        the runner (``source``)."""
        return {
            "solution": str(self.solution),
            "folder": str(self.solution.parent),
            "entry": self.entry,
            "inputs": self.inputs,
            "seed": self.seed,
            "threads": self.threads,
            "timeout": self.timeout,
            "memory_mb": self.memory_mb,
            "output_cap": self.output_cap,
            "answer_bytes": self.answer_bytes,
            **({"behaviour": self.behaviour} if self.behaviour else {}),
            **({"library": self.library.request()} if self.library is not None else {}),
            **({"work": self.work} if self.work is not None else {}),
            **({"gradients": self.gradients} if self.gradients is not None else {}),
            **(
                {"rules": [{"id": i, "forbid": list(names)} for i, names in self.rules]}
                if self.rules
                else {}
            ),
            **extra,
        }


#: How a problem with a learner's file reads in its outcome (a ``setup`` problem code).
_UNREADABLE = {
    "link": "link",
    "hard_link": "link",
    "missing": "missing_file",
    "not_file": "not_file",
}
#: Room for a result's envelope (its traceback, message, names) beside the answer.
_ENVELOPE = channel.ENVELOPE


def read_source(job: Job) -> str | Outcome:
    """The job's file as the child receives it (base64), read here, in the grader, as data;
    or the outcome that says why it cannot be used (nothing runs then)."""
    try:
        if job.beneath is not None:
            try:
                relative = job.solution.relative_to(job.beneath)
                beneath = job.beneath
            except ValueError:
                beneath, relative = job.solution.parent, Path(job.solution.name)
            # A learner's own run reads a file of their own: a hard link there takes nothing
            # from anyone, and tools that save space by linking files stay harmless.
            data = read_beneath(beneath, relative, single_link=beneath != job.solution.parent)
        else:
            with open(job.solution, "rb") as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
            if len(data) > MAX_SOURCE_BYTES:
                raise Unreadable("too_large", job.solution, len(data))
    except Unreadable as problem:
        details: dict[str, Any] = {"size": problem.size, "limit": MAX_SOURCE_BYTES}
        if problem.problem == "hard_link":
            details = {"links": problem.size}
            if job.beneath is not None and beneath != job.solution.parent:
                # Every name in the class, one of them another learner's: the class's files
                # were unpacked so (an archive's hard link), and neither learner made it.
                names = names_within(job.beneath.parent, problem.path)
                own = job.beneath.name
                if len(names) == problem.size and any(Path(name).parts[0] != own for name in names):
                    details["classmate"] = True
        code = _UNREADABLE.get(problem.problem, problem.problem)
        if code == "missing_file":
            return _missing(job.solution)
        return Outcome(kind=SETUP, error_type=code, message=str(problem.path), details=details)
    except OSError:
        return _missing(job.solution)
    return base64.b64encode(data).decode("ascii")


#: The most files beside a missing solution that its message names.
NEAR_NAMES = 5


def _missing(solution: Path) -> Outcome:
    """The outcome of a solution file that is not there: ``misnamed`` with the files beside it
    whose names come close (``Solution.py``, ``solutions.py``, ``solution (1).py``), so the
    learner is told which file to rename; else ``missing_file``. Names only, never opened nor
    followed (a link among them is listed by its own name)."""
    wanted = solution.name.casefold()
    stem = Path(wanted).stem
    found: list[str] = []
    try:
        with os.scandir(solution.parent) as entries:
            for entry in entries:
                name = entry.name.casefold()
                near = name.startswith(stem) or (
                    Path(name).suffix == Path(wanted).suffix
                    and difflib.SequenceMatcher(None, name, wanted).ratio() >= 0.8
                )
                if near and entry.is_file(follow_symlinks=False):
                    found.append(clean_text(entry.name)[:100])
    except OSError:
        pass
    if found:
        return Outcome(
            kind=SETUP,
            error_type="misnamed",
            message=str(solution),
            details={"found": sorted(found)[:NEAR_NAMES]},
        )
    return Outcome(kind=SETUP, error_type="missing_file", message=str(solution))


def _worker_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the processes that run learner code: *base* (the sandbox's
    allow-list; the grader's own environment when None) and what the runtime needs."""
    env = dict(os.environ if base is None else base)
    # The course runs on the CPU; a forked child must never touch a CUDA context either.
    env["CUDA_VISIBLE_DEVICES"] = ""
    # One thread in the worker, whatever the user's environment says: a thread pool started
    # before fork leaves its locks held in every child, where torch's next operator hangs.
    # Each child then sets its own thread count (--lesson-threads).
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    env.setdefault("PYTHONWARNINGS", "ignore")
    if sys.platform.startswith("linux"):
        # glibc's malloc asks for 2 MiB pages as the heap grows, so the heap torch fills is
        # mostly huge pages already and the worker's collapse (worker._huge_pages) has little
        # left to do before the first case; other C libraries ignore the variable.
        tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t]
        if not any(t.startswith("glibc.malloc.hugetlb=") for t in tunables):
            env["GLIBC_TUNABLES"] = ":".join([*tunables, "glibc.malloc.hugetlb=1"])
    if sys.platform == "darwin":
        # macOS aborts a forked child that meets an Objective-C class whose set-up another
        # thread had begun before the fork; that abort would read as a crash of the learner's
        # code. libobjc reads this once at start, so it is set for the worker's launch.
        env.setdefault("OBJC_DISABLE_INITIALIZE_FORK_SAFETY", "YES")
    # The worker must import this very package, even when it is not installed (a checkout):
    # the folder that holds pytest_lessons/, as this file is pytest_lessons/isolation/runner.py.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


@dataclass(frozen=True)
class Ended:
    """How a case's child ended, as the runner saw it, with its result file's bytes not yet
    read as an answer: :meth:`outcome` reads them. A pool keeps a case it ran ahead this
    way until pytest asks for it (:meth:`Runner.run_ahead`): as bytes, never as the Python
    objects an answer becomes (up to 64 bytes of them for each byte of JSON)."""

    status: str
    """``exited`` or ``timeout``."""
    gate: str
    """``open`` once the sandbox closed and learner code was about to load, else why not."""
    data: bytes | None
    """The result file's bytes, as read (at most the answer size and its envelope, + 1)."""
    answer_bytes: int
    """The job's answer size (:attr:`Job.answer_bytes`)."""
    seconds: float = 0.0
    answer_values: int | None = None
    """The job's bound on the result's values (:attr:`Job.answer_values`)."""
    output: str = ""
    output_cut: int = 0
    exit_code: int | None = None
    signal_name: str = ""
    used: int = 0
    """Bytes the case's files took in its private folder, as the runner counted them."""
    budget: int = 0
    """The disk budget those files had (0: none counted)."""
    memory: bool = False
    """Whether the kernel killed a process of the case for its memory cgroup's limit."""
    cpu: tuple[float, float] | None = None
    """Seconds the case's processes ran on a CPU and waited for one, as the runner side read
    them when it ran out of time (:func:`walls.case_cpu`); None: not read."""

    @property
    def size(self) -> int:
        """The bytes this holds: what a pool counts of the outcomes waiting for pytest."""
        return len(self.data or b"") + len(self.output)

    @property
    def timed_out(self) -> bool:
        """Whether the outcome is a timeout (known without reading the result)."""
        return self.status == "timeout" and self.gate == "open"

    def outcome(self) -> Outcome:
        """The case's outcome: the result read as untrusted input
        (:func:`~pytest_lessons.isolation.outcome.from_untrusted`) where learner code ran
        and did not time out, else what the runner saw."""
        if self.gate != "open":
            # Learner code never ran, so nothing of this is the learner's.
            why = self.gate or (
                "the sandbox did not close in time"
                if self.status == "timeout"
                else "the process that runs learner code ended before it loaded it"
            )
            outcome = Outcome(kind=INTERNAL, message=why, seconds=self.seconds)
        elif self.status == "timeout":
            outcome = Outcome(kind=TIMEOUT, seconds=self.seconds)
        elif self.data is None:
            outcome = Outcome(
                kind=DIED, exit_code=self.exit_code, signal=self.signal_name, seconds=self.seconds
            )
        else:
            outcome = from_untrusted(
                self.data, self.answer_bytes + _ENVELOPE, self.seconds, self.answer_values
            )
            if outcome.kind == RETURNED and len(self.data) > self.answer_bytes:
                outcome = replace(
                    too_large(len(self.data), self.answer_bytes), seconds=self.seconds
                )
            if outcome.kind == DIED and not outcome.message:
                outcome = replace(outcome, exit_code=self.exit_code, signal=self.signal_name)
        if self.used > self.budget and self.gate == "open" and outcome.kind != TIMEOUT:
            outcome = over_disk(self.used, self.budget, self.seconds)
        elif self.memory and self.gate == "open" and not _refused_memory(outcome):
            # Whatever it answered or however it ended (a killed process it started, or
            # itself): the case took more memory than it may, and is told so. A refusal its
            # own code raised (Windows' Job Object refuses, it does not kill) keeps its line.
            outcome = over_memory(self.seconds)
        return outcome.with_output(clean_text(self.output), self.output_cut)


#: Words of torch's allocator when the system refuses it memory (Linux, Windows).
_REFUSED = ("can't allocate memory", "not enough memory")


def _refused_memory(outcome: Outcome) -> bool:
    """Whether *outcome* is learner code's own failed allocation, with its traceback: a
    ``MemoryError``, or torch's allocator saying it got no memory."""
    if outcome.kind != RAISED:
        return False
    return outcome.error_type == "MemoryError" or any(w in outcome.message for w in _REFUSED)


def collect(
    status: str,
    result_path: Path,
    job: Job,
    seconds: float,
    gate: str = "",
    output: str = "",
    output_cut: int = 0,
    exit_code: int | None = None,
    signal_name: str = "",
    memory: bool = False,
    cpu: tuple[float, float] | None = None,
) -> Ended:
    """What a child that ended with *status* left, from what the runner saw itself
    (*seconds* it ran, the *gate*: ``open`` once the sandbox closed and learner code was
    about to load, else the sandbox's error) and, for the answer only, the bytes of the
    result file the child may have written (in the case's private folder, which is removed).
    Files the case left there over its disk budget fail it (where a tmpfs held them, the
    kernel kept the budget and nothing is left); an empty result file is no result."""
    data = None
    if status != "timeout" and gate == "open":
        data = read_file(result_path, job.answer_bytes + _ENVELOPE) or None
    budget = int(float((job.sandbox.limits if job.sandbox else {}).get("disk_mb") or 0) * (1 << 20))
    used = 0
    if budget:
        with contextlib.suppress(OSError):  # the runner's own channel, not the case's files
            os.unlink(result_path)
        used = remove_counting(_private_folder(result_path))[1]
    else:
        _remove_case(result_path)
    return Ended(
        status,
        gate,
        data,
        job.answer_bytes,
        seconds,
        job.answer_values,
        output,
        output_cut,
        exit_code,
        signal_name,
        used,
        budget,
        memory,
        cpu,
    )


def starved(found: Outcome | Ended, timeout: float) -> bool:
    """Whether *found* is a timeout of a case that other processes kept from the CPU: its
    processes waited for one at least half its *timeout*, and ran less than that. A case
    that spins many processes itself runs most of the time, so it is not tried again."""
    if not isinstance(found, Ended) or not found.timed_out or found.cpu is None:
        return False
    ran, waited = found.cpu
    return waited >= timeout / 2 and ran < timeout / 2


def assemble(
    status: str,
    result_path: Path,
    job: Job,
    seconds: float,
    gate: str = "",
    output: str = "",
    output_cut: int = 0,
    exit_code: int | None = None,
    signal_name: str = "",
) -> Outcome:
    """The outcome of a child that ended with *status* (:func:`collect`, then
    :meth:`Ended.outcome`)."""
    return collect(
        status, result_path, job, seconds, gate, output, output_cut, exit_code, signal_name
    ).outcome()


def _case_memory(job: Job) -> int | None:
    """The bytes of the job's memory cgroup (:func:`walls.case_memory`), None for none."""
    policy = job.sandbox
    if policy is None or not getattr(policy, "memory_cap", ""):
        return None
    request = {"memory_cap": policy.memory_cap, "namespaces": policy.namespaces}
    return walls.case_memory(job.memory_mb, {**request, "limits": dict(policy.limits)})


def _gate(data: bytes) -> str:
    """What a child said on its gate pipe before learner code loaded: ``open``, or the
    sandbox's error, or "" (it said nothing)."""
    if data.startswith(b"+"):
        return "open"
    if data.startswith(b"!"):
        text = data[1:].decode("utf-8", errors="replace")[:2000]
        return f"the sandbox could not be set up: {text}"
    return ""


class Runner:
    """Runs jobs; subclasses decide where."""

    #: The isolation mode, as the setting names it.
    mode = ""

    def warm_up(self) -> None:
        """Start anything slow now, in the background, so the first case does not wait."""

    def announce(self, policy: Policy | None) -> None:
        """The sandbox of every coming job, once it is known (pytest has collected the
        course) and before the first job: the processes waiting for the first case build
        its walls now, as they do for every later case. A job with another sandbox still
        runs under its own."""

    def preload(self, modules: tuple[str, ...]) -> None:
        """Modules that coming jobs need imported (the collected lessons' ``preload``), told
        before the first job: a fork worker imports them once, before its next case. A job
        whose :attr:`Job.preload` was not told still gets its modules imported first."""

    def run(self, job: Job) -> Outcome:
        raise NotImplementedError

    def run_ahead(self, job: Job) -> Outcome | Ended:
        """Run *job* for a pool that keeps its outcome until pytest asks for it: an
        :class:`Ended` whose result is read only then, where this runner reads one (by
        default the outcome itself)."""
        return self.run(job)

    def close(self) -> None:
        """Stop every process this runner started."""

    def abort(self) -> None:
        """Stop every process this runner started at once, the case that runs now included
        (a notebook cell was interrupted); the next job starts afresh."""
        self.close()


class InProcessRunner(Runner):
    """Runs learner code inside the pytest process, for debugging."""

    mode = "off"

    def run(self, job: Job) -> Outcome:
        source = read_source(job)
        if isinstance(source, Outcome):
            return source
        started = time.monotonic()
        result = run_case(job.request(debug=True, source=source))
        seconds = time.monotonic() - started
        # The same JSON round trip as the isolated runners, so verdicts do not differ.
        outcome = Outcome.from_dict(json.loads(json.dumps(result)))
        return replace(outcome, seconds=seconds)


class _TempDir:
    """The session's temporary folder, with one private folder per case in it."""

    def __init__(self) -> None:
        self._path: Path | None = None
        self._count = 0

    def base(self) -> Path:
        """The folder that holds the private folders, made now if need be."""
        if self._path is None:
            self._path = Path(tempfile.mkdtemp(prefix="pytest-lessons-"))
            # Another user may pass through to its own folder, never list the others.
            os.chmod(self._path, 0o711)
        return self._path

    def shared(self, policy: Policy) -> dict[str, Any]:
        """What of *policy*'s request every case of this folder shares (its cases' folder
        included), as :func:`_request` makes it."""
        case = self.base() / "case-0"
        return shared_part(policy.request(case, case))

    def next_case(self, policy: Policy | None) -> Path:
        """A new private folder for one case (the learner's HOME and TMPDIR), owned by the
        user the case runs as, and the file where the child writes its outcome: the
        folder's ``result.json``; where a tmpfs covers the private folders, ``case-N.json``
        beside a folder the case makes in its tmpfs (see :func:`_private_folder`)."""
        self._count += 1
        folder = self.base() / f"case-{self._count}"
        if policy is not None and policy.namespaces and policy.limits.get("disk_mb"):
            # No folder here: removing one while a case's mount namespace ends waited for the
            # kernel (3.5 ms wall a case, 0.3 ms of it CPU, on a loaded 2-core machine).
            result = folder.with_suffix(".json")
            os.close(os.open(result, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            policy.prepare_private(result)
            return result
        folder.mkdir(mode=0o700)
        if policy is not None:
            policy.prepare_private(folder)
        return folder / RESULT

    def remove(self) -> None:
        if self._path is not None:
            remove_tree(self._path)
            self._path = None


class _Sibling:
    """A fork server that another worker forked (see :mod:`pytest_lessons.isolation.worker`): what
    the runner needs of a :class:`subprocess.Popen`, over the pipes it made for it. It is not this
    process's child, so its end is read off its report pipe."""

    def __init__(self, jobs: int, reports: int) -> None:
        self.stdin = os.fdopen(jobs, "wb")
        self.stdout = os.fdopen(reports, "rb")
        self.pid: int | None = None
        """Known from its ready message."""
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if self.pid is not None and self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
        self.returncode = -signal.SIGKILL

    def wait(self, timeout: float | None = None) -> int:
        """Wait until it has closed its report pipe: it does so only when it ends."""
        if self.returncode is not None:
            return self.returncode
        deadline = None if timeout is None else _now() + timeout
        fd = self.stdout.fileno()
        while True:
            remaining = None if deadline is None else max(deadline - _now(), 0)
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise subprocess.TimeoutExpired("pytest_lessons.isolation.worker", timeout or 0)
            if not os.read(fd, 1 << 16):
                if self.returncode is None:
                    self.returncode = 0
                return self.returncode


class ForkRunner(Runner):
    """Talks to one fork-server worker; restarts it if it ever dies.

    *siblings* are runners whose workers this runner's first worker forks once it has imported
    torch (a :class:`PoolRunner`'s others), so that import is paid once; a sibling that is
    lost later is replaced by a worker of its own."""

    mode = "fork"

    def __init__(
        self,
        preload: tuple[str, ...] = PRELOAD,
        env: dict[str, str] | None = None,
        siblings: list[ForkRunner] | None = None,
    ) -> None:
        self.modules = preload
        """What its worker imports before the first case: the *preload* setting's modules,
        then those the lessons add (:meth:`preload`)."""
        self.env = env
        self.process: subprocess.Popen[bytes] | _Sibling | None = None
        self._siblings = list(siblings or [])
        self._handed: _Sibling | None = None
        """The worker another runner's worker forked for this runner, until it is used."""
        self._ready = False
        self._buffer = b""
        self._jobs = 0
        self._group: int | None = None
        self._group_seen = False
        self._temp = _TempDir()
        self._ahead: bytes | None = None
        """The announced sandbox's line (see :meth:`announce`), told every worker started."""
        self._added = False
        """Whether lessons added modules to the *preload* setting's (:meth:`preload`)."""

    def warm_up(self) -> None:
        if self.process is None or self.process.poll() is not None:
            self._ready = False
            self._buffer = b""
            handed, self._handed = self._handed, None
            self.process = handed or self._start()
            if handed is not None and self._added:
                # Forked from another runner's worker, which may not have imported them.
                self._write(_preload_line(self.modules))
            if self._ahead is not None:
                self._write(self._ahead)

    def preload(self, modules: tuple[str, ...]) -> None:
        new = tuple(m for m in dict.fromkeys(modules) if m not in self.modules)
        if not new:
            return
        self.modules += new
        self._added = True
        if self.process is not None and self.process.poll() is None:
            # Read before the next job; a worker started from now on imports them at start.
            self._write(_preload_line(new))

    def announce(self, policy: Policy | None) -> None:
        if policy is None:
            return
        line = (json.dumps({"ahead": self._temp.shared(policy)}) + "\n").encode("utf-8")
        # A worker still importing torch reads nothing yet: what does not fit its pipe would
        # keep pytest waiting for the import, so a policy that large is not announced.
        if len(line) > _POLICY_ROOM:
            return
        self._ahead = line
        if self.process is not None and self.process.poll() is None:
            self._write(line)
        else:
            self.warm_up()

    def _write(self, data: bytes) -> None:
        """Write *data* to the worker; a worker that is gone is found at the next job."""
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except OSError:
            pass

    def _start(self) -> subprocess.Popen[bytes]:
        """Start a worker; the first one also forks the siblings' workers."""
        siblings, self._siblings = self._siblings, []
        passed: list[int] = []
        arguments: list[str] = []
        for runner in siblings:
            if runner.process is not None:
                continue
            job_r, job_w = os.pipe()
            report_r, report_w = os.pipe()
            runner._handed = _Sibling(job_w, report_r)
            passed += [job_r, report_w]
            arguments.append(f"--sibling={job_r},{report_w}")
        try:
            return subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pytest_lessons.isolation.worker",
                    *arguments,
                    *self.modules,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_worker_env(self.env),
                close_fds=True,
                pass_fds=passed,
            )
        finally:
            for fd in passed:  # the workers' ends: a sibling sees its runner close its own
                os.close(fd)

    def _read_line(self, deadline: float) -> dict[str, Any] | None:
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - _now()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def run(self, job: Job) -> Outcome:
        ended = self.run_ahead(job)
        return ended.outcome() if isinstance(ended, Ended) else ended

    def run_ahead(self, job: Job) -> Outcome | Ended:
        found = self._supervised(job)
        if starved(found, job.timeout):
            # Classmates' cases took the cores it needed (no cpu cgroup shares them out
            # here): once more before it is called a timeout.
            found = self._supervised(job)
        return found

    def _supervised(self, job: Job) -> Outcome | Ended:
        outcome = self._attempt(job)
        if outcome is not None:
            return outcome
        # The worker died or stopped answering. Learner code can do that (it may kill or stop
        # its parent), and so can the system (an out-of-memory killer). A fresh worker tries
        # the case once more: a second loss while the case runs is the code's doing.
        ran = self._group_seen
        outcome = self._attempt(job)
        if outcome is not None:
            return outcome
        if ran and self._group_seen:
            return Outcome(
                kind=DIED,
                message="the supervising process stopped on both tries of this case",
            )
        return Outcome(kind=INTERNAL, message="the worker that runs learner code stopped")

    def _attempt(self, job: Job) -> Outcome | Ended | None:
        """Run *job* once; None if the worker was lost (it is then closed)."""
        source = read_source(job)
        if isinstance(source, Outcome):
            return source
        self.warm_up()
        self.preload(job.preload)
        assert self.process is not None and self.process.stdin is not None
        self._jobs += 1
        self._group_seen = False
        result_path = _case_request_path(self._temp, job)
        request = _request(job, result_path, source, id=self._jobs)
        try:
            # One frame: the request's JSON line, then its inputs' raw bytes (arguments.py).
            self.process.stdin.write(frame(request))
            self.process.stdin.flush()
        except OSError:
            self._lost()
            return None
        deadline = _now() + job.timeout + WORKER_GRACE
        while True:
            message = self._read_line(deadline)
            if message is None:
                self._lost()
                return None
            if message.get("ready"):
                self._ready = True
                if isinstance(self.process, _Sibling) and isinstance(message.get("pid"), int):
                    self.process.pid = message["pid"]
                continue
            if message.get("id") != self._jobs:
                continue
            if "pgid" in message:
                self._group = int(message["pgid"])
                self._group_seen = True
                deadline = _now() + job.timeout + RUNNING_GRACE
                continue
            self._group = None
            break
        if message.get("status") == "worker_error":
            _remove_case(result_path)
            return Outcome(kind=INTERNAL, message=str(message.get("message", "")))
        return collect(
            status=str(message.get("status")),
            result_path=result_path,
            job=job,
            seconds=float(message.get("elapsed", 0.0)),
            gate=_gate(f"{message.get('gate', '')}{message.get('gate_message', '')}".encode()),
            output=str(message.get("output", "")),
            output_cut=int(message.get("output_cut", 0)),
            exit_code=message.get("exit_code"),
            signal_name=str(message.get("signal", "") or ""),
            memory=bool(message.get("memory")),
            cpu=_cpu_seconds(message.get("cpu")),
        )

    def _said_ready(self, process: subprocess.Popen[bytes] | _Sibling) -> bool:
        """Whether *process*, which ran no job, is past its imports (see _said_ready_fd)."""
        if self._ready or self._buffer:
            return True
        return process.stdout is not None and _said_ready_fd(process.stdout.fileno())

    def _lost(self) -> None:
        if self._group is not None:  # the worker cannot clean up after its child any more
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._group, signal.SIGKILL)
            self._group = None
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.kill()  # it may be stopped, not dead: no time for a clean close
        self.close(keep_temp=True)

    def abort(self) -> None:
        self._lost()
        self.close()

    def close(self, keep_temp: bool = False) -> None:
        process, self.process = self.process, None
        if process is not None:
            try:
                if process.stdin:
                    process.stdin.close()
                if not self._jobs and not self._said_ready(process):
                    # No learner code ran under it and it has no zygote yet, so it has
                    # nothing to clean up; a worker still importing torch (a class run that
                    # collected nothing) would otherwise keep pytest waiting until the import
                    # is done. One that is ready ends on its own at once, and removes the
                    # memory cgroup its waiting child joined.
                    process.kill()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
            if process.stdout:
                process.stdout.close()
        if not keep_temp:
            self._temp.remove()


def _cpu_seconds(value: Any) -> tuple[float, float] | None:
    """The worker's ``cpu`` report (ran, waited), or None."""
    if isinstance(value, list) and len(value) == 2:
        with contextlib.suppress(TypeError, ValueError):
            return float(value[0]), float(value[1])
    return None


def _said_ready_fd(fd: int) -> bool:
    """Whether a worker's report pipe *fd* holds something to read: its first line is its
    ready message, written once it has imported its modules and forked its zygote."""
    with contextlib.suppress(OSError, ValueError):
        return bool(select.select([fd], [], [], 0)[0])
    return False


class SpawnRunner(Runner):
    """A new Python process per case; for systems without fork.

    Pythons are started ahead (*spares*, by default one per core up to three), each importing
    torch and then waiting for its case on stdin, so the imports of later cases overlap the
    current one and each other.
    """

    mode = "spawn"

    def __init__(
        self,
        preload: tuple[str, ...] = PRELOAD,
        spares: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.base = preload
        """What every Python imports before its case (the *preload* setting's modules)."""
        self.env = env
        self.spares = spares if spares is not None else self.default_spares()
        self._waiting: list[tuple[subprocess.Popen[bytes], int]] = []
        """Pythons started ahead, each with the read end of its gate pipe."""
        self._running: subprocess.Popen[bytes] | None = None
        """The Python running a case now (for :meth:`abort`)."""
        self._temp = _TempDir()
        self._sandbox = b"null\n"
        """The first line of a spare's input: the part of the last job's sandbox that every
        case shares (:func:`pytest_lessons.isolation.sandbox.shared_part`, never a learner's
        folder or file), from which it puts up its walls while it waits (as a fork server's
        waiting child does)."""
        self._told: dict[int, bytes] = {}
        """What each spare was given as that line, by pid (none yet: it is given at its job)."""
        self._lesson: tuple[str, ...] = ()
        """The modules the last job's lesson adds to :attr:`base` (its ``preload``): the
        spares started from then on import them too, for that lesson's next cases."""
        self._imports: dict[int, tuple[str, ...]] = {}
        """What each spare imports before its case, by pid."""
        self._channels: dict[int, int] = {}
        """Each Python's result channel (:mod:`pytest_lessons.isolation.channel`), by pid."""
        self._jobs: dict[int, jobs.CaseJob] = {}
        """Each Python's Job Object on Windows (:mod:`pytest_lessons.isolation.jobs`), by pid."""
        self._cgroups: set[str] = set()
        """Memory cgroups of reaped Pythons that were still busy when they were removed (a
        killed case's last processes leaving): tried again at each later case and at
        :meth:`close`."""

    @staticmethod
    def default_spares() -> int:
        """The Pythons one runner keeps started ahead: one per core, up to three."""
        return max(1, min(3, os.cpu_count() or 1))

    def _start(self) -> tuple[subprocess.Popen[bytes], int]:
        kwargs: dict[str, Any] = {}
        result: int | None = None
        gate_r, gate_w = os.pipe() if sys.platform != "win32" else (-1, -1)
        arguments: list[str] = []
        if sys.platform == "win32":  # pragma: no cover
            # Suspended until it is in its Job Object (jobs.contain).
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | jobs.CREATE_SUSPENDED
        else:
            kwargs["start_new_session"] = True
            kwargs["pass_fds"] = (gate_w,)
            arguments.append(f"--gate={gate_w}")
            result = channel.make()
            if result is not None:
                kwargs["pass_fds"] = (gate_w, result)
                arguments.append(f"--result-fd={result}")
        modules = tuple(dict.fromkeys(self.base + self._lesson))
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest_lessons.isolation.child", *arguments, *modules],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=_worker_env(self.env),
                **kwargs,
            )
        except BaseException:
            if result is not None:
                os.close(result)
            raise
        finally:
            if gate_w >= 0:
                os.close(gate_w)
        if result is not None:
            self._channels[process.pid] = result
        if sys.platform == "win32":  # pragma: no cover
            try:
                # Without one (the header says why: jobs.probe) the case still runs.
                held, _ = jobs.contain(process.pid)
            except jobs.JobError:
                process.wait()  # contain ended it
                raise
            if held is not None:
                self._jobs[process.pid] = held
        self._imports[process.pid] = modules
        if self._sandbox != b"null\n":
            self._tell(process, self._sandbox)
        return process, gate_r

    def _for_lesson(self, job: Job) -> None:
        """Start the spares for *job*'s lesson: where it adds modules of its own that the
        last job's did not, the spares that lack them are replaced by Pythons that import
        them before their case, as the case does not count that import."""
        lesson = tuple(m for m in dict.fromkeys(job.preload) if m not in self.base)
        if lesson == self._lesson:
            return
        self._lesson = lesson
        keep = []
        for process, gate in self._waiting:
            if set(lesson) <= set(self._imports.get(process.pid, ())):
                keep.append((process, gate))
                continue
            self._kill(process)
            process.wait()
            self._forget(process)
            if gate >= 0:
                os.close(gate)
            self._told.pop(process.pid, None)
            self._imports.pop(process.pid, None)
        self._waiting = keep

    def _tell(self, process: subprocess.Popen[bytes], line: bytes) -> None:
        self._told[process.pid] = line
        try:
            assert process.stdin is not None
            process.stdin.write(line)
            process.stdin.flush()
        except OSError:
            pass  # it is gone already; its case says so

    def announce(self, policy: Policy | None) -> None:
        if policy is None:
            return
        line = (json.dumps(self._temp.shared(policy)) + "\n").encode("utf-8")
        if len(line) > _POLICY_ROOM:  # it must fit the pipe: nobody may read it yet
            return
        self._sandbox = line
        self.warm_up()
        for process, _ in self._waiting:
            if process.pid not in self._told:
                self._tell(process, line)

    def warm_up(self) -> None:
        alive = []
        for process, gate in self._waiting:
            if process.poll() is None:
                alive.append((process, gate))
            elif gate >= 0:
                os.close(gate)
        self._waiting = alive
        while len(self._waiting) < self.spares:
            self._waiting.append(self._start())

    def run(self, job: Job) -> Outcome:
        ended = self.run_ahead(job)
        return ended.outcome() if isinstance(ended, Ended) else ended

    def run_ahead(self, job: Job) -> Outcome | Ended:
        found = self._spawned(job)
        if starved(found, job.timeout):
            # Classmates' cases took the cores it needed: once more, as in fork mode.
            found = self._spawned(job)
        return found

    def _spawned(self, job: Job) -> Outcome | Ended:
        source = read_source(job)
        if isinstance(source, Outcome):
            return source
        result_path = _case_request_path(self._temp, job)
        request = _request(job, result_path, source)
        sandbox = request.get("sandbox")
        line = (json.dumps(shared_part(sandbox)) + "\n").encode() if sandbox else b"null\n"
        if len(line) > _POLICY_ROOM:  # it must fit the pipe: nobody may read it yet
            line = b"null\n"
        self._sandbox = line
        self._for_lesson(job)
        self.warm_up()
        process, gate = self._waiting.pop(0)
        told = self._told.pop(process.pid, None)
        if told is not None and told != line:  # walls for another sandbox: a fresh spare
            self._kill(process)
            process.wait()
            self._forget(process)
            if gate >= 0:
                os.close(gate)
            self._imports.pop(process.pid, None)
            process, gate = self._start()
            told = self._told.pop(process.pid, None)
        if told is None:
            self._tell(process, line)
        self._running = process
        output = bytearray()
        cut = [0]
        ready = threading.Event()

        def drain() -> None:
            assert process.stdout is not None
            before = b""  # what Python printed while starting: not the learner's
            stdout = cast(io.BufferedReader, process.stdout)
            for chunk in iter(lambda: stdout.read1(1 << 16), b""):
                if not ready.is_set():
                    before += chunk
                    at = before.find(READY)
                    if at < 0:
                        continue
                    chunk = before[at + len(READY) :]
                    ready.set()
                room = max(job.output_cap - len(output), 0)
                output.extend(chunk[:room])
                cut[0] += max(len(chunk) - room, 0)
            ready.set()  # it ended before it was ready: its exit status tells the rest

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        imports = self._imports.pop(process.pid, self.base)
        added = [m for m in imports if m not in self.base]
        grace = SPAWN_GRACE + (PRELOAD_GRACE if added else 0.0)
        if not ready.wait(grace):
            self._kill(process)
            process.wait()
            self._forget(process)
            if gate >= 0:
                os.close(gate)
            _remove_case(result_path)
            return Outcome(
                kind=INTERNAL,
                message=f"Python could not start and import {', '.join(['torch', *added])} "
                f"within {grace:g} s",
            )
        assert process.stdin is not None
        # The case's own clock, from the moment it is handed over, as in fork mode: the
        # Python's start and its import of torch are not the case's. Its memory cgroup holds
        # the job's memory before it reads the job (see walls.join_memory).
        memory = _case_memory(job)
        group = walls.memory_cgroup(process.pid, os.getpid())
        result = self._channels.get(process.pid)
        held = self._jobs.get(process.pid)
        try:
            if memory is not None:
                walls.limit_memory_cgroup(group, memory)
            if held is not None and job.memory_mb:
                # Windows: the case's processes together, as a memory cgroup holds them.
                held.limit_memory(int(job.memory_mb * (1 << 20)) + jobs.MEMORY_SLACK)
            if result is not None:
                channel.seal(result, job.answer_bytes)
        except (walls.WallError, OSError) as error:
            self._kill(process)
            process.wait()
            self._forget(process)
            _remove_case(result_path)
            return Outcome(kind=INTERNAL, message=str(error))
        started = _now()
        try:
            process.stdin.write(frame(request))
            process.stdin.close()
        except OSError:
            pass
        status = "exited"
        cpu = None
        try:
            process.wait(timeout=job.timeout)
        except subprocess.TimeoutExpired:
            status = "timeout"
            # Read before the kill, while its processes live (a spawned child leads its group).
            cpu = walls.case_cpu(process.pid) if sys.platform != "win32" else None
        seconds = _now() - started
        self._kill(process)
        killed = False
        if memory is not None:
            # Read while the ended child is not yet reaped: its pid, which names the
            # cgroup, cannot be another process's meanwhile.
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
            killed = walls.oom_kills(group) > 0
        if held is not None:
            killed = held.over_memory()
        code = process.wait()
        result = self._channels.pop(process.pid, None)
        if result is not None:
            channel.deliver(result, str(result_path))
        self._forget(process)
        self._running = None
        # Its replacement starts once the case has ended, not while it runs: a Python
        # importing torch beside the case would take CPU from it and count against its
        # clock (a 1M-float input's case took about twice as long). The other spares,
        # started ahead, cover the next cases meanwhile.
        self.warm_up()
        reader.join(timeout=5)
        if not reader.is_alive() and process.stdout is not None:
            process.stdout.close()
        said = b"+"  # Windows: no gate, and no sandbox either
        if gate >= 0:
            said = _read_gate(gate)
        signal_name = ""
        if code < 0:
            try:
                signal_name = signal.Signals(-code).name
            except ValueError:
                signal_name = f"signal {-code}"
        return collect(
            status=status,
            result_path=result_path,
            job=job,
            seconds=seconds,
            gate=_gate(said),
            output=output.decode("utf-8", errors="replace"),
            output_cut=cut[0],
            exit_code=code if code >= 0 else None,
            signal_name=signal_name,
            memory=killed,
            cpu=cpu,
        )

    def _forget(self, process: subprocess.Popen[bytes]) -> None:
        """Close a reaped Python's result channel and remove the memory cgroup it made for
        itself (it joins one as it builds its walls, a spare too): nothing of the run is
        left in the system."""
        fd = self._channels.pop(process.pid, None)
        if fd is not None:
            os.close(fd)
        held = self._jobs.pop(process.pid, None)
        if held is not None:
            held.close()
        if sys.platform.startswith("linux"):
            name = walls.memory_cgroup(process.pid, os.getpid())
            if not walls.remove_memory_cgroup(name, wait=1.0):
                self._cgroups.add(name)
            self._cgroups = {left for left in self._cgroups if not walls.remove_memory_cgroup(left)}

    def _kill(self, process: subprocess.Popen[bytes]) -> None:
        """Kill a spawned child and everything it started: its Job Object's processes on
        Windows (where it has one), its process group elsewhere."""
        held = self._jobs.get(process.pid)
        if held is not None:
            try:
                held.kill()
                return
            except jobs.JobError:
                pass  # the child itself, at least
        _kill(process)

    def abort(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            self._kill(running)
            running.wait()
            self._forget(running)
        self.close()

    def close(self) -> None:
        waiting, self._waiting = self._waiting, []
        self._told.clear()
        self._imports.clear()
        for process, _ in waiting:
            self._kill(process)
        for process, gate in waiting:
            process.wait()
            self._forget(process)
            if gate >= 0:
                os.close(gate)
            if process.stdin:
                process.stdin.close()
            if process.stdout:
                process.stdout.close()
        # The run is not over while any of its cgroups is left in the system.
        deadline = time.monotonic() + walls.CGROUP_GRACE
        while self._cgroups:
            left = max(0.0, deadline - time.monotonic())
            self._cgroups = {
                name for name in self._cgroups if not walls.remove_memory_cgroup(name, wait=left)
            }
            if time.monotonic() >= deadline:
                break
        self._temp.remove()


def _preload_line(modules: tuple[str, ...]) -> bytes:
    """The line that asks a fork worker to import *modules* before its next case."""
    return (json.dumps({"preload": list(modules)}) + "\n").encode("utf-8")


def _read_gate(fd: int) -> bytes:
    """All a child wrote on its gate pipe (read once it has ended, so it is all there)."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while len(data) < 4096:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    return data


#: A pool's queue order: a job pytest asks for now before one run ahead of its asking.
NOW, AHEAD = 0, 1


def _order(job: Job, when: int) -> int:
    """A job's place in a pool's queue: every hidden case's job after every other job, asked
    for or not, then *when*."""
    return 2 * job.hidden + when


class PoolRunner(Runner):
    """Several runners side by side, so a class's cases run on every core in one pytest.

    pytest asks for one case at a time; :meth:`prefetch` hands the pool the learners' cases
    ahead, in the order pytest will ask for them, and :meth:`run` takes a case's outcome from
    there (or runs it first, before any prefetched case). Each runner keeps one job at a time
    on its own thread, so an outcome is the same plain data a serial run would get. A learner
    whose code ran out of time *skip_after* times on one file gets no more of its cases run
    ahead: the grader's loop budget would not run them. The count is the caller's (the
    grading core owns that rule); None runs every case ahead. *ahead_bytes* bounds the bytes
    of results waiting, per worker (:data:`AHEAD_BYTES_PER_WORKER`)."""

    def __init__(
        self,
        runners: list[Runner],
        skip_after: int | None = None,
        ahead_bytes: int = AHEAD_BYTES_PER_WORKER,
    ) -> None:
        self.runners = runners
        self.skip_after = skip_after
        self.ahead_bytes = ahead_bytes
        self.mode = runners[0].mode
        self._lock = threading.Condition()
        self._queue: list[tuple[int, int, str, Job]] = []
        self._results: dict[str, Outcome | Ended] = {}
        self._running: set[str] = set()
        self._public_running = 0
        """How many of the running jobs are not hidden cases' (see :meth:`_held`)."""
        self._ahead: set[str] = set()
        self._timeouts: dict[str, int] = {}
        self._files: dict[str, str] = {}
        """A prefetched job's key -> its file, to drop a looping learner's outcomes."""
        self._count = 0
        self._closed = False
        self._threads: list[threading.Thread] = []
        self._switch: float | None = None

    @staticmethod
    def key(job: Job) -> str:
        return json.dumps(job.request(), sort_keys=True, default=blob_key)

    def warm_up(self) -> None:
        # Once: from then on each runner is its own thread's, which restarts a lost worker.
        # A restart from here too could replace the worker that thread is waiting on.
        if not self._threads:
            # A worker idles until its runner thread hands it the next job, and that thread
            # first waits for pytest's thread to release the interpreter lock: up to the
            # switch interval, 5 ms by default against about 30 ms of CPU for a whole case.
            self._switch = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch, SWITCH_INTERVAL))
            for runner in self.runners:
                runner.warm_up()
            for runner in self.runners:
                thread = threading.Thread(target=self._serve, args=(runner,), daemon=True)
                thread.start()
                self._threads.append(thread)

    def announce(self, policy: Policy | None) -> None:
        # Only before the first job: from then on each runner is its own thread's, which
        # writes to its worker.
        with self._lock:
            if self._count or self._closed:
                return
            for runner in self.runners:
                runner.announce(policy)

    def preload(self, modules: tuple[str, ...]) -> None:
        # As announce: only before the first job (later, each runner's job brings its own).
        with self._lock:
            if self._count or self._closed:
                return
            for runner in self.runners:
                runner.preload(modules)

    def prefetch(self, jobs: list[Job]) -> None:
        """Run *jobs* ahead, in order, on the free runners."""
        self.warm_up()
        with self._lock:
            for job in jobs:
                key = self.key(job)
                if key in self._ahead:
                    continue
                self._ahead.add(key)
                self._files[key] = str(job.solution)
                self._count += 1
                heapq.heappush(self._queue, (_order(job, AHEAD), self._count, key, job))
            self._lock.notify_all()

    def run(self, job: Job) -> Outcome:
        key = self.key(job)
        self.warm_up()
        with self._lock:
            if key not in self._results and key not in self._running:
                queued = any(entry[2] == key for entry in self._queue)
                if queued:  # asked for now: to the front
                    self._queue = [entry for entry in self._queue if entry[2] != key]
                    heapq.heapify(self._queue)
                self._count += 1
                heapq.heappush(self._queue, (_order(job, NOW), self._count, key, job))
                self._lock.notify_all()
            while key not in self._results:
                self._lock.wait()
            # Each outcome is taken once: asking again runs the job again, as serially.
            self._ahead.discard(key)
            self._files.pop(key, None)
            self._lock.notify_all()  # room for a worker waiting to run ahead
            found = self._results.pop(key)
        # Read here, on pytest's thread, once pytest is about to judge it.
        return found.outcome() if isinstance(found, Ended) else found

    def _serve(self, runner: Runner) -> None:
        while True:
            with self._lock:
                while not self._closed and (not self._queue or self._full() or self._held()):
                    self._lock.wait()
                if self._closed:
                    return
                _, _, key, job = heapq.heappop(self._queue)
                self._running.add(key)
                self._public_running += not job.hidden
            try:
                # Kept as the result's bytes until pytest asks (see Ended): a class's answers
                # waiting here are never Python objects, whatever their values.
                outcome = runner.run_ahead(job)
            except Exception as error:  # the grader's fault: one case says so, the pool goes on
                outcome = Outcome(kind=INTERNAL, message=f"{type(error).__name__}: {error}")
            with self._lock:
                self._running.discard(key)
                self._public_running -= not job.hidden
                self._results[key] = outcome
                if _timed_out(outcome):
                    self._skip_after_timeouts(job)
                self._lock.notify_all()

    def _held(self) -> bool:
        """Whether the next job is a hidden case's and another job still runs (called with
        the lock held): pytest asks for hidden cases last (the plugin orders them so), and no
        job may run after or beside one, where it could print what it saw of it."""
        # Every other job is ahead of a hidden one in the queue (see _order): only those
        # running can be left.
        return self._queue[0][3].hidden and self._public_running > 0

    def _full(self) -> bool:
        """Whether the next job is one run ahead and enough outcomes already wait for pytest
        (called with the lock held); a job pytest asks for runs at once."""
        if self._queue[0][0] % 2 != AHEAD:
            return False
        # Not counted: outcomes of a looping learner's file, which pytest may never ask for
        # (the exercise's remaining cases are not run).
        waiting = [
            found
            for key, found in self._results.items()
            if not self._looping(self._files.get(key, ""))
        ]
        held = sum(found.size for found in waiting if isinstance(found, Ended))
        if held >= self.ahead_bytes * len(self.runners):
            return True
        return len(waiting) + len(self._running) >= AHEAD_PER_WORKER * len(self.runners)

    def _looping(self, file: str) -> bool:
        """Whether *file*'s code ran out of time often enough to stop running it ahead."""
        return self.skip_after is not None and self._timeouts.get(file, 0) >= self.skip_after

    def _skip_after_timeouts(self, job: Job) -> None:
        """After *skip_after* timeouts of one file, its cases queued ahead are dropped (called
        with the lock held); pytest's own asks still run."""
        file = str(job.solution)
        self._timeouts[file] = self._timeouts.get(file, 0) + 1
        if not self._looping(file):
            return
        dropped = {e[2] for e in self._queue if e[0] % 2 == AHEAD and str(e[3].solution) == file}
        if dropped:
            self._queue = [e for e in self._queue if e[2] not in dropped]
            heapq.heapify(self._queue)
            self._ahead -= dropped

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        for thread in self._threads:
            thread.join(timeout=60)
        # Side by side: each waits for its worker to end, and they end at the same time.
        closing = [threading.Thread(target=runner.close) for runner in self.runners]
        for thread in closing:
            thread.start()
        for thread in closing:
            thread.join()
        if self._switch is not None:
            sys.setswitchinterval(self._switch)
            self._switch = None


def _timed_out(found: Outcome | Ended) -> bool:
    return found.timed_out if isinstance(found, Ended) else found.kind == TIMEOUT


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill a spawned child and, where the system allows, everything it started."""
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    else:  # pragma: no cover
        process.kill()


def _now() -> float:
    return time.monotonic()


def _case_request_path(temp: _TempDir, job: Job) -> Path:
    return temp.next_case(job.sandbox)


#: The name of a case's result file in its private folder (where no tmpfs covers it).
RESULT = "result.json"


def _private_folder(result_path: Path) -> Path:
    """The private folder of the case whose result goes to *result_path*: the folder it is
    in, or, where a tmpfs covers the private folders, the folder of its name beside it."""
    return result_path.parent if result_path.name == RESULT else result_path.with_suffix("")


def _remove_case(result_path: Path) -> None:
    """Remove a case's result file and private folder (see :func:`_private_folder`)."""
    with contextlib.suppress(OSError):
        os.unlink(result_path)
    remove_tree(_private_folder(result_path))


def _request(job: Job, result_path: Path, source: str, **extra: Any) -> dict[str, Any]:
    """The request for an isolated child: the job, the learner's file as bytes, where to write
    its result, and the sandbox it must close around itself before it loads that code.

    The sandbox's one readable course file is the case's own folder: the code arrives in the
    job, so nothing of the course or the submissions is opened by the child, and a link in
    place of the learner's file opens nothing either."""
    private = _private_folder(result_path)
    sandbox = job.sandbox.request(private, private) if job.sandbox else None
    return job.request(result=str(result_path), sandbox=sandbox, source=source, **extra)


def make_runner(
    mode: str,
    preload: tuple[str, ...] = PRELOAD,
    env: dict[str, str] | None = None,
    workers: int = 1,
    skip_after: int | None = None,
) -> Runner:
    """The runner for an isolation *mode* (``fork``, ``spawn`` or ``off``); *env* is the
    environment learner code starts from (the grader's own when None). With *workers* > 1, a
    :class:`PoolRunner` of that many fork servers, or under ``spawn`` of that many spawn
    runners, each with its own Pythons started ahead; the pool stops running a file's cases
    ahead after *skip_after* timeouts."""
    if mode == "off":
        return InProcessRunner()
    if mode == "spawn":
        if workers <= 1:
            return SpawnRunner(preload, env=env)
        # The Pythons waiting in all, as one runner keeps (each holds torch's few hundred
        # MB), shared out: a spare is ready for each worker's next case, and a worker's
        # replacement imports torch while the other workers' cases run.
        spares = max(1, -(-SpawnRunner.default_spares() // workers))
        return PoolRunner(
            [SpawnRunner(preload, spares=spares, env=env) for _ in range(workers)],
            skip_after=skip_after,
        )
    if workers > 1:
        siblings = [ForkRunner(preload, env=env) for _ in range(workers - 1)]
        return PoolRunner(
            [ForkRunner(preload, env=env, siblings=siblings), *siblings], skip_after=skip_after
        )
    return ForkRunner(preload, env=env)


def usable_cpus() -> int:
    """The CPUs this process may run on (``taskset`` and cgroup affinity count), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no affinity call
        return max(1, os.cpu_count() or 1)
