"""The package's layers: a grading core that imports no pytest (the worker, the child that runs
learner code and the notebook front end load it), and a thin pytest layer on top; no import
cycle anywhere, and no import hidden inside a function to dodge one."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest_lessons

#: The pytest layer: the only modules that may import pytest.
PYTEST_LAYER = {"plugin", "nodes", "hooks", "session", "terminal"}

PACKAGE = Path(pytest_lessons.__file__).parent


def modules() -> list[str]:
    """Every module of the package, its folders' too, by its name below the package
    (``core.grading``; a folder's ``__init__`` by the folder's name)."""
    found = pkgutil.walk_packages(pytest_lessons.__path__, "pytest_lessons.")
    return sorted([module.name.removeprefix("pytest_lessons.") for module in found] + ["__init__"])


def source(name: str) -> Path:
    path = PACKAGE.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def core_modules() -> list[str]:
    return [
        f"pytest_lessons.{name}"
        for name in modules()
        if name not in PYTEST_LAYER and name != "__init__"
    ]


def test_the_grading_core_imports_neither_pytest_nor_torch() -> None:
    core = core_modules()
    assert "pytest_lessons.isolation.runner" in core and "pytest_lessons.core.grading" in core
    code = (
        "import importlib, json, sys\n"
        f"for name in {core!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in ('pytest', '_pytest', 'torch') if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


def imports(name: str) -> dict[str, bool]:
    """The package's modules that *name* imports, each with whether the import is at the
    module's top level (``if TYPE_CHECKING:`` blocks count as top level)."""
    tree = ast.parse(source(name).read_text(encoding="utf-8"))
    found: dict[str, bool] = {}
    known = set(modules())
    top = set(map(id, tree.body))
    for node in tree.body:
        if isinstance(node, ast.If):
            top.update(map(id, node.body))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            base = node.module.removeprefix("pytest_lessons").lstrip(".")
            if node.module == "pytest_lessons" or node.module.startswith("pytest_lessons."):
                # `from pytest_lessons.core import model` imports core.model; names that are
                # not modules (`from pytest_lessons.core.model import Case`) import the module.
                targets = [
                    f"{base}.{alias.name}".lstrip(".")
                    if f"{base}.{alias.name}".lstrip(".") in known
                    else base or "__init__"
                    for alias in node.names
                ]
        elif isinstance(node, ast.Import):
            targets = [
                a.name.removeprefix("pytest_lessons.")
                for a in node.names
                if a.name.startswith("pytest_lessons.")
            ]
        for target in targets:
            if target in known:
                found[target] = found.get(target, False) or id(node) in top
    return found


def test_no_module_imports_another_of_the_package_inside_a_function() -> None:
    # A lazy import is how a cycle hides. The package's __init__ is the one exception: it must
    # stay light for the worker, so it loads the notebook extension only when asked.
    lazy = {
        (name, target)
        for name in modules()
        if name != "__init__"
        for target, at_top in imports(name).items()
        if not at_top
    }
    assert lazy == set()


def test_the_package_has_no_import_cycle() -> None:
    graph = {name: set(imports(name)) for name in modules()}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in path:
                cycles.append([*path[path.index(target) :], target])
            elif target not in done:
                visit(target, [*path, target])
        done.add(name)

    done: set[str] = set()
    for name in graph:
        if name not in done:
            visit(name, [name])
    assert cycles == []


def test_the_core_never_imports_the_pytest_layer() -> None:
    upward = {
        (name, target)
        for name in modules()
        if name not in PYTEST_LAYER
        for target in imports(name)
        if target in PYTEST_LAYER
    }
    assert upward == set()
