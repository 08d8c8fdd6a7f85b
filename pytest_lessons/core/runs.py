"""Running code for the grader, and remembering what it gave: :class:`Runs`.

Every piece of code a case needs runs through here, in the runner's worker: the learner's code
on each case (once per session, shared by the case's grading and a watch-out's look at the
other cases), the lesson's reference on a generated case's inputs, the lesson's mistake
functions. Each outcome is cached here, and so is the time spent running out of time: the
loop budget (:data:`LOOP_BUDGET`), whose one owner this module is.

The watch-outs (:mod:`~pytest_lessons.core.watchouts`) and the shrinker
(:mod:`~pytest_lessons.core.shrink`) take a :class:`Runs` as their engine.
"""

from __future__ import annotations

import dataclasses
import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import (
    behaviour,
    datafiles,
    fit,
    gradients,
    initial,
    model,
    parts,
    randomness,
)
from pytest_lessons.core import rules as lesson_rules
from pytest_lessons.core.attempt import Attempt, sizes
from pytest_lessons.core.budget import CaseWork, job_work
from pytest_lessons.core.compare import Numbers, read_numbers, split_outputs
from pytest_lessons.core.judge import usable_reference
from pytest_lessons.core.settings import Limits, Settings
from pytest_lessons.core.stubs import MAX_STUB_BYTES, is_stub
from pytest_lessons.isolation.answers import DENSE, TAG, TENSOR, tag_of
from pytest_lessons.isolation.files import Unreadable, read_beneath
from pytest_lessons.isolation.outcome import RAISED, RETURNED, TIMEOUT, Outcome
from pytest_lessons.isolation.runner import Job, Runner
from pytest_lessons.isolation.sandbox import Policy

#: Time an exercise's cases may spend running out of time, in multiples of the per-case limit
#: (per learner): past it, the exercise's remaining cases are not run. A solution that loops
#: on every case then costs twice the limit, not the limit times the number of cases.
LOOP_BUDGET = 2.0

#: How many timeouts of one learner's file spend its loop budget (each costs the whole
#: per-case limit). A runner that runs cases ahead (``make_runner(skip_after=...)``) stops
#: running that file's cases ahead after so many: the grader would not run them.
LOOP_TIMEOUTS = math.ceil(LOOP_BUDGET)


