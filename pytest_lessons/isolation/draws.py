"""A statistical case, on the child's side: call the entry function N times, count the draws.

A case is statistical when its generator input (:func:`~pytest_lessons.isolation.arguments.
pack_generator`) carries a plan, ``{"n": N, "output": i}``. Then the child makes ONE generator
from the case's seed and passes it to all N calls, so the calls continue one random stream, as
a sampling loop does (a function that reseeds the generator draws the same value N times, and
fails, as it should). Every other input is rebuilt for each call (fresh objects, as always).
In a lesson with a harness, each call is one of its ``drive()`` with the mutation rules
checked (:meth:`pytest_lessons.isolation.drive.Plan.drawing`), as an ordinary case's one call.

Each call's answer (or its output *i*, when the function returns several values) is ints: a
Python int, a (nested) list of ints, or an integer torch tensor; every element is one draw.
What goes back is their counts and how many draws each call gave, never the draws
themselves::

    {"$": "counts", "calls": N, "items": [[category, count], ...], "sizes": [[draws, calls], ...]}

``sizes`` is each call's number of draws in order, run-length coded: ``[[4, 1000]]`` is 4
draws from each of 1,000 calls, ``[[1, 1], [0, 999]]`` one draw and then none. The judge
checks it against the draws the case asks of each call
(:func:`pytest_lessons.core.frequencies.compare`): a sampler that answers fewer or more draws
than asked fails, whatever its counts.

A call whose answer is not ints ends the loop: the tag then says which call it was and carries
that answer, encoded, under ``"bad"`` (``{"call": 3, "answer": ...}``), so the learner is told
what came back. Like every answer, the tag is untrusted data for the judge
(:func:`pytest_lessons.isolation.answers.valid_answer` checks it).

:class:`Tally` is the counting itself, for any code that makes a statistical case's calls.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from pytest_lessons.isolation.answers import COUNTS, TAG
from pytest_lessons.isolation.arguments import ARG, rebuild


def plan(inputs: list[Any]) -> tuple[int, int, int] | None:
    """(position of the generator input, N calls, output index or -1) of a statistical case's
    packed *inputs*; None for any other case."""
    for position, value in enumerate(inputs):
        if isinstance(value, dict) and value.get(ARG) == "generator" and "draws" in value:
            draws = value["draws"]
            return position, int(draws["n"]), int(draws.get("output", -1))
    return None


class Tally:
    """The draws of a statistical case's calls, counted call by call: :meth:`add` each call's
    answer, then :meth:`tag` gives the counts tag (see the module docstring)."""

    def __init__(self, output: int = -1) -> None:
        self.output = output
        """The output whose values are the draws, or -1 for the whole answer."""
        self.counts: dict[int, int] = {}
        self.sizes: list[list[int]] = []
        self.calls = 0

    def add(self, answer: Any) -> bool:
        """Count one call's *answer*; False (nothing counted) when it is not ints."""
        values = _ints(answer, self.output)
        if values is None:
            return False
        counts = self.counts
        for value in values:
            counts[value] = counts.get(value, 0) + 1
        if self.sizes and self.sizes[-1][0] == len(values):
            self.sizes[-1][1] += 1
        else:
            self.sizes.append([len(values), 1])
        self.calls += 1
        return True

    def tag(self, bad: dict[str, Any] | None = None) -> dict[str, Any]:
        """The counts tag of the calls counted so far; *bad*: the call that was not ints."""
        tag = {
            TAG: COUNTS,
            "calls": self.calls,
            "items": sorted([k, c] for k, c in self.counts.items()),
            "sizes": self.sizes,
        }
        if bad is not None:
            tag["bad"] = bad
        return tag


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
    tally = Tally(output)
    for call in range(calls):
        if call:
            arguments = [
                generator if i == position else rebuild(value) for i, value in enumerate(inputs)
            ]
        answer = function(*arguments)
        if not tally.add(answer):
            return tally.tag(bad={"call": call + 1, "answer": encode(answer)})
    return tally.tag()


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
