"""A lesson's rules on how an answer is computed (``[[rule]]`` in ``exercise.toml``): calls it
forbids and Python loops where vectorising is the lesson. A right answer computed against a
rule fails its case, in the author's words.

```toml
[[rule]]
id = "no-autograd"
forbid = ["torch.autograd.grad", "torch.Tensor.backward"]
message = "work the gradients out by hand: the lesson is the chain rule, not autograd."
mistake = "with_autograd"      # mistakes.py: the right answer the forbidden way
```

The child keeps the rules (:mod:`pytest_lessons.isolation.rules`) and reports a breach as an
exception's outcome with the rule's id; this module reads the table and words the breach. The
lesson check grades each rule's ``mistake`` and proves the rule stops it
(:mod:`pytest_lessons.core.authoring`). This module imports nothing of the core, so the model
can use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_lessons.isolation.outcome import RAISED, Outcome

#: The word of ``forbid`` that stands for a Python loop (a ``for``, a ``while``, a
#: comprehension), as the child reads it.
LOOP = "loop"

#: The kind of a diagnosis that is a broken rule (the class report counts learners by it).
RULE = "rule"

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_KEYS = ("id", "forbid", "message", "mistake")


class RuleError(ValueError):
    """A ``[[rule]]`` table that cannot be used; the message says why, for its author."""


@dataclass(frozen=True)
class Rule:
    """One ``[[rule]]`` of a lesson."""

    id: str
    forbid: tuple[str, ...]
    """Dotted names of the calls the lesson forbids (``torch.autograd.grad``), or ``loop``."""
    message: str
    """What to do, then why: the failure's headline."""
    mistake: str | None = None
    """A function of ``mistakes.py`` that computes the right answer the forbidden way: the
    lesson check proves the rule stops it."""


def parse(raw: Any) -> tuple[Rule, ...]:
    """The lesson's rules from ``exercise.toml``'s ``rule`` array (None: none)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RuleError("rule must be written as [[rule]] tables")
    found: list[Rule] = []
    for number, table in enumerate(raw, 1):
        where = f"rule {number}"
        if not isinstance(table, dict):
            raise RuleError(f"{where} must be a table")
        for key in table:
            if key not in _KEYS:
                raise RuleError(f'{where}: unknown key "{key}" (a rule has {", ".join(_KEYS)})')
        for key in ("id", "forbid", "message"):
            if key not in table:
                raise RuleError(f'{where}: missing "{key}"')
        rule_id, forbid, message = table["id"], table["forbid"], table["message"]
        if not isinstance(rule_id, str) or not _SLUG.match(rule_id):
            raise RuleError(
                f'{where}.id must be lower-case letters, digits and dashes, such as "no-autograd"'
            )
        if (
            not isinstance(forbid, list)
            or not forbid
            or not all(isinstance(n, str) and (n == LOOP or _DOTTED.match(n)) for n in forbid)
        ):
            raise RuleError(
                f"{where}.forbid must list the calls the lesson forbids by their dotted names, "
                f'such as ["torch.autograd.grad", "torch.Tensor.backward"], or "loop"'
            )
        if not isinstance(message, str) or not message.strip():
            raise RuleError(f"{where}.message must say what to do, then why")
        mistake = table.get("mistake")
        if mistake is not None and (not isinstance(mistake, str) or not _IDENTIFIER.match(mistake)):
            raise RuleError(
                f'{where}.mistake must be a function of mistakes.py, such as "with_autograd"'
            )
        found.append(Rule(rule_id, tuple(forbid), " ".join(message.split()), mistake))
    ids = [r.id for r in found]
    for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
        raise RuleError(f'rule id "{duplicate}" is used twice')
    return tuple(found)


def request(rules: tuple[Rule, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What a job carries of the rules: (id, forbidden names) each."""
    return tuple((rule.id, rule.forbid) for rule in rules)


def broken(outcome: Outcome) -> tuple[str, str] | None:
    """(the rule's id, what broke it) of an outcome that broke a rule; None for any other."""
    if outcome.kind != RAISED:
        return None
    rule, what = outcome.details.get("rule"), outcome.details.get("broke")
    if isinstance(rule, str) and isinstance(what, str):
        return rule, what
    return None


def words(rules: tuple[Rule, ...], outcome: Outcome) -> tuple[str, str, str] | None:
    """(id, headline, detail) of a broken rule: the author's words first, then what the code
    did and where. None for an outcome that broke none."""
    found = broken(outcome)
    if found is None:
        return None
    rule_id, what = found
    rule = next((r for r in rules if r.id == rule_id), None)
    frame = outcome.frames[-1] if outcome.frames else None
    where = f" at line {frame.line} of {Path(frame.file).name}" if frame else ""
    if what == LOOP or " loop" in what or what.endswith(("comprehension", "expression")):
        detail = (
            f"Your code has a {what}{where}: the lesson's rule {rule_id} asks for whole-tensor "
            "operations, with no Python loop."
        )
    else:
        detail = f"Your code calls {what}{where}, which the lesson's rule {rule_id} forbids."
    headline = rule.message if rule is not None else detail
    return rule_id, headline, detail
