"""Lessons about behaviour, on the child's side: a lesson's harness that drives the learner's
module, and the mutation rules of its inputs (docs/authors/harness.md).

A case of such a lesson carries a ``behaviour`` part in its request (made by
:mod:`pytest_lessons.core.behaviour`): the harness's bytes and the name tracebacks give them,
the name the harness asks the learner's module for and the name it has in the loaded file (a
mistake's or a variant's class stands in for the learner's), the inputs' mutation rules and
the names of the judged values. :func:`prepare` turns it into a :class:`Plan`, which
:func:`pytest_lessons.isolation.child.run_case` asks at three points: how to call (the entry
function, or the harness's ``drive(learner, *inputs)``), what the answer is (the observables in
order, ``updated`` inputs read back, ``unchanged`` ones checked), and whose fault an exception
is.

Whose fault, for an exception that escaped the harness:

* :class:`LessonFailure` (the author's words for the learner): a failed case, its message
  shown as the headline;
* an exception raised inside the learner's file (a frame there), or an ``AttributeError`` or
  ``TypeError`` about one of the learner's own objects (a method missing, a call with other
  parameters): the learner's, shown with the learner's file and line and the harness's line
  that made the call, never the harness's or the grader's frames;
* anything else: a bug of the harness, reported for the author (``details["harness"] ==
  "bug"``), never blamed on the learner.

Like the rest of the child, this imports no pytest and no torch (torch only when an input is
a tensor): the harness is author code and runs where learner code runs, in the sandbox.
"""

from __future__ import annotations

import base64
import importlib.util
import linecache
import math
import re
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.isolation import work
from pytest_lessons.isolation.outcome import RAISED

#: The harness module is loaded under this name; the learner's keeps ``solution``.
HARNESS_MODULE = "lesson_harness"
#: The function of ``harness.py`` the grader calls: ``drive(learner, *inputs)``.
DRIVE = "drive"
#: The name every graded module (the learner's, the reference, a mistake) is loaded under.
GRADED_MODULE = "solution"


class LessonFailure(Exception):
    """Fails the case with the author's own words for the learner (what to do, then why),
    raised by a harness or a helper of :mod:`pytest_lessons.harness`. The message is the
    failure's headline, as a watch-out's is.

    *check* names the check that failed, in lower-case letters, digits and dashes
    (``not-a-parameter``): the case's diagnosis, which the class report counts learners by
    and a ``[[watch_out]]`` with ``check = "..."`` names; without it the grader makes one
    from the message's first words."""

    def __init__(self, message: str = "", check: str = "") -> None:
        super().__init__(message)
        self.check = check


#: The harness file of the case that runs now (set when its drive is called): only its own
#: code may pause the work count.
_HARNESS_FILE = [""]

#: What the case's harness checked that the grader checks again, by key (``initial:weight``),
#: sent back with the answer: emptied when each drive starts.
FACTS: dict[str, Any] = {}


def record(key: str, value: Any) -> None:
    """Keep *value* (plain data) under *key* for the grader, which checks it again where
    learner code cannot reach (:mod:`pytest_lessons.core.initial`)."""
    FACTS[key] = value


class uncounted:  # lower case: used as a context manager, like contextlib's
    """``with uncounted(): ...`` in a lesson's harness: the torch operations of the block
    (its own set-up, such as building a model or drawing a prompt) are left out of a work
    budget's count, so the budget bounds the learner's work alone. Only the harness's own
    code can pause the count: in any other file (the learner's) the block is counted."""

    def __init__(self) -> None:
        self._paused = False

    def __enter__(self) -> uncounted:
        caller = sys._getframe(1).f_code.co_filename
        if _HARNESS_FILE[0] and caller == _HARNESS_FILE[0]:
            work.PAUSED[0] += 1
            self._paused = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            work.PAUSED[0] = max(0, work.PAUSED[0] - 1)
            self._paused = False


