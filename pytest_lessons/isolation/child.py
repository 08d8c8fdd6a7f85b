"""The code that runs next to learner code: load the learner's file, call the entry function,
turn what it returns into plain data (:mod:`pytest_lessons.isolation.answers`, reported as
:mod:`pytest_lessons.isolation.outcome` reads it).

Everything here runs in the process that runs learner code (a forked or spawned child, or the
pytest process when isolation is off), so it must assume the learner can break anything in this
process; what it produces is only ever read back as JSON. It imports neither pytest nor torch
(torch is used only when the learner already imported it, or to build an input the lesson
passes as a tensor: :mod:`pytest_lessons.isolation.arguments`).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import functools
import gc
import importlib.machinery
import importlib.util
import inspect
import io
import json
import linecache
import os
import random
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

try:  # imported once here, not per case: it costs a forked child ~2 ms
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

from pytest_lessons.isolation import answers, channel, draws, drive, library, rules, work
from pytest_lessons.isolation.arguments import rebuild, unframe
from pytest_lessons.isolation.gradients import call as gradient_call
from pytest_lessons.isolation.outcome import (
    DIED,
    INTERNAL,
    OTHER_LIMITS,
    RAISED,
    RETURNED,
    SETUP,
)
from pytest_lessons.isolation.sandbox import (
    SandboxError,
    confine,
    prepare_rules,
    result_channel,
)
from pytest_lessons.isolation.sandbox import warm as sandbox_warm

#: The learner's module is loaded under this name, so ``__name__ == "__main__"`` blocks don't run.
MODULE_NAME = "solution"
#: What a spawned child writes once it is ready for its case (before any learner code runs).
READY = b"\x00pytest-lessons ready\n"


# --- running learner code ------------------------------------------------------------------


def run_case(
    request: dict[str, Any], gate: Callable[[bytes], None] | None = None
) -> dict[str, Any]:
    """Load the learner's file anew and call its entry function on the request's inputs.

    The file's bytes are in the request (``source``, base64; the runner read them as data);
    ``solution`` is only the name tracebacks show. *gate* is told, once and before any learner
    code loads, ``b"+"`` (the sandbox is closed, the code loads now) or ``b"!"`` and the
    sandbox's error, on a channel learner code never holds.

    Returns an outcome dict (without captured output). Every exception learner code raises is
    caught, ``SystemExit`` and ``KeyboardInterrupt`` included, except that with
    ``request["debug"]`` a ``KeyboardInterrupt`` or the debugger's quit passes through, so a
    person debugging in-process can stop.
    """
    # The job's course library is importable for the case only (undone after, for the
    # in-process runner: see pytest_lessons.isolation.library.install).
    undo = library.install(request.get("library"))
    # A work budget's counter goes up first: before the sandbox closes (torch loads with the
    # grader's rights) and before learner code loads (it cannot replace the counter's classes).
    counter = work.start(request.get("work"))
    solution = str(request["solution"])
    # The lesson's rules on how an answer is computed (isolation/rules.py): a breach is the
    # case's outcome, whatever the call did after it.
    kept = rules.prepare(request.get("rules"), lambda path: path == solution)
    try:
        result = _run_case(request, gate, counter, kept)
        broken = kept.outcome() if kept is not None else None
        if broken is not None and result.get("kind") in (RETURNED, RAISED, SETUP):
            broken["seconds"] = result.get("seconds", 0.0)
            return broken
        return result
    finally:
        if kept is not None:
            kept.undo()
        work.stop(counter)
        undo()


def _drive(plan: drive.Plan, module: Any, function: Any, *arguments: Any) -> Any:
    """The case's call through *plan* (a harness's drive, or the entry), for the counter."""
    return plan.call(module, function, list(arguments))


def _run_case(
    request: dict[str, Any],
    gate: Callable[[bytes], None] | None,
    counter: work.Counter | None,
    kept: rules.Rules | None = None,
) -> dict[str, Any]:
    solution = str(request["solution"])
    folder = Path(request.get("folder") or Path(solution).parent)
    shown = library_frames(request.get("library"))
    debug = bool(request.get("debug"))
    confined = request.get("sandbox")
    source = base64.b64decode(request["source"])
    if confined:
        try:
            # With a result channel, the host's result file is never opened here.
            confine(confined, None if _CHANNEL is not None else request.get("result"))
        except (SandboxError, OSError) as exc:
            if gate is not None:
                gate(b"!" + str(exc).encode("utf-8", errors="replace"))
            return {"kind": INTERNAL, "message": f"the sandbox could not be set up: {exc}"}
    elif str(folder) not in sys.path:
        # Appended, not prepended: the learner's helper modules can be imported, but a
        # learner's torch.py cannot shadow the real torch. (Not in the sandbox: there, the
        # course's other files are out of reach.)
        sys.path.append(str(folder))
    if gate is not None:
        gate(b"+")
    # After the sandbox closed: more torch threads may start here, and a thread started
    # before would keep the grader's rights.
    _seed(int(request.get("seed", 0)), request.get("threads"))

    try:
        # Fresh objects per call, so a learner who mutates an input changes nothing elsewhere;
        # built before learner code loads, so none of it can stand in for torch's own code.
        arguments = rebuild(request["inputs"])
        if counter is not None and counter.also is not None:
            counter.smaller = rebuild(counter.also)
        gradients = request.get("gradients")  # a gradient case: isolation/gradients.py
        spare = rebuild(request["inputs"]) if gradients and gradients.get("gradcheck") else None
    except Exception as exc:
        return {"kind": INTERNAL, "message": f"the case's inputs could not be built: {exc}"}
    plan = None
    if request.get("behaviour"):  # a harness, mutation rules: isolation/drive.py
        try:  # the harness loads before the learner's module, from the request's bytes
            plan = drive.prepare(request["behaviour"], lambda: rebuild(request["inputs"]))
        except BaseException as exc:
            _pass_through(exc, debug)
            harness = request["behaviour"].get("harness") or {}
            return drive.harness_bug(exc, str(harness.get("file", "")))

    if kept is not None:  # a loop where the lesson forbids them; guards on forbidden calls
        static = kept.static(source, solution, str(request["entry"]))
        if static is not None:
            return static
        kept.guard()
    # Tracebacks show the learner's lines from these bytes: the file itself is not opened.
    lines = source.decode("utf-8", errors="replace").splitlines(keepends=True)
    linecache.cache[solution] = (len(source), None, lines, solution)
    loader = _Source(MODULE_NAME, solution, source)
    spec = importlib.util.spec_from_file_location(MODULE_NAME, solution, loader=loader)
    if spec is None:
        return {"kind": SETUP, "error_type": "missing_file", "message": solution}
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(MODULE_NAME)
    sys.modules[MODULE_NAME] = module
    try:
        loader.exec_module(module)
    except BaseException as exc:
        _pass_through(exc, debug)
        return _raised(exc, "import", solution, folder, confined=bool(confined), shown=shown)
    finally:
        if previous is not None:
            sys.modules[MODULE_NAME] = previous
        else:
            sys.modules.pop(MODULE_NAME, None)

    entry = request["entry"]
    function = getattr(module, entry, None)
    if function is None:
        names = sorted(
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == MODULE_NAME
        )
        return {"kind": SETUP, "error_type": "no_entry", "message": entry, "names": names}
    if not callable(function):
        return {"kind": SETUP, "error_type": "not_callable", "message": answers.qualified(function)}
    inputs = request["inputs"]
    try:
        if plan is None or plan.harness is None:  # a harness makes its own calls
            inspect.signature(function).bind(*inputs)
    except TypeError:
        try:
            parameters = list(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            parameters = []
        return {"kind": SETUP, "error_type": "signature", "message": ", ".join(parameters)}
    except ValueError:
        pass  # no signature to check (a builtin); the call itself will tell

    statistical = draws.plan(inputs)  # a statistical case: N calls, their draws counted
    counted: Callable[..., Any] = function
    if plan is not None:  # a harness's whole drive is what a work budget counts
        counted = functools.partial(_drive, plan, module, function)
    # Which of the grader's generators the call draws from, and whether it draws from torch's
    # global one instead (a draw without generator=g): told with a wrong answer.
    states = _stream_states(arguments) if statistical is None and not gradients else None
    started = time.perf_counter()
    try:
        if statistical is not None:
            # Each draw through the harness's drive and the mutation rules, as one call is.
            drawing = function if plan is None else plan.drawing(module, function)
            answer = draws.draw(drawing, inputs, arguments, statistical, answers.encode)
        elif gradients:
            answer = gradient_call(function, arguments, gradients, spare)
        elif counter is not None:
            answer = counter.call(counted, arguments)
        elif plan is not None:
            answer = plan.call(module, function, arguments)
        else:
            answer = function(*arguments)
    except BaseException as exc:
        _pass_through(exc, debug)
        seconds = time.perf_counter() - started
        learner = _raised(
            exc, "call", solution, folder, seconds=seconds, confined=bool(confined), shown=shown
        )
        if plan is not None:  # whose it is: the learner's, the author's words, a harness bug
            inside = lambda path: _inside(path, solution, folder)  # noqa: E731
            return drive.raised(plan, exc, arguments, seconds, learner, inside)
        return learner
    seconds = time.perf_counter() - started
    if plan is not None and statistical is None:
        what, answer = plan.answer(answer, arguments)
        if what != "answer":
            return drive.result(plan, what, answer, seconds)
    after: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    try:
        encoded = answers.encode(answer) if statistical is None else answer
        if plan is not None and statistical is None and not gradients:
            # Each input that must stay as it was, as the call left it: the grader compares
            # it with the case's own (core/behaviour.py). The check above only words it;
            # learner code shares this process and could switch that one off.
            after = {
                name: answers.encode(arguments[index])
                for index, name in enumerate(plan.names)
                if plan.after.get(name) == "unchanged" and index < len(arguments)
            }
        if plan is not None and plan.harness is not None and statistical is None:
            facts = {str(key): answers.encode(value) for key, value in drive.FACTS.items()}
    except BaseException as exc:  # a learner's tensor subclass can raise from anything
        _pass_through(exc, debug)
        return _raised(
            exc, "call", solution, folder, seconds=seconds, confined=bool(confined), shown=shown
        )
    details: dict[str, Any] = {}
    if counter is not None:
        details["work"] = counter.report(counted)
    if states is not None:
        details["streams"] = _streams_moved(arguments, states)
    returned: dict[str, Any] = {"kind": RETURNED, "answer": encoded, "seconds": seconds}
    if details:
        returned["details"] = details
    if after:
        returned["after"] = after
    if facts:
        returned["facts"] = facts
    return returned


def _stream_states(arguments: list[Any]) -> tuple[dict[int, Any], Any] | None:
    """The state of each ``torch.Generator`` argument and of torch's global generator before
    the call; None when no argument is a generator."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    found = {i: a.get_state() for i, a in enumerate(arguments) if isinstance(a, torch.Generator)}
    if not found:
        return None
    return found, torch.random.default_generator.get_state()


