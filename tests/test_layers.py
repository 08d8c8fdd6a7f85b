"""The package's layers, by folder (see each folder's ``__init__`` and docs/contributors/architecture.md):
who may import whom, what the light layers never import, no import cycle, and no import hidden
inside a function to dodge one. The check reads the source (``ast``), so it sees every import,
also those that a run would not reach; one test also imports the modules, for what they pull
in through third parties."""

from __future__ import annotations

import ast
import functools
import json
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest_lessons

PACKAGE = Path(pytest_lessons.__file__).parent

#: The pytest front end: the entry point ``lessons`` and what it builds on. The only modules
#: that may import pytest.
PYTEST_FRONT_END = {"plugin", "hooks", "nodes", "session", "terminal"}
#: The command-line front end: ``python -m pytest_lessons`` (merge, gradescope, place, plan, ...)
#: and ``python -m pytest_lessons.schema``.
COMMANDS = {
    "__main__",
    "autograder",
    "place",
    "plan",
    "schema",
    "history_command",
    "watch",
    "canvas",
    "similarity",
}
#: Permanent re-exports at documented paths; each may import only the core it re-exports.
SHIMS = {"diagnose"}
#: The helpers a lesson's harness imports in the sandboxed child (pytest_lessons.harness),
#: over the child's side of behaviour lessons.
LESSON_API = {"harness"}

#: Who may import whom, by the importer's layer: the package modules it may import (a name or
#: the folder it starts), and the outside modules it never imports at its top level.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    # The isolation layer's contract only: the runner, the outcome it returns, the sandbox's
    # Policy (grading and the texts word outcomes; a Job carries a Policy).
    # isolation.library: the course library a Job carries (core.parts builds it).
    # isolation.text: the boundary for learner text, whose escapes the terminal's lines use.
    # isolation.answers: the answer encoding, which the child packs and the judge decodes; it
    # knows the shape of the data only, never an expected answer.
    # isolation.files: a learner's file read as bytes beneath its folder, no link followed
    # (core.runs reads a starter's text to run it once per lesson, never as code).
    # isolation.initial: the initial-values check on plain numbers, which the harness makes
    # in the child and the grader makes again on the values sent back.
    "core": (
        "core",
        "isolation.answers",
        "isolation.initial",
        "isolation.runner",
        "isolation.outcome",
        "isolation.sandbox",
        "isolation.library",
        "isolation.text",
        "isolation.files",
    ),
    "isolation": ("isolation",),
    # core.submissions: which folders are learners and which shard holds them, plain data;
    # core.words: the general word helpers, so a report words a count as the terminal does.
    # isolation.text: the writers show what no file should hold as escapes (visible).
    "reports": (
        "reports",
        "isolation.text",
        "core.results",
        "core.words",
        "core.model",
        "core.course",
        "core.summary",
        "core.submissions",
    ),
    # isolation.text: what a notebook's learner wrote, shown as escapes (the converter's lines).
    "notebook": ("notebook", "core", "isolation.runner", "isolation.sandbox", "isolation.text"),
    "pytest front end": (
        "plugin",
        "hooks",
        "nodes",
        "session",
        "terminal",
        "core",
        "isolation",
        "reports",
    ),
    # notebook.pytest_files: pytest's cache as a run of a lesson keeps it (the watch's progress).
    "commands": (
        *sorted(COMMANDS),
        "core",
        "isolation",
        "reports",
        "notebook.pytest_files",
    ),
    "shim": ("core",),
    "lesson api": ("isolation.drive", "isolation.initial"),
    # The package's root: the lazy public API and the %load_ext hooks.
    "root": ("core", "notebook"),
}
NEVER: dict[str, tuple[str, ...]] = {
    "core": ("pytest", "_pytest", "torch", "IPython", "subprocess"),
    "isolation": ("pytest", "_pytest", "torch", "IPython"),
    "reports": ("pytest", "_pytest", "torch", "IPython", "subprocess"),
    "notebook": ("pytest", "_pytest", "torch", "IPython"),
    "pytest front end": ("torch", "IPython"),
    "commands": ("pytest", "_pytest", "torch", "IPython"),
    "shim": ("pytest", "_pytest", "torch", "IPython"),
    "lesson api": ("pytest", "_pytest", "torch", "IPython"),
    "root": ("pytest", "_pytest", "torch", "IPython"),
}