@dataclass
class Runs:
    """Runs code with one runner and caches each outcome, per front-end session."""

    runner: Runner
    settings: Settings
    sandbox: Callable[[], Policy | None] = lambda: None
    """The sandbox for each job, asked for when the first job is made (after collection,
    when the whole course is known)."""

    timed_out: dict[tuple[str, str], list[tuple[model.Case, float]]] = field(default_factory=dict)
    """(exercise file, learner) -> the cases that ran out of time, with their limit."""
    outcomes: dict[tuple[str, str, str, str], Outcome | _Spilled] = field(default_factory=dict)
    """(learner's file, entry, exercise file, case's run as JSON) -> the learner's outcome
    on it (by inputs, as the mistakes' answers: see :meth:`mistake_raw`)."""
    references: dict[tuple[str, str], Any] = field(default_factory=dict)
    """(exercise file, inputs as JSON) -> the reference's answer."""
    reference_outcomes: dict[tuple[str, str], Outcome] = field(default_factory=dict)
    """(exercise file, inputs as JSON) -> the reference's outcome where it gave no answer."""
    raw_mistakes: dict[tuple[str, str, str, float | None], Any] = field(default_factory=dict)
    """(exercise file, case's run as JSON, watch-out, fitted value) -> the mistake
    function's answer."""
    broken_mistakes: dict[tuple[str, str, str], Outcome] = field(default_factory=dict)
    """(exercise file, case's run as JSON, watch-out) -> the mistake function's outcome
    where it failed."""
    stubs: dict[tuple[str, str, str], Outcome] = field(default_factory=dict)
    """(learner's file, entry, exercise file) -> the ``NotImplementedError`` its first case
    raised, where the file is a starter as shipped (:mod:`pytest_lessons.core.stubs`): the
    lesson's other cases take it without running."""
    _graded_last: tuple[str, str] = ("", "")
    """(file, exercise file) whose outcomes are kept whole (see :meth:`_forget_others`)."""

    def limits(self, exercise: model.Exercise) -> Limits:
        """The limits *exercise*'s cases run under (settings over ``exercise.toml``)."""
        return self.settings.limits(exercise.limits)

    # --- the loop budget -----------------------------------------------------------------

    def budget_spent(self, attempt: Attempt) -> list[model.Case] | None:
        """The cases of the attempt's exercise that ran out of time, once together they spent
        the exercise's loop budget; None while time is left."""
        timed_out = self.timed_out.setdefault(attempt.mine, [])
        limit = self.limits(attempt.exercise).timeout
        if sum(seconds for _, seconds in timed_out) >= LOOP_BUDGET * limit - 1e-9:
            return [case for case, _ in timed_out]
        return None

    def any_timed_out(self, attempt: Attempt) -> bool:
        """Whether any case of the attempt's exercise ran out of time for this learner."""
        return bool(self.timed_out.get(attempt.mine))

    # --- jobs ----------------------------------------------------------------------------

    def job(
        self,
        exercise: model.Exercise,
        solution: Path,
        entry: str,
        inputs: dict[str, Any],
        extra: tuple[Any, ...] = (),
        beneath: Path | None = None,
        draws: tuple[int, int] | None = None,
        work: CaseWork | None = None,
        expected: bool = False,
    ) -> Job:
        """A job running *entry* of *solution* on *inputs* (in the exercise's order), then
        *extra* arguments, under the exercise's limits and the session's sandbox; *beneath*
        is the learner's folder for a learner's file (None for the author's); *draws* makes
        it a statistical case's N calls (:func:`pytest_lessons.core.randomness.plan`).
        *expected*: the job computes the reference's answer (a gradient lesson may take it
        from another function of the reference: :func:`pytest_lessons.core.gradients.job_parts`)."""
        limits = self.limits(exercise)
        request = None
        if exercise.gradients is not None:
            entry, before, request = gradients.job_parts(
                exercise.gradients, exercise.inputs, entry, expected
            )
            extra = (*before, *extra)

        def pack(values: dict[str, Any]) -> list[Any]:
            return datafiles.arguments(exercise.folder, exercise.tensors, exercise.inputs, values)

        packed = randomness.pack(exercise.generators, exercise.inputs, pack(inputs), inputs, draws)
        return Job(
            solution=solution,
            entry=entry,
            inputs=[*packed, *extra],
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            output_cap=limits.output_cap,
            threads=limits.threads,
            seed=randomness.global_seed(exercise.generators, inputs),
            sandbox=self.sandbox(),
            beneath=beneath,
            answer_bytes=int(limits.answer_mb * (1 << 20)),
            behaviour=behaviour.request(exercise, entry, solution),
            library=parts.code(exercise),
            work=job_work(work, pack),
            gradients=request,
            rules=lesson_rules.request(exercise.rules),
            preload=parts.preload(exercise),
        )

    def learner_job(self, attempt: Attempt) -> Job:
        """The job that runs the graded code on the attempt's case (what a runner may run
        ahead of the grading)."""
        extra: tuple[Any, ...] = ()
        if attempt.argument is not None:
            found = sizes(attempt.exercise, attempt.case.inputs)
            extra = (fit.evaluate(attempt.argument, found),)
        job = self.job(
            attempt.exercise,
            attempt.solution,
            attempt.entry,
            attempt.case.inputs,
            extra,
            beneath=attempt.folder or attempt.solution.parent,
            draws=randomness.plan(attempt.exercise, attempt.case),
            work=attempt.case.work,
        )
        if attempt.exercise.parts == "own":  # the learner's own solutions as the library's parts
            mine = parts.code(attempt.exercise, own=True, learner=attempt.folder)
            job = dataclasses.replace(job, library=mine)
        if attempt.case.hidden:
            job = dataclasses.replace(job, hidden=True)
        known = self.references.get((str(attempt.exercise.path), _inputs_key(attempt.case.inputs)))
        bound = values_bound(attempt.exercise, attempt.case, known)
        if bound is not None:
            job = dataclasses.replace(job, answer_values=bound)
        return job

    def run(self, exercise: model.Exercise, job: Job) -> Outcome:
        """The outcome of *job* (of *exercise*), with what the grader makes of the child's data
        before anything reads it: an ``unchanged`` input compared with the case's
        (:func:`pytest_lessons.core.behaviour.unchanged`), a gradient lesson's gradcheck
        verdict (:func:`pytest_lessons.core.gradients.checked`)."""
        outcome = self.runner.run(job)
        if job.behaviour and "unchanged" in dict(job.behaviour.get("after", {})).values():
            # An input that must stay as it was: compared here, not taken from the child.
            outcome = behaviour.unchanged(job.behaviour, list(job.inputs), outcome)
        if exercise.initial and job.behaviour and job.gradients is None:
            # A parameter's initial values: the harness's check made again, on what it sent.
            names = tuple(exercise.inputs)
            outcome = initial.judge(exercise.initial, names, list(job.inputs), job.entry, outcome)
        if outcome.after or outcome.facts:
            outcome = dataclasses.replace(outcome, after={}, facts={})  # judged: not needed
        spec = exercise.gradients
        if outcome.kind == RETURNED and spec is not None and spec.gradcheck and job.gradients:
            answer = gradients.checked(spec, exercise.outputs, outcome.answer)
            outcome = dataclasses.replace(outcome, answer=answer)
        return outcome

    # --- the learner's code ----------------------------------------------------------------

    def learner_outcome(self, attempt: Attempt) -> Outcome:
        """The graded code's outcome on the attempt's case, run once per session: the case's
        own grading and a watch-out's look at other cases share it. A timeout counts against
        the exercise's loop budget when it happens."""
        entry = f"{attempt.entry}({attempt.argument})" if attempt.argument else attempt.entry
        case = attempt.case
        key = (
            str(attempt.solution),
            entry,
            str(attempt.exercise.path),
            _run_key(attempt.exercise, case),
        )
        self._forget_others(attempt)
        if key not in self.outcomes:
            job = self.learner_job(attempt)
            plain = (
                attempt.argument is None
                and randomness.plan(attempt.exercise, case) is None
                and _plain(job)
            )
            stub = (str(attempt.solution), attempt.entry, str(attempt.exercise.path))
            if plain and stub in self.stubs:
                self.outcomes[key] = self.stubs[stub]
                return self.stubs[stub]
            outcome = self.run(attempt.exercise, job)
            if outcome.kind == TIMEOUT:
                self.timed_out.setdefault(attempt.mine, []).append((case, job.timeout))
            if plain and _not_implemented(outcome) and _stub_file(job, attempt.entry):
                self.stubs[stub] = outcome
            self.outcomes[key] = _kept(outcome)
        kept = self.outcomes[key]
        return kept.load() if isinstance(kept, _Spilled) else kept

    def known_stub(self, attempt: Attempt) -> bool:
        """Whether the attempt's case takes the ``NotImplementedError`` its file's first case
        raised without running (the file is a starter as shipped, :attr:`stubs`): such a
        case's verdict needs no expected answer, so the reference need not run for it."""
        stub = (str(attempt.solution), attempt.entry, str(attempt.exercise.path))
        if stub not in self.stubs:  # first: a learner's own file builds no job here
            return False
        return (
            attempt.argument is None
            and randomness.plan(attempt.exercise, attempt.case) is None
            and _plain(self.learner_job(attempt))
        )

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
            if isinstance(outcome, _Spilled):
                outcome.close()
                del self.outcomes[key]
            elif outcome.kind == RETURNED:
                del self.outcomes[key]
            elif outcome.output:
                self.outcomes[key] = dataclasses.replace(outcome, output="")

    # --- the lesson's reference ------------------------------------------------------------

    def reference_answer(self, exercise: model.Exercise, inputs: dict[str, Any]) -> Any:
        """The lesson's reference answer on *inputs* (encoded plain data), or None if the
        reference fails. Run in the worker like any code, once per input."""
        key = (str(exercise.path), _inputs_key(inputs))
        if key not in self.references:
            answer = None
            if exercise.reference is not None:
                job = self.job(exercise, exercise.reference, exercise.entry, inputs, expected=True)
                outcome = self.run(exercise, job)
                if outcome.kind == RETURNED and usable_reference(exercise, outcome.answer):
                    answer = outcome.answer
                if answer is None:
                    self.reference_outcomes[key] = outcome
            self.references[key] = answer
        return self.references[key]

    def reference_outcome(self, exercise: model.Exercise, inputs: dict[str, Any]) -> Outcome | None:
        """What the reference gave on *inputs* where it gave no usable answer (else None)."""
        return self.reference_outcomes.get((str(exercise.path), _inputs_key(inputs)))

    # --- the lesson's mistakes -------------------------------------------------------------

    def mistake_raw(
        self, attempt: Attempt, watch: model.WatchOut, case: model.Case, value: float | None = None
    ) -> Any:
        """What the author's mistake function returns on *case* (encoded plain data; None if
        it fails), given *value* as its last argument when the watch-out has ``fit``.

        Author code, but it runs like learner code (in the worker), on fresh inputs: the judge
        only ever reads plain data, whoever wrote the code.
        """
        exercise = attempt.exercise
        # By the case's inputs, not its number: a learner's copy numbers its cases anew (a
        # hidden case left out), and its case 7 may be the course's case 8.
        key = (str(exercise.path), _run_key(exercise, case), watch.id, value)
        if key not in self.raw_mistakes:
            answer = None
            if exercise.mistakes is not None and watch.mistake:
                extra = () if value is None else (value,)
                draws = randomness.plan(exercise, case)
                job = self.job(
                    exercise, exercise.mistakes, watch.mistake, case.inputs, extra, draws=draws
                )
                outcome = self.run(exercise, job)
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
        if tag_of(raw) == TENSOR and "values" in raw:
            raw = raw["values"]  # a tensor kind's answer: its values are the numbers
        try:
            return read_numbers(raw)
        except Exception:  # not numbers: this mistake cannot be matched
            return None

    def broken_mistake(self, attempt: Attempt, watch: model.WatchOut) -> Outcome | None:
        """How *watch*'s mistake function failed on the attempt's case, if it did."""
        exercise = attempt.exercise
        key = (str(exercise.path), _run_key(exercise, attempt.case), watch.id)
        return self.broken_mistakes.get(key)