class Learner:
    """The learner's module as a harness sees it: ``learner.Tokenizer`` is the learner's
    ``Tokenizer`` (or, in the lesson check, the mistake's or variant's class standing in for
    it). A name the file does not define fails the case with words for the learner, not with
    an ``AttributeError`` the author would have to catch."""

    def __init__(self, module: types.ModuleType, alias: dict[str, str], shown: str) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_alias", alias)
        object.__setattr__(self, "_shown", shown)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # what copy, pickle and the like probe for
        module: types.ModuleType = object.__getattribute__(self, "_module")
        alias: dict[str, str] = object.__getattribute__(self, "_alias")
        try:
            return getattr(module, alias.get(name, name))
        except AttributeError:
            pass
        shown = object.__getattribute__(self, "_shown")
        names = defined(module)
        has = ", ".join(f"`{n}`" for n in names) if names else "nothing public"
        target = alias.get(name, name)
        check = "undefined-" + re.sub(r"[^a-z0-9]+", "-", target.lower()).strip("-")
        # A stand-in (only author files have one besides the entry) is named as the file spells it.
        uses = "the lesson uses it" if target == name else f"it stands in for `{name}`"
        raise LessonFailure(
            f"Define `{target}` in {shown}: {uses}, and the file defines {has}.",
            check=check[:64].rstrip("-"),
        ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise LessonFailure("The harness only reads the learner's module.")

    @property
    def module(self) -> types.ModuleType:
        """The learner's module itself."""
        module: types.ModuleType = object.__getattribute__(self, "_module")
        return module


def defined(module: types.ModuleType) -> list[str]:
    """The public names *module*'s own code defines (not what it imported)."""
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    )


