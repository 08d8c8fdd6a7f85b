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
      |  wrong answer?  -> diagnose(attempt, Evidence): the front end's callback (pytest's
      |                    hook), by default the lesson's watch-outs        watchouts.py
      |                    and the generic detectors                         diagnose.py
      v
    _words()         ---- the learner's words; repeats shortened, output     texts.py,
      |                   capped per exercise                                 ledger.py
      |  generated and wrong?  -> a smaller failing input                     shrink.py
      v
    Graded (CaseResult + the text to show)

A :class:`Grader` is made of four parts, each with its own caches, per front-end session:
:class:`~pytest_lessons.core.runs.Runs` runs code and remembers its outcomes (and owns the loop
budget); :class:`~pytest_lessons.core.watchouts.WatchOuts` and
:class:`~pytest_lessons.core.shrink.Shrinker` search with it; the
:class:`~pytest_lessons.core.ledger.Ledger` remembers what the learner was already shown.

This module imports neither pytest nor torch: the pytest plugin and the notebook extension are
two front ends over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import (
    behaviour,
    budget,
    datafiles,
    gradients,
    model,
    randomness,
    statistical,
)
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Comparison
from pytest_lessons.core.diagnose import WATCH_OUT, Diagnosis, Evidence
from pytest_lessons.core.efficiency import Efficiency, Over
from pytest_lessons.core.judge import judge
from pytest_lessons.core.kinds import forget_decoded, named
from pytest_lessons.core.ledger import Ledger
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.runs import LOOP_BUDGET, Runs
from pytest_lessons.core.settings import Settings
from pytest_lessons.core.shrink import Shrinker, view
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
from pytest_lessons.core.watchouts import CHECK, WatchOuts
from pytest_lessons.core.words import abbreviate, case_list, wrap
from pytest_lessons.isolation.outcome import INTERNAL, RAISED, RETURNED, SETUP, Outcome
from pytest_lessons.isolation.runner import Runner
from pytest_lessons.isolation.sandbox import Policy

#: The finding of a draw that left the case's generator as it was and used torch's global one.
GENERATOR_UNUSED = "generator-unused"

#: The front end's diagnosis of a wrong answer: pytest connects its
#: ``pytest_lessons_diagnose`` hook here; :meth:`WatchOuts.builtin
#: <pytest_lessons.core.watchouts.WatchOuts.builtin>` is the default.
Diagnoser = Callable[[Attempt, Evidence], "Diagnosis | None"]


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


