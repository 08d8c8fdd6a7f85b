"""What went wrong with a case that ran and did not pass: the one diagnosis its learner is shown.

The built-in diagnosis is the core's own, applied by :func:`wrong_answer` as a plain call: the
lesson's watch-outs (:class:`~pytest_lessons.core.watchouts.WatchOuts`) and the generic
detectors (:func:`~pytest_lessons.core.detectors.detect`). A front end may add to it with a
:data:`Diagnoser` (pytest's ``pytest_lessons_diagnose`` hook, for plugins and a lesson's
``conftest.py``) and may turn a built-in part off (pytest's ``-p no:lessons.detectors``): the
lowest rank wins among all of them, the front end's first among equals, so a watch-out
(``WATCH_OUT``) outranks a detector (``DETECTOR``) wherever either comes from.

What no number of the answer shows is decided after that ranking: a statistical case's
watch-out, an exact kind's, a draw that ignored the case's generator, the right distribution
from another random stream; and for a harness's check, the check or its watch-out
(:func:`checked`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Callable

from pytest_lessons.core import detectors, randomness, statistical
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Comparison
from pytest_lessons.core.detectors import WATCH_OUT, Diagnosis, Evidence
from pytest_lessons.core.kinds import named
from pytest_lessons.core.runs import Runs
from pytest_lessons.core.watchouts import WatchOuts
from pytest_lessons.isolation.outcome import Outcome

#: The built-in part that matches the lesson's ``[[watch_out]]`` entries (pytest's plugin name
#: ``lessons.watch_outs`` turns it off).
WATCH_OUTS = "watch_outs"

#: The built-in part that runs the generic detectors (``lessons.detectors`` in pytest).
DETECTORS = "detectors"

#: Every built-in part: what a front end that turns none off passes.
BUILT_IN: frozenset[str] = frozenset({WATCH_OUTS, DETECTORS})

#: The finding of a draw that left the case's generator as it was and used torch's global one.
GENERATOR_UNUSED = "generator-unused"

#: A front end's addition to the built-in diagnosis of a wrong answer: pytest connects its
#: ``pytest_lessons_diagnose`` hook here. It returns its best diagnosis, or None.
Diagnoser = Callable[[Attempt, Evidence], "Diagnosis | None"]


def evidence(attempt: Attempt, comparison: Comparison) -> Evidence | None:
    """What the diagnosers are shown of a wrong answer: the answer and the expected value as
    plain numbers, with the case's tolerances and inputs; None when either is not a block of
    numbers (another kind, or the wrong type), which no detector can read."""
    if comparison.got is None or comparison.expected is None:
        return None
    case = attempt.case
    return Evidence(
        got=comparison.got,
        expected=comparison.expected,
        rtol=case.rtol,
        atol=case.atol,
        inputs=case.inputs,
        problem=comparison.problem,
        part_index=comparison.part_index,
    )


def ranked(
    watch_outs: WatchOuts,
    attempt: Attempt,
    found: Evidence,
    extra: Diagnoser | None = None,
    built_in: Collection[str] = BUILT_IN,
) -> Diagnosis | None:
    """The best of the front end's diagnosis (*extra*) and the built-in parts named in
    *built_in*: the lowest rank, the front end's first among equals (its implementations
    always ran before the built-in ones)."""
    diagnoses = [extra(attempt, found) if extra is not None else None]
    if WATCH_OUTS in built_in:
        diagnoses.append(watch_outs.match(attempt, found))
    if DETECTORS in built_in:
        diagnoses.append(detectors.detect(found))
    return detectors.best(diagnoses)


def wrong_answer(
    runs: Runs,
    watch_outs: WatchOuts,
    attempt: Attempt,
    expected: Any,
    outcome: Outcome,
    comparison: Comparison,
    extra: Diagnoser | None = None,
    built_in: Collection[str] = BUILT_IN,
) -> Diagnosis | None:
    """The diagnosis of an answer the judge found wrong (*comparison*), or None."""
    exercise, case = attempt.exercise, attempt.case
    found = evidence(attempt, comparison)
    diagnosis = ranked(watch_outs, attempt, found, extra, built_in) if found is not None else None
    # An exact kind, or an answer with no numbers to compare (a bool tensor, a tensor of
    # another dtype): its watch-outs are matched by the kind's own sameness.
    if case.draws is not None:
        diagnosis = statistical.watch_out(watch_outs, attempt, outcome.answer)
    elif not named(comparison.kind).offers_evidence or comparison.got is None:
        diagnosis = watch_outs.exact(attempt, expected, outcome.answer)
    unused = randomness.unused_generator(
        exercise.generators, exercise.inputs, outcome.details.get("streams")
    )
    if unused is not None and case.draws is None:  # drawn without generator=g
        diagnosis = Diagnosis(GENERATOR_UNUSED, unused[0], WATCH_OUT, (unused[1],))
    if diagnosis is None:  # the right distribution from another stream?
        diagnosis = statistical.stream(runs, attempt, comparison)
    return diagnosis


def checked(watch_outs: WatchOuts, attempt: Attempt, outcome: Outcome) -> Diagnosis | None:
    """The diagnosis of code that gave no answer to judge: a check of the lesson's harness
    that failed (the check, or its watch-out); None for an exception, a crash or a timeout,
    which have words of their own."""
    return watch_outs.check(attempt, outcome)
