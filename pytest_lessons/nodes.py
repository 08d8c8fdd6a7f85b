"""pytest collection nodes: an ``exercise.toml`` file and one item per case.

Thin glue: reading the file is :mod:`~pytest_lessons.model`'s job, running learner code the
runner's, judging :mod:`~pytest_lessons.compare`'s and the words :mod:`~pytest_lessons.report`'s.
Collection parses TOML only; it imports neither torch nor learner code.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_lessons import fit, model
from pytest_lessons.compare import Comparison, compare, compare_outputs, split_outputs
from pytest_lessons.diagnose import Diagnosis, Evidence, best
from pytest_lessons.outcome import INTERNAL, RAISED, RETURNED, SETUP, Outcome
from pytest_lessons.report import (
    OUTPUT_LINES,
    Context,
    Failure,
    abbreviate,
    colour_map,
    describe,
    describe_hidden,
    fault_key,
    repeated,
    wrap,
)
from pytest_lessons.runner import Job

if TYPE_CHECKING:
    from pytest_lessons.plugin import LessonSession


#: Time an exercise's cases may spend running out of time, in multiples of the per-case limit
#: (per learner): past it, the exercise's remaining cases are not run. A solution that loops
#: on every case then costs twice the limit, not the limit times the number of cases.
LOOP_BUDGET = 2.0

#: Lines of printed output the failures of one exercise show in all (per learner).
EXERCISE_OUTPUT_LINES = 60


class LessonFailure(Exception):
    """A case failed; the message is the whole text the learner sees, *headline* its one-line
    summary (the text's first line when not given)."""

    def __init__(self, text: str, headline: str = "") -> None:
        super().__init__(text)
        self.text = text
        self.headline = headline or text.split("\n", 1)[0]


class CrashLine:
    """Where a failure is and its headline, shaped like the ``reprcrash`` pytest reads for the
    short summary (``-r``), ``--tb=line`` and JUnit XML's ``message``."""

    def __init__(self, path: str, lineno: int, message: str) -> None:
        self.path, self.lineno, self.message = path, lineno, message

    def __str__(self) -> str:
        return f"{self.path}:{self.lineno}: {self.message}"


class FailureText:
    """A failure as pytest shows it: the whole text in the failures section, only its headline
    in one-line places. A plain string would put the whole text in the short summary too,
    which pytest does on CI (``CI`` set), doubling every failure in the log."""

    def __init__(self, text: str, headline: str, path: str, lineno: int) -> None:
        self.text = text
        self.reprcrash = CrashLine(path, lineno, headline)

    def toterminal(self, tw: Any) -> None:
        # Colour is added here, by the terminal writer, and only when it shows colour: the
        # text itself stays plain, as every report file and JUnit XML get it.
        lines = self.text.rstrip("\n").split("\n")
        if getattr(tw, "hasmarkup", False):
            lines = colour_map(lines, lambda text, colour: tw.markup(text, **{colour: True}))
        for number, line in enumerate(lines):
            tw.line(line, bold=number == 0)

    def __str__(self) -> str:
        return self.text


class ExerciseFile(pytest.File):
    """An ``exercise.toml``: one item per case, or one failing item if the file is broken."""

    def collect(self) -> Any:
        lessons = _lessons(self.config)
        # Out of learner code's reach, however broken the file is.
        lessons.course.add(self.path.parent)
        try:
            exercise = model.load(self.path)
        except model.ExerciseError as error:
            yield BrokenExercise.from_parent(self, name="exercise", error=error)
            return
        if not self.config.option.collectonly:
            lessons.runner.warm_up()
        if self.config.getoption("lesson_export"):
            from pytest_lessons.check import LessonExport

            yield LessonExport.from_parent(self, name="lesson-export", exercise=exercise)
            return
        if self.config.getoption("lesson_check"):
            from pytest_lessons.check import LessonCheck

            yield LessonCheck.from_parent(self, name="lesson-check", exercise=exercise)
            return
        if lessons.submissions is None:
            for case in exercise.cases:
                yield CaseItem.from_parent(self, name=case.id, exercise=exercise, case=case)
            return
        # Batch grading: only each learner's solution file is taken from their folder.
        relative = exercise.solution.relative_to(exercise.folder)
        for learner in learners(lessons.submissions):
            solution = lessons.submissions / learner / exercise.slug / relative
            for case in exercise.cases:
                yield CaseItem.from_parent(
                    self,
                    name=f"{learner}/{case.id}",
                    exercise=exercise,
                    case=case,
                    solution=solution,
                    learner=learner,
                )


def restore_hint(path: Path, shown: str) -> str:
    """How a learner who changed a lesson's file by accident gets the course's copy back: git
    when the file is committed and changed, else a fresh copy of the lesson."""

    def git(*args: str) -> int:
        return subprocess.run(
            ["git", *args], cwd=path.parent, capture_output=True, timeout=10
        ).returncode

    try:
        tracked = git("ls-files", "--error-unmatch", "--", path.name) == 0
        changed = git("diff", "--quiet", "HEAD", "--", path.name) if tracked else -1
    except (OSError, subprocess.SubprocessError):
        changed = -1
    if changed == 1:
        return (
            f"\n  If you did not mean to change it, restore the course's copy with\n"
            f"  `git checkout -- {shown}` (your solution.py is not touched).\n"
        )
    return (
        "\n  If you did not mean to change it, take this file again from the course's\n"
        "  download (your solution.py can stay).\n"
    )


def learners(submissions: Path) -> list[str]:
    """The learners of a submissions folder: its sub-folders, in name order."""
    return sorted(
        entry.name
        for entry in submissions.iterdir()
        if entry.is_dir() and not entry.name.startswith((".", "_"))
    )


def _lessons(config: pytest.Config) -> LessonSession:
    from pytest_lessons.plugin import session_of

    return session_of(config)


class BrokenExercise(pytest.Item):
    """Stands for an ``exercise.toml`` that cannot be read, so the run fails and says why."""

    def __init__(self, *, error: model.ExerciseError, learner: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.learner = learner
        self.lesson_result: dict[str, Any] = {}

    def runtest(self) -> None:
        self.lesson_result = {
            "exercise": self.path.parent.name,
            "title": self.path.parent.name,
            "path": str(self.path),
            "line": self.error.line,
            "cases": 0,
            "case": 0,
            "id": "exercise",
            "label": "exercise.toml",
            "learner": self.learner,
            "status": "broken",
            "passed": False,
            "points": 0.0,
            "max_points": 0.0,
            "hidden": False,
            "generated": False,
            "headline": str(self.error),
            "message": str(self.error),
            "diagnosis": None,
            "diagnosis_kind": None,
            "seconds": 0.0,
            "call": "",
            "output": "",
            "unloadable": False,
        }
        where = _lessons(self.config).show(self.error.path)
        raise LessonFailure(
            f"Fix {where}: this exercise cannot be graded until its file is valid.\n\n"
            f"  {self.error}\n" + restore_hint(self.error.path, where),
            f"Fix {where}{f', line {self.error.line}' if self.error.line else ''}: "
            f"{self.error.problem.splitlines()[0]}",
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return repr_failure(self, excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.error.line - 1 if self.error.line else 0
        return self.path, line, f"{self.path.parent.name}: exercise.toml is broken"


@dataclass(frozen=True)
class Verdict:
    """How one case went: ``status`` as in the reports, and the words for it."""

    status: str
    text: str = ""
    full: str = ""
    """The text without shortening for repeated mistakes (what reports keep)."""
    headline: str = ""
    """The first paragraph on one line: what to do, then why."""
    shrinkable: bool = False
    """Whether a smaller failing input could help (a wrong answer or an exception)."""
    fault: str = ""
    """For a failure whose cause no input changes: its key (see :func:`report.fault_key`)."""


class CaseItem(pytest.Item):
    """One case of an exercise: run the learner's function, compare, diagnose, report."""

    def __init__(
        self,
        *,
        exercise: model.Exercise,
        case: model.Case,
        solution: Path | None = None,
        learner: str = "",
        entry: str | None = None,
        argument: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.argument = argument
        """--lesson-check of a fitted watch-out: an expression of axis sizes whose value is
        given to the mistake function as its last argument."""
        self.exercise = exercise
        self.case = case
        self.solution = solution or exercise.solution
        """The learner's file: the exercise's own, or a submission's in batch grading."""
        self.entry = entry or exercise.entry
        """The function to call (a mistake function's name when --lesson-check grades it)."""
        self.learner = learner
        self.outcome: Outcome | None = None
        self.comparison: Comparison | None = None
        self.diagnosis: Diagnosis | None = None
        self.started = 0.0
        self.fault = ""
        self.lesson_result: dict[str, Any] = {}
        """What the summary and the report files need, as plain data (it travels with
        pytest-xdist); set by :meth:`runtest`."""

    def job(
        self,
        solution: Path,
        entry: str,
        inputs: dict[str, Any] | None = None,
        learner: bool = False,
    ) -> Job:
        """A job running *entry* of *solution* on this case's inputs (or *inputs*); for the
        graded code (*learner*) with the check's :attr:`argument` too."""
        lessons = _lessons(self.config)
        limits = lessons.settings.limits(self.exercise.limits)
        given = self.case.inputs if inputs is None else inputs
        extra = []
        if self.argument is not None and learner:
            spec = self.exercise.generate
            sizes = fit.axis_sizes(spec.inputs, given) if spec is not None else {}
            extra = [fit.evaluate(self.argument, sizes)]
        return Job(
            solution=solution,
            entry=entry,
            inputs=[*(given[name] for name in self.exercise.inputs), *extra],
            timeout=limits.timeout,
            memory_mb=limits.memory_mb,
            output_cap=limits.output_cap,
            threads=limits.threads,
            sandbox=lessons.sandbox_policy(),
        )

    def runtest(self) -> None:
        self.started = time.perf_counter()
        verdict = self.grade()
        if verdict.status == "passed":
            self._record("passed")
            return
        self.fault = verdict.fault
        text = verdict.text
        lessons = _lessons(self.config)
        repeat = verdict.fault and lessons.first_seen.get(
            (str(self.exercise.path), self.learner, verdict.fault)
        ) not in (None, self.case.label)
        if (
            self.case.generated
            and verdict.shrinkable
            and not repeat
            and not self.learner
            and not self.case.hidden
        ):
            # Not when grading a class (it costs seconds a learner, and it is for learners at
            # their desk), and never for hidden cases: a smaller input is still their input.
            assert self.outcome is not None
            text += lessons.smaller_failure(self, self.outcome)
        self._fail(text, verdict.status, verdict.full, verdict.headline)

    def grade(self) -> Verdict:
        """Run the code, compare, diagnose and word the result, without raising."""
        lessons = _lessons(self.config)
        exercise, case = self.exercise, self.case
        mine = (str(exercise.path), self.learner)
        timed_out = lessons.timed_out.setdefault(mine, [])
        limit = lessons.settings.limits(exercise.limits).timeout
        if sum(seconds for _, seconds in timed_out) >= LOOP_BUDGET * limit - 1e-9:
            return self._not_run([label for label, _ in timed_out], limit)
        expected = case.expected
        if case.generated:
            expected = lessons.reference_answer(self, case.inputs)
            if expected is None:
                text = (
                    "The lesson's reference.py failed on this generated case, so it cannot be "
                    "graded. Tell your instructor; this is not your code's fault.\n"
                )
                return Verdict("internal", text, text, headline=text.strip())
        job = self.job(self.solution, self.entry)
        outcome = lessons.learner_outcome(self, case)
        self.outcome = outcome
        if outcome.kind == RETURNED:
            self.comparison = judge(exercise, expected, outcome.answer, case.rtol, case.atol)
            if self.comparison.passed:
                return Verdict("passed")
            if self.comparison.got is not None and self.comparison.expected is not None:
                evidence = Evidence(
                    got=self.comparison.got,
                    expected=self.comparison.expected,
                    rtol=case.rtol,
                    atol=case.atol,
                    inputs=case.inputs,
                    problem=self.comparison.problem,
                    part_index=self.comparison.part_index,
                )
                found = self.ihook.pytest_lessons_diagnose(item=self, evidence=evidence)
                self.diagnosis = best(found)
        context = Context(
            slug=exercise.slug,
            entry=self.entry,
            solution=self.solution,
            inputs=case.inputs,
            timeout=job.timeout,
            memory_mb=job.memory_mb,
            show=lessons.show,
        )
        status = "failed" if outcome.kind == RETURNED else "error"
        if outcome.kind == INTERNAL:
            status = "internal"
        if case.hidden:
            hidden = describe_hidden(outcome, self.comparison, context, case.label, self.diagnosis)
            text = hidden.render()
            return Verdict(status, text, text, headline=hidden.headline)
        repeat_of = ""
        fault = ""
        if self.diagnosis is not None:
            # A watch-out's words may hold this case's numbers (a fitted value): its id says
            # whether it is the same mistake.
            said = self.diagnosis.headline
            if self.diagnosis.kind == "watch_out":
                said = self.diagnosis.id
            key = (str(exercise.path), self.learner, said)
            first = lessons.first_seen.setdefault(key, case.label)
            repeat_of = "" if first == case.label else first
        else:
            fault = fault_key(outcome, self.comparison)
        fault_first = ""
        if fault:
            first = lessons.first_seen.setdefault((*mine, fault), case.label)
            fault_first = "" if first == case.label else first
        failure = describe(outcome, self.comparison, context, self.diagnosis)
        full = failure.render()
        # Reports get the whole text, which does not depend on which cases ran before in this
        # process (so they are the same under pytest-xdist).
        text = full
        if fault_first:
            text = repeated(failure, fault_first).render()
        else:
            shown = lessons.output_shown.get(mine, 0)
            room = max(0, min(OUTPUT_LINES, EXERCISE_OUTPUT_LINES - shown))
            if outcome.output:
                lessons.output_shown[mine] = shown + min(room, outcome.output.count("\n") + 1)
            if repeat_of or room < OUTPUT_LINES:
                text = describe(
                    outcome, self.comparison, context, self.diagnosis, repeat_of, room
                ).render()
        # A smaller input helps with a wrong answer or an exception, not with a tensor
        # returned (the fix is .tolist() whatever the input) or a stub.
        shrinkable = (outcome.kind == RETURNED and not fault) or (
            outcome.kind == RAISED and outcome.error_type != "NotImplementedError"
        )
        return Verdict(
            status, text, full, headline=failure.headline, shrinkable=shrinkable, fault=fault
        )

    def _not_run(self, timed_out: list[str], limit: float) -> Verdict:
        """The verdict of a case left out because the exercise's time for loops is spent."""
        numbers = [label.split()[-1] for label in timed_out]
        cases = f"case {numbers[0]}"
        if len(numbers) > 1:
            cases = f"cases {', '.join(numbers[:-1])} and {numbers[-1]}"
        failure = Failure(
            f"Make {self.entry} finish sooner, then run the lesson again: this case was not "
            f"run, because {cases} of {self.exercise.slug} already ran out of time.",
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
        return Verdict("error", text, text, headline=failure.headline, fault="not run")

    def _fail(self, text: str, kind: str, full: str | None = None, headline: str = "") -> NoReturn:
        failure = LessonFailure(text, headline)
        self._record(kind, text if full is None else full, failure.headline, self.fault)
        raise failure

    def _kept_output(self) -> str:
        """What the case printed, for the reports: capped per exercise as well as per case, so
        a print flood in every case cannot make a report of megabytes."""
        if self.case.hidden or self.outcome is None or not self.outcome.output:
            return ""
        lessons = _lessons(self.config)
        mine = (str(self.exercise.path), self.learner)
        cap = lessons.settings.limits(self.exercise.limits).output_cap
        kept = lessons.output_kept.get(mine, 0)
        output = self.outcome.output
        if kept >= cap:
            return f"[not kept: this exercise's earlier cases already kept {cap} bytes of output]"
        if kept + len(output) > cap:
            output = output[: cap - kept] + "\n[… cut: the exercise's output cap is reached]"
        lessons.output_kept[mine] = kept + len(output)
        return output

    def _record(self, status: str, text: str = "", headline: str = "", fault: str = "") -> None:
        diagnosis = self.diagnosis
        passed = status == "passed"
        exercise, case = self.exercise, self.case
        self.lesson_result = {
            "exercise": exercise.slug,
            "title": exercise.title,
            "path": str(exercise.path),
            "line": case.line,
            "cases": len(exercise.cases),
            "case": case.number,
            "id": case.id,
            "label": case.label,
            "learner": self.learner,
            "status": status,
            "passed": passed,
            "points": case.points if passed else 0.0,
            "max_points": case.points,
            "hidden": case.hidden,
            "generated": case.generated,
            "headline": headline or text.split("\n", 1)[0],
            "message": text,
            "diagnosis": diagnosis.id if diagnosis else None,
            "diagnosis_kind": diagnosis.kind if diagnosis else None,
            "seconds": round(time.perf_counter() - self.started, 4),
            "call": _call(exercise, case),
            "output": self._kept_output(),
            "unloadable": _unloadable(self.outcome),
            "fault": fault,
        }

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return repr_failure(self, excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line - 1 if self.case.line else 0
        who = f"{self.learner}: " if self.learner else ""
        return self.path, line, f"{who}{self.exercise.slug}: {self.case.label}"


def judge(
    exercise: model.Exercise, expected: Any, answer: Any, rtol: float, atol: float
) -> Comparison:
    """Compare *answer* with *expected*: one value, or the exercise's several named outputs
    (*expected* is then their table, or for a generated case the reference's tuple)."""
    if not exercise.outputs:
        return compare(expected, answer, rtol, atol)
    if not isinstance(expected, dict) or "$" in expected:
        parts = split_outputs(expected, len(exercise.outputs)) or []
        expected = dict(zip(exercise.outputs, parts))
    return compare_outputs(expected, answer, exercise.outputs, rtol, atol)


def _unloadable(outcome: Outcome | None) -> bool:
    """Whether the learner's file could not be used at all: missing, not importable (a syntax
    error, an exception at import) or without a usable entry function."""
    if outcome is None:
        return False
    return outcome.kind == SETUP or (outcome.kind == RAISED and outcome.phase == "import")


def _call(exercise: model.Exercise, case: model.Case) -> str:
    """The call a case makes, as code a learner can paste (inputs left out when hidden)."""
    if case.hidden:
        return f"{exercise.entry}({', '.join(exercise.inputs)})  # a hidden case"
    arguments = ", ".join(f"{name}={abbreviate(case.inputs[name])}" for name in exercise.inputs)
    return f"{exercise.entry}({arguments})"


def repr_failure(
    item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException], style: Any
) -> Any:
    """What pytest shows for a failed lesson item: the learner's text for a
    :class:`LessonFailure`, a short apology for a bug of the grader's own."""
    if isinstance(excinfo.value, LessonFailure):
        path, line, _ = item.reportinfo()
        return FailureText(excinfo.value.text, excinfo.value.headline, str(path), (line or 0) + 1)
    if item.config.option.verbose > 1:
        return pytest.Item.repr_failure(item, excinfo, style)
    # The learner never sees the grader's own traceback; -vv shows it to its developers.
    return (
        "The grader itself failed on this case, not your code "
        f"({excinfo.typename}: {excinfo.value}).\n"
        "Run again with -vv to see where, and tell your instructor.\n"
    )
