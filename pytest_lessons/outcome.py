"""What running learner code produced, as plain data: the runner boundary.

An :class:`Outcome` is all the judge (compare, diagnose, report) ever sees of learner code. It is
built from a JSON-compatible dict, whichever way the code ran (forked child, spawned child or, for
debugging, in-process), so nothing the learner made reaches the judge.

Answer encoding: lists, ints, floats (NaN and infinities included), bools, strings and None stand
for themselves; tuples arrive as lists. Anything else is a *tag*, a dict with the key ``"$"``:

``{"$": "tensor", "type": "torch.Tensor", "shape": [2, 2], "dtype": "torch.float64",
"values": [...]}``
    a torch tensor or numpy array (``"$": "ndarray"``), with its values when they are real numbers;
``{"$": "object", "type": "builtins.dict"}``
    any other object, never inspected further;
``{"$": "cut", "reason": "..."}``
    the answer was too large or too deep to send.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

#: Outcome kinds.
RETURNED = "returned"  # the entry function returned; see Outcome.answer
RAISED = "raised"  # an exception escaped learner code (import or call)
SETUP = "setup"  # the learner's file or function cannot be used as it is
TIMEOUT = "timeout"  # the case took longer than its limit and was stopped
DIED = "died"  # the process running learner code ended without an answer
INTERNAL = "internal"  # the grader itself failed; not the learner's fault

TAG = "$"

# Escape sequences (colours, cursor moves, terminal titles) and other control characters that
# learner output could use to rewrite the terminal; tabs and newlines are kept.
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_text(text: str) -> str:
    """*text* without terminal escape sequences or control characters (a lone CR becomes LF)."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def rectangular(value: Any) -> tuple[tuple[int, ...], list[Any], set[type]] | None:
    """Shape, row-major values and value types of a rectangular nested list (or tuple) of ints
    and floats, found level by level in C-speed passes; None for anything else (bools, ragged
    rows, other types, an empty list), which the caller then walks slowly to say exactly what is
    wrong."""
    if type(value) not in (list, tuple):
        return None
    shape: list[int] = []
    level: list[Any] = [value]
    kinds: set[type] = {type(value)}
    while kinds <= {list, tuple}:
        lengths = set(map(len, level))
        if len(lengths) != 1:
            return None
        shape.append(lengths.pop())
        level = list(itertools.chain.from_iterable(level))
        if not level:
            return None
        kinds = set(map(type, level))
    if not kinds <= {int, float}:
        return None
    return tuple(shape), level, kinds


@dataclass(frozen=True)
class Frame:
    """One line of the learner's own traceback."""

    file: str
    line: int
    function: str
    code: str = ""


@dataclass(frozen=True)
class Outcome:
    """The result of running one case of learner code."""

    kind: str
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
    """How long the entry function ran (or, on timeout, the limit)."""
    output: str = ""
    """What learner code printed, capped, with escape sequences removed."""
    output_cut: int = 0
    """How many bytes of printed output were dropped past the cap."""
    names: tuple[str, ...] = ()
    """With setup ``no_entry``: the public names the learner's file defines."""
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        """Rebuild an outcome from its JSON form, ignoring unknown keys."""
        frames = tuple(
            Frame(
                str(f.get("file", "")),
                int(f.get("line", 0)),
                str(f.get("function", "")),
                str(f.get("code", "")),
            )
            for f in data.get("frames", ())
            if isinstance(f, dict)
        )
        exit_code = data.get("exit_code")
        return cls(
            kind=str(data.get("kind", INTERNAL)),
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
        }

    def with_output(self, output: str, cut: int) -> Outcome:
        """This outcome with the captured output attached."""
        data = self.to_dict()
        data["output"], data["output_cut"] = output, cut
        return Outcome.from_dict(data)
