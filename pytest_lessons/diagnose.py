"""The documented path of the diagnosis types: a re-export of :mod:`pytest_lessons.core.detectors`.

``from pytest_lessons.diagnose import WATCH_OUT, Diagnosis`` keeps working: the objects are the
core's own, so ``isinstance`` and the ranking see one class.
"""

from __future__ import annotations

from pytest_lessons.core.compare import Numbers
from pytest_lessons.core.detectors import DETECTOR, GENERIC, WATCH_OUT, Diagnosis, Evidence, best

__all__ = ["DETECTOR", "GENERIC", "WATCH_OUT", "Diagnosis", "Evidence", "Numbers", "best"]