@dataclass
class Plan:
    """How one case of a behaviour lesson runs in the child."""

    names: list[str]
    """The inputs' names, in order."""
    after: dict[str, str]
    """Input name -> ``unchanged`` or ``updated``."""
    observed: list[str]
    """The judged values' names, in order (empty: one value, as returned)."""
    harness: types.ModuleType | None = None
    harness_file: str = ""
    alias: dict[str, str] = field(default_factory=dict)
    pristine: dict[int, Any] = field(default_factory=dict)
    """Input position -> an untouched copy of an ``unchanged`` input."""
    module: types.ModuleType | None = None
    """The graded module, once loaded."""

    # --- the call --------------------------------------------------------------------------

    def call(self, module: types.ModuleType, function: Any, arguments: list[Any]) -> Any:
        """Run the case: the harness's drive on the learner's module, or the entry function."""
        self.module = module
        if self.harness is None:
            return function(*arguments)
        drive = getattr(self.harness, DRIVE, None)
        if not callable(drive):
            raise _HarnessBroken(f"{self.harness_file} defines no function {DRIVE}")
        shown = (module.__file__ or GRADED_MODULE).replace("\\", "/").rsplit("/", 1)[-1]
        _HARNESS_FILE[0] = self.harness_file
        FACTS.clear()
        try:
            return drive(Learner(module, self.alias, shown), *arguments)
        finally:
            work.PAUSED[0] = 0  # a block the harness left open ends with its drive

    def drawing(self, module: types.ModuleType, function: Any) -> Callable[..., Any]:
        """One call of a statistical case, as :func:`pytest_lessons.isolation.draws.draw`
        makes N of them: through :meth:`call` (the harness's drive, its checks on every
        call) and :meth:`answer` (the observables, the ``unchanged`` inputs checked), so
        that each draw is graded as an ordinary case's one call. A call whose inputs or
        observables break the rules raises :class:`Stopped`, which :func:`raised` reports
        as :func:`result` does."""

        def call(*arguments: Any) -> Any:
            given = list(arguments)
            what, found = self.answer(self.call(module, function, given), given)
            if what != "answer":
                raise Stopped(what, found)
            return found

        return call

    def answer(self, returned: Any, arguments: list[Any]) -> tuple[str, Any]:
        """``("answer", value)``: the value to encode, the observables in order; or
        ``("changed", details)`` for an ``unchanged`` input the call changed; or ``("bug",
        message)`` for a harness whose observables are not the declared ones."""
        for index, name in enumerate(self.names):
            if self.after.get(name) != "unchanged" or index not in self.pristine:
                continue
            change = first_change(self.pristine[index], arguments[index])
            if change is not None:
                at, was, now = change
                return "changed", {"input": name, "at": at, "was": was, "now": now}
        updated = {
            n: arguments[i] for i, n in enumerate(self.names) if self.after.get(n) == "updated"
        }
        if not self.observed:
            return "answer", returned
        from_call = [n for n in self.observed if n not in updated]
        values: dict[str, Any] = dict(updated)
        if self.harness is not None and from_call:
            if not isinstance(returned, dict) and len(from_call) == 1:
                returned = {from_call[0]: returned}
            if not isinstance(returned, dict) or set(returned) != set(from_call):
                keys = sorted(map(str, returned)) if isinstance(returned, dict) else None
                return "bug", (
                    f"{DRIVE} must return a dict of the outputs {', '.join(from_call)}; it "
                    + (
                        f"returned the keys {', '.join(keys)}"
                        if keys is not None
                        else f"returned a {type(returned).__name__}"
                    )
                )
            values.update(returned)
        elif len(from_call) == 1:
            values[from_call[0]] = returned
        elif from_call:
            if not isinstance(returned, (tuple, list)) or len(returned) != len(from_call):
                return "answer", returned  # the judge says what is wrong with it
            values.update(zip(from_call, returned))
        ordered = [values[n] for n in self.observed]
        return "answer", ordered[0] if len(ordered) == 1 else tuple(ordered)

    # --- whose fault -----------------------------------------------------------------------

    def owner(self, exc: BaseException, inside: Callable[[str], bool]) -> str:
        """Whose an exception is: ``failure`` (a :class:`LessonFailure`), ``learner`` or
        ``bug`` (the harness's own); *inside* says whether a file is the learner's."""
        if isinstance(exc, LessonFailure):
            # The lesson's check only where the lesson raised it: one raised in the learner's
            # file is the learner's exception, whose words would read as the lesson's and
            # name a check in the instructor's class summary (a red team's round G).
            frames = traceback.extract_tb(exc.__traceback__)
            last = frames[-1].filename if frames else ""
            if last and last != self.harness_file and inside(last):
                return "learner"
            return "failure"
        if self.harness is None:
            return "learner"
        if isinstance(exc, _HarnessBroken):
            return "bug"
        frames = traceback.extract_tb(exc.__traceback__)
        if any(f.filename != self.harness_file and inside(f.filename) for f in frames):
            return "learner"
        if self.module is not None and _about_learner(exc, self.module):
            return "learner"
        return "bug"

    def harness_line(self, exc: BaseException) -> str:
        """The harness's line that was running when *exc* was raised (the call it made)."""
        lines = [
            f.line or ""
            for f in traceback.extract_tb(exc.__traceback__)
            if f.filename == self.harness_file
        ]
        return lines[-1].strip() if lines else ""


class _HarnessBroken(Exception):
    """The harness cannot be used as it is (no drive function, wrong observables)."""


class Stopped(Exception):
    """One call of a statistical case changed an ``unchanged`` input (*what* is
    ``"changed"``) or its harness returned other observables (``"bug"``): the loop of draws
    ends there, and the case's outcome is :func:`result`'s for *what* and *found*."""

    def __init__(self, what: str, found: Any) -> None:
        super().__init__(what)
        self.what = what
        self.found = found


