"""The grading core: one case of one lesson, graded for one learner, from top to bottom.

Read :meth:`Grader.grade` first. A case goes through these steps::

    Attempt (exercise, case, learner's file)                                 attempt.py
      |  loop budget spent?  -> "not run" (no code runs)                      runs.py
      |  generated case?     -> the reference's answer, run in the worker     runs.py
      v
    runner.run(Job)  ---- learner code runs isolated; plain data comes back   runs.py
      |
      v
    _judge()         ---- the answer against the expected value, within      judge.py
      |                   tolerance
      |  wrong answer?  -> explain.wrong_answer: the lesson's watch-outs     explain.py,
      |                    and the generic detectors, with what a front      watchouts.py,
      |                    end adds (pytest's hook); the lowest rank wins    detectors.py
      v
    Feedback.words() ---- the learner's words; repeats shortened, output     feedback.py,
      |                   capped per exercise                                 texts.py, ledger.py
      |  generated and wrong?  -> a smaller failing input                     shrink.py
      v
    Graded (record.result: the CaseResult, + the text to show)               record.py

A :class:`Grader` is made of parts, each with its own caches, per front-end session:
:class:`~pytest_lessons.core.runs.Runs` runs code and remembers its outcomes (and owns the loop
budget); :class:`~pytest_lessons.core.watchouts.WatchOuts` and
:class:`~pytest_lessons.core.shrink.Shrinker` search with it; the
:class:`~pytest_lessons.core.ledger.Ledger` remembers what the learner was already shown, and
:class:`~pytest_lessons.core.feedback.Feedback` words what did not pass with it.

This module imports neither pytest nor torch: the pytest plugin and the notebook extension are
two front ends over it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import explain, gradients, rules, statistical
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Comparison
from pytest_lessons.core.detectors import WATCH_OUT, Diagnosis
from pytest_lessons.core.efficiency import Efficiency
from pytest_lessons.core.explain import BUILT_IN, Diagnoser
from pytest_lessons.core.feedback import Feedback, Verdict, over
from pytest_lessons.core.judge import judge
from pytest_lessons.core.kinds import forget_decoded
from pytest_lessons.core.ledger import Ledger
from pytest_lessons.core.record import broken_result, call_text, result
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.runs import Runs
from pytest_lessons.core.settings import Settings
from pytest_lessons.core.shrink import Shrinker
from pytest_lessons.core.watchouts import WatchOuts
from pytest_lessons.isolation.outcome import RETURNED, Outcome
from pytest_lessons.isolation.runner import Runner
from pytest_lessons.isolation.sandbox import Policy

# Names other modules import from here, where they were first defined.
__all__ = ["BUILT_IN", "Diagnoser", "Graded", "Grader", "broken_result", "call_text"]


@dataclass(frozen=True)
class Graded:
    """What :meth:`Grader.grade` gives back."""

    result: CaseResult
    """The case's result, as every report reads it (the whole text in ``message``)."""
    text: str = ""
    """What a terminal or a notebook shows for the case: the whole text, or for a fault
    already explained under an earlier case, its short form. Empty when passed."""
    outcome: Outcome | None = None
    """What running the code gave (None when it did not run)."""
    comparison: Comparison | None = None
    diagnosis: Diagnosis | None = None

    @property
    def status(self) -> Status:
        return self.result.status

    @property
    def passed(self) -> bool:
        return self.result.passed

    @property
    def answer(self) -> Any:
        """The code's answer as encoded plain data, or None when it returned none."""
        if self.outcome is not None and self.outcome.kind == RETURNED:
            return self.outcome.answer
        return None