#: A learner's answer may hold this many times the values of the case's expected answer,
#: and :data:`VALUES_MORE` more, before it is read: a set of 900,000 short strings where 26
#: letters are expected is no answer to this case, and read as Python objects it cost the
#: grader 65 MB of its own memory a case (a red team's round H).
VALUES_TIMES = 4
VALUES_MORE = 10_000


def _leaves(value: Any, depth: int = 0) -> int:
    """How many JSON values *value* (plain TOML data) holds, as an answer's encoding counts
    them (a container and each of its items)."""
    if depth > 64:
        return 1
    if isinstance(value, dict):
        if value.get(TAG) == DENSE and isinstance(value.get("shape"), list):
            return 1 + math.prod(int(s) for s in value["shape"] if isinstance(s, int))
        return 1 + sum(1 + _leaves(item, depth + 1) for item in value.values())
    if isinstance(value, (list, tuple)):
        return 1 + sum(_leaves(item, depth + 1) for item in value)
    return 1


def values_bound(exercise: model.Exercise, case: model.Case, reference: Any = None) -> int | None:
    """The most JSON values a learner's result may hold on *case*: :data:`VALUES_TIMES` the
    expected answer's and :data:`VALUES_MORE` more (and the inputs', which a lesson whose
    inputs must stay unchanged sends back); None where the expected answer is not typed in
    ``exercise.toml`` and no *reference* answer (encoded) is known for it yet (a snapshot's,
    a distribution, a data file's), and the answer size's bound alone holds."""
    expected = case.expected
    if case.source == "reference" or case.generated:
        expected = reference
    elif case.source is not None:
        return None
    if case.draws is not None or expected is None:
        return None
    if isinstance(expected, dict) and ("file" in expected or "from" in expected):
        return None
    bound = VALUES_TIMES * _leaves(expected) + VALUES_MORE
    if exercise.after:
        bound += _leaves(case.inputs)
    return bound


