"""A starter left as it was shipped: a learner's file whose entry can do nothing but raise
``NotImplementedError``, decided once per lesson instead of once per case.

A course hands out ``solution.py`` with ``raise NotImplementedError`` in the entry; a learner
who runs ``pytest exercises`` before writing a lesson would otherwise start a process per case
of every such lesson to be told the same "write your solution" each time. When the first case
raised ``NotImplementedError`` and the file is such a stub (read as text, never run here), the
lesson's other cases take that outcome (:meth:`pytest_lessons.core.runs.Runs.learner_outcome`).

The test is of the syntax alone and strict: at the module's top level only a docstring,
imports, plain assignments and definitions, none of them binding the entry's name or
``NotImplementedError`` but the entry's own ``def`` (not decorated); the entry's body a
docstring at most and one ``raise NotImplementedError`` (called with constants, or not).
Anything else (an ``if`` at the top level, a loop, a call) is run as usual. Skipping can only
repeat a failure: no case passes without being run.
"""

from __future__ import annotations

import ast

#: The largest source read for the test: a starter is small; a longer file is run as usual.
MAX_STUB_BYTES = 64 << 10
_PROTECTED = "NotImplementedError"


def is_stub(source: bytes, entry: str) -> bool:
    """Whether *source* is a module whose *entry* function can only raise
    ``NotImplementedError`` (see the module's docstring)."""
    if len(source) > MAX_STUB_BYTES:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    found = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            if node.decorator_list or not _raises_only(node.body):
                return False
            found += 1
        elif not _harmless(node, entry):
            return False
    return found == 1


def _harmless(node: ast.stmt, entry: str) -> bool:
    """A top-level statement that runs no learner logic and binds neither name."""
    names: list[str] = []
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)  # a docstring or a bare constant
    if isinstance(node, ast.Import):
        names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if any(alias.name == "*" for alias in node.names):
            return False
        names = [alias.asname or alias.name for alias in node.names]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if node.decorator_list:
            return False
        if isinstance(node, ast.ClassDef) and (node.bases or node.keywords):
            return False
        names = [node.name]
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(isinstance(target, ast.Name) for target in targets):
            return False
        if node.value is not None and not isinstance(node.value, ast.Constant):
            return False
        names = [target.id for target in targets if isinstance(target, ast.Name)]
    else:
        return False
    return entry not in names and _PROTECTED not in names


def _raises_only(body: list[ast.stmt]) -> bool:
    """A function body of a docstring at most, then ``raise NotImplementedError``."""
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].cause is not None:
        return False
    raised = body[0].exc
    if isinstance(raised, ast.Call):
        if raised.keywords or not all(isinstance(a, ast.Constant) for a in raised.args):
            return False
        raised = raised.func
    return isinstance(raised, ast.Name) and raised.id == _PROTECTED
