"""Lessons about behaviour, on the grader's side: a lesson's harness and its inputs' mutation
rules (docs/authors/harness.md).

Two jobs: the ``behaviour`` part of a case's request (:func:`request`: the harness's bytes,
read here as the author's data, the name it asks the learner's module for, the rules, the
judged names), and the words for what the child reports of such a case (:func:`words`,
:func:`hidden_words`, :func:`fault`, :func:`lesson_error`): the author's words for the
learner, an input changed in place, a call the learner's object could not take, a bug of the
harness. The child's side is :mod:`pytest_lessons.isolation.drive`.

Whether an ``unchanged`` input stayed as it was is decided here (:func:`unchanged`): the
child sends each such input as the call left it, and the grader compares it with the case's
own. The child's check of it only words an honest mistake early: learner code shares that
process and could switch it off.

Whose fault is decided there, but a result file is untrusted: whatever it says, a case whose
child reports a harness bug is still the learner's failed case (no points), worded for the
author in ``lesson_error`` and for the learner as the lesson's problem.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import model
from pytest_lessons.isolation import answers
from pytest_lessons.isolation.outcome import RAISED, RETURNED, Outcome
from pytest_lessons.isolation.runner import ARG, NotMirrored, input_as_sent

#: The harness files read so far: (path, size, mtime) -> base64 bytes.
_READ: dict[tuple[str, int, int], str] = {}


def request(
    exercise: model.Exercise, entry: str, solution: Path | None = None
) -> dict[str, Any] | None:
    """The ``behaviour`` part of a job that runs *entry* of a file (*solution*) on a case of
    *exercise* (its learner's, reference, mistake or variant); None for a lesson without a
    harness or mutation rules."""
    if exercise.harness is None and not exercise.after:
        return None
    part: dict[str, Any] = {
        "names": list(exercise.inputs),
        "after": dict(exercise.after),
        "observed": list(exercise.observed),
        # A mistake's (or a variant's) class stands in for what the harness asks for.
        "alias": {
            exercise.entry: entry,
            # ... and for the other names a mistake or a variant stands in for.
            **exercise.stands_in.get((str(solution), entry), {}),
        },
    }
    if exercise.harness is not None:
        part["harness"] = {"file": str(exercise.harness), "source": _source(exercise.harness)}
    return part


def _source(path: Path) -> str:
    try:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        if key not in _READ:
            _READ[key] = base64.b64encode(path.read_bytes()).decode("ascii")
        return _READ[key]
    except OSError:
        # The child then reports the harness's failure to load, for the author.
        return base64.b64encode(
            b"raise FileNotFoundError('the harness could not be read')"
        ).decode()


def _harness(outcome: Outcome) -> str:
    if outcome.kind != RAISED:
        return ""
    value = outcome.details.get("harness")
    return value if isinstance(value, str) else ""


#: The most words of a message that make the id of a check its author gave none.
CHECK_WORDS = 6


def check_id(outcome: Outcome) -> str | None:
    """The id of the harness check that failed the case (its author's words for the learner,
    a :class:`~pytest_lessons.isolation.drive.LessonFailure`): the one the harness gave, else
    the message's first words before any ``:`` or ``(``, lower-case, without numbers or
    quoted names, so that one check failing with other sizes or names is counted as one
    (``wrap-in-torch-nn-parameter``). None for any other outcome."""
    if _harness(outcome) != "failure":
        return None
    given = outcome.details.get("check")
    if isinstance(given, str) and given:
        return given
    text = re.split(r"[:(]", outcome.message, maxsplit=1)[0]
    text = re.sub(r"`[^`]*`|\[[^\]]*\]", " ", text)
    words = re.findall(r"[a-z]+", text.lower())[:CHECK_WORDS]
    return "-".join(words) or "lesson-check"


def _place(at: list[Any]) -> str:
    return "[" + ", ".join(str(a) if isinstance(a, int) else repr(a) for a in at) + "]"


def words(
    outcome: Outcome,
    entry: str,
    author: bool,
    code: str,
    show: Callable[[Path | str], str],
    traceback: Callable[[], list[str]],
) -> tuple[str, list[str]] | None:
    """The headline and the evidence lines for a behaviour lesson's raised outcome; None for
    any other outcome (the usual words then apply). *code* is whose code ran as the words name
    it; *traceback* gives the usual traceback lines."""
    harness = _harness(outcome)
    if not harness:
        return None
    if harness == "failure":
        lines = traceback()[:-1]
        return outcome.message.strip() or f"Check {entry}: the lesson's check failed.", (
            ["", *["  " + line for line in lines]] if lines else []
        )
    if harness == "changed":
        changed = outcome.details.get("changed") or {}
        name = str(changed.get("input", "an input"))
        at = changed.get("at") or []
        where = f"at {_place(at)}: " if at else ""
        return (
            f"Leave the input {name} as it was: {code} changed it in place ({where}it was "
            f"{changed.get('was', '?')}, now {changed.get('now', '?')}). Build a new value, "
            f"or work on a copy of {name}: the caller still needs its own.",
            [],
        )
    if harness == "call":
        line = str(outcome.details.get("line", "")).strip()
        said = f"{outcome.error_type}: {outcome.message}".strip(": ")
        made = f" `{line}`" if line else ""
        return (
            f"Make {entry} work the way the lesson uses it: the lesson calls{made}, and Python "
            f"says {said}.",
            [],
        )
    # A bug of the harness: never the learner's fault.
    lines = ["", *["  " + line for line in traceback()]]
    file = Path(str(outcome.details.get("file", "harness.py"))).name
    if author:
        return (
            f"Fix the lesson's {file}: it raised {outcome.error_type} while running {code}.",
            lines,
        )
    return (
        f"Tell your instructor: the lesson's {file} failed while checking your code, so this "
        "case scores no points this time; it is not a fault the lesson found in your code.",
        lines,
    )


def hidden_words(outcome: Outcome) -> str | None:
    """What a hidden case says of a behaviour lesson's raised outcome (no values, no
    message: they could hold the case's inputs); None for any other outcome."""
    harness = _harness(outcome)
    if harness == "changed":
        changed = outcome.details.get("changed") or {}
        return f"your code changed its input {changed.get('input', '')} in place"
    if harness in ("failure", "call"):
        return "your code did not pass the lesson's check of it"
    if harness == "bug":
        return "the lesson's harness failed on it, not your code"
    return None


def fault(outcome: Outcome) -> str | None:
    """The fault key of a behaviour lesson's raised outcome (cases failing for one reason that
    no input changes fold into one); None for any other outcome."""
    harness = _harness(outcome)
    if harness == "changed":
        changed = outcome.details.get("changed") or {}
        return f"raised InputChanged {changed.get('input', '')}"
    if harness == "failure":
        return f"check {check_id(outcome)}"
    if harness == "call":
        return f"raised {outcome.error_type} {outcome.message}"
    if harness == "bug":
        frame = outcome.frames[-1] if outcome.frames else None
        where = f" at {Path(frame.file).name}:{frame.line}" if frame else ""
        return f"raised {outcome.error_type}{where} in the harness"
    return None


def lesson_error(outcome: Outcome | None, show: Callable[[Path | str], str]) -> str:
    """For the author, in the reports: the harness's own failure on a case, with its file
    and line; empty for anything else."""
    if outcome is None or _harness(outcome) != "bug":
        return ""
    frame = outcome.frames[-1] if outcome.frames else None
    file = str(outcome.details.get("file", "harness.py"))
    where = f"{show(frame.file)}, line {frame.line}" if frame else show(file)
    said = f"{outcome.error_type}: {outcome.message}".strip(": ")
    return f"The lesson's harness failed ({where}): {said}\n"


# --- inputs that must stay as they were, judged here ---------------------------------------


def unchanged(job_behaviour: dict[str, Any] | None, inputs: list[Any], outcome: Outcome) -> Outcome:
    """*outcome* as the grader judges it for a lesson whose inputs must stay unchanged: a
    returned outcome whose child sent an ``unchanged`` input back other than the case gave it
    (or did not send it back) becomes that case's failure, worded as the child's own check
    words it ("Leave the input ids as it was ..."). *job_behaviour* is the job's behaviour
    part (:func:`request`), *inputs* its packed inputs, in the lesson's order.

    Not for a statistical case or a gradient lesson, whose child sends no inputs back (a
    statistical case's draws are checked call by call in the child, honest code only)."""
    if outcome.kind != RETURNED or not job_behaviour:
        return outcome
    names = [str(n) for n in job_behaviour.get("names", [])]
    rules = dict(job_behaviour.get("after", {}))
    if any(_statistical(value) for value in inputs):
        return outcome
    for index, name in enumerate(names):
        if rules.get(name) != "unchanged" or index >= len(inputs):
            continue
        try:
            given = input_as_sent(inputs[index])
        except NotMirrored:
            continue  # the child's own check only (honest code): a kind the grader cannot make
        sent = outcome.after.get(name)
        if sent is None:
            change: dict[str, Any] | None = {
                "input": name,
                "at": [],
                "was": "sent back",
                "now": "not sent back",
            }
        elif _dumped(given) == _dumped(sent):
            continue
        else:
            change = _difference(given, sent, [])
            change = {"input": name, **(change or {"at": [], "was": "?", "now": "?"})}
        return Outcome(
            kind=RAISED,
            error_type="InputChanged",
            phase="call",
            seconds=outcome.seconds,
            output=outcome.output,
            output_cut=outcome.output_cut,
            details={"harness": "changed", "changed": change, "module": ""},
        )
    return outcome


def _statistical(packed: Any) -> bool:
    return isinstance(packed, dict) and packed.get(ARG) == "generator" and ("draws" in packed)


def _dumped(value: Any) -> str:
    # NaN is written as NaN on both sides, so a NaN left in place is the same input.
    return json.dumps(value, sort_keys=True)


def _same(one: Any, other: Any) -> bool:
    if type(one) is float and type(other) is float:
        if math.isnan(one) and math.isnan(other):
            return True
        return one == other and math.copysign(1.0, one) == math.copysign(1.0, other)
    return type(one) is type(other) and _dumped(one) == _dumped(other)


def _text(value: Any, dtype: str = "") -> str:
    if type(value) is float and dtype.endswith("float32") and math.isfinite(value):
        # The shortest text that reads back as that float32 (0.2, not 0.20000000298023224).
        for digits in range(1, 10):
            short = float(f"{value:.{digits}g}")
            if struct.unpack("<f", struct.pack("<f", short))[0] == value:
                value = short
                break
    if isinstance(value, dict):
        tag = answers.tag_of(value)
        text = "a block of numbers" if tag == answers.DENSE else f"a {answers.type_name(value)}"
        text = text if tag else "a table"
    elif isinstance(value, list):
        text = f"a list of {len(value)}"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _difference(given: Any, sent: Any, at: list[Any], dtype: str = "") -> dict[str, Any] | None:
    """Where *sent* first differs from *given* (both in the answer encoding): the index path,
    the old value and the new one as short text; None when nothing differs."""
    tag, other = answers.tag_of(given), answers.tag_of(sent)
    if {tag, other} == {answers.DENSE, None} and isinstance(given if tag is None else sent, list):
        try:  # a block of numbers against a list: compared as lists
            given = answers.unpack(given) if tag else given
            sent = answers.unpack(sent) if other else sent
            tag = other = None
        except (ValueError, KeyError, TypeError):
            pass
    if tag != other:
        return {"at": at, "was": _text(given), "now": _text(sent)}
    if tag == answers.DENSE:
        try:
            shape, old = answers.dense_values(given)
            new_shape, new = answers.dense_values(sent)
        except (ValueError, KeyError, TypeError):
            return {"at": at, "was": "a block of numbers", "now": "a damaged one"}
        if len(shape) == 1 and len(new_shape) == 1 and old.typecode == new.typecode:
            # A list that grew or shrank: where the items first differ, else their counts.
            for position, (a, b) in enumerate(zip(old, new)):
                if not _same(a, b):
                    return {"at": [*at, position], "was": _text(a, dtype), "now": _text(b, dtype)}
            if shape != new_shape:
                return {"at": at, "was": f"{shape[0]} items", "now": f"{new_shape[0]} items"}
            return None
        if shape != new_shape or old.typecode != new.typecode:
            return {"at": at, "was": f"shape {list(shape)}", "now": f"shape {list(new_shape)}"}
        for flat, (a, b) in enumerate(zip(old, new)):
            if not _same(a, b):
                place: list[Any] = []
                for size in reversed(shape):
                    place.insert(0, flat % size)
                    flat //= size
                return {"at": at + place, "was": _text(a, dtype), "now": _text(b, dtype)}
        return None
    if tag in (answers.TENSOR, answers.NDARRAY):
        for key in ("type", "dtype", "shape"):
            if given.get(key) != sent.get(key):
                return {"at": at, "was": f"{key} {given.get(key)}", "now": f"{key} {sent.get(key)}"}
        return _difference(given.get("values"), sent.get("values"), at, str(given.get("dtype")))
    if tag in answers.CONTAINERS:
        if given.get("type") != sent.get("type"):
            return {"at": at, "was": _text(given), "now": _text(sent)}
        return _difference(given.get("items"), sent.get("items"), at, dtype)
    if tag is not None:
        return (
            None
            if _dumped(given) == _dumped(sent)
            else {"at": at, "was": _text(given), "now": _text(sent)}
        )
    if isinstance(given, list) and isinstance(sent, list):
        for position, (a, b) in enumerate(zip(given, sent)):
            found = _difference(a, b, [*at, position], dtype)
            if found is not None:
                return found
        if len(given) != len(sent):
            return {"at": at, "was": f"{len(given)} items", "now": f"{len(sent)} items"}
        return None
    if _same(given, sent):
        return None
    return {"at": at, "was": _text(given, dtype), "now": _text(sent, dtype)}
