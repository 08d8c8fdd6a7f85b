"""A statistical case, on the child's side: call the entry function N times, count the draws.

A case is statistical when its generator input (:func:`~pytest_lessons.isolation.arguments.
pack_generator`) carries a plan, ``{"n": N, "output": i}``. Then the child makes ONE generator
from the case's seed and passes it to all N calls, so the calls continue one random stream, as
a sampling loop does (a function that reseeds the generator draws the same value N times, and
fails, as it should). Every other input is rebuilt for each call (fresh objects, as always).

Each call's answer (or its output *i*, when the function returns several values) is ints: a
Python int, a (nested) list of ints, or an integer torch tensor; every element is one draw.
What goes back is their counts, never the draws themselves::

    {"$": "counts", "calls": N, "items": [[category, count], ...]}

A call whose answer is not ints ends the loop: the tag then says which call it was and carries
that answer, encoded, under ``"bad"`` (``{"call": 3, "answer": ...}``), so the learner is told
what came back. Like every answer, the tag is untrusted data for the judge
(:func:`pytest_lessons.isolation.outcome.valid_answer` checks it).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from pytest_lessons.isolation.arguments import ARG, rebuild
from pytest_lessons.isolation.outcome import TAG


def plan(inputs: list[Any]) -> tuple[int, int, int] | None:
    """(position of the generator input, N calls, output index or -1) of a statistical case's
    packed *inputs*; None for any other case."""
    for position, value in enumerate(inputs):
        if isinstance(value, dict) and value.get(ARG) == "generator" and "draws" in value:
            draws = value["draws"]
            return position, int(draws["n"]), int(draws.get("output", -1))
    return None


def draw(
    function: Callable[..., Any],
    inputs: list[Any],
    arguments: list[Any],
    found: tuple[int, int, int],
    encode: Callable[[Any], Any],
) -> dict[str, Any]:
    """The counts tag of *found*'s N calls of *function* (see the module docstring); the first
    call gets *arguments* (already built), whose generator every later call shares."""
    position, calls, output = found
    generator = arguments[position]
    counts: dict[int, int] = {}
    for call in range(calls):
        if call:
            arguments = [
                generator if i == position else rebuild(value) for i, value in enumerate(inputs)
            ]
        answer = function(*arguments)
        values = _ints(answer, output)
        if values is None:
            return {
                TAG: "counts",
                "calls": call,
                "items": sorted([k, c] for k, c in counts.items()),
                "bad": {"call": call + 1, "answer": encode(answer)},
            }
        for value in values:
            counts[value] = counts.get(value, 0) + 1
    return {TAG: "counts", "calls": calls, "items": sorted([k, c] for k, c in counts.items())}


def _ints(answer: Any, output: int) -> list[int] | None:
    """The draws in one call's *answer* (of output *output* when >= 0), or None when it is not
    ints. Only exact types are read: a learner's subclass is never asked for its values."""
    if output >= 0:
        if type(answer) not in (tuple, list) or len(answer) <= output:
            return None
        answer = answer[output]
    if type(answer) is int:
        return [answer]
    torch = sys.modules.get("torch")
    if torch is not None and type(answer) is torch.Tensor:
        if answer.is_floating_point() or answer.is_complex() or answer.dtype == torch.bool:
            return None
        flat: list[int] = answer.detach().reshape(-1).tolist()
        return flat
    if isinstance(answer, list) and type(answer) is list:
        out: list[int] = []
        todo: list[Any] = [answer]
        while todo:
            item = todo.pop()
            if type(item) is list:
                todo.extend(reversed(item))  # in order: the stack pops from its end
            elif type(item) is int:
                out.append(item)
            else:
                return None
        return out
    return None