@dataclass(frozen=True)
class _Verdict:
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
        self.show = show
        """A path as the learner should see it (relative to where they work)."""

    # --- one case, top to bottom ---------------------------------------------------------

    def grade(self, attempt: Attempt, diagnose: Diagnoser | None = None) -> Graded:
        """Run *attempt*'s code on its case, judge the answer, say what went wrong in the
        learner's terms. Never raises for anything learner code does."""
        verdict, outcome, comparison, diagnosis = self._verdict(
            attempt, diagnose or self.watch_outs.builtin
        )
        text = verdict.text
        if outcome is not None and self._shrink_helps(attempt, verdict):
            text += self.shrinker.smaller_failure(attempt, outcome)
        result = self._result(attempt, verdict, outcome, diagnosis, text)
        forget_decoded()
        return Graded(result, text, outcome, comparison, diagnosis)

    def _verdict(
        self, attempt: Attempt, diagnose: Diagnoser
    ) -> tuple[_Verdict, Outcome | None, Comparison | None, Diagnosis | None]:
        """The case's verdict, with what running and judging it gave. Four exits: not run
        (the loop budget is spent), the lesson's own failure (no reference answer), passed,
        and everything else, worded by :meth:`_words`."""
        exercise, case = attempt.exercise, attempt.case
        timed_out = self.runs.budget_spent(attempt)
        if timed_out is not None:
            limit = self.runs.limits(exercise).timeout
            return self._not_run(attempt, timed_out, limit), None, None, None
        expected = case.expected
        if case.from_reference:
            expected = self.runs.reference_answer(exercise, case.inputs)
        if case.draws is not None:  # a statistical case: its distribution
            expected = statistical.distribution(self.runs, exercise, case)
        if expected is None and (
            case.from_reference or case.source in ("snapshot", statistical.DISTRIBUTION)
        ):
            # The reference failed, or the snapshot is not written yet.
            return self._lesson_failed(attempt), None, None, None
        outcome = self.runs.learner_outcome(attempt)
        comparison: Comparison | None = None
        diagnosis: Diagnosis | None = None
        if outcome.kind == RETURNED:
            comparison = self._judge(attempt, expected, outcome.answer)
            if comparison.passed:
                over = self.efficiency.verdict(attempt, outcome)  # a work budget, if any
                if over is None:
                    return _Verdict(Status.PASSED), outcome, comparison, None
                return _over(over), outcome, comparison, over.diagnosis
            diagnosis = self._diagnosis(attempt, comparison, diagnose)
            # An exact kind, or an answer with no numbers to compare (a bool tensor, a tensor
            # of another dtype): its watch-outs are matched by the kind's own sameness.
            if case.draws is not None:
                diagnosis = statistical.watch_out(self.watch_outs, attempt, outcome.answer)
            elif not named(comparison.kind).offers_evidence or comparison.got is None:
                diagnosis = self.watch_outs.exact(attempt, expected, outcome.answer)
            unused = randomness.unused_generator(
                exercise.generators, exercise.inputs, outcome.details.get("streams")
            )
            if unused is not None and case.draws is None:  # drawn without generator=g
                diagnosis = Diagnosis(GENERATOR_UNUSED, unused[0], WATCH_OUT, (unused[1],))
            if diagnosis is None:  # the right distribution from another stream?
                diagnosis = statistical.stream(self.runs, attempt, comparison)
        else:  # a check of the lesson's harness that failed: the check, or its watch-out
            diagnosis = self.watch_outs.check(attempt, outcome)
        return self._words(attempt, outcome, comparison, diagnosis), outcome, comparison, diagnosis

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

    def _diagnosis(
        self, attempt: Attempt, comparison: Comparison, diagnose: Diagnoser
    ) -> Diagnosis | None:
        """What the front end's *diagnose* makes of a wrong answer of the right kind (a block
        of numbers, as the expected value); None for any other wrong answer."""
        if comparison.got is None or comparison.expected is None:
            return None
        case = attempt.case
        evidence = Evidence(
            got=comparison.got,
            expected=comparison.expected,
            rtol=case.rtol,
            atol=case.atol,
            inputs=case.inputs,
            problem=comparison.problem,
            part_index=comparison.part_index,
        )
        return diagnose(attempt, evidence)

    def _words(
        self,
        attempt: Attempt,
        outcome: Outcome,
        comparison: Comparison | None,
        diagnosis: Diagnosis | None,
    ) -> _Verdict:
        """The verdict on code that ran and did not pass: its status and the learner's words."""
        case = attempt.case
        context = self.context(attempt.exercise, case, attempt.entry, attempt.solution)
        # A harness's check found a fault: the code ran and did the wrong thing, as a wrong
        # answer is (it did not raise, crash or time out).
        checked = behaviour.check_id(outcome) is not None
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
            return _Verdict(status, text, text, headline=hidden.headline, lesson_error=lesson_error)
        # A check's cases fold into one by its key, as a fault does, watch-out or not.
        fault = "" if diagnosis is not None and not checked else fault_key(outcome, comparison)
        failure = describe(outcome, comparison, context, diagnosis)
        # Reports get the whole text, which does not depend on which cases ran before in this
        # process (so they are the same under pytest-xdist); the terminal gets what is new.
        repeat_of = ""
        if diagnosis is not None:
            # A watch-out's words may hold this case's numbers (a fitted value): its id says
            # whether it is the same mistake.
            said = diagnosis.id if diagnosis.kind in ("watch_out", CHECK) else diagnosis.headline
            repeat_of = self.ledger.first_case(attempt.mine, said, case.label)
        fault_first = self.ledger.first_case(attempt.mine, fault, case.label) if fault else ""
        full = failure.render()
        text = full
        if fault_first:
            text = repeated(failure, fault_first).render()
        else:
            room = self.ledger.room(attempt.mine, outcome.output)
            if repeat_of or room < OUTPUT_LINES:
                text = describe(outcome, comparison, context, diagnosis, repeat_of, room).render()
        # A smaller input helps with a wrong answer or an exception, not with a tensor
        # returned (the fix is .tolist() whatever the input) or a stub.
        shrinkable = (outcome.kind == RETURNED and not fault) or (
            outcome.kind == RAISED and outcome.error_type != "NotImplementedError"
        )
        return _Verdict(
            status,
            text,
            full,
            headline=failure.headline,
            shrinkable=shrinkable,
            fault=fault,
            lesson_error=lesson_error,
        )

    def _shrink_helps(self, attempt: Attempt, verdict: _Verdict) -> bool:
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

    # --- results that are not a judged answer ----------------------------------------------

    def failed(self, attempt: Attempt, error: BaseException) -> Graded:
        """The result of a case whose grading itself failed (the grader's fault, never the
        learner's): recorded with its full points possible, like every collected case."""
        text = (
            "Tell your instructor: the grader itself failed on this case, so it scores no "
            f"points this time; this is not your code's fault ({type(error).__name__}).\n"
        )
        verdict = _Verdict(Status.INTERNAL, text, text, headline=text.strip(), fault="internal")
        result = self._result(attempt, verdict, None, None, text)
        return Graded(result, text)

    def _not_run(self, attempt: Attempt, timed_out: list[model.Case], limit: float) -> _Verdict:
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
        return _Verdict(Status.ERROR, text, text, headline=failure.headline, fault="not run")

    def _lesson_failed(self, attempt: Attempt) -> _Verdict:
        """A generated case the lesson's reference gave no answer for."""
        text = (
            "Tell your instructor that this case cannot be graded: the lesson itself "
            "failed on it, not your code. It scores no points until the lesson is "
            "fixed.\n"
        )
        return _Verdict(
            Status.INTERNAL,
            text,
            text,
            headline=text.strip(),
            lesson_error=self.reference_failure(attempt.exercise, attempt.case),
        )

    # --- the result, as every report reads it ----------------------------------------------

    def _result(
        self,
        attempt: Attempt,
        verdict: _Verdict,
        outcome: Outcome | None,
        diagnosis: Diagnosis | None,
        text: str,
    ) -> CaseResult:
        exercise, case = attempt.exercise, attempt.case
        passed = verdict.status == Status.PASSED
        message = "" if passed else verdict.full or text
        # A budget case counted as feedback (--lesson-work-budgets) is worth 0: its figures
        # come from the process that runs learner code (core/budget.py says why).
        points = budget.worth(case.points, case.work, self.runs.settings.value("work_budgets"))
        return CaseResult(
            exercise=exercise.slug,
            title=exercise.title,
            path=str(exercise.path),
            status=verdict.status,
            points=points if passed else 0.0,
            max_points=points,
            case=case.number,
            cases=len(exercise.cases),
            id=case.id,
            label=case.label,
            line=case.line,
            learner=attempt.learner,
            hidden=case.hidden,
            generated=case.generated,
            headline="" if passed else verdict.headline or message.split("\n", 1)[0],
            message=message,
            diagnosis=diagnosis.id if diagnosis and not passed else None,
            diagnosis_kind=diagnosis.kind if diagnosis and not passed else None,
            fault=verdict.fault,
            unloadable=_unloadable(outcome),
            # The time its code ran, as the runner measured it: not the time this process
            # waited for a pool's worker, nor the grading around it. None for a hidden case:
            # code can run for as long as an input's value says, and so spell it in a report.
            seconds=round(outcome.seconds, 4) if outcome is not None and not case.hidden else 0.0,
            call=call_text(exercise, case),
            output=self._kept_output(attempt, outcome),
            lesson_error=verdict.lesson_error,
            files=datafiles.checksums(exercise.folder, case.inputs),
        )

    def _kept_output(self, attempt: Attempt, outcome: Outcome | None) -> str:
        """What the case printed, for the reports (capped per exercise: the ledger)."""
        if attempt.case.hidden or outcome is None or not outcome.output:
            return ""
        cap = self.runs.limits(attempt.exercise).output_cap
        return self.ledger.kept_output(attempt.mine, outcome.output, cap)

    # --- the words for the lesson's own code -------------------------------------------------

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