def _streams_moved(arguments: list[Any], states: tuple[dict[int, Any], Any]) -> dict[str, Any]:
    """Which generator arguments the call left as they were (their positions), and whether
    torch's global generator moved."""
    torch = sys.modules["torch"]
    before, global_before = states
    unused = [
        i
        for i, state in before.items()
        if isinstance(arguments[i], torch.Generator)
        and torch.equal(arguments[i].get_state(), state)
    ]
    moved = not torch.equal(torch.random.default_generator.get_state(), global_before)
    return {"unused": unused, "global": moved}


def _pass_through(exc: BaseException, debug: bool) -> None:
    if debug and (isinstance(exc, KeyboardInterrupt) or type(exc).__name__ == "BdbQuit"):
        raise exc


def prepare() -> None:
    """Import, once, what seeding every case needs (numpy.random alone costs ~50 ms), so a
    forked child pays nothing for it."""
    if "numpy" in sys.modules:
        with contextlib.suppress(Exception):
            import numpy.random  # noqa: F401
    torch = sys.modules.get("torch")
    if torch is not None:
        # The first call of an operator in a process pays for lazy set-up; paying it here,
        # once, saves every forked child that cost.
        with contextlib.suppress(Exception):
            x = torch.tensor([[[0.0, 1.0], [2.0, 3.0]]], dtype=torch.float64)
            y = torch.nn.functional.scaled_dot_product_attention(x, x, x)
            y = (x @ x.transpose(-2, -1)).softmax(-1).masked_fill(torch.ones(2, 2).bool(), 0)
            torch.cat([y, y]).permute(1, 0, 2).reshape(2, -1).contiguous().view(-1).tolist()
    sandbox_warm()
    _seed(0, None)


