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

from pytest_lessons.isolation.drive import Learner, LessonFailure, first_change

__all__ = [
    "Learner",
    "LessonFailure",
    "check_parameters",
    "load_strict",
    "round_trip",
    "same",
    "snapshot",
    "unchanged",
]


def _where(at: list[Any]) -> str:
    return "[" + ", ".join(str(a) if isinstance(a, int) else repr(a) for a in at) + "]"


def check_parameters(
    module: Any, shapes: Mapping[str, Sequence[int]], what: str = "module"
) -> None:
    """Check that *module* (a ``torch.nn.Module``) has exactly the parameters and buffers of
    its state dict that *shapes* names, each of that shape, before anything is loaded or run:
    ``your module has no parameter `weight`; it has `w``` beats load_state_dict's own error.
    *what* names the module in the words (``"your LayerNorm"``)."""
    state = getattr(module, "state_dict", None)
    if not callable(state):
        raise LessonFailure(
            f"Make your {what} a torch.nn.Module: the lesson loads weights into it, and it "
            f"is a {type(module).__name__}."
        )
    have = {name: list(value.shape) for name, value in state().items()}
    listed = ", ".join(f"`{n}`" for n in have) or "none"
    for name, shape in shapes.items():
        if name not in have:
            raise LessonFailure(
                f"Give your {what} a parameter named `{name}` of shape {list(shape)}: the lesson "
                f"loads its weights by name, and your {what} has no parameter `{name}`; it has "
                f"{listed}."
            )
        if have[name] != list(shape):
            raise LessonFailure(
                f"Make `{name}` of your {what} of shape {list(shape)}: it is {have[name]}, so "
                "the lesson's weights do not fit it."
            )
    extra = [name for name in have if name not in shapes]
    if extra:
        raise LessonFailure(
            f"Remove `{extra[0]}` from your {what}, or make it a plain attribute: the lesson's "
            f"weights hold only {', '.join(f'`{n}`' for n in shapes)}, and a strict load refuses "
            "a parameter it has no weight for."
        )


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
        "Work on a copy or build a new value: the caller still needs its own."
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
            f"back as {now}."
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
    raise LessonFailure(f"Make {what} agree: they differ{where}, {one} against {other}.")
