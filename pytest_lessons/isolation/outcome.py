"""What running learner code produced, as plain data: the runner boundary.

An :class:`Outcome` is all the judge (compare, diagnose, report) ever sees of learner code. It is
built from a JSON-compatible dict, whichever way the code ran (forked child, spawned child or, for
debugging, in-process), so nothing the learner made reaches the judge.

The answer (:attr:`Outcome.answer`) is in the answer encoding of
:mod:`pytest_lessons.isolation.answers`, which checks it (:func:`~pytest_lessons.isolation
.answers.valid_answer`) before an outcome is made of it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from pytest_lessons.isolation import answers
from pytest_lessons.isolation import text as _text_boundary
from pytest_lessons.isolation.text import all_plain, learner_data, learner_text
from pytest_lessons.isolation.work import believable as believable_work


class OutcomeKind(str, Enum):
    """How running one case of learner code ended. A ``str``, so ``kind == "returned"``, JSON
    and f-strings see the bare word, as the child writes it."""

    __str__ = str.__str__
    __format__ = str.__format__  # type: ignore[assignment]

    RETURNED = "returned"
    """The entry function returned; see :attr:`Outcome.answer`."""
    RAISED = "raised"
    """An exception escaped learner code (import or call)."""
    SETUP = "setup"
    """The learner's file or function cannot be used as it is."""
    TIMEOUT = "timeout"
    """The case took longer than its limit and was stopped."""
    DIED = "died"
    """The process running learner code ended without an answer."""
    INTERNAL = "internal"
    """The grader itself failed; not the learner's fault."""


#: The outcome kinds by their short names, as every module imports them.
RETURNED = OutcomeKind.RETURNED
RAISED = OutcomeKind.RAISED
SETUP = OutcomeKind.SETUP
TIMEOUT = OutcomeKind.TIMEOUT
DIED = OutcomeKind.DIED
INTERNAL = OutcomeKind.INTERNAL


def clean_text(text: str) -> str:
    """*text* without terminal escape sequences or control characters (a lone CR becomes LF),
    its lines kept: :func:`pytest_lessons.isolation.text.learner_text`, the one boundary."""
    return learner_text(text, _text_boundary.OUTPUT)


@dataclass(frozen=True)
class Frame:
    """One line of the learner's own traceback."""

    file: str
    line: int
    function: str
    code: str = ""
    library: bool = False
    """The line is the course library's (its code, which the learner's call went on in), not
    the learner's own."""


#: Each text field of an outcome, its bound, and whether it keeps its lines.
_TEXT_FIELDS = (
    ("error_type", _text_boundary.NAME, False),
    ("message", _text_boundary.MESSAGE, True),
    ("phase", _text_boundary.WORD, False),
    ("signal", _text_boundary.WORD, False),
    ("output", _text_boundary.OUTPUT, True),
)