def _seed(seed: int, threads: Any) -> None:
    random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        # The CPU generator only: torch.manual_seed also queues a CUDA seeding call, which
        # records a stack trace every time (~2 ms) and has no use here.
        torch.random.default_generator.manual_seed(seed)
        if threads:
            torch.set_num_threads(int(threads))
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed(seed)


def _inside(path: str, solution: str, folder: Path) -> bool:
    """Whether a traceback's file is the learner's: its own file (by the name it was
    compiled with), or a helper module beside it where no sandbox keeps those out. Compared
    as text: no path of the learner's is looked up."""
    return path == solution or path.startswith(str(folder) + os.sep)


class _Source(importlib.machinery.SourceFileLoader):
    """Loads the learner's module from the source read before the sandbox closed, and never
    reads or writes bytecode beside it (a stale or planted .pyc must not stand in for it)."""

    def __init__(self, fullname: str, path: str, source: bytes) -> None:
        super().__init__(fullname, path)
        self._source = source

    def get_data(self, path: str) -> bytes:
        if path == self.path:
            return self._source
        raise OSError("bytecode is not read")

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        pass


def _denied(exc: BaseException, folder: Path) -> dict[str, Any] | None:
    """What the sandbox refused, when *exc* says it refused something: a file (named), the
    course's other modules, or an action (a connection, a signal)."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        for candidate in (folder / f"{top}.py", folder / top):
            if candidate.exists():
                return {"path": str(candidate)}
        return None
    # Landlock refuses with EACCES, or EXDEV for a link or move out of an allowed folder;
    # the seccomp filter with EPERM.
    if isinstance(exc, PermissionError) or (isinstance(exc, OSError) and exc.errno == 18):
        path = exc.filename if isinstance(exc.filename, str) else ""
        if path:
            return {"path": path}
        return {"action": _action(exc)}
    return None


def _action(exc: BaseException) -> str:
    """What a refused call without a file name was for, from the line that made it."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    text = f"{last.filename} {last.line}" if last is not None else ""
    if any(word in text for word in ("socket", "connect", "bind", "http", "urlopen")):
        return "network"
    if any(word in text for word in ("kill", "signal", "ptrace", "prlimit")):
        return "signal"  # prlimit on the process itself is a limit it raised (see _limit)
    return "other"


