"""A lesson's check of a parameter's initial values, on plain numbers: made twice, to the same
words. In the child, a harness's :func:`pytest_lessons.harness.check_initial` makes it first, to
tell an honest learner at once; then the grader makes it again on the values the child sent
(:func:`pytest_lessons.core.behaviour.initial`), under the rule ``exercise.toml`` states, so
code that switched the child's check off still fails: the child shares its process with
learner code, the grader does not.

Standard library only: the child imports it beside learner code, the grading core imports it
to judge, and neither needs torch for a list of floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Fewer values than this say too little of a spread to judge it.
FEWEST = 16


@dataclass(frozen=True)
class Rule:
    """The range a parameter's initial values must start in, in units of 1 / *scale*."""

    within: float | None = None
    """Every value within ±within / scale."""
    spread: tuple[float, float] | None = None
    """The standard deviation between spread[0] / scale and spread[1] / scale."""
    scale: float = 1.0
    scale_words: str = ""
    """*scale* in the lesson's words (``sqrt(in_features)``)."""
    random: bool = False
    """Not every value the same."""
    fewest: int = FEWEST


def _over(value: float, rule: Rule) -> str:
    """``2/sqrt(in_features)`` for the numerator 2 of a bound stated over the scale's words."""
    return f"{value:g}/{rule.scale_words}" if rule.scale_words else f"{value / rule.scale:.4g}"


def problem(values: Sequence[float], name: str, what: str, rule: Rule) -> tuple[str, str] | None:
    """The words for the learner and the check's id when *values* (parameter *name*'s initial
    values, flattened, of the learner's *what*) break *rule*; None when they keep it. Checked
    in this order: finite; the spread (on ``rule.fewest`` values or more); the range; with
    ``rule.random``, not all the same."""
    if not all(math.isfinite(v) for v in values):
        return (
            f"Give `{name}` initial values, for example with torch.nn.init.uniform_: your "
            f"{what}'s holds NaN or infinity (torch.empty leaves whatever memory held).",
            "init-not-finite",
        )
    count = len(values)
    if rule.spread is not None and count >= max(rule.fewest, 2):
        mean = math.fsum(values) / count
        std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (count - 1))
        low, high = rule.spread
        if not low / rule.scale <= std <= high / rule.scale:
            said = f"between {_over(low, rule)} and {_over(high, rule)}"
            shown = (
                f" (here {low / rule.scale:.4g} to {high / rule.scale:.4g})"
                if rule.scale_words
                else ""
            )
            return (
                f"Draw the initial `{name}` with a standard deviation {said}{shown}, the scale "
                f"the lesson states for a new {what}: yours is {std:.4g}.",
                "init-spread",
            )
    if rule.within is not None and count:
        largest = max(abs(v) for v in values)
        if largest > rule.within / rule.scale * (1 + 1e-6):
            said = f"±{_over(rule.within, rule)}"
            shown = f" (here ±{rule.within / rule.scale:.4g})" if rule.scale_words else ""
            return (
                f"Start `{name}` with every value within {said}{shown}, the range the lesson "
                f"states for a new {what}: yours reaches {largest:.4g}, so each output starts "
                "larger the more inputs it sums.",
                "init-range",
            )
    if rule.random and count > 1 and all(v == values[0] for v in values):
        return (
            f"Draw the initial `{name}` at random: every entry of yours is the same, so every "
            "output gets the same gradient and they never become different.",
            "init-constant",
        )
    return None