#: Today's code against the rules above, each named with why it is allowed and until when. A
#: pair that no longer occurs fails the test, so the list only shrinks.
EXCEPTIONS: dict[tuple[str, str], str] = {}


@functools.cache
def modules() -> tuple[str, ...]:
    """Every module of the package, in its folders too, by its name below the package
    (``core.grader``; a folder's ``__init__`` by the folder's name, the root's as
    ``__init__``)."""
    found = pkgutil.walk_packages(pytest_lessons.__path__, "pytest_lessons.")
    names = [module.name[len("pytest_lessons.") :] for module in found]
    return tuple(sorted([*names, "__init__"]))


def source(name: str) -> Path:
    path = PACKAGE.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def layer_of(name: str) -> str:
    folder = name.split(".")[0]
    if folder in ("core", "isolation", "reports", "notebook"):
        return folder
    for layer, names in (("pytest front end", PYTEST_FRONT_END), ("commands", COMMANDS)):
        if name in names:
            return layer
    if name in SHIMS:
        return "shim"
    if name in LESSON_API:
        return "lesson api"
    if name == "__init__":
        return "root"
    raise AssertionError(f"pytest_lessons.{name} is in no layer: add it to one in {__file__}")


def allowed(target: str, prefixes: tuple[str, ...]) -> bool:
    return any(target == p or target.startswith(p + ".") for p in prefixes)


