"""Grader-owned randomness in the exercise format: generator inputs and statistical cases.

An input declared ``{ name = "g", pass = "generator" }`` takes a seed in each case (``g = 7``,
or drawn by ``[generate]`` as an int) and reaches the entry function as a new CPU
``torch.Generator`` seeded with it, made in the child for each call
(:func:`~pytest_lessons.isolation.arguments.pack_generator`): the same seed gives the same
stream in fork, spawn and in-process mode, whatever the learner's code did to torch's global
generator. The table may name the draw the task prescribes (``primitive = "torch.multinomial(
probs, 1, generator=g)"``), which a seeded case's failure names when the learner's draws follow
the right distribution but another stream (:mod:`pytest_lessons.core.statistical`).

A case with ``draws = N`` is statistical: the child calls the function N times with one
generator (:mod:`pytest_lessons.isolation.draws`) and the judge tests the counts
(:mod:`pytest_lessons.core.frequencies`).

This module is what the model and the jobs need: the checks of ``exercise.toml``'s values and
the packing of a generator argument. It imports nothing of the core, so the model can use it.
"""

from __future__ import annotations

from typing import Any

from pytest_lessons.isolation.runner import pack_generator

#: The ``pass`` of a generator input.
GENERATOR = "generator"

#: The largest seed (``torch.Generator.manual_seed`` takes 64-bit seeds; TOML ints are signed).
MAX_SEED = 2**63 - 1

#: The most calls a statistical case may make.
MAX_DRAWS = 10_000_000


def generator_inputs(value: list[Any]) -> dict[str, str | None]:
    """The generator inputs of a checked ``[exercise] inputs`` list: name -> the prescribed
    draw (``primitive``), None where the table names none."""
    return {
        item["name"]: item.get("primitive")
        for item in value
        if isinstance(item, dict) and item.get("pass") == GENERATOR
    }


def seed_problem(value: Any) -> str | None:
    """None if *value* can seed a generator input, else what it must be."""
    if type(value) is int and 0 <= value <= MAX_SEED:
        return None
    return "is a generator input, so it must be a seed: a whole number from 0 to 2**63 - 1"


def draws_problem(value: Any) -> str | None:
    """None if *value* is a statistical case's number of calls."""
    if type(value) is int and 1 <= value <= MAX_DRAWS:
        return None
    return f"must be a whole number of calls from 1 to {MAX_DRAWS:,}"


def false_fail_problem(value: Any) -> str | None:
    """None if *value* is a false-failure rate."""
    if type(value) in (int, float) and 0 < value < 1:
        return None
    return "must be a probability above 0 and below 1, such as 1e-6"


def pack(
    generators: dict[str, str | None],
    names: tuple[str, ...],
    packed: list[Any],
    inputs: dict[str, Any],
    draws: tuple[int, int] | None = None,
) -> list[Any]:
    """*packed* (a job's arguments in the order of *names*) with each generator input's seed
    packed as a generator; *draws* (N calls, the observed output or -1) makes it the plan of a
    statistical case."""
    if not generators:
        return packed
    plan = {"n": draws[0], "output": draws[1]} if draws is not None else None
    return [
        pack_generator(inputs[name], plan) if name in generators else value
        for name, value in zip(names, packed)
    ]


def plan(exercise: Any, case: Any) -> tuple[int, int] | None:
    """(N calls, observed output index or -1) of a statistical *case* of *exercise*; None for
    any other case."""
    if getattr(case, "draws", None) is None:
        return None
    output = exercise.outputs.index(case.observe) if case.observe else -1
    return int(case.draws), output


#: The seed of torch's global generator (and Python's and NumPy's, which take 32 bits) in a
#: case of a lesson with generator inputs, the golden ratio's 32 bits: never a case's own
#: seed (:func:`global_seed`), so a draw that forgets ``generator=g`` draws other values on
#: every seeded case, where seeding both with the worked example's 0 let it pass there by
#: coincidence.
GLOBAL_SEED = 0x9E3779B9


def global_seed(generators: dict[str, str | None], inputs: dict[str, Any]) -> int:
    """The seed of torch's global generator in the child for a case with *inputs*: 0 for a
    lesson without generator inputs (as always), else :data:`GLOBAL_SEED`, moved on past
    any of the case's own seeds."""
    if not generators:
        return 0
    taken = {inputs.get(name) for name in generators}
    seed = GLOBAL_SEED
    while seed in taken:
        seed = (seed + 1) % 2**32
    return seed


def unused_generator(
    generators: dict[str, str | None], names: tuple[str, ...], streams: Any
) -> tuple[str, str] | None:
    """The words for a wrong answer whose call left a generator input as it was and drew
    from torch's global generator instead (the child's ``streams`` of the outcome): a
    headline and its detail; None when it used its generators, or drew nothing at all."""
    if not isinstance(streams, dict) or not streams.get("global"):
        return None
    unused = [names[i] for i in streams.get("unused", ()) if 0 <= i < len(names)]
    unused = [name for name in unused if name in generators]
    if not unused:
        return None
    name = unused[0]
    primitive = generators.get(name)
    call = f" ({primitive})" if primitive else ""
    headline = (
        f"Pass generator={name} to your draw{call}: your code left {name} as it was and drew "
        "from torch's global generator instead, so its numbers are not the case's."
    )
    detail = (
        f"The grader seeds {name} for each case and seeds torch's global generator apart from "
        f"it: a draw without generator={name} gives other values on every seeded case."
    )
    return headline, detail