#: A returned answer larger than this, as JSON, waits for its learner's other cases on disk:
#: a learner's cases are kept until grading moves on, and 13 answers of 9 MB (a set of
#: 900,000 short strings), kept as Python objects, held 850 MB of pytest's memory (a red
#: team's round H; each under the answer size, the value count and the case's limits).
SPILL_BYTES = 1 << 20


class _Spilled:
    """A returned outcome whose answer is kept as its JSON in an unnamed temporary file."""

    def __init__(self, outcome: Outcome, answer: bytes) -> None:
        self.outcome = dataclasses.replace(outcome, answer=None)
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - closed when grading moves on
        self.file.write(answer)

    def load(self) -> Outcome:
        """The outcome with its answer read back."""
        self.file.seek(0)
        return dataclasses.replace(self.outcome, answer=json.loads(self.file.read()))

    def close(self) -> None:
        self.file.close()


def _kept(outcome: Outcome) -> Outcome | _Spilled:
    """*outcome* as the session keeps it: a large answer on disk, anything else as it is."""
    if outcome.kind != RETURNED or isinstance(outcome.answer, (int, float, type(None))):
        return outcome
    answer = json.dumps(outcome.answer).encode("utf-8")
    return _Spilled(outcome, answer) if len(answer) > SPILL_BYTES else outcome