def prepare(behaviour: dict[str, Any], fresh: Callable[[], list[Any]]) -> Plan:
    """The plan of a case, its harness loaded (raises what loading it raised: the caller
    reports it as the harness's bug). *fresh* builds another copy of the inputs, kept
    untouched for the ``unchanged`` ones."""
    names = [str(n) for n in behaviour.get("names", [])]
    after = {str(k): str(v) for k, v in dict(behaviour.get("after", {})).items()}
    plan = Plan(names=names, after=after, observed=[str(n) for n in behaviour.get("observed", [])])
    plan.alias = {str(k): str(v) for k, v in dict(behaviour.get("alias", {})).items()}
    if "unchanged" in after.values():
        copies = fresh()
        plan.pristine = {i: copies[i] for i, n in enumerate(names) if after.get(n) == "unchanged"}
    harness = behaviour.get("harness")
    if harness:
        plan.harness_file = str(harness["file"])
        plan.harness = load_module(
            HARNESS_MODULE, plan.harness_file, base64.b64decode(harness["source"])
        )
    return plan


def load_module(name: str, filename: str, source: bytes) -> types.ModuleType:
    """Run *source* as the module *name*, its tracebacks under *filename* (never opened)."""
    lines = source.decode("utf-8", errors="replace").splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    spec = importlib.util.spec_from_loader(name, loader=None, origin=filename)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
    return module


_TYPE_CALL = re.compile(r"^([A-Za-z_][\w.]*)\(\) ")
_NO_ATTRIBUTE = re.compile(r"^'(\w+)' object has no attribute")


def _about_learner(exc: BaseException, module: types.ModuleType) -> bool:
    """Whether an exception raised in the harness's own line is about the learner's object:
    an attribute its class lacks, or a call of its function or class with other parameters."""
    own = set(defined(module))
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)  # Python 3.10 and newer
        if obj is not None:
            return obj is module or getattr(type(obj), "__module__", None) == module.__name__
        found = _NO_ATTRIBUTE.match(str(exc))
        return found is not None and found.group(1) in own
    if type(exc) is TypeError:
        found = _TYPE_CALL.match(str(exc))
        return found is not None and found.group(1).split(".")[0] in own
    return False


# --- inputs changed in place ---------------------------------------------------------------


