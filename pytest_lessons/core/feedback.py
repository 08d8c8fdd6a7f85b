"""The learner's words for a case that did not pass, and the :class:`Verdict` they go into.

:class:`Feedback` words every ending of a case but a pass: code that ran and failed
(:meth:`~Feedback.words`: the status, the whole text, and its short form for a fault already
explained under an earlier case, from the :class:`~pytest_lessons.core.ledger.Ledger`), a case
not run because the loop budget is spent, a case the lesson's own reference cannot answer,
and the grader's own failure. Failures of the lesson's own code are worded for its author
(:meth:`~Feedback.reference_failure`, :meth:`~Feedback.mistake_failures`). The sentences
themselves are :mod:`~pytest_lessons.core.texts`'s; this module decides which to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pytest_lessons.core import behaviour, gradients, model, parts, rules, statistical
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Comparison
from pytest_lessons.core.detectors import Diagnosis
from pytest_lessons.core.efficiency import Over
from pytest_lessons.core.ledger import Ledger
from pytest_lessons.core.results import Status
from pytest_lessons.core.runs import LOOP_BUDGET, Runs
from pytest_lessons.core.shrink import view
from pytest_lessons.core.texts import (
    OUTPUT_LINES,
    Context,
    Failure,
    context_lines,
    describe,
    describe_hidden,
    fault_key,
    hidden_lesson_error,
    repeated,
)
from pytest_lessons.core.watchouts import CHECK
from pytest_lessons.core.words import abbreviate, case_list, wrap
from pytest_lessons.isolation.outcome import INTERNAL, RAISED, RETURNED, Outcome


@dataclass(frozen=True)
class Verdict:
    """What grading decided for a case, before it is a result: its status and words."""

    status: Status
    text: str = ""
    full: str = ""
    """The text without shortening for repeated faults (what reports keep)."""
    headline: str = ""
    shrinkable: bool = False
    """Whether a smaller failing input could help (a wrong answer or an exception)."""
    fault: str = ""
    lesson_error: str = ""
    """The author's account of the lesson's own failure on the case (see CaseResult)."""


class Feedback:
    """Words the endings of a case, running the lesson's own code through *runs* where its
    failure must be explained; *ledger* says what the learner was already shown, *show* how a
    path is shown to them."""

    def __init__(self, runs: Runs, ledger: Ledger, show: Callable[[Path | str], str]) -> None:
        self.runs = runs
        self.ledger = ledger
        self.show = show

    def words(
        self,
        attempt: Attempt,
        outcome: Outcome,
        comparison: Comparison | None,
        diagnosis: Diagnosis | None,
    ) -> Verdict:
        """The verdict on code that ran and did not pass: its status and the learner's words."""
        case = attempt.case
        context = self.context(attempt.exercise, case, attempt.entry, attempt.solution)
        # A harness's check found a fault: the code ran and did the wrong thing, as a wrong
        # answer is (it did not raise, crash or time out).
        broke = rules.broken(outcome)
        checked = behaviour.check_id(outcome) is not None or broke is not None
        status = Status.FAILED if outcome.kind == RETURNED or checked else Status.ERROR
        if outcome.kind == INTERNAL:
            status = Status.INTERNAL
        lesson_error = self.mistake_failures(attempt) + behaviour.lesson_error(outcome, self.show)
        if case.hidden:
            if not context.author:  # the child's words could carry the hidden case's inputs
                lesson_error = self.mistake_failures(attempt) + hidden_lesson_error(
                    outcome, context
                )
            hidden = describe_hidden(outcome, comparison, context, case.label, diagnosis)
            text = hidden.render()
            return Verdict(status, text, text, headline=hidden.headline, lesson_error=lesson_error)
        # A check's cases fold into one by its key, as a fault does, watch-out or not.
        fault = "" if diagnosis is not None and not checked else fault_key(outcome, comparison)
        if broke is not None:  # a rule's cases fold into one by the rule
            fault = f"{rules.RULE} {broke[0]}"
        # The starter of an earlier lesson whose solution this lesson runs on: that lesson
        # is what to write, so its words replace the usual ones, and the fault is not this
        # lesson's starter (the progress would count it as not begun).
        earlier = parts.unwritten(attempt.exercise, attempt.folder, outcome, self.show)
        if earlier is not None:
            file, line = Path(outcome.frames[-1].file), outcome.frames[-1].line
            fault = f"earlier lesson's NotImplementedError at {file.parent.name}/{file.name}:{line}"
        failure = _headed(describe(outcome, comparison, context, diagnosis), earlier)
        # Reports get the whole text, which does not depend on which cases ran before in this
        # process (so they are the same under pytest-xdist); the terminal gets what is new.
        repeat_of = ""
        if diagnosis is not None:
            # A watch-out's words may hold this case's numbers (a fitted value): its id says
            # whether it is the same mistake.
            said = (
                diagnosis.id
                if diagnosis.kind in ("watch_out", CHECK, rules.RULE)
                else diagnosis.headline
            )
            repeat_of = self.ledger.first_case(attempt.mine, said, case.label)
        fault_first = self.ledger.first_case(attempt.mine, fault, case.label) if fault else ""
        full = failure.render()
        text = full
        if fault_first:
            text = repeated(failure, fault_first).render()
        else:
            room = self.ledger.room(attempt.mine, outcome.output)
            if repeat_of or room < OUTPUT_LINES:
                again = describe(outcome, comparison, context, diagnosis, repeat_of, room)
                text = _headed(again, earlier).render()
        # A smaller input helps with a wrong answer or an exception, not with a tensor
        # returned (the fix is .tolist() whatever the input) or a stub.
        shrinkable = (outcome.kind == RETURNED and not fault) or (
            outcome.kind == RAISED and outcome.error_type != "NotImplementedError"
        )
        return Verdict(
            status,
            text,
            full,
            headline=failure.headline,
            shrinkable=shrinkable,
            fault=fault,
            lesson_error=lesson_error,
        )

    def not_run(self, attempt: Attempt, timed_out: list[model.Case], limit: float) -> Verdict:
        """A case left out because the exercise's time for loops is spent."""
        cases = case_list(
            [c.number for c in timed_out if not c.hidden], [c.number for c in timed_out if c.hidden]
        )
        failure = Failure(
            f"Make {attempt.entry} finish sooner, then run the lesson again: this case was not "
            f"run, because {cases} of {attempt.exercise.slug} already ran out of time.",
            [
                "",
                *[
                    "  " + line
                    for line in wrap(
                        f"Each case may run {limit:g} s. Once an exercise's cases have spent "
                        f"{LOOP_BUDGET:g} × {limit:g} s running out of time, its remaining cases "
                        "are not run: they score no points, and are run again the next time "
                        "you run the lesson."
                    )
                ],
            ],
        )
        text = failure.render()
        return Verdict(Status.ERROR, text, text, headline=failure.headline, fault="not run")

    def lesson_failed(self, attempt: Attempt) -> Verdict:
        """A generated case the lesson's reference gave no answer for."""
        text = (
            "Tell your instructor that this case cannot be graded: the lesson itself "
            "failed on it, not your code. It scores no points until the lesson is "
            "fixed.\n"
        )
        return Verdict(
            Status.INTERNAL,
            text,
            text,
            headline=text.strip(),
            lesson_error=self.reference_failure(attempt.exercise, attempt.case),
        )

    def internal(self, error: BaseException) -> Verdict:
        """The verdict on a case whose grading itself failed (the grader's fault, never the
        learner's)."""
        text = (
            "Tell your instructor: the grader itself failed on this case, so it scores no "
            f"points this time; this is not your code's fault ({type(error).__name__}).\n"
        )
        return Verdict(Status.INTERNAL, text, text, headline=text.strip(), fault="internal")

    # --- the words for the lesson's own code ----------------------------------------------

    def context(
        self, exercise: model.Exercise, case: model.Case, entry: str, solution: Path
    ) -> Context:
        """What the words for an outcome of *entry* in *solution* on *case* need to know;
        a failure in the lesson's own files is worded as the author's, never "your code"."""
        limits = self.runs.limits(exercise)
        policy = self.runs.sandbox()
        return Context(
            slug=exercise.slug,
            entry=entry,
            solution=solution,
            inputs=gradients.shown_inputs(exercise.gradients, case.inputs),
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            show=self.show,
            author=solution in (exercise.reference, exercise.mistakes),
            sandbox_limits=dict(policy.limits) if policy is not None else {},
            harness=exercise.harness is not None,
        )

    def mistake_failures(self, attempt: Attempt) -> str:
        """The lesson's mistake functions that failed while the attempt's answer was
        diagnosed, one sentence each with the author's file and line; empty when none did."""
        exercise, case = attempt.exercise, attempt.case
        if exercise.mistakes is None or attempt.solution == exercise.mistakes:
            return ""
        lines = []
        for watch in exercise.watch_outs:
            outcome = self.runs.broken_mistake(attempt, watch)
            if outcome is None or not watch.mistake:
                continue
            ctx = self.context(exercise, case, watch.mistake, exercise.mistakes)
            said = describe(outcome, None, ctx).headline
            lines.append(f"The mistake of watch-out {watch.id} could not be matched: {said}")
        return "\n".join(lines) + "\n" if lines else ""

    def reference_failure(self, exercise: model.Exercise, case: model.Case) -> str:
        """Why the reference gave no answer on *case*, for the lesson's author: the exception
        with the author's file and line (or what it returned instead), and the inputs."""
        if case.source == "snapshot":
            return (
                f"{case.snapshot} is missing or not JSON: write it with pytest --lesson-check "
                "--lesson-regenerate.\n"
            )
        if case.source == statistical.DISTRIBUTION:
            return statistical.failure(self.runs, exercise, case)
        if exercise.reference is None:
            return f"{exercise.slug} has no reference.py to compute {case.label}'s answer.\n"
        outcome = self.runs.reference_outcome(exercise, case.inputs)
        limits = self.runs.limits(exercise)
        ctx = Context(
            slug=exercise.slug,
            entry=exercise.entry,
            solution=exercise.reference,
            # A report may reach learners: a hidden case's inputs are for --lesson-check only.
            inputs={} if case.hidden else case.inputs,
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            show=self.show,
            author=True,
        )
        if outcome is None:
            return ""
        problem = None
        if outcome.kind == RETURNED and exercise.gradients is not None:
            problem = gradients.reference_problem(
                exercise.gradients, exercise.outputs, outcome.answer
            )
        if problem:
            failure = Failure(f"{exercise.reference.name} on {case.label}: {problem}.")
        elif outcome.kind == RETURNED:
            failure = Failure(
                f"Make {exercise.entry} in {exercise.reference.name} return numbers: on "
                f"{case.label} it returned {abbreviate(view(outcome.answer), 100)}."
            )
            failure.lines += context_lines(outcome, ctx)
        else:
            failure = describe(outcome, None, ctx)
        if case.hidden:
            failure.lines += [
                "",
                "  Its inputs are not shown: it is a hidden case (--lesson-check shows them).",
            ]
        # The headline on one line, unwrapped, as in every report: its first line.
        return "\n".join([failure.headline, *failure.lines]).rstrip() + "\n"


def _headed(failure: Failure, headline: str | None) -> Failure:
    """*failure* under *headline* instead of its own (None: as it is), its evidence kept."""
    return failure if headline is None else Failure(headline, failure.lines)


def over(over: Over) -> Verdict:
    """The verdict on a budget case whose values passed but whose work did not."""
    text = over.failure.render()
    status = Status.INTERNAL if over.lesson_error else Status.FAILED
    fault = "" if over.diagnosis is not None or over.lesson_error else "work budget"
    headline = over.failure.headline
    return Verdict(status, text, text, headline, fault=fault, lesson_error=over.lesson_error)