def _inputs_key(inputs: dict[str, Any]) -> str:
    """A case's inputs as a cache key: the same inputs, the same answer."""
    return json.dumps(inputs, sort_keys=True)


def _run_key(exercise: model.Exercise, case: model.Case) -> str:
    """How a case runs code, as a cache key: its inputs, and whether it is a statistical
    case's N calls or a work budget's counted call. Those are other runs than the one plain
    call on the same inputs (a lesson's seeded case and its statistical case share inputs),
    so each has its own outcome."""
    work = None if case.work is None else repr(case.work)
    plan = randomness.plan(exercise, case)
    return json.dumps({"inputs": case.inputs, "draws": plan, "work": work}, sort_keys=True)


def _plain(job: Job) -> bool:
    """A call of the entry with no harness, gradients or work count."""
    return job.behaviour is None and job.gradients is None and job.work is None


def _not_implemented(outcome: Outcome) -> bool:
    return (
        outcome.kind == RAISED
        and outcome.phase == "call"
        and outcome.error_type == "NotImplementedError"
    )


def _stub_file(job: Job, entry: str) -> bool:
    """Whether the job's file is a starter as shipped (read as text beneath its folder, never
    run here: :func:`pytest_lessons.core.stubs.is_stub`)."""
    folder = job.beneath or job.solution.parent
    try:
        source = read_beneath(folder, job.solution.relative_to(folder), limit=MAX_STUB_BYTES)
    except (Unreadable, ValueError, OSError):
        return False
    return is_stub(source, entry)