def first_change(
    before: Any, after: Any, at: tuple[Any, ...] = ()
) -> tuple[list[Any], str, str] | None:
    """Where *after* first differs from *before*: (the index path, the old value, the new
    one, each as short text); None when they are the same (NaN equals NaN)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor):
            return list(at), "a tensor", f"a {type(after).__name__}"
        if before.shape != after.shape or before.dtype != after.dtype:
            return (
                list(at),
                f"{str(before.dtype).replace('torch.', '')} {list(before.shape)}",
                f"{str(after.dtype).replace('torch.', '')} {list(after.shape)}",
            )
        same = before == after
        if before.is_floating_point() or before.is_complex():
            same = same | (before.isnan() & after.isnan())
        if bool(same.all()):
            return None
        index = [int(i) for i in (~same).nonzero()[0].tolist()]
        return (
            [*at, *index],
            _element(before[tuple(index)]),
            _element(after[tuple(index)]),
        )
    if isinstance(before, dict):
        if not isinstance(after, dict):
            return list(at), "a dict", f"a {type(after).__name__}"
        for key in before:
            if key not in after:
                return [*at, key], _short(before[key]), "removed"
            change = first_change(before[key], after[key], (*at, key))
            if change is not None:
                return change
        extra = [key for key in after if key not in before]
        if extra:
            return [*at, extra[0]], "absent", _short(after[extra[0]])
        return None
    if isinstance(before, (list, tuple)):
        if type(after) is not type(before):
            return list(at), f"a {type(before).__name__}", f"a {type(after).__name__}"
        for position, (old, new) in enumerate(zip(before, after)):
            change = first_change(old, new, (*at, position))
            if change is not None:
                return change
        if len(before) != len(after):
            return list(at), f"{len(before)} items", f"{len(after)} items"
        return None
    if type(before) is str and type(after) is str and before != after:
        char = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), None)
        if char is None:
            return list(at), f"{len(before)} characters", f"{len(after)} characters"
        return [*at, char], repr(before[char]), repr(after[char])
    if type(before) is float and type(after) is float and math.isnan(before) and math.isnan(after):
        return None
    if type(before) is not type(after) or before != after:
        return list(at), _short(before), _short(after)
    return None


def _element(value: Any) -> str:
    """One element of a tensor as short text: a float32 (or float16, bfloat16) value as its
    shortest text that dtype reads back (0.2, not its float64 0.20000000298023224)."""
    number = value.item()
    if value.is_floating_point() and isinstance(number, float) and math.isfinite(number):
        torch = sys.modules["torch"]
        for digits in range(1, 18):
            text = f"{number:.{digits}g}"
            if torch.tensor(float(text), dtype=value.dtype).item() == number:
                return _short(float(text))
    return _short(number)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- the outcomes a behaviour lesson adds ----------------------------------------------------


def raised(
    plan: Plan,
    exc: BaseException,
    arguments: list[Any],
    seconds: float,
    learner: dict[str, Any],
    inside: Callable[[str], bool],
) -> dict[str, Any]:
    """The outcome of an exception out of a behaviour lesson's call, by whose it is (see the
    module docstring): *learner* is the child's usual outcome of it, kept for the learner's
    exceptions with the harness's frames left out; an input changed in place is told first,
    as the likelier cause of what followed (unless the harness's own ``unchanged`` said it:
    its words and check id stand)."""
    if isinstance(exc, Stopped):  # raised by the grader's own loop: never the learner's
        return result(plan, exc.what, exc.found, seconds)
    owner = plan.owner(exc, inside)
    # The harness's own check of an input changed in place keeps its words and its id.
    if owner != "bug" and getattr(exc, "check", "") != "changed-in-place":
        what, found = plan.answer(None, arguments)
        if what == "changed":
            return result(plan, what, found, seconds)
    if owner == "bug":
        bug = harness_bug(exc, plan.harness_file)
        bug["seconds"] = seconds
        return bug
    learner["frames"] = [f for f in learner["frames"] if f["file"] != plan.harness_file]
    if owner == "failure":
        learner["details"]["harness"] = "failure"
        check = getattr(exc, "check", "")
        if isinstance(check, str) and check:
            learner["details"]["check"] = check[:64]
    elif plan.harness is not None and not learner["frames"]:
        # Raised by the harness's call of the learner's object (a missing method, other
        # parameters): the call it made is the learner's clue.
        learner["details"]["harness"] = "call"
        learner["details"]["line"] = plan.harness_line(exc)
    return learner


def result(plan: Plan, what: str, found: Any, seconds: float) -> dict[str, Any]:
    """The outcome of a call that changed an ``unchanged`` input (``what == "changed"``), or
    of a harness whose observables are not the declared ones (``"bug"``)."""
    if what == "changed":
        return {
            "kind": RAISED,
            "error_type": "InputChanged",
            "message": "",
            "phase": "call",
            "frames": [],
            "seconds": seconds,
            "details": {"harness": "changed", "changed": found, "module": ""},
        }
    bug = harness_bug(LessonFailure(str(found)), plan.harness_file)
    bug["seconds"] = seconds
    return bug


def harness_bug(exc: BaseException, file: str) -> dict[str, Any]:
    """The outcome of a failure of the lesson's harness itself (loading it, or its own code):
    for its author, with the harness's frames and the public helpers'. Its phase is ``call``,
    never ``import``: the learner's file is not the one that could not be used."""
    package = str(Path(__file__).resolve().parents[1])
    frames = [
        {"file": f.filename, "line": f.lineno or 0, "function": f.name, "code": f.line or ""}
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename == file or (f.filename.startswith(package) and "isolation" not in f.filename)
    ]
    if isinstance(exc, SyntaxError) and exc.filename == file:
        frames.append(
            {"file": file, "line": exc.lineno or 0, "function": "", "code": exc.text or ""}
        )
    try:
        message = str(exc)
    except BaseException:  # an exception whose __str__ raises
        message = ""
    return {
        "kind": RAISED,
        "error_type": type(exc).__name__,
        "message": message[:4000],
        "phase": "call",
        "frames": frames[-20:],
        "seconds": 0.0,
        "details": {"module": type(exc).__module__ or "", "harness": "bug", "file": file},
    }