class Grader:
    """Grades attempts with one runner; its parts own every cache of a session."""

    def __init__(
        self,
        runner: Runner,
        settings: Settings,
        sandbox: Callable[[], Policy | None] = lambda: None,
        show: Callable[[Path | str], str] = str,
    ) -> None:
        self.runs = Runs(runner, settings, sandbox)
        """Runs code and caches its outcomes; *sandbox* is asked for when the first job is
        made (after collection, when the whole course is known)."""
        self.watch_outs = WatchOuts(self.runs)
        """The lesson's watch-outs, matched to a wrong answer."""
        self.shrinker = Shrinker(self.runs)
        """A smaller failing input for a generated case."""
        self.ledger = Ledger()
        """What each learner was already shown."""
        self.efficiency = Efficiency(self.runs)
        """The verdict of a lesson's work budget on its budget cases."""
        self.feedback = Feedback(self.runs, self.ledger, show)
        """The words for every ending of a case but a pass."""
        self.show = show
        """A path as the learner should see it (relative to where they work)."""

    # --- one case, top to bottom ---------------------------------------------------------

    def grade(
        self,
        attempt: Attempt,
        diagnose: Diagnoser | None = None,
        built_in: Collection[str] = BUILT_IN,
    ) -> Graded:
        """Run *attempt*'s code on its case, judge the answer, say what went wrong in the
        learner's terms. Never raises for anything learner code does.

        A wrong answer is diagnosed by the built-in parts named in *built_in* (the lesson's
        watch-outs, the generic detectors: :mod:`~pytest_lessons.core.explain`) and by
        *diagnose*, a front end's addition (pytest's hook); the lowest rank wins."""
        verdict, outcome, comparison, diagnosis = self._verdict(attempt, diagnose, built_in)
        text = verdict.text
        if outcome is not None and self._shrink_helps(attempt, verdict):
            text += self.shrinker.smaller_failure(attempt, outcome)
        graded = Graded(
            self._result(attempt, verdict, outcome, diagnosis, text),
            text,
            outcome,
            comparison,
            diagnosis,
        )
        forget_decoded()  # a decoded answer is kept until its case is graded, not longer
        return graded

    def _verdict(
        self, attempt: Attempt, diagnose: Diagnoser | None, built_in: Collection[str]
    ) -> tuple[Verdict, Outcome | None, Comparison | None, Diagnosis | None]:
        """The case's verdict, with what running and judging it gave. Four exits: not run
        (the loop budget is spent), the lesson's own failure (no reference answer), passed,
        and everything else, worded by :meth:`Feedback.words
        <pytest_lessons.core.feedback.Feedback.words>`."""
        exercise, case = attempt.exercise, attempt.case
        timed_out = self.runs.budget_spent(attempt)
        if timed_out is not None:
            limit = self.runs.limits(exercise).timeout
            return self.feedback.not_run(attempt, timed_out, limit), None, None, None
        expected = case.expected
        # A starter as shipped: "write your code" is all its cases after the first say, so
        # the reference need not run for them.
        if not self.runs.known_stub(attempt):
            if case.from_reference:
                expected = self.runs.reference_answer(exercise, case.inputs)
            if case.draws is not None:  # a statistical case: its distribution
                expected = statistical.distribution(self.runs, exercise, case)
            if expected is None and (
                case.from_reference or case.source in ("snapshot", statistical.DISTRIBUTION)
            ):
                # The reference failed, or the snapshot is not written yet.
                return self.feedback.lesson_failed(attempt), None, None, None
        outcome = self.runs.learner_outcome(attempt)
        comparison: Comparison | None = None
        if outcome.kind == RETURNED:
            comparison = self._judge(attempt, expected, outcome.answer)
            if comparison.passed:
                budget_over = self.efficiency.verdict(attempt, outcome)  # a work budget, if any
                if budget_over is None:
                    return Verdict(Status.PASSED), outcome, comparison, None
                return over(budget_over), outcome, comparison, budget_over.diagnosis
            diagnosis = explain.wrong_answer(
                self.runs,
                self.watch_outs,
                attempt,
                expected,
                outcome,
                comparison,
                diagnose,
                built_in,
            )
        elif (broke := rules.words(exercise.rules, outcome)) is not None:
            # A rule of the lesson on how the answer is computed, broken: its author's words.
            diagnosis = Diagnosis(broke[0], broke[1], WATCH_OUT, (broke[2],), kind=rules.RULE)
        else:  # a check of the lesson's harness that failed: the check, or its watch-out
            diagnosis = explain.checked(self.watch_outs, attempt, outcome)
        verdict = self.feedback.words(attempt, outcome, comparison, diagnosis)
        return verdict, outcome, comparison, diagnosis

    def _judge(self, attempt: Attempt, expected: Any, answer: Any) -> Comparison:
        """The answer against the case's expected value, within the case's tolerance."""
        if attempt.case.draws is not None:
            return statistical.judge(expected, answer, attempt.case)
        exercise = attempt.exercise
        comparison = judge(exercise, expected, answer, attempt.case.rtol, attempt.case.atol)
        if exercise.gradients is not None:  # words only gradients need: core/gradients.py
            comparison = gradients.reword(
                exercise.gradients, exercise.outputs, comparison, answer, attempt.entry
            )
        return comparison

    def _shrink_helps(self, attempt: Attempt, verdict: Verdict) -> bool:
        """Whether to look for a smaller failing input: a generated case, failed in a way a
        smaller input can show, for the first time under this fault."""
        case = attempt.case
        if verdict.status == Status.PASSED or not case.generated or not verdict.shrinkable:
            return False
        repeat = verdict.fault and self.ledger.explained_before(
            attempt.mine, verdict.fault, case.label
        )
        # Not when grading a class (it costs seconds a learner, and it is for learners at
        # their desk), and never for hidden cases: a smaller input is still theirs.
        return not repeat and not attempt.learner and not case.hidden

    def failed(self, attempt: Attempt, error: BaseException) -> Graded:
        """The result of a case whose grading itself failed (the grader's fault, never the
        learner's): recorded with its full points possible, like every collected case."""
        verdict = self.feedback.internal(error)
        return Graded(self._result(attempt, verdict, None, None, verdict.text), verdict.text)

    # --- the result, as every report reads it ----------------------------------------------

    def _result(
        self,
        attempt: Attempt,
        verdict: Verdict,
        outcome: Outcome | None,
        diagnosis: Diagnosis | None,
        text: str,
    ) -> CaseResult:
        work_budgets = self.runs.settings.value("work_budgets")
        output = self._kept_output(attempt, outcome)
        return result(attempt, verdict, outcome, diagnosis, text, work_budgets, output)

    def _kept_output(self, attempt: Attempt, outcome: Outcome | None) -> str:
        """What the case printed, for the reports (capped per exercise: the ledger)."""
        if attempt.case.hidden or outcome is None or not outcome.output:
            return ""
        cap = self.runs.limits(attempt.exercise).output_cap
        return self.ledger.kept_output(attempt.mine, outcome.output, cap)
