"""The grading core: one case of one lesson, graded for one learner, from top to bottom.

Read :meth:`Grader.grade` first. A case goes through these steps::

    Attempt (exercise, case, learner's file)
      |  loop budget spent?  -> "not run" (no code runs)
      |  generated case?     -> the reference's answer, run in the worker  (reference_answer)
      v
    runner.run(Job)  ---- learner code runs isolated; plain data comes back (Outcome)
      |
      v
    judge()          ---- compare.py: the answer against the expected value, within tolerance
      |  wrong answer?  -> diagnose(attempt, Evidence): the front end's callback (pytest's
      |                    hook), by default the lesson's watch-outs and the generic detectors
      v
    texts.describe() ---- the learner's words; repeats shortened, output capped per exercise
      |  generated and wrong?  -> a smaller failing input (smaller_failure)
      v
    Graded (CaseResult + the text to show)

The watch-outs compare the learner's answer with what the lesson's mistake functions return on
the same inputs; those functions run in the worker like learner code (:meth:`mistake_raw`).
Every cache is the grader's own, per front-end session: the learner's outcome on each case,
the reference's answers, the mistakes' answers, the first case of each fault (one fault, one
message), the time spent timing out (the loop budget) and the output shown so far.

This module imports neither pytest nor torch: the pytest plugin and the notebook extension are
two front ends over it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import diagnose, fit, model
from pytest_lessons.core.compare import (
    Comparison,
    Numbers,
    compare,
    compare_outputs,
    nested,
    read_numbers,
    split_outputs,
)
from pytest_lessons.core.diagnose import Diagnosis, Evidence
from pytest_lessons.core.generate import smaller
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.settings import Limits, Settings
from pytest_lessons.core.texts import (
    OUTPUT_LINES,
    Context,
    Failure,
    context_lines,
    describe,
    describe_hidden,
    fault_key,
    repeated,
)
from pytest_lessons.core.words import abbreviate, wrap
from pytest_lessons.isolation.outcome import (
    INTERNAL,
    RAISED,
    RETURNED,
    SETUP,
    TAG,
    TIMEOUT,
    Outcome,
)
from pytest_lessons.isolation.runner import Job, Runner
from pytest_lessons.isolation.sandbox import Policy

#: Time an exercise's cases may spend running out of time, in multiples of the per-case limit
#: (per learner): past it, the exercise's remaining cases are not run. A solution that loops
#: on every case then costs twice the limit, not the limit times the number of cases.
LOOP_BUDGET = 2.0

#: Lines of printed output the failures of one exercise show in all (per learner).
EXERCISE_OUTPUT_LINES = 60

#: Steps of the search for a fitted parameter (each runs the mistake function once).
FIT_STEPS = 16

#: Characters of the graded file a watch-out's ``code`` is looked for in.
SOURCE_LIMIT = 1_000_000

#: How many smaller inputs the shrinker may try for one failing generated case (each try runs
#: the reference and the learner's code once).
SHRINK_BUDGET = 30


@dataclass(frozen=True)
class Attempt:
    """One piece of code graded on one case of one exercise."""

    exercise: model.Exercise
    case: model.Case
    solution: Path = Path()
    """The graded file: the exercise's ``solution.py`` unless given (a learner's submission,
    a notebook cell's file, the reference or mistakes file under ``--lesson-check``)."""
    learner: str = ""
    """Whose code it is, in batch grading; empty for one's own. Caches are kept per learner."""
    entry: str = ""
    """The function to call: the exercise's entry unless given (a mistake function's name)."""
    argument: str | None = None
    """``--lesson-check`` of a fitted watch-out: an expression of axis sizes whose value is
    given to the graded function as its last argument."""
    folder: Path | None = None
    """The learner's folder, which the graded file is read beneath with no link followed
    (a class run's ``submissions/<learner>``); the file's own folder when None."""

    def __post_init__(self) -> None:
        if self.solution == Path():
            object.__setattr__(self, "solution", self.exercise.solution)
        if not self.entry:
            object.__setattr__(self, "entry", self.exercise.entry)

    @property
    def mine(self) -> tuple[str, str]:
        """The key of this learner's work on this exercise, for per-exercise budgets."""
        return str(self.exercise.path), self.learner

    def on(self, case: model.Case) -> Attempt:
        """The same code on another case of the exercise."""
        return dataclasses.replace(self, case=case)


