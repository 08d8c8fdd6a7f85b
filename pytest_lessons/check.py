"""``pytest --lesson-check``: prove a lesson sound before learners see it.

For every exercise: its file is valid (collection already says when not); the reference passes
every case, generated ones included; the starter fails; each watch-out's mistake function fails
at least one case and, wherever it fails, gets exactly its own watch-out; and no two mistakes give
the same answer on every case (the cases could not tell them apart). Each problem names the
exercise, the watch-out and the case. The mistakes are graded exactly as a learner's answer is.
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_lessons import export, model
from pytest_lessons.compare import nested, read_numbers
from pytest_lessons.generate import draw
from pytest_lessons.nodes import CaseItem, LessonFailure, Verdict, judge, repr_failure
from pytest_lessons.outcome import RETURNED
from pytest_lessons.report import abbreviate

if TYPE_CHECKING:
    from pytest_lessons.plugin import LessonSession

#: Extra inputs drawn to find one that tells two look-alike mistakes apart.
SEARCH = 40


class LessonCheck(pytest.Item):
    """The authoring check of one exercise."""

    def __init__(self, *, exercise: model.Exercise, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise

    def _grade(
        self,
        solution: Path,
        entry: str,
        exercise: model.Exercise | None = None,
        argument: str | None = None,
    ) -> list[tuple[model.Case, Verdict, Any]]:
        """Grade *entry* of *solution* on every case (of *exercise*, by default the lesson), as
        a learner's answer is graded (given *argument*'s value as its last argument, for a
        fitted watch-out)."""
        graded = []
        exercise = exercise or self.exercise
        for case in exercise.cases:
            item = CaseItem.from_parent(
                self.parent,
                name=f"{entry}-{case.id}",
                exercise=exercise,
                case=case,
                solution=solution,
                entry=entry,
                learner=f"(lesson check{f' {argument}' if argument else ''})",
                argument=argument,
            )
            verdict = item.grade()
            answer = item.outcome.answer if item.outcome and item.outcome.kind == RETURNED else None
            diagnosis = item.diagnosis.id if item.diagnosis is not None else None
            graded.append((case, verdict, (answer, diagnosis, item.diagnosis)))
        return graded

    def runtest(self) -> None:
        exercise = self.exercise
        problems: list[str] = []
        name = exercise.slug

        reference = exercise.reference
        if reference is None or not reference.is_file():
            problems.append(f"{name}: reference.py is missing")
        else:
            failed: dict[str, list[int]] = {}
            for case, verdict, (answer, _, _) in self._grade(reference, exercise.entry):
                if verdict.status == "passed":
                    continue
                what = _headline(verdict)
                if verdict.status == "failed" and not case.generated:
                    # A wrong expected value is the likeliest cause: show both, in full.
                    what = (
                        f"the case at line {case.line} of exercise.toml expects "
                        f"{abbreviate(case.expected, 100)}, the reference returns "
                        f"{abbreviate(_plain(answer), 100)}"
                    )
                failed.setdefault(what, []).append(case.number)
            for what, numbers in failed.items():
                problems.append(f"{name}: the reference fails {_cases(numbers)}: {what}")

        starter_file, shipped = self._starter()
        starter = self._grade(starter_file, exercise.entry)
        if all(verdict.status == "passed" for _, verdict, _ in starter):
            problems.append(
                f"{name}: the starter {exercise.solution.name}{shipped} passes every case; "
                "learners would start with a finished exercise"
            )

        answers: dict[str, list[Any]] = {}
        # Who is graded, and how the full course graded them: for the learner's copy below.
        graded_by: dict[str, tuple[Path, str, list[tuple[model.Case, Verdict, Any]]]] = {
            f"the starter {exercise.solution.name}": (starter_file, exercise.entry, starter)
        }
        proofs: list[tuple[model.WatchOut, str | None]] = []
        for watch in exercise.watch_outs:
            if not watch.mistake:
                continue
            if watch.fit is None:
                proofs.append((watch, None))
            elif not watch.named:
                problems.append(
                    f"{name}: watch-out {watch.id} has fit but no named values, so no case "
                    "can prove it"
                )
            else:
                proofs += [(watch, expression) for expression, _ in watch.named]
        for watch, argument in proofs:
            assert watch.mistake is not None
            graded = self._grade(
                exercise.mistakes or exercise.folder / "mistakes.py",
                watch.mistake,
                argument=argument,
            )
            if argument is None:
                graded_by[f"watch-out {watch.id} (mistake {watch.mistake})"] = (
                    exercise.mistakes or exercise.folder / "mistakes.py",
                    watch.mistake,
                    graded,
                )
            label = f"{watch.id}={argument}" if argument else watch.id
            answers[label] = [answer for _, _, (answer, _, _) in graded]
            failing = [
                (case, verdict, d)
                for case, verdict, (_, d, _) in graded
                if verdict.status != "passed"
            ]
            called = f"{watch.mistake}({argument})" if argument else watch.mistake
            where = f"{name}: watch-out {watch.id} (mistake {called})"
            if not failing:
                problems.append(f"{where} passes every case, so no case can catch it")
            wrong: dict[str, list[int]] = {}
            no_answer: dict[str, list[int]] = {}
            for case, verdict, found in failing:
                if verdict.status != "failed":
                    no_answer.setdefault(self._why(verdict, watch.mistake), []).append(case.number)
                elif found != watch.id:
                    what = f"watch-out {found} fires instead" if found else "no watch-out fires"
                    wrong.setdefault(what, []).append(case.number)
            for why, numbers in no_answer.items():
                problems.append(
                    f"{where}: on {_cases(numbers)} the mistake does not return an answer: {why}"
                )
            for what, numbers in wrong.items():
                problems.append(f"{where}: on {_cases(numbers)} {what}")
        problems += self._look_alikes(answers)
        if not problems:
            problems += self._learner_copy(graded_by)
        if problems:
            raise LessonFailure(
                f"Fix the lesson {name}: {len(problems)} problem"
                f"{'s' if len(problems) != 1 else ''}.\n\n"
                + "\n".join(f"  - {problem}" for problem in problems)
                + "\n"
            )

    def _learner_copy(
        self, graded_by: dict[str, tuple[Path, str, list[tuple[model.Case, Verdict, Any]]]]
    ) -> list[str]:
        """Problems of the lesson's learner copy (``--lesson-export``), read back from the text
        it would be written as: it must grade the starter and every mistake as the full course
        does on each case it keeps, and still fail each of them somewhere."""
        exercise = self.exercise
        name = exercise.slug
        try:
            text, origin = learner_copy(self, exercise)
            copy = model.parse(text, exercise.path)
        except Exception as error:  # the copy cannot be made or read: say so, as a problem
            return [f"{name}: the learner's copy cannot be made: {error}"]
        problems = []
        for who, (solution, entry, full) in graded_by.items():
            verdicts = {case.number: (v.status, d) for case, v, (_, d, _) in full}
            graded = self._grade(solution, entry, copy)
            for (case, verdict, (_, found, _)), number in zip(graded, origin):
                if (verdict.status, found) != verdicts[number]:
                    problems.append(
                        f"{name}: {who}: the learner's copy grades {case.label} "
                        f"{verdict.status} ({found or 'no watch-out'}), the course "
                        f"{verdicts[number][0]} ({verdicts[number][1] or 'no watch-out'})"
                    )
            failing_full = any(v.status != "passed" for _, v, _ in full)
            if failing_full and all(v.status == "passed" for _, v, _ in graded):
                problems.append(
                    f"{name}: {who} passes every case of the learner's copy: only hidden "
                    "cases catch it, so a learner would never see it caught"
                )
        return problems

    def _why(self, verdict: Verdict, function: str) -> str:
        """Why a mistake function gave no answer; for a misspelled name, the likely one."""
        why = _headline(verdict)
        mistakes = self.exercise.mistakes or self.exercise.folder / "mistakes.py"
        if "Define a function named" in verdict.headline and mistakes.is_file():
            defined = re.findall(r"^def (\w+)\(", mistakes.read_text(), re.M)
            close = difflib.get_close_matches(function, defined, n=1)
            why = f"{mistakes.name} defines no function {function}"
            if close:
                why += f' (did you mean "{close[0]}"?)'
        return why

    def _starter(self) -> tuple[Path, str]:
        """The starter as it will be shipped: the committed file when the lesson is in git and
        the working copy differs (an author who solved the lesson to test it), else the file."""
        solution = self.exercise.solution
        try:
            shipped = subprocess.run(
                ["git", "show", f"HEAD:./{solution.name}"],
                cwd=solution.parent,
                capture_output=True,
                check=True,
                timeout=10,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return solution, ""
        if solution.is_file() and solution.read_bytes() == shipped:
            return solution, ""
        folder = Path(tempfile.mkdtemp(prefix="lesson-starter-"))
        self.config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        copy = folder / solution.name
        copy.write_bytes(shipped)
        return copy, " (as committed)"

    def _same(self, a: Any, b: Any) -> bool:
        if a is None or b is None:
            return a is b
        case = self.exercise.cases[0]
        try:
            return judge(self.exercise, a, b, case.rtol, case.atol).passed
        except Exception:
            return False

    def _look_alikes(self, answers: dict[str, list[Any]]) -> list[str]:
        problems = []
        ids = list(answers)
        for i, first in enumerate(ids):
            for second in ids[i + 1 :]:
                pairs = zip(answers[first], answers[second])
                if all(self._same(a, b) for a, b in pairs):
                    problems.append(
                        f"{self.exercise.slug}: watch-outs {first} and {second}: their mistakes "
                        "give the same answer on every case, so the cases cannot tell them "
                        f"apart. {self._telling_input(first, second)}"
                    )
        return problems

    def _telling_input(self, first: str, second: str) -> str:
        """Inputs on which the two mistakes differ, drawn like generated cases."""
        exercise = self.exercise
        spec = exercise.generate
        if spec is None:
            return "Add a case on which their answers differ."
        lessons: LessonSession = _lessons(self.config)
        mistakes = {w.id: w.mistake for w in exercise.watch_outs}
        base = exercise.cases[0]
        from dataclasses import replace

        for _, inputs in draw(replace(spec, seed=spec.seed + 1, count=SEARCH)):
            probe = replace(base, inputs=inputs)
            item = CaseItem.from_parent(
                self.parent, name="probe", exercise=exercise, case=probe, learner="(lesson check)"
            )
            results = []
            for watch_id in (first, second):
                job = item.job(
                    exercise.mistakes or exercise.folder / "mistakes.py",
                    str(mistakes[watch_id]),
                    inputs,
                )
                outcome = lessons.runner.run(job)
                results.append(outcome.answer if outcome.kind == RETURNED else None)
            if not self._same(*results):
                shown = ", ".join(f"{k} = {abbreviate(v, 80)}" for k, v in inputs.items())
                return f"A case with these inputs would: {shown}"
        return "No drawn input told them apart either: they may be the same mistake."

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LessonFailure):
            return repr_failure(self, excinfo, style)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{self.exercise.slug}: lesson check"


def _cases(numbers: list[int]) -> str:
    return f"case {numbers[0]}" if len(numbers) == 1 else "cases " + ", ".join(map(str, numbers))


def _plain(answer: Any) -> Any:
    """An encoded answer as plain lists for an author to read (never the wire encoding),
    numbers short: 6 for 6.0, 6 significant digits."""
    try:
        if isinstance(answer, list):
            return [_plain(part) for part in answer]
        return _short(nested(read_numbers(answer)))
    except Exception:
        return answer if not isinstance(answer, dict) else f"a {answer.get('type', 'value')}"


def _short(value: Any) -> Any:
    if isinstance(value, list):
        return [_short(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return float(f"{value:.6g}") if isinstance(value, float) else value


def _headline(verdict: Verdict) -> str:
    """The first sentence of a verdict's headline."""
    end = verdict.headline.find(". ")
    return verdict.headline if end < 0 else verdict.headline[: end + 1]


