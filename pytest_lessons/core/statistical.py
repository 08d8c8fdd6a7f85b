"""Statistical cases in the grading core: where the distribution comes from, the verdict, and
the words that tell "right distribution, different stream" from a wrong distribution.

* :func:`distribution`: the exact probabilities a statistical case tests against: written in
  the case (``expected = [p0, p1, ...]``), or returned by the reference's ``distribution``
  function (``reference.py``'s ``def distribution(...)`` with the entry function's
  parameters), run in the worker like all author code, once per case and session.
* :func:`per_call`: how many draws each call must give: the reference's first call's, run
  in the worker like the reference's other work, once per case and session.
* :func:`judge`: the counts against them (:func:`pytest_lessons.core.frequencies.compare`),
  once each call is found to have given its draws.
* :func:`watch_out`: a watch-out fires on a statistical case when its mistake function, run
  the same N times with the same seed, draws exactly the learner's counts, or when its
  draws from another seed fit the learner's (the mistake drawn another way).
* :func:`stream`: a seeded case failed, but every statistical case of the lesson passed: the
  learner's draws follow the right distribution from another random stream, and the words
  name the draw the task prescribes.

The judge only reads plain data: the counts the child packed, the probabilities the reference
returned. Timeouts, not-run and grader errors are the runner's and the grader's, as for any case.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from pytest_lessons.core import detectors, frequencies, model, randomness
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Comparison, Problem
from pytest_lessons.core.detectors import Diagnosis
from pytest_lessons.core.runs import Runs
from pytest_lessons.isolation.answers import COUNTS, tag_of
from pytest_lessons.isolation.outcome import RETURNED

if TYPE_CHECKING:  # pragma: no cover - for the type checker only
    from pytest_lessons.core.watchouts import WatchOuts

#: The reference's function that gives a statistical case's distribution.
DISTRIBUTION = "distribution"

#: The id of the diagnosis "right distribution, different stream".
STREAM = "different-stream"


def _key(exercise: model.Exercise, case: model.Case) -> tuple[str, str]:
    return (f"{exercise.path}#{DISTRIBUTION}", json.dumps(case.inputs, sort_keys=True))


class Distribution(dict[int, float]):
    """A statistical case's probabilities by category, with the draws each call must give
    (:attr:`per_call`): what :func:`distribution` gives and :func:`judge` tests against. A
    dict, so that every reader of the probabilities reads them as they are."""

    per_call: int | None = None
    """The draws each call must return: the reference's; None where there is no reference
    to ask (a learner's copy), and then each call must give as many as the first."""


def per_call(runs: Runs, exercise: model.Exercise, case: model.Case) -> int | None:
    """How many draws each of *case*'s calls must give: what the reference's first call
    gives (its one-call run, counted as the learner's calls are), or None when there is no
    reference or it gives no draws (the reference's own grading then shows why)."""
    plan = randomness.plan(exercise, case)
    if exercise.reference is None or plan is None:
        return None
    key = (f"{exercise.path}#per-call", json.dumps([case.inputs, plan[1]], sort_keys=True))
    if key not in runs.references:
        job = runs.job(
            exercise, exercise.reference, exercise.entry, case.inputs, draws=(1, plan[1])
        )
        outcome = runs.runner.run(job)
        answer: Any = outcome.answer if outcome.kind == RETURNED else None
        found = None
        if tag_of(answer) == COUNTS and "bad" not in answer:
            sizes = answer.get("sizes") or []
            if len(sizes) == 1 and sizes[0][0] >= 1:
                found = int(sizes[0][0])
        runs.references[key] = found
    stored = runs.references[key]
    return stored if isinstance(stored, int) else None


def distribution(runs: Runs, exercise: model.Exercise, case: model.Case) -> Distribution | None:
    """The probabilities *case* tests against, by category, with the draws each call must
    give (:func:`per_call`); None when the reference's ``distribution`` gave none (the
    lesson's failure on the case)."""
    probabilities = _probabilities(runs, exercise, case)
    if probabilities is None:
        return None
    found = Distribution(probabilities)
    found.per_call = per_call(runs, exercise, case)
    return found


def _probabilities(
    runs: Runs, exercise: model.Exercise, case: model.Case
) -> dict[int, float] | None:
    if case.expected is not None:
        return frequencies.read_probabilities(case.expected)
    key = _key(exercise, case)
    if key not in runs.references:
        answer = None
        if exercise.reference is not None:
            job = runs.job(exercise, exercise.reference, DISTRIBUTION, case.inputs)
            outcome = runs.runner.run(job)
            if outcome.kind == RETURNED and frequencies.read_probabilities(outcome.answer):
                answer = outcome.answer
            else:
                runs.reference_outcomes[key] = outcome
        runs.references[key] = answer
    stored = runs.references[key]
    return frequencies.read_probabilities(stored) if stored is not None else None


def failure(runs: Runs, exercise: model.Exercise, case: model.Case) -> str:
    """Why the reference gave no distribution on *case*, for the lesson's author."""
    outcome = runs.reference_outcomes.get(_key(exercise, case))
    name = exercise.reference.name if exercise.reference else "reference.py"
    what = "it is missing"
    if outcome is not None and outcome.kind == RETURNED:
        what = "it returned no probabilities summing to 1"
    elif outcome is not None and outcome.kind == "setup":
        what = f"{name} defines no function {DISTRIBUTION} with {exercise.entry}'s parameters"
    elif outcome is not None:
        what = f"it {outcome.kind} ({outcome.error_type or outcome.message})".strip()
    return (
        f"{name}'s {DISTRIBUTION}() gave no distribution for {case.label}: {what}. It takes "
        f"{exercise.entry}'s parameters and returns the probability of each category (a list "
        "whose index is the category, or a 1-D tensor).\n"
    )


def judge(probabilities: Any, answer: Any, case: model.Case) -> Comparison:
    """A statistical case's counts against its distribution (a :class:`Distribution`, whose
    :attr:`~Distribution.per_call` each call's draws are checked against first)."""
    asked = getattr(probabilities, "per_call", None)
    return frequencies.compare(probabilities or {}, answer, case.false_fail, case.draws or 0, asked)


def _counted(answer: Any) -> bool:
    return isinstance(answer, dict) and tag_of(answer) == COUNTS and "bad" not in answer


def reseeded(exercise: model.Exercise, case: model.Case) -> model.Case:
    """*case* with other seeds for its generator inputs: the draws of a mistake that are a
    sample of its distribution independent of the learner's (drawn with the case's seed,
    code that uses the stream another way may share some of its numbers)."""
    inputs = dict(case.inputs)
    for name in exercise.generators:
        seed = inputs.get(name)
        if type(seed) is int:
            inputs[name] = (seed + _OTHER_SEED) % (randomness.MAX_SEED + 1)
    return dataclasses.replace(case, inputs=inputs)


#: What :func:`reseeded` adds to a seed: 2**64 over the golden ratio, a stride that lands
#: far from the small seeds cases are written with.
_OTHER_SEED = 0x9E3779B97F4A7C15


def watch_out(watch_outs: WatchOuts, attempt: Attempt, answer: Any) -> Diagnosis | None:
    """The watch-out whose mistake draws the learner's distribution: first, one whose mistake,
    called the case's N times with its seed, draws exactly the learner's counts (the same code
    with the same stream); then one whose mistake's draws from another seed fit the learner's
    (:func:`~pytest_lessons.core.frequencies.same_distribution` at the case's false-fail
    rate, each call giving as many draws): the mistake drawn another way, say Gumbel-max
    where the mistake calls ``multinomial``. The learner's counts already failed the
    reference's distribution, or no watch-out would be asked."""
    watches = [
        watch
        for watch in attempt.exercise.watch_outs
        if watch.mistake and watch.fit is None and watch_outs.code_fits(attempt, watch)
    ]
    runs, case = watch_outs.runs, attempt.case
    for watch in watches:
        mistake = runs.mistake_raw(attempt, watch, case)
        if _counted(mistake) and mistake == answer:
            return Diagnosis(
                watch.id, f"Watch out: {watch.message}", detectors.WATCH_OUT, kind="watch_out"
            )
    if not _counted(answer):
        return None
    other = reseeded(attempt.exercise, case)
    for watch in watches:
        mistake = runs.mistake_raw(attempt, watch, other)
        if not _counted(mistake) or mistake.get("sizes") != answer.get("sizes"):
            continue
        if frequencies.same_distribution(answer["items"], mistake["items"], case.false_fail):
            detail = (
                "Your draws follow the distribution this mistake draws from, though drawn "
                "another way: its counts and yours agree within a test that misses a true "
                f"match with probability at most {case.false_fail:g}."
            )
            return Diagnosis(
                watch.id,
                f"Watch out: {watch.message}",
                detectors.WATCH_OUT,
                (detail,),
                kind="watch_out",
            )
    return None


def stream(runs: Runs, attempt: Attempt, comparison: Comparison) -> Diagnosis | None:
    """For a failed seeded case of a lesson with statistical cases, whose *comparison* found
    other values in the output the statistical cases observe: when the learner's draws pass
    every statistical case, the distribution is right and the stream is not; the words name
    the prescribed draw. None otherwise (a wrong type, shape or another output is its own
    mistake)."""
    exercise = attempt.exercise
    # A public case never runs a hidden one's code: that runs after every public case.
    statistical = [
        case
        for case in exercise.cases
        if case.draws is not None and (attempt.case.hidden or not case.hidden)
    ]
    if attempt.case.draws is not None or not statistical or not exercise.generators:
        return None
    if comparison.problem != Problem.VALUES:
        return None
    if exercise.outputs and comparison.part not in {case.observe for case in statistical}:
        return None
    for case in statistical:
        probabilities = distribution(runs, exercise, case)
        if probabilities is None:
            return None
        outcome = runs.learner_outcome(attempt.on(case))
        if outcome.kind != RETURNED or not judge(probabilities, outcome.answer, case).passed:
            return None
    primitive = next((p for p in exercise.generators.values() if p), None)
    lead = f"Draw with {primitive}" if primitive else "Draw the way the task says"
    headline = (
        f"{lead}: your draws follow the right distribution (the lesson's statistical cases "
        "pass), but come from another random stream, so the seeded values differ."
    )
    details = (
        "With the same seed, right ways to sample draw different values: one call per token, "
        "Gumbel-max or an inverse CDF each use the generator's numbers in another order. A "
        "seeded case expects the values of the prescribed call.",
    )
    return Diagnosis(STREAM, headline, detectors.WATCH_OUT, details, kind="watch_out")
