"""Helpers for a lesson's harness: the common moves of driving a learner's module.

A lesson whose ``exercise.toml`` says ``harness = "harness.py"`` is graded by the author's
``drive(learner, *inputs)`` in that file: it receives the learner's module (``learner.Name``
is what the learner's file defines, see :class:`Learner`) and the case's inputs, drives the
module (instantiate, load a state dict, call methods several times, read arguments back) and
returns the observables, a dict by the names of ``exercise.outputs``, each judged by its kind.
It runs where learner code runs, in the sandboxed child, so it may import this module (which
imports no pytest, and torch only inside the helpers that need it)::

    from pytest_lessons.harness import LessonFailure, round_trip

    def drive(learner, vocab, merges, specials, text):
        tokenizer = learner.Tokenizer(vocab, merges, specials)
        ids = tokenizer.encode(text)
        return {"ids": ids, "text": round_trip(tokenizer.decode, ids, text, "decode(encode(text))")}

Every helper that finds a problem raises :class:`LessonFailure` with words for the learner
(what to do, then why); an author raises it with words of their own. An exception raised in
the learner's code is the learner's (shown with their file and line); any other exception out
of the harness is the harness's bug, told to the author and never blamed on the learner.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from pytest_lessons.isolation.drive import Learner, LessonFailure, first_change, record, uncounted
from pytest_lessons.isolation.initial import Rule, problem

__all__ = [
    "Learner",
    "LessonFailure",
    "check_initial",
    "check_parameters",
    "load_strict",
    "round_trip",
    "same",
    "snapshot",
    "unchanged",
    "uncounted",
]


def _where(at: list[Any]) -> str:
    return "[" + ", ".join(str(a) if isinstance(a, int) else repr(a) for a in at) + "]"


def _names(names: Sequence[str]) -> str:
    """```weight```, ```weight` and `bias```, ```a`, `b` and `c```."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


#: How a tensor that is no parameter is held, as the words for the learner name it.
_HELD = {
    "plain": (
        "a plain tensor attribute",
        "plain tensor attributes",
        "which is in neither parameters() nor state_dict(): an optimizer never updates it and "
        "load_state_dict never fills it",
        "which are in neither parameters() nor state_dict(): an optimizer never updates them "
        "and load_state_dict never fills them",
    ),
    "buffer": (
        "a buffer (register_buffer)",
        "buffers (register_buffer)",
        "which an optimizer never trains",
        "which an optimizer never trains",
    ),
}


def _not_parameters(module: Any, names: Sequence[str], what: str) -> None:
    """Fail once for every name of *names* that *module* holds as a tensor but not as an
    ``nn.Parameter`` (a plain attribute, a buffer), all of them in one sentence."""
    torch = sys.modules.get("torch")
    named = getattr(module, "named_parameters", None)
    buffered = getattr(module, "named_buffers", None)
    if torch is None or not callable(named) or not callable(buffered):
        return
    parameters, buffers = dict(named()), dict(buffered())
    held: dict[str, list[str]] = {}
    for name in names:
        if name in parameters:
            continue
        if name in buffers:
            held.setdefault("buffer", []).append(name)
        elif isinstance(getattr(module, name, None), torch.Tensor):
            held.setdefault("plain", []).append(name)
    found = [name for name in names if any(name in group for group in held.values())]
    if not found:
        return
    parts = []
    for kind, group in held.items():
        one, many, why_one, why_many = _HELD[kind]
        if len(held) == 1:
            said = (
                f"{'it is' if len(group) == 1 else 'they are'} "
                f"{one if len(group) == 1 else many}, {why_one if len(group) == 1 else why_many}"
            )
        else:
            said = f"{_names(group)} {'is' if len(group) == 1 else 'are'} " + (
                f"{one}, {why_one}" if len(group) == 1 else f"{many}, {why_many}"
            )
        parts.append(said)
    first = found[0]
    raise LessonFailure(
        f"Wrap {_names(found)} in torch.nn.Parameter (self.{first} = "
        f"torch.nn.Parameter(...)): in your {what} " + "; ".join(parts) + ".",
        check="not-a-parameter",
    )


