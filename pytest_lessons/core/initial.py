"""A lesson's rules on a parameter's initial values (``[[initial]]`` in ``exercise.toml``),
judged in the grader.

```toml
[[initial]]
parameter = "weight"          # what the harness's check_initial(module, "weight", ...) checks
within = 6.0                  # every value within ±6 / sqrt(fan_in)
spread = [0.2, 2.0]           # a standard deviation from 0.2 / sqrt(fan_in) to 2 / sqrt(fan_in)
random = true                 # not all the same
fan_in = "weight.shape[1]"    # the case's input whose size is fan_in
scale_words = "sqrt(in_features)"
```

A harness's :func:`pytest_lessons.harness.check_initial` checks the values in the child, for
an honest learner's words at once, and sends them back; :func:`judge` checks them again here
under this rule (its numbers from the author's file, never the child's), so a ``solution.py``
that switched the child's check off at import still fails. The words are the child's
(:mod:`pytest_lessons.isolation.initial` makes both). Imports nothing of the core, so the model
can use it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from pytest_lessons.isolation import answers
from pytest_lessons.isolation.initial import FEWEST, Rule, problem
from pytest_lessons.isolation.outcome import RAISED, RETURNED, Outcome
from pytest_lessons.isolation.runner import ARG

#: The key a parameter's initial values travel under in a result's ``facts``.
PREFIX = "initial:"

_KEYS = ("parameter", "within", "spread", "random", "fan_in", "scale_words", "what")
_FAN_IN = re.compile(r"^([A-Za-z_]\w*)\.shape\[(-?\d+)\]$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


class InitialError(ValueError):
    """An ``[[initial]]`` table that cannot be used, in words for the author."""


@dataclass(frozen=True)
class Initial:
    """One ``[[initial]]`` table."""

    parameter: str
    within: float | None = None
    spread: tuple[float, float] | None = None
    random: bool = False
    fan_in: tuple[str, int] | None = None
    """The case's input and the axis whose size is the fan-in (``weight.shape[1]``)."""
    scale_words: str = ""
    what: str = ""
    """The module as the words name it (default: the lesson's entry)."""


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value > 0


def parse(raw: Any, inputs: tuple[str, ...]) -> tuple[Initial, ...]:
    """The lesson's rules from ``exercise.toml``'s ``initial`` array (None: none); *inputs*
    are the lesson's inputs, which ``fan_in`` may name."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InitialError("initial must be written as [[initial]] tables")
    found: list[Initial] = []
    for number, table in enumerate(raw, 1):
        where = f"initial {number}"
        if not isinstance(table, dict):
            raise InitialError(f"{where} must be a table")
        for key in table:
            if key not in _KEYS:
                raise InitialError(f'{where}: unknown key "{key}" (it has {", ".join(_KEYS)})')
        parameter = table.get("parameter")
        if not isinstance(parameter, str) or not _NAME.match(parameter):
            raise InitialError(f'{where}.parameter must name a parameter, such as "weight"')
        within = table.get("within")
        if within is not None and not _number(within):
            raise InitialError(f"{where}.within must be a positive number")
        spread = table.get("spread")
        if spread is not None and not (
            isinstance(spread, list)
            and len(spread) == 2
            and all(_number(v) for v in spread)
            and spread[0] < spread[1]
        ):
            raise InitialError(f"{where}.spread must be [lowest, highest], two positive numbers")
        random = table.get("random", False)
        if type(random) is not bool:
            raise InitialError(f"{where}.random must be true or false")
        fan_in = None
        if "fan_in" in table:
            match = _FAN_IN.match(str(table["fan_in"]))
            if match is None or match.group(1) not in inputs:
                raise InitialError(
                    f'{where}.fan_in must be an input\'s axis, such as "weight.shape[1]", '
                    f"of one of the inputs {', '.join(inputs)}"
                )
            fan_in = (match.group(1), int(match.group(2)))
        words = table.get("scale_words", "")
        what = table.get("what", "")
        if not isinstance(words, str) or not isinstance(what, str):
            raise InitialError(f"{where}.scale_words and what must be strings")
        if within is None and spread is None and not random:
            raise InitialError(f"{where} must say within, spread or random")
        found.append(
            Initial(
                parameter,
                None if within is None else float(within),
                None if spread is None else (float(spread[0]), float(spread[1])),
                random,
                fan_in,
                words,
                what,
            )
        )
    names = [r.parameter for r in found]
    for duplicate in sorted({n for n in names if names.count(n) > 1}):
        raise InitialError(f'two [[initial]] tables for the parameter "{duplicate}"')
    return tuple(found)


def _shape(packed: Any) -> list[int]:
    """The shape of a job's packed input (a tensor, a block of numbers, nested lists)."""
    if isinstance(packed, dict):
        if packed.get(ARG) == "tensor":
            return _shape(packed.get("value"))
        if packed.get(ARG) == "array":
            return [int(s) for s in packed.get("shape", [])]
        return []
    shape: list[int] = []
    while isinstance(packed, list):
        shape.append(len(packed))
        packed = packed[0] if packed else None
    return shape


def _values(sent: Any) -> list[float] | None:
    """The floats a child sent as a parameter's initial values (a flat list), else None."""
    if answers.tag_of(sent) == answers.DENSE:
        try:
            return [float(v) for v in answers.dense_values(sent)[1]]
        except (ValueError, KeyError, TypeError):
            return None
    if isinstance(sent, list) and all(type(v) in (int, float) for v in sent):
        return [float(v) for v in sent]
    return None


def judge(
    rules: tuple[Initial, ...],
    names: tuple[str, ...],
    inputs: list[Any],
    entry: str,
    outcome: Outcome,
) -> Outcome:
    """*outcome* as the grader judges it under the lesson's initial-values *rules*: a returned
    outcome whose child sent no initial values for a rule's parameter, or values that break
    it, becomes the case's failure, in the words and with the check id the harness's own
    check gives. *names* are the lesson's inputs, *inputs* the job's packed inputs."""
    if outcome.kind != RETURNED or not rules:
        return outcome
    for rule in rules:
        scale = 1.0
        if rule.fan_in is not None:
            name, axis = rule.fan_in
            shape = _shape(inputs[names.index(name)]) if name in names else []
            try:
                scale = math.sqrt(shape[axis])
            except IndexError:
                continue  # the case's input has no such axis: nothing to scale by
        what = rule.what or entry
        values = _values(outcome.facts.get(PREFIX + rule.parameter))
        if values is None:
            found: tuple[str, str] | None = (
                f"Give your {what} a `{rule.parameter}` the lesson can read: its initial "
                "values did not come back to the grader.",
                "init-not-sent",
            )
        else:
            checked = Rule(rule.within, rule.spread, scale, rule.scale_words, rule.random, FEWEST)
            found = problem(values, rule.parameter, what, checked)
        if found is not None:
            return Outcome(
                kind=RAISED,
                error_type="LessonFailure",
                message=found[0],
                phase="call",
                seconds=outcome.seconds,
                output=outcome.output,
                output_cut=outcome.output_cut,
                details={"harness": "failure", "check": found[1], "module": ""},
            )
    return outcome
