"""pytest-lessons: grade programming exercises with pytest and say what went wrong.

This package is imported by the isolated worker that runs learner code, so it must stay
light: importing it pulls in neither pytest nor torch. The pytest plugin itself lives in
:mod:`pytest_lessons.plugin`.
"""

from __future__ import annotations

__version__ = "0.1.0"