def top_level(tree: ast.Module) -> set[int]:
    """The ids of the statements that run on import: the module's body and the bodies of its
    top-level ``if``/``try`` blocks (``if TYPE_CHECKING:``, ``try: import tomllib``)."""
    top: set[int] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        top.add(id(node))
        if isinstance(node, ast.If):
            todo += [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            todo += [*node.body, *node.orelse, *node.finalbody]
            for handler in node.handlers:
                todo += handler.body
    return top


def imports(name: str) -> tuple[dict[str, bool], set[str]]:
    """What *name* imports: the package's modules, each with whether the import is at the
    module's top level; and the outside modules (their first part) imported at its top level."""
    tree = ast.parse(source(name).read_text(encoding="utf-8"))
    known = set(modules())
    top = top_level(tree)
    found: dict[str, bool] = {}
    outside: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "pytest_lessons" or node.module.startswith("pytest_lessons."):
                base = node.module[len("pytest_lessons.") :] if "." in node.module else ""
                for alias in node.names:
                    # `from pytest_lessons.core import model` imports core.model; other names
                    # (`from pytest_lessons.core.model import Case`) come from the module.
                    full = f"{base}.{alias.name}" if base else alias.name
                    targets.append(full if full in known else base or "__init__")
            elif id(node) in top:
                outside.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pytest_lessons."):
                    targets.append(alias.name[len("pytest_lessons.") :])
                elif id(node) in top:
                    outside.add(alias.name.split(".")[0])
        for target in targets:
            found[target] = found.get(target, False) or id(node) in top
    return found, outside


def broken_rules() -> list[str]:
    """Every import that breaks its layer's rule and is not a named exception, as a sentence
    naming the importer and what it imports."""
    broken = []
    for name in modules():
        layer = layer_of(name)
        inside, outside = imports(name)
        for target in sorted(inside):
            if not allowed(target, MAY_IMPORT[layer]) and (name, target) not in EXCEPTIONS:
                broken.append(
                    f"pytest_lessons.{name} imports pytest_lessons.{target}: the {layer} may "
                    f"import only {', '.join(MAY_IMPORT[layer])}"
                )
        for target in sorted(outside & set(NEVER[layer])):
            if (name, target) not in EXCEPTIONS:
                broken.append(
                    f"pytest_lessons.{name} imports {target}: the {layer} never imports "
                    f"{', '.join(NEVER[layer])} at its top level"
                )
    return broken


def test_every_module_keeps_to_its_layers_imports() -> None:
    names = modules()
    assert {"core.grader", "isolation.worker", "reports.formats", "notebook.__main__"} <= set(names)
    assert broken_rules() == []


def test_every_named_exception_still_occurs() -> None:
    # A fixed exception is taken off the list, so the rule is never weaker than the code needs.
    occurring = set()
    for name in modules():
        inside, outside = imports(name)
        occurring |= {(name, target) for target in {*inside, *outside}}
    assert set(EXCEPTIONS) - occurring == set()


def test_an_upward_import_fails_the_check_and_names_both_modules(tmp_path: Path) -> None:
    # The check itself runs on a copy of the package with one planted upward import in each
    # of two layers, so a check that sees nothing cannot pass.
    copy = tmp_path / "pytest_lessons"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module, line in (
        ("core/model.py", "from pytest_lessons.reports import gradebook"),
        ("isolation/outcome.py", "from pytest_lessons.core.results import Status"),
    ):
        text = (copy / module).read_text(encoding="utf-8")
        head, _, rest = text.partition("\nfrom __future__ import annotations\n")
        (copy / module).write_text(f"{head}\nfrom __future__ import annotations\n{line}\n{rest}")
    check = "import json, test_layers; print(json.dumps(test_layers.broken_rules()))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(__file__).parent)])}
    done = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    broken = json.loads(done.stdout)
    assert broken == [
        "pytest_lessons.core.model imports pytest_lessons.reports.gradebook: the core may "
        "import only core, isolation.answers, isolation.initial, isolation.runner, isolation.outcome, "
        "isolation.sandbox, isolation.library, isolation.text, isolation.files",
        "pytest_lessons.isolation.outcome imports pytest_lessons.core.results: the isolation "
        "may import only isolation",
    ]


def test_the_light_layers_import_neither_pytest_nor_torch() -> None:
    # Through third parties too: the worker, the child and the notebook load these.
    light = [
        f"pytest_lessons.{name}"
        for name in modules()
        if layer_of(name) != "pytest front end" and not name.endswith("__main__")
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {light!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in ('pytest', '_pytest', 'torch', 'IPython')"
        " if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


def test_no_module_imports_another_of_the_package_inside_a_function() -> None:
    # A lazy import is how a cycle hides. The package's __init__ is the one exception: it must
    # stay light for the worker, so it loads the public API and the notebook only when asked.
    lazy = {
        (name, target)
        for name in modules()
        if name != "__init__"
        for target, at_top in imports(name)[0].items()
        if not at_top
    }
    assert lazy == set()


def test_the_package_has_no_import_cycle() -> None:
    # The root's names are lazy (resolved on first use), so they are no edges.
    graph = {name: set(imports(name)[0]) for name in modules() if name != "__init__"}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(graph.get(name, ())):
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


def test_the_package_and_the_worker_load_only_their_own_layer() -> None:
    # The worker imports the package before it reads a job; the public API's names must not
    # pull the grading core (or pytest, or torch) into it.
    code = (
        "import json, sys\n"
        "def loaded():\n"
        "    return sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('pytest_lessons', 'pytest', '_pytest', 'torch'))\n"
        "import pytest_lessons\n"
        "root = loaded()\n"
        "import pytest_lessons.isolation.worker\n"
        "print(json.dumps([root, loaded()]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    root, worker = json.loads(done.stdout)
    assert root == ["pytest_lessons"]
    assert [m for m in worker if not m.startswith("pytest_lessons.isolation")] == ["pytest_lessons"]
    assert "pytest_lessons.isolation.worker" in worker