#: The resource limits whose names in a refused ``setrlimit`` call say which limit it was.
_RLIMITS = {
    "RLIMIT_AS": "memory",
    "RLIMIT_DATA": "memory",
    "RLIMIT_RSS": "memory",
    "RLIMIT_NPROC": "processes",
    "RLIMIT_FSIZE": "disk",
    "RLIMIT_NOFILE": "open_files",
    **{f"RLIMIT_{name.upper()}": name for name in OTHER_LIMITS},
}
#: ``resource.prlimit`` on the process itself (pid 0 or its own): refused with EPERM only when
#: it raises a hard limit; on another process the seccomp filter refuses it whatever it does.
_OWN_PRLIMIT = re.compile(r"prlimit\(\s*(?:0|os\.getpid\(\))\s*,")
#: Words in the line that failed with EAGAIN that say it was starting a process.
_STARTS = ("fork", "Popen", "spawn", "Process", "Pool", "start")


def _limit(exc: BaseException) -> str | None:
    """Which of the case's limits *exc* says it ran into: ``processes`` (a new process or
    thread refused), ``disk`` (a file too large, the budget full), ``open_files``, or
    ``raise:<limit>`` (learner code tried to raise one, which soft = hard refuses); None for
    anything else."""
    number = exc.errno if isinstance(exc, OSError) else None
    if number in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        return "disk"
    if number == errno.EMFILE:
        return "open_files"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "processes"
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    text = f"{last.line}" if last is not None else ""
    if number == errno.EAGAIN and any(word in text for word in _STARTS):
        return "processes"
    raised = isinstance(exc, ValueError) and "maximum limit" in str(exc)
    # resource.setrlimit's words for EPERM and EINVAL (a soft or hard limit above the hard),
    # and prlimit's EPERM on the process itself (a hard limit raised).
    if raised or (isinstance(exc, PermissionError) and _OWN_PRLIMIT.search(text)):
        found = [limit for name, limit in _RLIMITS.items() if re.search(rf"\b{name}\b", text)]
        return f"raise:{found[0] if found else 'other'}"
    return None