def _over(over: Over) -> _Verdict:
    """The verdict on a budget case whose values passed but whose work did not."""
    text = over.failure.render()
    status = Status.INTERNAL if over.lesson_error else Status.FAILED
    fault = "" if over.diagnosis is not None or over.lesson_error else "work budget"
    headline = over.failure.headline
    return _Verdict(status, text, text, headline, fault=fault, lesson_error=over.lesson_error)


def broken_result(path: Path, error: model.ExerciseError, learner: str = "") -> CaseResult:
    """The result standing for an ``exercise.toml`` that cannot be read."""
    return CaseResult(
        exercise=path.parent.name,
        title=path.parent.name,
        path=str(path),
        status=Status.BROKEN,
        line=error.line,
        id="exercise",
        label="exercise.toml",
        learner=learner,
        headline=str(error),
        message=str(error),
    )


def call_text(exercise: model.Exercise, case: model.Case) -> str:
    """The call a case makes, as code a learner can paste (inputs left out when hidden)."""
    if case.hidden:
        return f"{exercise.entry}({', '.join(exercise.inputs)})  # a hidden case"
    arguments = ", ".join(f"{name}={abbreviate(case.inputs[name])}" for name in exercise.inputs)
    if exercise.gradients is not None and exercise.gradients.upstream:
        arguments += ", " + gradients.shown_upstream(exercise.gradients)
    return f"{exercise.entry}({arguments})"


def _unloadable(outcome: Outcome | None) -> bool:
    """Whether the learner's file could not be used at all: missing, not importable (a syntax
    error, an exception at import) or without a usable entry function."""
    if outcome is None:
        return False
    return outcome.kind == SETUP or (outcome.kind == RAISED and outcome.phase == "import")