#: The front end's diagnosis of a wrong answer: pytest connects its
#: ``pytest_lessons_diagnose`` hook here; :meth:`Grader.builtin_diagnosis` is the default.
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


@dataclass
class Grader:
    """Grades attempts with one runner; owns every cache of a session."""

    runner: Runner
    settings: Settings
    sandbox: Callable[[], Policy | None] = lambda: None
    """The sandbox for each job, asked for when the first job is made (after collection,
    when the whole course is known)."""
    show: Callable[[Path | str], str] = str
    """A path as the learner should see it (relative to where they work)."""

    first_seen: dict[tuple[str, ...], str] = field(default_factory=dict)
    """(exercise file, learner, diagnosis or fault key) -> the label of the first case
    that had it."""
    timed_out: dict[tuple[str, str], list[tuple[str, float]]] = field(default_factory=dict)
    """(exercise file, learner) -> the cases that ran out of time, with their limit."""
    output_shown: dict[tuple[str, str], int] = field(default_factory=dict)
    """(exercise file, learner) -> lines of printed output its failures showed so far."""
    output_kept: dict[tuple[str, str], int] = field(default_factory=dict)
    """(exercise file, learner) -> characters of printed output kept for the reports."""
    raw_mistakes: dict[tuple[str, int, str, float | None], Any] = field(default_factory=dict)
    """(exercise file, case, watch-out, fitted value) -> the mistake function's answer."""
    broken_mistakes: dict[tuple[str, int, str], Outcome] = field(default_factory=dict)
    """(exercise file, case, watch-out) -> the mistake function's outcome where it failed."""
    fit_failed: set[tuple[str, str, str]] = field(default_factory=set)
    """(exercise file, learner, watch-out) whose search for a fitted value found nothing."""
    outcomes: dict[tuple[str, str, str, int], Outcome] = field(default_factory=dict)
    """(learner's file, entry, exercise file, case) -> the learner's outcome on it."""
    references: dict[tuple[str, str], Any] = field(default_factory=dict)
    """(exercise file, inputs as JSON) -> the reference's answer."""
    reference_outcomes: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    """(exercise file, inputs as JSON) -> the reference's outcome where it gave no answer."""
    shrunk: dict[tuple[str, str], str] = field(default_factory=dict)
    """(exercise file, learner) -> the case under which a smaller failing input is shown."""
    _graded_last: tuple[str, str] = ("", "")
    """(file, exercise file) whose outcomes are kept whole (see :meth:`_forget_others`)."""

    # --- one case, top to bottom ---------------------------------------------------------

    def grade(self, attempt: Attempt, diagnose: Diagnoser | None = None) -> Graded:
        """Run *attempt*'s code on its case, judge the answer, say what went wrong in the
        learner's terms. Never raises for anything learner code does."""
        verdict, outcome, comparison, diagnosis = self._verdict(
            attempt, diagnose or self.builtin_diagnosis
        )
        text = verdict.text
        case = attempt.case
        if verdict.status != Status.PASSED:
            repeat = verdict.fault and self.first_seen.get((*attempt.mine, verdict.fault)) not in (
                None,
                case.label,
            )
            if (
                case.generated
                and verdict.shrinkable
                and not repeat
                and not attempt.learner
                and not case.hidden
                and outcome is not None
            ):
                # Not when grading a class (it costs seconds a learner, and it is for learners
                # at their desk), and never for hidden cases: a smaller input is still theirs.
                text += self.smaller_failure(attempt, outcome)
        result = self._result(attempt, verdict, outcome, diagnosis, text)
        return Graded(result, text, outcome, comparison, diagnosis)

    def _verdict(
        self, attempt: Attempt, diagnose: Diagnoser
    ) -> tuple[_Verdict, Outcome | None, Comparison | None, Diagnosis | None]:
        exercise, case = attempt.exercise, attempt.case
        timed_out = self.timed_out.setdefault(attempt.mine, [])
        limit = self.limits(exercise).timeout
        if sum(seconds for _, seconds in timed_out) >= LOOP_BUDGET * limit - 1e-9:
            labels = [label for label, _ in timed_out]
            return self._not_run(attempt, labels, limit), None, None, None
        expected = case.expected
        if case.generated:
            expected = self.reference_answer(exercise, case.inputs)
            if expected is None:
                text = (
                    "Tell your instructor that this case cannot be graded: the lesson itself "
                    "failed on it, not your code. It scores no points until the lesson is "
                    "fixed.\n"
                )
                verdict = _Verdict(
                    Status.INTERNAL,
                    text,
                    text,
                    headline=text.strip(),
                    lesson_error=self.reference_failure(exercise, case),
                )
                return verdict, None, None, None
        outcome = self.learner_outcome(attempt)
        comparison: Comparison | None = None
        diagnosis: Diagnosis | None = None
        if outcome.kind == RETURNED:
            comparison = judge(exercise, expected, outcome.answer, case.rtol, case.atol)
            if comparison.passed:
                return _Verdict(Status.PASSED), outcome, comparison, None
            if comparison.got is not None and comparison.expected is not None:
                evidence = Evidence(
                    got=comparison.got,
                    expected=comparison.expected,
                    rtol=case.rtol,
                    atol=case.atol,
                    inputs=case.inputs,
                    problem=comparison.problem,
                    part_index=comparison.part_index,
                )
                diagnosis = diagnose(attempt, evidence)
        context = self.context(exercise, case, attempt.entry, attempt.solution)
        status = Status.FAILED if outcome.kind == RETURNED else Status.ERROR
        if outcome.kind == INTERNAL:
            status = Status.INTERNAL
        if case.hidden:
            hidden = describe_hidden(outcome, comparison, context, case.label, diagnosis)
            text = hidden.render()
            verdict = _Verdict(
                status,
                text,
                text,
                headline=hidden.headline,
                lesson_error=self.mistake_failures(attempt),
            )
            return verdict, outcome, comparison, diagnosis
        repeat_of = ""
        fault = ""
        if diagnosis is not None:
            # A watch-out's words may hold this case's numbers (a fitted value): its id says
            # whether it is the same mistake.
            said = diagnosis.id if diagnosis.kind == "watch_out" else diagnosis.headline
            first = self.first_seen.setdefault((*attempt.mine, said), case.label)
            repeat_of = "" if first == case.label else first
        else:
            fault = fault_key(outcome, comparison)
        fault_first = ""
        if fault:
            first = self.first_seen.setdefault((*attempt.mine, fault), case.label)
            fault_first = "" if first == case.label else first
        failure = describe(outcome, comparison, context, diagnosis)
        full = failure.render()
        # Reports get the whole text, which does not depend on which cases ran before in this
        # process (so they are the same under pytest-xdist).
        text = full
        if fault_first:
            text = repeated(failure, fault_first).render()
        else:
            shown = self.output_shown.get(attempt.mine, 0)
            room = max(0, min(OUTPUT_LINES, EXERCISE_OUTPUT_LINES - shown))
            if outcome.output:
                self.output_shown[attempt.mine] = shown + min(room, outcome.output.count("\n") + 1)
            if repeat_of or room < OUTPUT_LINES:
                text = describe(outcome, comparison, context, diagnosis, repeat_of, room).render()
        # A smaller input helps with a wrong answer or an exception, not with a tensor
        # returned (the fix is .tolist() whatever the input) or a stub.
        shrinkable = (outcome.kind == RETURNED and not fault) or (
            outcome.kind == RAISED and outcome.error_type != "NotImplementedError"
        )
        verdict = _Verdict(
            status,
            text,
            full,
            headline=failure.headline,
            shrinkable=shrinkable,
            fault=fault,
            lesson_error=self.mistake_failures(attempt),
        )
        return verdict, outcome, comparison, diagnosis

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

    def _not_run(self, attempt: Attempt, timed_out: list[str], limit: float) -> _Verdict:
        """A case left out because the exercise's time for loops is spent."""
        numbers = [label.split()[-1] for label in timed_out]
        cases = f"case {numbers[0]}"
        if len(numbers) > 1:
            cases = f"cases {', '.join(numbers[:-1])} and {numbers[-1]}"
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
        return CaseResult(
            exercise=exercise.slug,
            title=exercise.title,
            path=str(exercise.path),
            status=verdict.status,
            points=case.points if passed else 0.0,
            max_points=case.points,
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
            # waited for a pool's worker, nor the grading around it.
            seconds=round(outcome.seconds, 4) if outcome is not None else 0.0,
            call=call_text(exercise, case),
            output=self._kept_output(attempt, outcome),
            lesson_error=verdict.lesson_error,
        )

    def _kept_output(self, attempt: Attempt, outcome: Outcome | None) -> str:
        """What the case printed, for the reports: capped per exercise as well as per case, so
        a print flood in every case cannot make a report of megabytes."""
        if attempt.case.hidden or outcome is None or not outcome.output:
            return ""
        cap = self.limits(attempt.exercise).output_cap
        kept = self.output_kept.get(attempt.mine, 0)
        output = outcome.output
        if kept >= cap:
            return f"[not kept: this exercise's earlier cases already kept {cap} bytes of output]"
        if kept + len(output) > cap:
            output = output[: cap - kept] + "\n[… cut: the exercise's output cap is reached]"
        self.output_kept[attempt.mine] = kept + len(output)
        return output

    # --- running code --------------------------------------------------------------------

    def limits(self, exercise: model.Exercise) -> Limits:
        """The limits *exercise*'s cases run under (settings over ``exercise.toml``)."""
        return self.settings.limits(exercise.limits)

    def job(
        self,
        exercise: model.Exercise,
        solution: Path,
        entry: str,
        inputs: dict[str, Any],
        extra: tuple[Any, ...] = (),
        beneath: Path | None = None,
    ) -> Job:
        """A job running *entry* of *solution* on *inputs* (in the exercise's order), then
        *extra* arguments, under the exercise's limits and the session's sandbox; *beneath*
        is the learner's folder for a learner's file (None for the author's)."""
        limits = self.limits(exercise)
        return Job(
            solution=solution,
            entry=entry,
            inputs=[*(inputs[name] for name in exercise.inputs), *extra],
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            output_cap=limits.output_cap,
            threads=limits.threads,
            sandbox=self.sandbox(),
            beneath=beneath,
            answer_bytes=int(limits.answer_mb * (1 << 20)),
        )

    def learner_outcome(self, attempt: Attempt) -> Outcome:
        """The graded code's outcome on the attempt's case, run once per session: the case's
        own grading and a watch-out's look at other cases share it. A timeout counts against
        the exercise's loop budget when it happens."""
        entry = f"{attempt.entry}({attempt.argument})" if attempt.argument else attempt.entry
        case = attempt.case
        key = (str(attempt.solution), entry, str(attempt.exercise.path), case.number)
        self._forget_others(attempt)
        if key not in self.outcomes:
            job = self.learner_job(attempt)
            outcome = self.runner.run(job)
            if outcome.kind == TIMEOUT:
                self.timed_out.setdefault(attempt.mine, []).append(
                    (f"case {case.number}", job.timeout)
                )
            self.outcomes[key] = outcome
        return self.outcomes[key]

    def _forget_others(self, attempt: Attempt) -> None:
        """Once grading moves on to another file or exercise (a class runs learner by
        learner), drop the answers of the one before and keep only what the rest of the
        session reads: a class's memory stays flat whatever its learners return. An outcome
        asked for again runs again, with the same seed."""
        here = (str(attempt.solution), str(attempt.exercise.path))
        if here == self._graded_last:
            return
        self._graded_last = here
        for key, outcome in list(self.outcomes.items()):
            if (key[0], key[2]) == here:
                continue
            if outcome.kind == RETURNED:
                del self.outcomes[key]
            elif outcome.output:
                self.outcomes[key] = dataclasses.replace(outcome, output="")

    def learner_job(self, attempt: Attempt) -> Job:
        """The job that runs the graded code on the attempt's case (what a runner may run
        ahead of the grading)."""
        extra: tuple[Any, ...] = ()
        if attempt.argument is not None:
            sizes = _sizes(attempt.exercise, attempt.case.inputs)
            extra = (fit.evaluate(attempt.argument, sizes),)
        return self.job(
            attempt.exercise,
            attempt.solution,
            attempt.entry,
            attempt.case.inputs,
            extra,
            beneath=attempt.folder or attempt.solution.parent,
        )

    def reference_answer(self, exercise: model.Exercise, inputs: dict[str, Any]) -> Any:
        """The lesson's reference answer on *inputs* (encoded plain data), or None if the
        reference fails. Run in the worker like any code, once per input."""
        key = (str(exercise.path), json.dumps(inputs, sort_keys=True))
        if key not in self.references:
            answer = None
            if exercise.reference is not None:
                job = self.job(exercise, exercise.reference, exercise.entry, inputs)
                outcome = self.runner.run(job)
                if outcome.kind == RETURNED:
                    parts = [outcome.answer]
                    if exercise.outputs:
                        parts = split_outputs(outcome.answer, len(exercise.outputs)) or []
                    try:
                        for part in parts:
                            read_numbers(part)
                        answer = outcome.answer if parts else None
                    except Exception:  # the reference returned no numbers
                        answer = None
                if answer is None:
                    self.reference_outcomes[key] = outcome
            self.references[key] = answer
        return self.references[key]

    def mistake_failures(self, attempt: Attempt) -> str:
        """The lesson's mistake functions that failed while the attempt's answer was
        diagnosed, one sentence each with the author's file and line; empty when none did."""
        exercise, case = attempt.exercise, attempt.case
        if exercise.mistakes is None or attempt.solution == exercise.mistakes:
            return ""
        lines = []
        for watch in exercise.watch_outs:
            outcome = self.broken_mistakes.get((str(exercise.path), case.number, watch.id))
            if outcome is None or not watch.mistake:
                continue
            ctx = self.context(exercise, case, watch.mistake, exercise.mistakes)
            said = describe(outcome, None, ctx).headline
            lines.append(f"The mistake of watch-out {watch.id} could not be matched: {said}")
        return "\n".join(lines) + "\n" if lines else ""

    def context(
        self, exercise: model.Exercise, case: model.Case, entry: str, solution: Path
    ) -> Context:
        """What the words for an outcome of *entry* in *solution* on *case* need to know;
        a failure in the lesson's own files is worded as the author's, never "your code"."""
        limits = self.limits(exercise)
        return Context(
            slug=exercise.slug,
            entry=entry,
            solution=solution,
            inputs=case.inputs,
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            show=self.show,
            author=solution in (exercise.reference, exercise.mistakes),
        )

    def reference_failure(self, exercise: model.Exercise, case: model.Case) -> str:
        """Why the reference gave no answer on *case*, for the lesson's author: the exception
        with the author's file and line (or what it returned instead), and the inputs."""
        if exercise.reference is None:
            return f"{exercise.slug} has no reference.py to compute {case.label}'s answer.\n"
        key = (str(exercise.path), json.dumps(case.inputs, sort_keys=True))
        outcome = self.reference_outcomes.get(key)
        limits = self.limits(exercise)
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
        if outcome.kind == RETURNED:
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

    def mistake_raw(
        self, attempt: Attempt, watch: model.WatchOut, case: model.Case, value: float | None = None
    ) -> Any:
        """What the author's mistake function returns on *case* (encoded plain data; None if
        it fails), given *value* as its last argument when the watch-out has ``fit``.

        Author code, but it runs like learner code (in the worker), on fresh inputs: the judge
        only ever reads plain data, whoever wrote the code.
        """
        exercise = attempt.exercise
        key = (str(exercise.path), case.number, watch.id, value)
        if key not in self.raw_mistakes:
            answer = None
            if exercise.mistakes is not None and watch.mistake:
                extra = () if value is None else (value,)
                job = self.job(exercise, exercise.mistakes, watch.mistake, case.inputs, extra)
                outcome = self.runner.run(job)
                if outcome.kind == RETURNED:
                    answer = outcome.answer
                elif attempt.solution != exercise.mistakes:
                    # For the author, in the reports (the lesson check grades it itself).
                    self.broken_mistakes.setdefault(key[:3], outcome)
            self.raw_mistakes[key] = answer
        return self.raw_mistakes[key]

    def mistake_answer(
        self,
        attempt: Attempt,
        watch: model.WatchOut,
        part: int = -1,
        value: float | None = None,
    ) -> Numbers | None:
        """:meth:`mistake_raw` on the attempt's case as numbers (of output *part*), or None."""
        raw = self.mistake_raw(attempt, watch, attempt.case, value)
        if raw is None:
            return None
        if part >= 0:
            parts = split_outputs(raw, len(attempt.exercise.outputs))
            raw = parts[part] if parts is not None else None
        try:
            return read_numbers(raw)
        except Exception:  # not numbers: this mistake cannot be matched
            return None

    # --- diagnosing ------------------------------------------------------------------------

    def builtin_diagnosis(self, attempt: Attempt, evidence: Evidence) -> Diagnosis | None:
        """The built-in diagnosis: the lesson's watch-outs, then the generic detectors (what
        the pytest hook gives when no conftest adds to it)."""
        return diagnose.best([self.watch_outs(attempt, evidence), diagnose.detect(evidence)])

    def watch_outs(self, attempt: Attempt, evidence: Evidence) -> Diagnosis | None:
        """The lesson's ``[[watch_out]]`` entry that explains the learner's answer, if any."""
        watch_outs = attempt.exercise.watch_outs
        if not watch_outs:
            return None
        answers = {
            w.id: self.mistake_answer(attempt, w, evidence.part_index)
            for w in watch_outs
            if w.mistake and w.fit is None and self.code_fits(attempt, w)
        }
        generic = diagnose.detect(evidence) if any(w.detector for w in watch_outs) else None
        return diagnose.match_watch_outs(
            evidence,
            watch_outs,
            answers,
            generic,
            fitter=lambda watch: self.fitted(attempt, watch, evidence),
            consistent=lambda watch, found: self.consistent(attempt, watch, found),
            fits=lambda watch: self.code_fits(attempt, watch),
        )

    def code_fits(self, attempt: Attempt, watch: model.WatchOut) -> bool:
        """Whether the graded file's source matches *watch*'s ``code`` (True without one).

        Only text is read, never run; at worst a learner's file could make a watch-out's
        words fire or not, which changes no verdict and no point."""
        if watch.code is None:
            return True
        try:
            with open(attempt.solution, encoding="utf-8", errors="replace") as source:
                text = source.read(SOURCE_LIMIT)
        except OSError:
            return False
        return re.search(watch.code, text) is not None

    def fitted(
        self, attempt: Attempt, watch: model.WatchOut, evidence: Evidence
    ) -> diagnose.Fitted | None:
        """The value of *watch*'s free parameter that gives the learner's answer on the
        attempt's case, within its bounds: the author's named values first, then a search."""
        assert watch.fit is not None
        exercise = attempt.exercise
        sizes = _sizes(exercise, attempt.case.inputs)
        low, high = watch.fit
        right_value = fit.evaluate(watch.right, sizes) if watch.right else None
        right = ""
        if watch.right and right_value is not None:
            right = f"{fit.symbolic(watch.right)} = {fit.fmt(right_value)}"
        got, want = evidence.got, evidence.expected
        rtol, atol = evidence.rtol, evidence.atol

        def answer(value: float) -> Numbers | None:
            return self.mistake_answer(attempt, watch, evidence.part_index, value)

        def is_right(value: float) -> bool:
            return right_value is not None and math.isclose(value, right_value, rel_tol=1e-6)

        def explains(value: float) -> bool:
            mine = answer(value)
            return (
                mine is not None
                and not diagnose.close(mine, want, rtol, atol)
                and diagnose.close(got, mine, rtol, atol)
            )

        for expression, label in watch.named:
            value = fit.evaluate(expression, sizes)
            if value is None or not low <= value <= high or is_right(value):
                continue
            if explains(value):
                words = fit.fmt(value)
                shown = fit.numeric(expression, sizes)
                if shown != words:
                    words += f" = {shown}"
                found = diagnose.Fitted(value, f"{words}, {label}", right, expression)
                # Two expressions may give the same value on this case (√(2·2) = 2): the one
                # that explains the other cases too is the learner's.
                if self.consistent(attempt, watch, found):
                    return found
        searched = (*attempt.mine, watch.id)
        if (
            searched in self.fit_failed
            or got.shape != want.shape
            or not all(math.isfinite(v) for v in got.flat)
        ):
            return None
        # One search that finds nothing is enough: the same code makes the same mistake on
        # every case, and each search runs the mistake function a dozen times or more.
        self.fit_failed.add(searched)

        def gap(value: float) -> float:
            mine = answer(value)
            if mine is None or mine.shape != got.shape:
                return math.inf
            return max((abs(a - b) for a, b in zip(mine.flat, got.flat)), default=0.0)

        # Golden-section search on a log scale: a scale inside a softmax changes the answer
        # smoothly, so the gap has one valley between the bounds in the cases that matter.
        a, b = math.log(low), math.log(high)
        ratio = (math.sqrt(5) - 1) / 2
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        gc, gd = gap(math.exp(c)), gap(math.exp(d))
        for _ in range(FIT_STEPS):
            if gc <= gd:
                b, d, gd = d, c, gc
                c = b - ratio * (b - a)
                gc = gap(math.exp(c))
            else:
                a, c, gc = c, d, gd
                d = a + ratio * (b - a)
                gd = gap(math.exp(d))
        best = math.exp(c if gc <= gd else d)
        # The roundest value that gives the learner's answer: a learner writes 8, not 7.9983.
        # Rounding may step over a bound (95.99 to 100 under fit = [0.1, 96]): such a value
        # is not one the author allows.
        for value in dict.fromkeys(float(f"{best:.{n}g}") for n in (1, 2, 3, 4)):
            if low <= value <= high and not is_right(value) and explains(value):
                break
        else:
            return None
        found = diagnose.Fitted(value, fit.fmt(value), right)
        if not self.consistent(attempt, watch, found):
            return None
        self.fit_failed.discard(searched)
        return found

    def consistent(
        self, attempt: Attempt, watch: model.WatchOut, found: diagnose.Fitted | None
    ) -> bool:
        """Whether *watch* explains every other failing case where its mistake differs from the
        right answer (a degenerate case alone must not name a mistake). Cases whose code did
        not return an answer tell nothing and are left out."""
        exercise = attempt.exercise
        if attempt.case.hidden or self.timed_out.get(attempt.mine):
            return True
        for case in exercise.cases:
            if case.number == attempt.case.number:
                continue
            if case.generated:
                expected = self.reference_answer(exercise, case.inputs)
                if expected is None:
                    continue
            else:
                expected = case.expected
            outcome = self.learner_outcome(attempt.on(case))
            if outcome.kind != RETURNED:
                continue
            rtol, atol = case.rtol, case.atol
            try:
                if judge(exercise, expected, outcome.answer, rtol, atol).passed:
                    continue
                value = None
                if found is not None:
                    value = found.value
                    if found.expression:
                        value = fit.evaluate(found.expression, _sizes(exercise, case.inputs))
                mistake = self.mistake_raw(attempt, watch, case, value)
                if mistake is None or judge(exercise, expected, mistake, rtol, atol).passed:
                    continue
                if not same_answer(exercise, mistake, outcome.answer, rtol, atol):
                    return False
            except Exception:  # an answer that is not numbers tells nothing here
                continue
        return True

    # --- a smaller failing input -------------------------------------------------------------

    def smaller_failure(self, attempt: Attempt, outcome: Outcome) -> str:
        """For a failing generated case: a smaller input on which the learner's code fails the
        same way, found by shrinking axes and rounding values; shown once per exercise."""
        exercise, case = attempt.exercise, attempt.case
        if attempt.mine in self.shrunk:
            return f"\n  A smaller input that fails is shown under {self.shrunk[attempt.mine]}.\n"
        spec = exercise.generate
        if spec is None or case.sizes is None:
            return ""
        self.shrunk[attempt.mine] = case.label
        current: tuple[dict[str, int], dict[str, Any]] = (case.sizes, case.inputs)
        found: tuple[str, str] | None = None
        budget = SHRINK_BUDGET
        progress = True
        while progress and budget > 0:
            progress = False
            for sizes, inputs in smaller(spec, *current):
                budget -= 1
                failing = self._fails_alike(attempt, inputs, outcome)
                if failing is not None:
                    current, found, progress = (sizes, inputs), failing, True
                    break
                if budget <= 0:
                    break
        if found is None:
            return ""
        sizes, inputs = current
        expected, yours = found
        described = ", ".join(f"{axis} {size}" for axis, size in sizes.items())
        lines = ["", f"  A smaller input that fails the same way ({described}):"]
        width = max(len(name) for name in inputs)
        lines += [f"    {name.ljust(width)} = {abbreviate(inputs[name])}" for name in inputs]
        lines += [f"    expected  {expected}", f"    yours     {yours}"]
        return "\n".join(lines) + "\n"

    def _fails_alike(
        self, attempt: Attempt, inputs: dict[str, Any], original: Outcome
    ) -> tuple[str, str] | None:
        expected = self.reference_answer(attempt.exercise, inputs)
        if expected is None:
            return None
        exercise = attempt.exercise
        job = self.job(
            exercise,
            attempt.solution,
            attempt.entry,
            inputs,
            beneath=attempt.folder or attempt.solution.parent,
        )
        outcome = self.runner.run(job)
        shown = abbreviate(_rounded(view(expected)))
        if original.kind == RAISED:
            if outcome.kind == RAISED and outcome.error_type == original.error_type:
                return shown, f"raises {outcome.error_type}"
            return None
        if outcome.kind != RETURNED:
            return None
        case = attempt.case
        verdict = judge(attempt.exercise, expected, outcome.answer, case.rtol, case.atol)
        if verdict.passed or verdict.got is None:
            return None
        return shown, abbreviate(_rounded(view(outcome.answer)))


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


