"""pytest-lessons: grade programming exercises with pytest and say what went wrong.

This package is imported by the isolated worker that runs learner code, so it must stay
light: importing it pulls in neither pytest nor torch. The pytest plugin itself lives in
:mod:`pytest_lessons.plugin`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


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