def check_parameters(
    module: Any,
    shapes: Mapping[str, Sequence[int]],
    what: str = "module",
    parameters: bool = False,
) -> None:
    """Check that *module* (a ``torch.nn.Module``) has exactly the parameters and buffers of
    its state dict that *shapes* names, each of that shape, before anything is loaded or run:
    ``your module has no parameter `weight`; it has `w``` beats load_state_dict's own error.
    *what* names the module in the words (``"LayerNorm"``: "your LayerNorm"). With
    *parameters*, each name must be an ``nn.Parameter``: a plain tensor attribute or a buffer
    in its place fails, all such names in one sentence (an optimizer would never train them).

    Each failure is a :class:`LessonFailure` with its check's id: ``not-a-module``,
    ``not-a-parameter``, ``parameter-missing``, ``parameter-shape``, ``parameter-extra``."""
    state = getattr(module, "state_dict", None)
    if not callable(state):
        raise LessonFailure(
            f"Make your {what} a torch.nn.Module: the lesson loads weights into it, and it "
            f"is a {type(module).__name__}.",
            check="not-a-module",
        )
    if parameters:
        _not_parameters(module, list(shapes), what)
    have = {name: list(value.shape) for name, value in state().items()}
    listed = ", ".join(f"`{n}`" for n in have) or "none"
    missing = [name for name in shapes if name not in have]
    if missing:
        wanted = " and ".join(f"`{n}` of shape {list(shapes[n])}" for n in missing)
        named = "a parameter named" if len(missing) == 1 else "parameters named"
        raise LessonFailure(
            f"Give your {what} {named} {wanted}: the lesson loads its weights by name, and your "
            f"{what} has no parameter {' or '.join(f'`{n}`' for n in missing)}; it has {listed}.",
            check="parameter-missing",
        )
    wrong = [name for name in shapes if have[name] != list(shapes[name])]
    if wrong:
        wanted = " and ".join(f"`{n}` of your {what} of shape {list(shapes[n])}" for n in wrong)
        held = " and ".join(f"{have[n]}" for n in wrong)
        raise LessonFailure(
            f"Make {wanted}: {'it is' if len(wrong) == 1 else 'they are'} {held}, so the "
            f"lesson's weights do not fit {'it' if len(wrong) == 1 else 'them'}.",
            check="parameter-shape",
        )
    extra = [name for name in have if name not in shapes]
    if extra:
        plain = "it a plain attribute" if len(extra) == 1 else "them plain attributes"
        raise LessonFailure(
            f"Remove {_names(extra)} from your {what}, or make {plain}: the lesson's weights "
            f"hold only {', '.join(f'`{n}`' for n in shapes)}, and a strict load refuses a "
            "parameter it has no weight for.",
            check="parameter-extra",
        )


def check_initial(
    module: Any,
    name: str,
    what: str = "module",
    *,
    within: float | None = None,
    spread: tuple[float, float] | None = None,
    scale: float = 1.0,
    scale_words: str = "",
    random: bool = False,
    fewest: int = 16,
) -> None:
    """Check the initial values of *module*'s parameter *name* against a range the lesson
    states, not one exact recipe, checked in this order: finite; their standard deviation
    between ``spread[0] / scale`` and ``spread[1] / scale`` (judged on *fewest* values or more:
    fewer say too little of a spread); every value within ±*within* / *scale*; with *random*,
    not all the same. *scale_words* says *scale* in the lesson's words
    (``"sqrt(in_features)"``), so the learner reads the rule as stated (``between
    0.2/sqrt(in_features) and 2/sqrt(in_features)``).

    Each failure is a :class:`LessonFailure` with its check's id: ``init-not-finite``,
    ``init-range``, ``init-spread``, ``init-constant``. The values are also sent back to the
    grader, which checks them again under the lesson's ``[[initial]]`` rule for *name*
    (:mod:`pytest_lessons.core.initial`): learner code can switch this check off, not that one."""
    values = getattr(module, name).detach().double().flatten().tolist()
    # Sent to the grader, which checks them again under the lesson's [[initial]] rule.
    record(f"initial:{name}", values)
    found = problem(values, name, what, Rule(within, spread, scale, scale_words, random, fewest))
    if found is not None:
        raise LessonFailure(found[0], check=found[1])


def load_strict(module: Any, state: Mapping[str, Any], what: str = "module") -> Any:
    """Load *state* (name -> tensor, as a ``pass = "tensor"`` input of a whole file arrives)
    into *module* with ``load_state_dict(strict=True)``, its names and shapes checked first
    (:func:`check_parameters`); returns *module*."""
    check_parameters(module, {name: list(value.shape) for name, value in state.items()}, what)
    module.load_state_dict(dict(state), strict=True)
    return module


def snapshot(value: Any) -> Any:
    """A copy of *value* that later calls cannot change: tensors cloned (detached), containers
    copied all the way down; to compare with :func:`unchanged` after a call."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {key: snapshot(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(item) for item in value)
    return copy.deepcopy(value)


def unchanged(before: Any, after: Any, name: str, call: str = "your code") -> None:
    """Fail the case when *after* differs from *before* (a :func:`snapshot`): *call* changed
    its input *name* in place. The words say where first, with the old and the new value."""
    change = first_change(before, after)
    if change is None:
        return
    at, was, now = change
    where = f"at {_where(at)}: " if at else ""
    raise LessonFailure(
        f"Leave {name} as it was: {call} changed it in place ({where}it was {was}, now {now}). "
        "Work on a copy or build a new value: the caller still needs its own.",
        check="changed-in-place",
    )


def round_trip(back: Callable[[Any], Any], there: Any, original: Any, what: str) -> Any:
    """``back(there)``, which must give *original* again (``decode(encode(text)) == text``);
    fails the case with the first difference, named by *what*, when it does not. Returns what
    ``back`` gave."""
    result = back(there)
    change = first_change(original, result)
    if change is not None:
        at, was, now = change
        where = f"at {_where(at)}: " if at else ""
        raise LessonFailure(
            f"Make {what} give back what it started from: {where}it started as {was} and came "
            f"back as {now}.",
            check="round-trip",
        )
    return result


def same(first: Any, second: Any, what: str) -> None:
    """Fail the case when two ways that must agree do not (cached and uncached, batched and
    one by one): *what* names them, as in ``"the cached and the uncached tokens"``."""
    change = first_change(first, second)
    if change is None:
        return
    at, one, other = change
    where = f" at {_where(at)}" if at else ""
    raise LessonFailure(
        f"Make {what} agree: they differ{where}, {one} against {other}.", check="disagree"
    )