def _lessons(config: pytest.Config) -> LessonSession:
    from pytest_lessons.plugin import session_of

    return session_of(config)


def learner_copy(item: pytest.Item, exercise: model.Exercise) -> tuple[str, list[int]]:
    """The learner's ``exercise.toml`` of *exercise* (see :mod:`pytest_lessons.export`),
    its generated cases' answers computed by the reference in the isolated worker."""
    lessons = _lessons(item.config)
    answers = {}
    for case in exercise.cases:
        if case.generated and not case.hidden:
            probe = CaseItem.from_parent(
                item.parent, name=f"export-{case.id}", exercise=exercise, case=case
            )
            answer = lessons.reference_answer(probe, case.inputs)
            if answer is None:
                raise LessonFailure(
                    f"Fix {exercise.slug}'s reference.py: it fails on {case.label}, so that "
                    "case cannot be frozen into the learner's copy.\n"
                )
            answers[case.number] = export.plain_answer(exercise, answer)
    raw = model.tomllib.loads(exercise.path.read_text(encoding="utf-8"))
    return export.learner_toml(raw, exercise, answers)


class LessonExport(pytest.Item):
    """``--lesson-export=DIR``: writes one lesson's learner copy to ``DIR/<lesson>``."""

    def __init__(self, *, exercise: model.Exercise, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise

    def runtest(self) -> None:
        exercise = self.exercise
        text, _ = learner_copy(self, exercise)
        target = Path(self.config.invocation_params.dir, self.config.getoption("lesson_export"))
        folder = target / exercise.slug
        export.write_files(folder, exercise, text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LessonFailure):
            return repr_failure(self, excinfo, style)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{self.exercise.slug}: learner's copy"