@dataclass(frozen=True)
class Outcome:
    """The result of running one case of learner code."""

    kind: OutcomeKind
    """How the case ended (given as its word, it is read as the :class:`OutcomeKind`)."""
    answer: Any = None
    """With kind ``returned``: the answer in the encoding described in the module docstring."""
    error_type: str = ""
    """With ``raised``: the exception's class name (``RuntimeError``); with ``setup``: a problem
    code (``missing_file``, ``no_entry``, ``not_callable``, ``signature``)."""
    message: str = ""
    phase: str = ""
    """With ``raised``: ``import`` or ``call``."""
    frames: tuple[Frame, ...] = ()
    exit_code: int | None = None
    signal: str = ""
    """With ``died``: the signal's name (``SIGSEGV``) when a signal ended the process."""
    seconds: float = 0.0
    """How long the case's code ran, as the runner measured it: from the hand-over of its job
    to its end (a timed-out case: until it was stopped). Never what learner code reported."""
    output: str = ""
    """What learner code printed, capped, with escape sequences removed."""
    output_cut: int = 0
    """How many bytes of printed output were dropped past the cap."""
    names: tuple[str, ...] = ()
    """With setup ``no_entry``: the public names the learner's file defines."""
    details: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    """With ``returned``, for a lesson whose inputs must stay as they were (``after =
    "unchanged"``): each such input as the call left it, by name, in the answer encoding. The
    grader compares it with the case's own input (:mod:`pytest_lessons.core.behaviour`), so no
    verdict of the child's decides it; never cleaned as text, like the answer."""
    facts: dict[str, Any] = field(default_factory=dict)
    """With ``returned``, for a lesson whose harness checks what the grader checks again:
    what it checked, by key (``initial:weight``: a parameter's initial values, flat), in the
    answer encoding (:mod:`pytest_lessons.core.initial`)."""

    def __post_init__(self) -> None:
        # A kind given as its word ("returned") is the same kind: one type for every reader.
        object.__setattr__(self, "kind", OutcomeKind(self.kind))
        # The boundary for learner text (isolation/text.py): however a runner built this
        # outcome, each of its texts is plain and bounded before anything reads it.
        if self._plain_already():
            return  # made again (replace, a round trip) from texts already cleaned
        for name, limit, lines in _TEXT_FIELDS:
            object.__setattr__(self, name, learner_text(getattr(self, name), limit, lines))
        object.__setattr__(
            self,
            "frames",
            tuple(
                Frame(
                    learner_text(f.file, _text_boundary.PATH, lines=False),
                    f.line if type(f.line) is int else 0,
                    learner_text(f.function, _text_boundary.NAME, lines=False),
                    learner_text(f.code, _text_boundary.PATH, lines=False),
                )
                for f in self.frames
            ),
        )
        object.__setattr__(
            self,
            "names",
            tuple(learner_text(n, _text_boundary.NAME, lines=False) for n in self.names[:200]),
        )
        object.__setattr__(self, "details", learner_data(dict(self.details)))

    def _plain_already(self) -> bool:
        """Whether every text is one :func:`~pytest_lessons.isolation.text.learner_text` would
        leave as it is: checked in one scan, so that an outcome made again costs little."""
        frames, names = self.frames, self.names
        if type(frames) is not tuple or type(names) is not tuple or len(names) > 200:
            return False
        one_line = [self.error_type, self.phase, self.signal, *names]
        bounds = [
            len(self.error_type) <= _text_boundary.NAME,
            len(self.phase) <= _text_boundary.WORD,
            len(self.signal) <= _text_boundary.WORD,
            len(self.message) <= _text_boundary.MESSAGE,
            len(self.output) <= _text_boundary.OUTPUT,
        ]
        for f in frames:
            if type(f) is not Frame or type(f.line) is not int:
                return False
            one_line += (f.file, f.function, f.code)
            bounds += (
                len(f.file) <= _text_boundary.PATH,
                len(f.function) <= _text_boundary.NAME,
                len(f.code) <= _text_boundary.PATH,
            )
        if not all(bounds) or any(len(n) > _text_boundary.NAME for n in names):
            return False
        if self.details and learner_data(self.details) != self.details:
            return False
        return all_plain(one_line, [self.message, self.output])

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """Rebuild an outcome from its JSON form, ignoring unknown keys."""
        frames = tuple(
            Frame(
                str(f.get("file", "")),
                int(f.get("line", 0)),
                str(f.get("function", "")),
                str(f.get("code", "")),
                f.get("library") is True,
            )
            for f in data.get("frames", ())
            if isinstance(f, dict)
        )
        exit_code = data.get("exit_code")
        return cls(
            kind=OutcomeKind(data.get("kind", INTERNAL)),
            answer=data.get("answer"),
            error_type=str(data.get("error_type", "")),
            message=str(data.get("message", "")),
            phase=str(data.get("phase", "")),
            frames=frames,
            exit_code=exit_code if isinstance(exit_code, int) else None,
            signal=str(data.get("signal", "")),
            seconds=float(data.get("seconds", 0.0) or 0.0),
            output=str(data.get("output", "")),
            output_cut=int(data.get("output_cut", 0) or 0),
            names=tuple(str(n) for n in data.get("names", ())),
            details=dict(data.get("details", {}) or {}),
            after=dict(data.get("after", {}) or {}),
            facts=dict(data.get("facts", {}) or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form read by :meth:`from_dict`."""
        return {
            "kind": self.kind,
            "answer": self.answer,
            "error_type": self.error_type,
            "message": self.message,
            "phase": self.phase,
            "frames": [f.__dict__ for f in self.frames],
            "exit_code": self.exit_code,
            "signal": self.signal,
            "seconds": self.seconds,
            "output": self.output,
            "output_cut": self.output_cut,
            "names": list(self.names),
            "details": self.details,
            "after": self.after,
            "facts": self.facts,
        }

    def with_output(self, output: str, cut: int) -> Outcome:
        """This outcome with the captured output attached."""
        data = self.to_dict()
        data["output"], data["output_cut"] = output, cut
        return Outcome.from_dict(data)


#: What the process that runs learner code may say of its own case: the kinds its answer
#: decides. A timeout, a grader error or "not run" are the runner's to find, never its.
CHILD_KINDS = frozenset({RETURNED, RAISED, SETUP, DIED})
#: The problems with a learner's file that the child finds (the file itself is read by the
#: runner, which finds the others).
CHILD_SETUP = frozenset({"no_entry", "not_callable", "signature"})
#: Whose an exception of a behaviour lesson is (see :mod:`pytest_lessons.isolation.drive`):
#: the author's words for the learner, the learner's call the harness made, an input the call
#: changed, or a bug of the harness. Said by the child, so never a grader error by itself.
HARNESS_DETAILS = frozenset({"failure", "call", "changed", "bug"})
#: The id a harness's :class:`~pytest_lessons.isolation.drive.LessonFailure` gives its check
#: (``not-a-parameter``), as a result file may carry it.
CHECK_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
#: What a result that cannot be believed becomes: the case's own failure.
UNREADABLE = "the answer it left could not be read"


def too_large(size: int, limit: int) -> Outcome:
    """The outcome of a case whose answer is larger than the run accepts: its own failure,
    told as a returned answer that was not read."""
    mib = 1 << 20
    reason = (
        f"larger than the grader accepts ({size / mib:.1f} MiB; the limit is {limit / mib:g} "
        "MiB, --lesson-answer-size)"
    )
    return Outcome(kind=RETURNED, answer=answers.cut(reason))


#: The resource limits of a process that are no setting of a run, by the names that
#: ``raise:<name>`` gives them (``RLIMIT_CORE`` is ``core``): a case cannot raise them either.
OTHER_LIMITS = (
    "core",
    "cpu",
    "stack",
    "memlock",
    "locks",
    "msgqueue",
    "nice",
    "rtprio",
    "rttime",
    "sigpending",
)
#: The limits a raised exception's details may say the case ran into (see the child's
#: ``_limit``): a new process or thread, the disk, open files, or a limit it tried to raise.
LIMIT_KINDS = frozenset(
    {"processes", "disk", "open_files"}
    | {
        f"raise:{name}"
        for name in ("memory", "processes", "disk", "open_files", "other", *OTHER_LIMITS)
    }
)
#: The message of a case whose files took more than its disk budget (see :func:`over_disk`).
OVER_DISK = "its files took more than the disk budget"


def over_disk(used: int, budget: int, seconds: float = 0.0) -> Outcome:
    """The outcome of a case whose files in its private folder took *used* bytes, more than
    its *budget*, as the runner counted them once it ended (where no tmpfs kept the budget):
    its own failure, whatever it answered. Only the runner makes it: a child's result cannot
    carry these details (see :func:`from_untrusted`)."""
    return Outcome(
        kind=DIED,
        message=OVER_DISK,
        seconds=seconds,
        details={"limit": "disk", "used": used, "budget": budget},
    )


def over_memory(seconds: float = 0.0) -> Outcome:
    """The outcome of a case in which the kernel killed a process (the case's own or one it
    started) because the case as a whole held more memory than its memory cgroup allows:
    its own failure, worded as a MemoryError is ("Use less memory ..."). Only the runner
    makes it."""
    return Outcome(
        kind=RAISED,
        error_type="MemoryError",
        message="the case as a whole held more memory than it may (its processes together)",
        seconds=seconds,
        details={"cgroup": "memory"},
    )


#: Bytes of a result per JSON value the grader reads in it: a result of up to *limit* bytes
#: may hold ``limit // BYTES_PER_VALUE`` values (1,056,768 for a 32 MiB answer and its
#: envelope). The grader's memory follows the values, not the bytes: ``[]`` is 3 bytes of
#: JSON and 64 of Python, ``1,`` 2 and 8, so a 32 MiB answer of small values would take the
#: pytest process gigabytes. The child packs rectangular blocks of numbers as raw bytes
#: (``dense``), which count as one value each.
BYTES_PER_VALUE = 32
#: The bytes that make JSON values: each value but the first follows one of them.
_STRUCTURE = (b",", b"[", b"{", b":")
#: More digits than Python reads as an int (``sys.get_int_max_str_digits``'s default):
#: converting them takes time quadratic in their number where that limit is off. Anchored at
#: a run's first digit: unanchored, the search tries every digit of a run as a start, itself
#: quadratic (4.3 s for 860 KB of 4,300-digit runs; 0.6 s for 32 MiB anchored).
_LONG_NUMBER = re.compile(rb"(?<![0-9])[0-9]{4301}")
#: How a JSON object starts.
_OBJECT = re.compile(rb"[ \t\r\n]*\{")


def values_limit(limit: int) -> int:
    """The most JSON values the grader reads in a result of at most *limit* bytes."""
    return max(1, limit // BYTES_PER_VALUE)


def count_values(data: bytes, most: int) -> int:
    """How many JSON values *data* holds, counted in C-speed passes over its bytes before
    any Python object is built: one more than the commas, brackets, braces and colons
    outside strings. Counted inside strings too at first (an upper bound); only when that
    bound is over *most* are the strings left out (see :func:`_outside_strings`)."""
    rough = sum(map(data.count, _STRUCTURE)) + 1
    if rough <= most:
        return rough
    return sum(sum(map(part.count, _STRUCTURE)) for part in _outside_strings(data)) + 1


#: The bytes a pass of :func:`_outside_strings` splits at once: its pieces' memory is bounded
#: by this, not by the answer's size.
_CHUNK = 1 << 20


def _outside_strings(data: bytes) -> Iterator[bytes]:
    """What of *data* is outside its JSON strings (for malformed JSON, outside what look like
    them), a chunk at a time. Escaped backslashes go first, then escaped quotes (so that an
    escaped backslash before a quote still ends a string); then every quote left opens or
    closes a string, and the text between is kept or dropped by the quotes' parity so far."""
    text = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # the same object if none
    inside = False
    for start in range(0, len(text), _CHUNK):
        pieces = text[start : start + _CHUNK].split(b'"')
        yield b"".join(pieces[1::2] if inside else pieces[::2])
        if len(pieces) % 2 == 0:  # an odd number of quotes: the next chunk starts the other way
            inside = not inside


def _ints_unbounded() -> bool:
    """Whether this Python converts ints of any length from text (before 3.11 and its
    backports, or with the limit turned off): then the grader refuses long ones itself."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return get is None or get() == 0


def too_many(values: int, most: int, case: bool = False) -> Outcome:
    """The outcome of a case whose result holds more values than the grader reads: its own
    failure, told as a returned answer that was not read (as :func:`too_large`). *case*: the
    bound was the case's own (from its expected answer's size), not the answer size's."""
    reason = (
        f"more values than the grader reads: {values:,}; the limit is {most:,}, one per "
        f"{BYTES_PER_VALUE} bytes of --lesson-answer-size"
    )
    if case:
        reason = (
            f"more values than the grader reads for this case: {values:,}, where the "
            f"expected answer holds far fewer; the limit is {most:,}"
        )
    return Outcome(kind=RETURNED, answer=answers.cut(reason))


def from_untrusted(
    data: bytes | None, limit: int, seconds: float = 0.0, values: int | None = None
) -> Outcome:
    """The outcome a child's result file says, read as untrusted input: learner code shares
    the process and the folder, so it may have written the file itself.

    Never raises, and its work is linear in *data*'s size: *data* holds at most *limit* + 1
    bytes as read; more than *limit* is the case's own failure (:func:`too_large`), and so are
    more values than :func:`values_limit` allows, or than *values* where the case sets a
    tighter bound (:func:`too_many`, counted before they are parsed), and anything that is
    not a result the child could have written (malformed JSON, an int of more digits than
    Python reads, a kind the child never reports, fields of the wrong type): a :data:`DIED`
    outcome saying its answer could not be read. *seconds* is the runner's own measure of
    the run.
    """
    if data is None:
        return Outcome(kind=DIED, seconds=seconds)
    if len(data) > limit:
        return replace(too_large(len(data), limit), seconds=seconds)
    outcome = None
    if not _OBJECT.match(data):  # a result is a JSON object: this is none, whatever it holds
        return Outcome(kind=DIED, message=UNREADABLE, seconds=seconds)
    most = values_limit(limit)
    case = values is not None and values < most
    if values is not None:
        most = min(most, values)
    found = count_values(data, most)
    if found > most:
        return replace(too_many(found, most, case), seconds=seconds)
    if not (_ints_unbounded() and _LONG_NUMBER.search(b"".join(_outside_strings(data)))):
        try:
            parsed = json.loads(data)
            outcome = _believable(parsed)
        except Exception:  # RecursionError, MemoryError's cousins, a learner's odd values
            outcome = None
    if outcome is None:
        return Outcome(kind=DIED, message=UNREADABLE, seconds=seconds)
    return replace(outcome, seconds=seconds)


def _text(value: Any, cap: int = 4000) -> str:
    if not isinstance(value, str):
        raise ValueError("not text")
    return value[:cap]


def _believable(data: Any) -> Outcome | None:
    """The outcome *data* stands for, if the child could have written it; None otherwise."""
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    if kind not in CHILD_KINDS:
        return None
    if kind == RETURNED:
        if "answer" not in data or not answers.valid_answer(data["answer"]):
            return None
        details = data.get("details")
        kept: dict[str, Any] = {}
        if isinstance(details, dict) and "work" in details:  # a budget's figures: work.py
            figures = believable_work(details["work"])
            if figures is None:
                return None
            kept["work"] = figures
        if isinstance(details, dict) and "streams" in details:  # the child's _streams_moved
            streams = believable_streams(details["streams"])
            if streams is None:
                return None
            kept["streams"] = streams
        sent = [data.get("after", {}), data.get("facts", {})]
        if not all(
            isinstance(part, dict)
            and all(isinstance(key, str) and answers.valid_answer(v) for key, v in part.items())
            for part in sent
        ):
            return None
        return Outcome(
            kind=RETURNED, answer=data["answer"], details=kept, after=sent[0], facts=sent[1]
        )
    if kind == SETUP:
        problem = data.get("error_type")
        if problem not in CHILD_SETUP:
            return None
        names = data.get("names", [])
        if not isinstance(names, list):
            return None
        return Outcome(
            kind=SETUP,
            error_type=str(problem),
            message=_text(data.get("message", "")),
            names=tuple(_text(n, 200) for n in names[:200]),
        )
    if kind == DIED:
        return Outcome(kind=DIED, message=_text(data.get("message", ""), 500))
    frames = data.get("frames", [])
    if not isinstance(frames, list):
        return None
    read: list[Frame] = []
    for f in frames[-20:]:
        if not isinstance(f, dict) or type(f.get("line", 0)) is not int:
            return None
        read.append(
            Frame(
                _text(f.get("file", ""), 1000),
                int(f.get("line", 0)),
                _text(f.get("function", ""), 200),
                _text(f.get("code", ""), 1000),
                f.get("library") is True,
            )
        )
    phase = data.get("phase", "")
    if phase not in ("import", "call"):
        return None
    return Outcome(
        kind=RAISED,
        error_type=_text(data.get("error_type", ""), 200),
        message=_text(data.get("message", "")),
        phase=phase,
        frames=tuple(read),
        details=_details(data.get("details", {})),
    )


def believable_streams(streams: Any) -> dict[str, Any] | None:
    """What the child says of the call's random streams (``{"unused": [positions of the
    generator arguments it left as they were], "global": whether torch's global generator
    moved}``), if it could have said it; None otherwise. It only ever words a failure."""
    if not isinstance(streams, dict) or set(streams) != {"unused", "global"}:
        return None
    unused, moved = streams["unused"], streams["global"]
    if not isinstance(unused, list) or type(moved) is not bool:
        return None
    if len(unused) > 64 or any(type(i) is not int or not 0 <= i < 4096 for i in unused):
        return None
    return {"unused": list(unused), "global": moved}


def _details(details: Any) -> dict[str, Any]:
    """The details of a raised exception that the texts read, each of its own type."""
    if not isinstance(details, dict):
        raise ValueError("not a table")
    kept: dict[str, Any] = {}
    if isinstance(details.get("module"), str):
        kept["module"] = details["module"][:200]
    if details.get("pytest") is True:
        kept["pytest"] = True
    if "code" in details and isinstance(details["code"], (int, str, type(None))):
        code = details["code"]
        kept["code"] = code[:200] if isinstance(code, str) else code
    if details.get("limit") in LIMIT_KINDS:
        kept["limit"] = details["limit"]
    if details.get("harness") in HARNESS_DETAILS:  # a behaviour lesson's (isolation/drive.py)
        kept["harness"] = details["harness"]
        for key in ("line", "file"):
            if isinstance(details.get(key), str):
                kept[key] = details[key][:1000]
        check = details.get("check")
        if isinstance(check, str) and CHECK_ID.fullmatch(check):
            kept["check"] = check
        changed = details.get("changed")
        if isinstance(changed, dict) and isinstance(changed.get("input"), str):
            at = changed.get("at")
            kept["changed"] = {
                "input": changed["input"][:200],
                "at": [a for a in at[:64] if type(a) in (int, str)] if isinstance(at, list) else [],
                "was": _text(changed.get("was", ""), 200),
                "now": _text(changed.get("now", ""), 200),
            }
    rule, broke = details.get("rule"), details.get("broke")
    if isinstance(rule, str) and CHECK_ID.fullmatch(rule) and isinstance(broke, str):
        # A rule of the lesson that the code broke (isolation/rules.py).
        kept["rule"], kept["broke"] = rule, broke[:200]
    denied = details.get("denied")
    if isinstance(denied, dict):
        kept["denied"] = {
            k: v[:1000] for k, v in denied.items() if k in ("path", "action") and isinstance(v, str)
        }
    return kept
