"""The package's layers: a grading core that imports no pytest (the worker, the child that runs
learner code and any other front end load it), and a thin pytest layer on top."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest_lessons

#: The pytest layer: the only modules that may import pytest.
PYTEST_LAYER = {"plugin", "nodes", "check", "hooks"}


def core_modules() -> list[str]:
    names = [module.name for module in pkgutil.iter_modules(pytest_lessons.__path__)]
    return sorted(f"pytest_lessons.{name}" for name in names if name not in PYTEST_LAYER)


def test_the_grading_core_imports_neither_pytest_nor_torch() -> None:
    modules = core_modules()
    assert "pytest_lessons.runner" in modules and "pytest_lessons.sandbox" in modules
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in ('pytest', '_pytest', 'torch') if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []
