"""A lesson's rules on how an answer is computed, kept in the process that runs the code: calls
the lesson forbids (``torch.autograd.grad`` in a by-hand gradient lesson, ``torch.cumsum``
where building it is the lesson) and Python loops where vectorising is the lesson. The core's
side (the format, the words) is :mod:`pytest_lessons.core.rules`.

A case's request carries ``rules``: ``[{"id": "no-autograd", "forbid": ["torch.autograd.grad",
"torch.Tensor.backward"]}, {"id": "vectorised", "forbid": ["loop"]}]``.

* ``loop`` is checked in the graded file's source before it loads: a ``for`` or ``while``
  statement or a comprehension anywhere in it (but in an ``if __name__ == "__main__":``
  block, which never runs here).
* a dotted name is a function or method, found by importing the longest module its name
  starts with (``torch``, then ``Tensor``, then ``backward``), and replaced before the graded
  file loads by a guard: a call whose caller is the graded file's own code breaks the rule. A
  call from the lesson's harness, from torch itself or from the grader's own code (an
  autograd lesson's backward) does not. The breach is recorded before the guard raises, so a
  learner's ``try``/``except`` around the call hides nothing.

The outcome of a broken rule is an exception's (``RuleBroken``), with the rule's id, what broke
it and the graded file's line. Like the rest of the child this is honest code's check, not a
wall: learner code in the same process could undo the guards (the sandbox and the time limit
are what hold against hostile code). It imports neither pytest nor torch (torch only to
resolve a name the lesson forbids).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_lessons.isolation.outcome import RAISED

#: The word of a rule's ``forbid`` that stands for a Python loop.
LOOP = "loop"

#: What each kind of loop is called in the words.
_LOOPS = {
    ast.For: "for loop",
    ast.AsyncFor: "for loop",
    ast.While: "while loop",
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
}


class RuleBroken(Exception):
    """Raised by a guard when the graded code calls what a rule forbids."""


@dataclass
class Rules:
    """The rules of one case, their guards installed by :meth:`guard`."""

    rules: list[tuple[str, list[str]]]
    """(id, forbidden names) of each rule."""
    mine: Callable[[str], bool]
    """Whether a file is the graded code's own."""
    broken: dict[str, Any] | None = None
    """The first breach: rule id, what broke it, where."""
    _undo: list[tuple[Any, str, Any]] = field(default_factory=list)

    def static(self, source: bytes, filename: str, entry: str) -> dict[str, Any] | None:
        """The outcome of a rule against loops that the graded file's source breaks (its first
        loop), checked before it loads; None when it keeps them (or cannot be parsed: Python's
        own error is then the learner's to read). Only the code *entry* can reach by name is
        read: the module's own statements, the entry and the top-level functions and classes
        they name (a mistakes.py holds other answers, a learner's file unused helpers)."""
        rule = next((rid for rid, names in self.rules if LOOP in names), None)
        if rule is None:
            return None
        try:
            tree = ast.parse(source, filename)
        except (SyntaxError, ValueError):
            return None
        found = _first_loop(_reachable(tree, entry))
        if found is None:
            return None
        line, what = found
        lines = source.decode("utf-8", errors="replace").splitlines()
        code = lines[line - 1] if 0 < line <= len(lines) else ""
        self.broken = {"rule": rule, "broke": what, "file": filename, "line": line, "code": code}
        return self.outcome()

    def guard(self) -> None:
        """Put a guard in place of every forbidden name that resolves."""
        for rule, names in self.rules:
            for name in names:
                if name == LOOP:
                    continue
                found = _resolve(name)
                if found is None:
                    continue
                owner, attribute, original = found
                setattr(owner, attribute, self._guarded(rule, name, original))
                self._undo.append((owner, attribute, original))

    def _guarded(self, rule: str, name: str, original: Any) -> Any:
        rules = self

        def guarded(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1)
            if rules.mine(caller.f_code.co_filename):
                if rules.broken is None:
                    rules.broken = {
                        "rule": rule,
                        "broke": name,
                        "file": caller.f_code.co_filename,
                        "line": caller.f_lineno,
                        "code": _line(caller.f_code.co_filename, caller.f_lineno),
                    }
                raise RuleBroken(f"the lesson's rule {rule} forbids {name}")
            return original(*args, **kwargs)

        guarded.__name__ = getattr(original, "__name__", name.rsplit(".", 1)[-1])
        guarded.__doc__ = getattr(original, "__doc__", None)
        return guarded

    def undo(self) -> None:
        """Put every guarded name back (the in-process runner shares pytest's process)."""
        for owner, attribute, original in reversed(self._undo):
            setattr(owner, attribute, original)
        self._undo.clear()

    def outcome(self) -> dict[str, Any] | None:
        """The case's outcome once a rule is broken (whatever the call did after); None
        while every rule holds."""
        found = self.broken
        if found is None:
            return None
        frame = {
            "file": found["file"],
            "line": found["line"],
            "function": "",
            "code": found["code"],
        }
        return {
            "kind": RAISED,
            "error_type": "RuleBroken",
            "message": "",
            "phase": "call",
            "frames": [frame],
            "seconds": 0.0,
            "details": {"module": "", "rule": found["rule"], "broke": found["broke"]},
        }


def prepare(spec: Any, mine: Callable[[str], bool]) -> Rules | None:
    """The rules of a request's ``rules`` (None: the lesson has none)."""
    if not isinstance(spec, list) or not spec:
        return None
    rules = [
        (str(rule.get("id", "")), [str(n) for n in rule.get("forbid", [])])
        for rule in spec
        if isinstance(rule, dict)
    ]
    return Rules(rules, mine)


def _resolve(name: str) -> tuple[Any, str, Any] | None:
    """(owner, attribute, the object) of a dotted name, found from the longest importable
    module its name starts with; None when it names nothing."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # not a module (Tensor), or no such module
            continue
        try:
            for part in parts[cut:-1]:
                owner = getattr(owner, part)
            return owner, parts[-1], getattr(owner, parts[-1])
        except AttributeError:
            return None
    return None


def _reachable(tree: ast.Module, entry: str) -> ast.Module:
    """*tree* with only the top-level definitions *entry* reaches by name (from its own body
    or the module's statements), so a loop in code the case never runs is not counted."""
    defs = {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    kept: set[str] = set()
    todo = [entry] + [
        n.id
        for node in tree.body
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for n in ast.walk(node)
        if isinstance(n, ast.Name)
    ]
    while todo:
        name = todo.pop()
        if name in kept or name not in defs:
            continue
        kept.add(name)
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)]
    body = [
        node
        for node in tree.body
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        or node.name in kept
    ]
    return ast.Module(body=body, type_ignores=[])


def _first_loop(tree: ast.AST) -> tuple[int, str] | None:
    """The line and the kind of the first loop of *tree*, outside ``__main__`` blocks."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_main(node.test):
            for other in node.orelse:
                visit(other)
            return
        kind = _LOOPS.get(type(node))
        if kind is not None:
            found.append((getattr(node, "lineno", 0), kind))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return min(found) if found else None


def _is_main(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _line(filename: str, number: int) -> str:
    import linecache

    return linecache.getline(filename, number).rstrip("\n")