def judge(
    exercise: model.Exercise, expected: Any, answer: Any, rtol: float, atol: float
) -> Comparison:
    """Compare *answer* with *expected*: one value, or the exercise's several named outputs
    (*expected* is then their table, or for a generated case the reference's tuple)."""
    if not exercise.outputs:
        return compare(expected, answer, rtol, atol)
    if not isinstance(expected, dict) or TAG in expected:
        parts = split_outputs(expected, len(exercise.outputs)) or []
        expected = dict(zip(exercise.outputs, parts))
    return compare_outputs(expected, answer, exercise.outputs, rtol, atol)


def same_answer(exercise: model.Exercise, a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two encoded answers are the same within tolerance, NaN matching NaN (a mistake
    that makes NaN is matched by the same NaN)."""
    if exercise.outputs:
        first, second = (split_outputs(x, len(exercise.outputs)) for x in (a, b))
        if first is None or second is None:
            return False
        pairs = list(zip(first, second))
    else:
        pairs = [(a, b)]
    return all(diagnose.close(read_numbers(x), read_numbers(y), rtol, atol) for x, y in pairs)


def call_text(exercise: model.Exercise, case: model.Case) -> str:
    """The call a case makes, as code a learner can paste (inputs left out when hidden)."""
    if case.hidden:
        return f"{exercise.entry}({', '.join(exercise.inputs)})  # a hidden case"
    arguments = ", ".join(f"{name}={abbreviate(case.inputs[name])}" for name in exercise.inputs)
    return f"{exercise.entry}({arguments})"


def _unloadable(outcome: Outcome | None) -> bool:
    """Whether the learner's file could not be used at all: missing, not importable (a syntax
    error, an exception at import) or without a usable entry function."""
    if outcome is None:
        return False
    return outcome.kind == SETUP or (outcome.kind == RAISED and outcome.phase == "import")


def _sizes(exercise: model.Exercise, inputs: dict[str, Any]) -> dict[str, int]:
    """The sizes of the lesson's named axes in a case with *inputs*."""
    if exercise.generate is None:
        return {}
    return fit.axis_sizes(exercise.generate.inputs, inputs)


class _Shown(str):
    """Text shown as is inside a rendered value (its repr is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


def view(answer: Any) -> Any:
    """An encoded answer as nested lists, for display (packed parts unpacked). Our wire
    encoding never reaches a person: a tensor shows its values and type, another object its
    type."""
    if isinstance(answer, list):
        return [view(part) for part in answer]
    try:
        return nested(read_numbers(answer))
    except Exception:
        pass
    if isinstance(answer, dict) and TAG in answer:
        kind = str(answer.get("type", answer[TAG]))
        if "values" in answer:
            return _Shown(f"{kind}({abbreviate(_rounded(view(answer['values'])))})")
        return _Shown(f"<a {kind}>")
    return answer


def _rounded(value: Any) -> Any:
    """Values rounded to 4 decimals, for showing a small input's answers at a glance."""
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return round(value, 4) if isinstance(value, float) and math.isfinite(value) else value
