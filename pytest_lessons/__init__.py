"""pytest-lessons: grade programming exercises with pytest and say what went wrong.

The public API is the names in ``__all__``: ``from pytest_lessons import Diagnosis, WATCH_OUT``
in a conftest's ``pytest_lessons_diagnose`` hook (its contract is :mod:`pytest_lessons.hooks`),
``from pytest_lessons import CaseResult, load_exercise`` in a tool that reads reports or
exercises. Each name is resolved on first use: the isolated worker that runs learner code
imports this package, so importing it loads nothing else (no pytest, no torch, no grading core).

The folders are internal; their paths may change between releases:

- ``core/``: the grading core (format, judging, diagnosis, words, results);
- ``isolation/``: running learner code (runners, worker, child, sandbox);
- ``reports/``: files for other programs and people, made from results;
- ``notebook/``: the IPython front end (``%load_ext pytest_lessons``).

Each folder's ``__init__`` states who it may import. The top level is the front end: the pytest
plugin (``plugin``, ``hooks``, ``nodes``, ``session``: the only modules that import pytest), the
commands (``python -m pytest_lessons``, ``autograder``, ``python -m pytest_lessons.schema``), and
:mod:`pytest_lessons.diagnose`, a permanent re-export of the core's diagnosis types at their
documented path. They may import every folder but the notebook; ``tests/test_layers.py`` checks
all of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name: the module that defines it, and its name there.
_PUBLIC: dict[str, tuple[str, str]] = {
    "Diagnosis": ("pytest_lessons.core.detectors", "Diagnosis"),
    "Evidence": ("pytest_lessons.core.detectors", "Evidence"),
    "WATCH_OUT": ("pytest_lessons.core.detectors", "WATCH_OUT"),
    "DETECTOR": ("pytest_lessons.core.detectors", "DETECTOR"),
    "Numbers": ("pytest_lessons.core.compare", "Numbers"),
    "Attempt": ("pytest_lessons.core.attempt", "Attempt"),
    "Exercise": ("pytest_lessons.core.model", "Exercise"),
    "Case": ("pytest_lessons.core.model", "Case"),
    "WatchOut": ("pytest_lessons.core.model", "WatchOut"),
    "ExerciseError": ("pytest_lessons.core.model", "ExerciseError"),
    "load_exercise": ("pytest_lessons.core.model", "load"),
    "CaseResult": ("pytest_lessons.core.results", "CaseResult"),
    "Status": ("pytest_lessons.core.results", "Status"),
}

__all__ = [
    "DETECTOR",
    "WATCH_OUT",
    "Attempt",
    "Case",
    "CaseResult",
    "Diagnosis",
    "Evidence",
    "Exercise",
    "ExerciseError",
    "Numbers",
    "Status",
    "WatchOut",
    "__version__",
    "load_exercise",
    "load_ipython_extension",
    "unload_ipython_extension",
]

if TYPE_CHECKING:
    from pytest_lessons.core.attempt import Attempt
    from pytest_lessons.core.compare import Numbers
    from pytest_lessons.core.detectors import DETECTOR, WATCH_OUT, Diagnosis, Evidence
    from pytest_lessons.core.model import Case, Exercise, ExerciseError, WatchOut
    from pytest_lessons.core.model import load as load_exercise
    from pytest_lessons.core.results import CaseResult, Status


def __getattr__(name: str) -> Any:
    """A public name, imported from its module when first asked for (PEP 562)."""
    try:
        module, attribute = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'pytest_lessons' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # the next lookup finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext pytest_lessons``: the notebook magics (``%%lesson NAME`` and its kin, see
    :mod:`pytest_lessons.notebook`). IPython is imported by no module of this package; the
    notebook front end is loaded only here."""
    from pytest_lessons.notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext pytest_lessons``: stop the worker and remove the magics."""
    from pytest_lessons.notebook import unload_ipython_extension as unload

    unload(ipython)