def library_frames(spec: Any) -> dict[str, bool]:
    """The files of a job's course library that a learner's traceback shows (``library`` of
    the request): each module's file, True (the course's code, which the learner calls), and
    each of the learner's own parts, False (their own code, shown as theirs)."""
    if not isinstance(spec, dict):
        return {}
    found = {str(m[1]): True for m in spec.get("modules", []) if len(m) > 1}
    found.update({str(p[1]): False for p in spec.get("own", []) if len(p) > 1})
    return found


def _raised(
    exc: BaseException,
    phase: str,
    solution: str,
    folder: Path,
    seconds: float = 0.0,
    confined: bool = False,
    shown: dict[str, bool] | None = None,
) -> dict[str, Any]:
    shown = shown or {}
    frames = [
        {"file": f.filename, "line": f.lineno or 0, "function": f.name, "code": f.line or ""}
        # The learner's lines, and the course library's where the learner's call went on in
        # it (an IndexError inside gpt_forward is told at the library's line, and theirs).
        for f in traceback.extract_tb(exc.__traceback__)
        if _inside(f.filename, solution, folder) or f.filename in shown
    ]
    for frame in frames:
        if shown.get(str(frame["file"])):
            frame["library"] = True
    if isinstance(exc, SyntaxError) and exc.filename and _inside(exc.filename, solution, folder):
        frames.append(
            {
                "file": exc.filename,
                "line": exc.lineno or 0,
                "function": "",
                "code": (exc.text or "").rstrip("\n"),
            }
        )
    error_type = type(exc).__name__
    module = type(exc).__module__ or ""
    try:
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    except BaseException:  # a learner's exception whose __str__ raises
        message = ""
    details: dict[str, Any] = {"module": module}
    denied = _denied(exc, folder) if confined else None
    if denied is not None:
        details["denied"] = denied
    limit = _limit(exc) if confined else None
    if limit is not None:
        details["limit"] = limit
    # pytest marks skip() and fail() as builtins for display; their base class tells the truth.
    if any(c.__name__ == "OutcomeException" for c in type(exc).__mro__) or module.startswith(
        "_pytest"
    ):
        details["pytest"] = True
    if isinstance(exc, SystemExit):
        code = exc.code
        details["code"] = code if isinstance(code, (int, str, type(None))) else str(code)
    return {
        "kind": RAISED,
        "error_type": error_type,
        "message": message[:4000],
        "phase": phase,
        "frames": frames[-20:],
        "seconds": seconds,
        "details": details,
    }


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # not Linux: macOS does not enforce RLIMIT_AS anyway


def limit_memory(memory_mb: float | None) -> None:
    """Allow learner code *memory_mb* MiB of address space on top of what torch already holds.

    A cap on the whole address space would break torch, which reserves far more than it uses;
    a cap on growth stops a runaway allocation with a MemoryError instead.
    """
    if not memory_mb or resource is None:
        return

    current = _address_space()
    if current is None:
        return
    limit = current + int(memory_mb * 1024 * 1024)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    # Soft = hard: learner code cannot raise its own cap.
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


#: The sealed memory file this child writes its result into (see
#: :mod:`pytest_lessons.isolation.channel`); None: the result file at its path.
_CHANNEL: int | None = None


def use_channel(fd: int) -> None:
    """Write this child's result into memory file *fd* (kept from processes it executes)."""
    global _CHANNEL
    os.set_inheritable(fd, False)
    _CHANNEL = fd


def write_result(result: dict[str, Any], path: str, limit: int | None = None) -> None:
    """Write *result* as JSON to *path* (read back by the runner): whole or not at all, so a
    result that exists is complete; where a tmpfs covers the private folder, through the
    descriptor the sandbox opened beneath it (a write cut short is then unreadable JSON: the
    case's own failure, as any result learner code spoils). An answer larger than *limit*
    bytes is not written: the runner would not read it, and the learner is told why instead."""
    data = json.dumps(result, allow_nan=True).encode("utf-8")
    if limit is not None and len(data) > limit and result.get("kind") == RETURNED:
        mib = 1 << 20
        reason = (
            f"larger than the grader accepts ({len(data) / mib:.1f} MiB; the limit is "
            f"{limit / mib:g} MiB, --lesson-answer-size)"
        )
        data = json.dumps({"kind": RETURNED, "answer": answers.cut(reason)}).encode()
    if _CHANNEL is not None:
        channel.write(_CHANNEL, data)
        return
    fd = result_channel()
    if fd is not None:
        # The file the sandbox opened beneath the case's tmpfs: written from its start, over
        # anything learner code wrote there, then cut to its length (never truncated to 0
        # first: ext4 then flushes the file on close, and its removal waits for the disk).
        try:
            view, done = memoryview(data), 0
            while done < len(data):
                done += os.pwrite(fd, view[done:], done)
            if os.fstat(fd).st_size > len(data):
                os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
        return
    with open(path + ".part", "wb") as handle:
        handle.write(data)
    os.replace(path + ".part", path)


def gate_writer(fd: int) -> Callable[[bytes], None]:
    """The gate of :func:`run_case` on the pipe *fd*: said once, then closed, so learner code
    never holds it."""

    def say(message: bytes) -> None:
        try:
            os.write(fd, message[:4096])
        finally:
            os.close(fd)

    return say


def main() -> None:  # pragma: no cover - runs as a spawned child; tested through the runner
    """Spawned child (used where fork is not available): ``python -m pytest_lessons.isolation.child
    [--gate=FD] [module to preload ...]`` imports those modules first, then reads on stdin a
    line with the sandbox's shared part (JSON or ``null``; see
    :func:`pytest_lessons.isolation.sandbox.prepare_rules`) and its request as a frame (its JSON
    and its inputs' raw bytes: :func:`~pytest_lessons.isolation.arguments.unframe`; so it can be
    started before its case exists), and writes the result to the file named in the request."""
    gate: Callable[[bytes], None] | None = None
    for argument in sys.argv[1:]:
        if argument.startswith("--gate="):
            gate = gate_writer(int(argument.partition("=")[2]))
        if argument.startswith("--result-fd="):
            use_channel(int(argument.partition("=")[2]))
    gc.disable()  # no collections while torch fills the heap: its objects are long-lived
    for name in sys.argv[1:]:
        if name.startswith("--"):
            continue
        with contextlib.suppress(Exception):
            __import__(name)
    prepare()
    gc.enable()
    sys.stdout.flush()
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    # The first line: what of the sandbox every case shares (or null), sent before the job
    # when the runner knows it, so the walls go up while this Python waits.
    try:
        shared = json.loads(sys.stdin.buffer.readline() or b"null")
    except ValueError:
        shared = None
    prepare_rules(shared if isinstance(shared, dict) else None, None)
    request = unframe(sys.stdin.buffer.read())
    sys.stdin = open(os.devnull)  # noqa: SIM115 - learner input() must see end of file
    # As in a forked child: UTF-8 whatever the locale (Windows' ANSI code page cannot write
    # "→"), and unbuffered, so stdout and stderr interleave as the learner wrote them.
    for name, fd in (("stdout", 1), ("stderr", 2)):
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(
            raw, encoding="utf-8", errors="backslashreplace", write_through=True
        )
        setattr(sys, name, stream)
    limit_memory(request.get("memory_mb"))
    try:
        result = run_case(request, gate)
    except BaseException as exc:  # the learner broke this process's own machinery
        result = {"kind": DIED, "message": f"{type(exc).__name__}: {exc}"}
    sys.stdout.flush()
    sys.stderr.flush()
    write_result(result, request["result"], request.get("answer_bytes"))
    os._exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
