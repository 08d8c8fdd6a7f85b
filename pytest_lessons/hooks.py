"""Hooks that pytest-lessons adds to pytest (registered with ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin. They are called through the item's ``ihook``, so
a ``conftest.py`` inside a lesson's folder speaks for that lesson only.

The built-in diagnosis is the grading core's own (:mod:`pytest_lessons.core.explain`): the
lesson's watch-outs and the generic detectors, which every implementation of the hook adds to.
Yours come first among diagnoses of equal rank, and either built-in part can be turned off by
its name, ``-p no:lessons.watch_outs`` or ``-p no:lessons.detectors`` (or
``config.pluginmanager.set_blocked(...)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_lessons.core.attempt import Attempt
    from pytest_lessons.core.detectors import Diagnosis, Evidence
    from pytest_lessons.nodes import CaseItem


@pytest.hookspec
def pytest_lessons_diagnose(
    item: CaseItem | Attempt, evidence: Evidence, attempt: Attempt
) -> Diagnosis | None:
    """Say what went wrong with a failing case's answer, or return None.

    Called only when the learner's code returned an answer that is wrong (errors, crashes and
    timeouts have their own messages). Every implementation is called, and the core's built-in
    diagnosis (the lesson's watch-outs, the generic detectors) is made beside them; the report
    shows the diagnosis with the lowest ``rank`` of all (``diagnose.WATCH_OUT`` = 10 outranks
    ``diagnose.DETECTOR`` = 20), so a lesson's own words win over generic ones, and yours win
    among equals. A diagnosis with ``shows_values=True`` is not shown for hidden cases.

    :param item: the failing case: its test item in a grading run, the graded ``attempt``
        under ``--lesson-check``; both have ``item.exercise`` and ``item.case``, the model
        objects.
    :param evidence: the learner's answer and the expected one as plain numbers
        (``evidence.got.shape``, ``evidence.got.flat``), the tolerances and the case's inputs.
    :param attempt: what is graded (:class:`pytest_lessons.core.attempt.Attempt`): the exercise,
        the case, the graded file and function, and the learner in batch grading.

    Example, in ``exercises/combine_heads/conftest.py``::

        from pytest_lessons import WATCH_OUT, Diagnosis

        def pytest_lessons_diagnose(item, evidence):
            if evidence.got.shape == evidence.expected.shape[::-1]:
                return Diagnosis(
                    id="time-and-heads-swapped",
                    headline="Watch out: put time first. Your rows are heads, not tokens.",
                    rank=WATCH_OUT,
                    kind="watch_out",
                )
            return None
    """
