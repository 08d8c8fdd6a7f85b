"""The lesson check (``pytest --lesson-check``) and the learner's copy (``--lesson-export``):
prove a lesson sound before learners see it.

For every exercise: its file is valid (collection already says when not); the reference passes
every case, generated ones included; the starter fails; each watch-out's mistake function fails
at least one case and, wherever it fails, gets exactly its own watch-out; and no two mistakes give
the same answer on every case (the cases could not tell them apart); each variant of
``variants.py`` (a known-correct alternative) passes every case; and no callable of the course
library that the lesson's code can import passes every case as its entry. Each problem names the
exercise, the watch-out and the case. The mistakes and variants are graded exactly as a
learner's answer is: through :meth:`Grader.grade <pytest_lessons.core.grader.Grader.grade>`.

Besides problems the check has notes for the author (:attr:`LessonCheck.notes`): for a lesson
judged within a tolerance, the margins table (:func:`margins`), and under ``--lesson-regenerate``
what changed in each snapshot file (:func:`regenerate`).
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
import tempfile
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import behaviour, course, courselib, export, model, parts, statistical
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Problem, read_numbers, spent, split_outputs
from pytest_lessons.core.explain import BUILT_IN, Diagnoser
from pytest_lessons.core.generate import draw
from pytest_lessons.core.grader import Graded, Grader
from pytest_lessons.core.judge import judge
from pytest_lessons.core.kinds import kind_for
from pytest_lessons.core.results import Status
from pytest_lessons.core.words import HEADLINE_LIMIT, abbreviate, case_list, first_sentence, plural
from pytest_lessons.isolation.answers import COUNTS, TAG, TENSOR, tag_of
from pytest_lessons.isolation.outcome import RAISED, RETURNED

#: Extra inputs drawn to find one that tells two look-alike mistakes apart.
SEARCH = 40

#: The learner name the check's grading runs under (its caches are kept apart by it).
CHECKER = "(lesson check)"

#: A right answer closer to the edge of the tolerance than this share of it, or a mistake
#: caught by less than this many times it, gets a warning in the margins table.
MARGIN = 10.0

#: The declared kinds compared within a tolerance, so a margin means something: floats and
#: floating tensors (a tensor of undeclared dtype too: its dtype follows the expected value).
TOLERANT = re.compile(r"float|tensor(\[(float16|bfloat16|float32|float64)\])?")

#: The share of the tolerance a right answer may use against the typed expected values: half,
#: what rounding to the written decimals may take when the tolerance matches them.
TYPED = 2.0


class LessonProblem(Exception):
    """The lesson cannot be used as it is; the message is the whole text for its author."""


Grades = list[tuple[model.Case, Graded]]


#: How a front end reads a file as it is committed: its bytes in the last commit, None where
#: the file is not under version control (or no version control answers).
Committed = Callable[[Path], "bytes | None"]


class LessonCheck:
    """The authoring check of one exercise, graded by *grader* and diagnosed as learners' answers
    are: the built-in parts named in *built_in*, and *diagnose*, the front end's addition (so a
    lesson's own ``conftest.py`` counts as for learners).
    *committed* reads the starter as it is committed, so the check grades what learners
    will get; the core asks no version control itself."""

    def __init__(
        self,
        grader: Grader,
        exercise: model.Exercise,
        diagnose: Diagnoser | None = None,
        committed: Committed = lambda path: None,
        built_in: Collection[str] = BUILT_IN,
    ) -> None:
        self.grader = grader
        self.exercise = exercise
        self.diagnose = diagnose
        self.built_in = built_in
        self.committed = committed
        self.notes: list[str] = []
        """What the check tells the author besides problems (the margins table), set by
        :meth:`problems`."""

    def grade(
        self,
        solution: Path,
        entry: str,
        exercise: model.Exercise | None = None,
        argument: str | None = None,
    ) -> Grades:
        """Grade *entry* of *solution* on every case (of *exercise*, by default the lesson), as
        a learner's answer is graded (given *argument*'s value as its last argument, for a
        fitted watch-out)."""
        exercise = exercise or self.exercise
        learner = f"{CHECKER[:-1]} {argument})" if argument else CHECKER
        return [
            (
                case,
                self.grader.grade(
                    Attempt(exercise, case, solution, learner, entry, argument),
                    self.diagnose,
                    self.built_in,
                ),
            )
            for case in exercise.cases
        ]

    def problems(self) -> list[str]:
        """Everything wrong with the lesson, one sentence each; empty when it is sound."""
        with tempfile.TemporaryDirectory(prefix="lesson-starter-") as folder:
            return self._problems(Path(folder))

    def _problems(self, scratch: Path) -> list[str]:
        exercise = self.exercise
        problems: list[str] = []
        name = exercise.slug
        for outside in course.unlisted([exercise.path]):
            problems.append(f"{name}: {outside.advice(str(outside.course))}")

        reference = exercise.reference
        right: dict[str, Grades] = {}
        if reference is None or not reference.is_file():
            problems.append(f"{name}: reference.py is missing")
        else:
            failed: dict[str, list[int]] = {}
            right["reference"] = self.grade(reference, exercise.entry)
            for case, graded in right["reference"]:
                if graded.passed:
                    continue
                what = first_sentence(graded.result.headline)
                if graded.outcome is not None and graded.outcome.kind == RAISED:
                    # The exception's whole sentence: its message may hold ". " itself.
                    what = graded.result.headline
                if graded.result.lesson_error:
                    what = _lesson_error(graded.result.lesson_error, case)
                if graded.status == Status.FAILED and case.source == "snapshot":
                    what = (
                        f"{case.snapshot} no longer holds the reference's answer; write it "
                        "again with pytest --lesson-check --lesson-regenerate"
                    )
                elif graded.status == Status.INTERNAL and case.source == "snapshot":
                    what = (
                        f"{case.snapshot} is missing or not JSON; write it with --lesson-regenerate"
                    )
                elif graded.status == Status.FAILED and not case.from_reference and not case.draws:
                    # A wrong expected value is the likeliest cause: show both, in full.
                    what = (
                        f"the case at line {case.line} of exercise.toml expects "
                        f"{abbreviate(case.expected, 100)}, the reference returns "
                        f"{abbreviate(_plain(graded.answer), 100)}"
                    )
                failed.setdefault(what, []).append(case.number)
            for what, numbers in failed.items():
                problems.append(f"{name}: the reference fails {case_list(numbers)}: {what}")
            problems += self._variants(right)

        starter_file, shipped = starter(exercise, scratch, self.committed)
        starter_graded = self.grade(starter_file, exercise.entry)
        if all(graded.passed for _, graded in starter_graded):
            problems.append(
                f"{name}: the starter {exercise.solution.name}{shipped} passes every case; "
                "learners would start with a finished exercise"
            )

        mistakes = exercise.mistakes or exercise.folder / "mistakes.py"
        answers: dict[str, list[Any]] = {}
        wrong_lists: dict[str, Grades] = {}
        # Who is graded, and how the full course graded them: for the learner's copy below.
        graded_by: dict[str, tuple[Path, str, Grades]] = {
            f"the starter {exercise.solution.name}": (starter_file, exercise.entry, starter_graded)
        }
        proofs: list[tuple[model.WatchOut, str | None]] = []
        raising_notes: list[str] = []
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
        for watch in exercise.watch_outs:
            # The longest form a learner can get: with the name of the longest output.
            part = max(
                (f", in {n} (value 1 of {len(exercise.outputs)})" for n in exercise.outputs),
                key=len,
                default="",
            )
            headline = f"Watch out{part}: {' '.join(watch.message.split())}"
            if len(headline) > HEADLINE_LIMIT:
                problems.append(
                    f"{name}: watch-out {watch.id}: its message makes a headline of "
                    f"{len(headline)} characters; shorten it to {HEADLINE_LIMIT}, the most "
                    "every report shows whole"
                )
        slow = {name for case in exercise.cases if case.work for name in case.work.watch_outs}
        for watch, argument in proofs:
            assert watch.mistake is not None
            graded_list = self.grade(mistakes, watch.mistake, argument=argument)
            if argument is None:
                graded_by[f"watch-out {watch.id} (mistake {watch.mistake})"] = (
                    mistakes,
                    watch.mistake,
                    graded_list,
                )
            label = f"{watch.id}={argument}" if argument else watch.id
            if watch.id not in slow:  # a slow mistake's answers are right: its work tells
                # A mistake a harness's check stops gives no answer there: the check tells it.
                answers[label] = [_told(graded) for _, graded in graded_list]
            wrong_lists[label] = graded_list
            # Where the reference itself failed, the case says nothing of the mistake (that
            # failure is a problem of its own, above).
            failing = [
                (case, graded)
                for case, graded in graded_list
                if not graded.passed
                and not (graded.status == Status.INTERNAL and graded.result.lesson_error)
            ]
            called = f"{watch.mistake}({argument})" if argument else watch.mistake
            where = f"{name}: watch-out {watch.id} (mistake {called})"
            if not failing:
                problems.append(f"{where} passes every case, so no case can catch it")
            if watch.code is not None and argument is None:
                source = _function_source(mistakes, watch.mistake)
                if source is not None and not re.search(watch.code, source):
                    problems.append(
                        f"{where}: its code pattern {watch.code!r} is not in "
                        f"{watch.mistake}'s source, so the watch-out would not fire for the "
                        "code it tells of"
                    )
            wrong: dict[str, list[int]] = {}
            no_answer: dict[str, list[int]] = {}
            raised: list[tuple[model.Case, str]] = []
            returned = [case.number for case, g in failing if g.status == Status.FAILED]
            for case, graded in failing:
                found = graded.result.diagnosis
                if graded.status != Status.FAILED:
                    why = self._why(graded, watch.mistake)
                    if _raises(graded) and returned:
                        raised.append((case, why))
                    else:
                        no_answer.setdefault(why, []).append(case.number)
                elif found != watch.id:
                    what = f"watch-out {found} fires instead" if found else "no watch-out fires"
                    wrong.setdefault(what, []).append(case.number)
            for why, numbers in no_answer.items():
                problems.append(
                    f"{where}: on {case_list(numbers)} the mistake does not return an answer: {why}"
                )
            # A mistake that raises on some inputs (an empty list indexed) is a real mistake:
            # a learner's code that makes it raises there too, and is told of the exception.
            # Its watch-out is proven where it returns; the author is told where it raises.
            if raised:
                # One note, with the exception as a public case words it (a hidden case's
                # words keep its secrets).
                why = next((w for c, w in raised if not c.hidden), raised[0][1])
                raising_notes.append(
                    f"{where} raises on {case_list([c.number for c, _ in raised])}, as the "
                    f"code it tells of would: {why} Its watch-out is proven on "
                    f"{case_list(returned)}."
                )
            for what, numbers in wrong.items():
                problems.append(f"{where}: on {case_list(numbers)} {what}")
        problems += self._rules(mistakes)
        problems += self._look_alikes(answers)
        problems += self._library_undeclared()
        problems += self._library_answers(scratch)
        self.notes = margins(self.grader, exercise, right, wrong_lists) + raising_notes
        if not problems:
            problems += self._learner_copy(graded_by)
        return problems

    def _rules(self, mistakes: Path) -> list[str]:
        """Each rule with a ``mistake`` (the right answer computed the forbidden way) proven:
        graded as a learner's answer, it fails every case with that rule."""
        exercise = self.exercise
        problems = []
        for rule in exercise.rules:
            if not rule.mistake:
                continue
            where = f"{exercise.slug}: rule {rule.id} (mistake {rule.mistake})"
            other: dict[str, list[int]] = {}
            for case, graded in self.grade(mistakes, rule.mistake):
                if graded.status == Status.INTERNAL and graded.result.lesson_error:
                    continue  # the reference failed there: a problem of its own
                if not graded.passed and graded.result.diagnosis == rule.id:
                    continue
                why = "it passes" if graded.passed else self._why(graded, rule.mistake)
                other.setdefault(why, []).append(case.number)
            for why, numbers in other.items():
                problems.append(
                    f"{where}: the rule does not stop it on {case_list(numbers)} ({why}); "
                    "forbid the call it makes, or make the mistake make it on every case"
                )
        return problems

    def _learner_copy(self, graded_by: dict[str, tuple[Path, str, Grades]]) -> list[str]:
        """Problems of the lesson's learner copy (``--lesson-export``), read back from the text
        it would be written as: it must grade the starter and every mistake as the full course
        does on each case it keeps, and still fail each of them somewhere."""
        exercise = self.exercise
        name = exercise.slug
        try:
            text, origin = learner_copy(self.grader, exercise)
            copy = model.parse(text, exercise.path)
            # The copy's cases keep the course's numbers: the runs' caches key a case by its
            # exercise's file and number, and a hidden case left out before generated ones
            # would otherwise give a copied case the answers of another.
            cases = tuple(replace(c, number=n) for c, n in zip(copy.cases, origin))
            copy = replace(copy, cases=cases)
        except Exception as error:  # the copy cannot be made or read: say so, as a problem
            return [f"{name}: the learner's copy cannot be made: {error}"]
        problems = []
        for who, (solution, entry, full) in graded_by.items():
            verdicts = {case.number: (g.status, g.result.diagnosis) for case, g in full}
            graded_list = self.grade(solution, entry, copy)
            for (case, graded), number in zip(graded_list, origin):
                found = graded.result.diagnosis
                if (graded.status, found) != verdicts[number]:
                    problems.append(
                        f"{name}: {who}: the learner's copy grades {case.label} "
                        f"{graded.status} ({found or 'no watch-out'}), the course "
                        f"{verdicts[number][0]} ({verdicts[number][1] or 'no watch-out'})"
                    )
            failing_full = any(not g.passed for _, g in full)
            if failing_full and all(g.passed for _, g in graded_list):
                problems.append(
                    f"{name}: {who} passes every case of the learner's copy: only hidden "
                    "cases catch it, so a learner would never see it caught"
                )
        return problems

    def _library_undeclared(self) -> list[str]:
        """Each public callable of the course library that is neither a lesson's part nor
        declared ``shared``: the lesson's code could import it (or a wrapper of it), and
        nothing says whose answer it is, so nothing keeps it from the lesson it answers."""
        try:
            found = course.find(self.exercise.path)
        except course.CourseError:
            return []  # the run itself says why course.toml cannot be used
        if found is None or found.library is None:
            return []
        library = found.library
        problems = []
        for definition in courselib.undeclared(library, found.lessons):
            where = Path(definition.file)
            if where.is_relative_to(found.path.parent):
                where = where.relative_to(found.path.parent)
            name = definition.name
            problems.append(
                f"{self.exercise.slug}: declare {definition.module}.{name} ({where.as_posix()}, "
                f"line {definition.line}) in {found.path}'s [library]: in parts with the lesson "
                f'whose answer it is ({name} = "<lesson folder>"), or in shared = ["{name}"] '
                "when it is no lesson's answer. Undeclared, every lesson's code can import it, "
                "so a lesson it answers, or that a one-line wrapper of it answers, would be "
                "passed by the library"
            )
        return problems

    def _library_answers(self, scratch: Path) -> list[str]:
        """Every callable of the course library that this lesson's code can import, graded as
        the lesson's entry (``from course_lib.gpt import block as solve``), as a learner's
        file is: one that passes every case is the lesson's answer for the taking. Each
        problem names the callable and the lesson, and says how to keep it from the lesson."""
        exercise = self.exercise
        name = exercise.slug
        problems = []
        for definition, owner, lent in parts.importable(exercise):
            if not _could_take(exercise, definition):
                continue  # its def takes no call of this lesson's arguments
            package = definition.module.split(".")[0]
            shown = f"{package}.{definition.name}"
            graded_as = f"from {definition.module} import {definition.name} as {exercise.entry}"
            file = scratch / f"library_{definition.name}.py"
            file.write_text(graded_as + "\n", encoding="utf-8")
            learner = f"{CHECKER[:-1]}: {shown})"
            passed = True
            for case in exercise.cases:
                attempt = Attempt(exercise, case, file, learner)
                # Only whether it passes matters: no diagnosis is worth its mistakes' runs.
                if not self.grader.grade(attempt, built_in=()).passed:
                    passed = False
                    break
            if not passed:
                continue
            said = (
                f"{name}: the course library's {definition.name} ({Path(definition.file).name}, "
                f"line {definition.line}) passes every case, so a learner's `{graded_as}` "
                "would take the lesson's points: "
            )
            if owner is None:
                problems.append(
                    said + f"declare it this lesson's part in {course.COURSE_FILE} ([library] "
                    f'parts, {definition.name} = "{name}"), which keeps {shown} from this '
                    "lesson and the lessons before it"
                )
            elif lent:
                problems.append(
                    said + f"take it out of this lesson's [library] given in "
                    f"{course.COURSE_FILE}, which lends lesson {owner}'s part to this one"
                )
            else:
                problems.append(
                    said + f"make this lesson ask for more than lesson {owner} does: {shown} "
                    f"is {owner}'s part, and {owner} comes before this lesson"
                )
        return problems

    def _variants(self, right: dict[str, Grades]) -> list[str]:
        """Grade every variant of ``variants.py``; each must pass every case. Fills *right*
        with each variant's grades (for the margins)."""
        exercise = self.exercise
        path = exercise.variants
        if path is None or not path.is_file():
            return []
        problems = []
        names = variant_names(path, classes=exercise.harness is not None)
        if not names:
            problems.append(
                f"{exercise.slug}: {path.name} defines no function: each variant is a "
                f"function with {exercise.entry}'s parameters"
            )
        for variant in names:
            graded_list = self.grade(path, variant)
            right[variant] = graded_list
            failing: dict[str, list[int]] = {}
            for case, graded in graded_list:
                if graded.passed or (
                    graded.status == Status.INTERNAL and graded.result.lesson_error
                ):
                    continue  # where the reference fails, that is a problem of its own
                what = first_sentence(graded.result.headline)
                if graded.outcome is not None and graded.outcome.kind == RAISED:
                    what = graded.result.headline
                failing.setdefault(what, []).append(case.number)
            for what, numbers in failing.items():
                problems.append(
                    f"{exercise.slug}: variant {variant} of {path.name} is a right answer but "
                    f"fails {case_list(numbers)}: {what} Widen the tolerance, or fix the variant"
                )
        return problems

    def _why(self, graded: Graded, function: str) -> str:
        """Why a mistake function gave no answer; for a misspelled name, the likely one."""
        why = first_sentence(graded.result.headline)
        if graded.outcome is not None and graded.outcome.kind == RAISED:
            why = graded.result.headline  # the exception's whole sentence, file and line
        mistakes = self.exercise.mistakes or self.exercise.folder / "mistakes.py"
        if "Define a function named" in graded.result.headline and mistakes.is_file():
            defined = re.findall(r"^def (\w+)\(", mistakes.read_text(encoding="utf-8-sig"), re.M)
            close = difflib.get_close_matches(function, defined, n=1)
            why = f"{mistakes.name} defines no function {function}"
            if close:
                why += f' (did you mean "{close[0]}"?)'
        return why

    def _same(self, a: Any, b: Any) -> bool:
        if a is None or b is None or isinstance(a, tuple) or isinstance(b, tuple):
            return bool(a == b)
        if tag_of(a) == COUNTS:  # a statistical case's draws
            return bool(a == b)
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
        functions = {w.id: w.mistake for w in exercise.watch_outs}
        mistakes = exercise.mistakes or exercise.folder / "mistakes.py"
        for _, inputs in draw(replace(spec, seed=spec.seed + 1, count=SEARCH)):
            results = []
            for watch_id in (first, second):
                job = self.grader.runs.job(exercise, mistakes, str(functions[watch_id]), inputs)
                outcome = self.grader.runs.run(exercise, job)
                results.append(outcome.answer if outcome.kind == RETURNED else None)
            if not self._same(*results):
                shown = ", ".join(f"{k} = {abbreviate(v, 80)}" for k, v in inputs.items())
                return f"A case with these inputs would: {shown}"
        return "No drawn input told them apart either: they may be the same mistake."


def check_text(exercise: model.Exercise, problems: list[str]) -> str:
    """The lesson check's failure text for *problems*."""
    return (
        f"Fix the lesson {exercise.slug}: {plural(len(problems), 'problem')}.\n\n"
        + "\n".join(f"  - {problem}" for problem in problems)
        + "\n"
    )


def starter(
    exercise: model.Exercise, scratch: Path, committed: Committed = lambda path: None
) -> tuple[Path, str]:
    """The starter as it will be shipped: the committed file (as *committed* reads it) when
    it differs from the file on disk (then a copy in *scratch*), else the file; and words
    saying which."""
    solution = exercise.solution
    shipped = committed(solution)
    if shipped is None:
        return solution, ""
    if solution.is_file() and solution.read_bytes() == shipped:
        return solution, ""
    copy = scratch / solution.name
    copy.write_bytes(shipped)
    return copy, " (as committed)"


def learner_copy(grader: Grader, exercise: model.Exercise) -> tuple[str, list[int]]:
    """The learner's ``exercise.toml`` of *exercise* (see :mod:`pytest_lessons.core.export`) and
    the full course's case number of each of its cases; generated cases' answers are computed
    by the reference in the isolated worker. Raises :class:`LessonProblem` when the reference
    fails on one."""
    answers = {}
    for case in exercise.cases:
        if case.from_reference and not case.hidden:
            answer = grader.runs.reference_answer(exercise, case.inputs)
            if answer is None:
                raise LessonProblem(
                    f"Fix {exercise.slug}'s reference.py: it fails on {case.label}, so that "
                    "case cannot be frozen into the learner's copy.\n"
                )
            answers[case.number] = export.plain_answer(exercise, answer)
        elif case.source == statistical.DISTRIBUTION and not case.hidden:
            # The learner's copy has no reference.py: its distribution is written in.
            probabilities = statistical.distribution(grader.runs, exercise, case)
            if probabilities is None:
                raise LessonProblem(statistical.failure(grader.runs, exercise, case))
            answers[case.number] = [
                probabilities.get(k, 0.0) for k in range(max(probabilities, default=-1) + 1)
            ]
        elif case.source == "snapshot" and case.expected is None and not case.hidden:
            raise LessonProblem(
                f"Write {exercise.slug}'s {case.snapshot} first (pytest --lesson-check "
                f"--lesson-regenerate): {case.label} takes its answer from it, and a learner's "
                "copy cannot compute it.\n"
            )
    works = {}  # a [budget] case: the reference's figures, frozen into the copy
    for case in exercise.cases:
        if case.work is not None and exercise.reference is not None:
            found = grader.efficiency.work_of(exercise, exercise.reference, exercise.entry, case)
            if found is None:
                raise LessonProblem(
                    f"Fix {exercise.slug}'s reference.py: its work on {case.label} cannot be "
                    "counted.\n"
                )
            works[case.number] = found
    raw = model.read_toml(exercise.path.read_text(encoding="utf-8-sig"))
    return export.learner_toml(raw, exercise, answers, works)


def _could_take(exercise: model.Exercise, definition: courselib.Definition) -> bool:
    """Whether the library's *definition* could be called as *exercise*'s entry: False only
    for a plain function whose ``def`` takes no call of the lesson's arguments (the lesson
    calls its entry with its inputs, in order; a harness or a gradient lesson calls it its
    own way, and a statistical case as its draws need)."""
    arity = definition.arity
    plain = exercise.harness is None and exercise.gradients is None and not exercise.after
    if arity is None or not plain or any(case.draws is not None for case in exercise.cases):
        return True
    count = len(exercise.inputs)
    return bool(arity[0] <= count and (arity[1] < 0 or count <= arity[1]))


def variant_names(path: Path, classes: bool = False) -> list[str]:
    """The variants of the author's ``variants.py`` at *path*: its public top-level functions,
    and with *classes* its classes too (a harness lesson's learner writes a class), in order
    (read with ``ast``: author code runs only in the worker)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    return [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        or (classes and isinstance(node, ast.ClassDef))
        if not node.name.startswith("_")
    ]


# --- margins -------------------------------------------------------------------------------


def gap(exercise: model.Exercise, expected: Any, answer: Any, rtol: float, atol: float) -> float:
    """How far *answer* is from *expected*, in tolerances: the largest, over every value, of
    ``|got - expected| / (atol + rtol * |expected|)`` (:func:`~pytest_lessons.core.compare
    .spent`, the judge's own rule); 1 is the edge (above it fails).
    Outputs of an exact kind are left out. NaN when no output has a tolerance, or the two are
    not numbers of the same shape (no margin to speak of)."""
    pairs = [(expected, answer)]
    if exercise.outputs:
        if isinstance(expected, dict) and TAG not in expected:
            wanted: list[Any] | None = [expected.get(name) for name in exercise.outputs]
        else:
            wanted = split_outputs(expected, len(exercise.outputs))
        got = split_outputs(answer, len(exercise.outputs))
        if wanted is None or got is None:
            return math.nan
        pairs = list(zip(wanted, got))
    worst, measured = 0.0, False
    declared = exercise.kinds or (None,) * len(pairs)
    for (want, have), kind in zip(pairs, declared):
        if kind is not None and not TOLERANT.fullmatch(kind):
            # A declared exact kind (ints, a bool tensor) has no margin; the outputs beside
            # it that have a tolerance do (counts and their probabilities).
            continue
        measured = True
        # A tensor's margin is its values' (its dtype and shape are judged before any margin).
        want, have = _tensor_values(want), _tensor_values(have)
        if kind_for(want).name != "numeric":
            return math.nan  # an exact kind: no tolerance, no margin
        try:
            a, b = read_numbers(want), read_numbers(have)
        except Exception:  # not numbers: no margin to speak of
            return math.nan
        if a.shape != b.shape:
            return math.nan
        for x, y in zip(a.flat, b.flat):
            if math.isnan(x) or math.isnan(y):
                worst = max(worst, 0.0 if math.isnan(x) and math.isnan(y) else math.inf)
                continue
            worst = max(worst, spent(y, x, rtol, atol))
    return worst if measured else math.nan


def _tensor_values(value: Any) -> Any:
    if tag_of(value) == TENSOR and "values" in value:
        return value["values"]
    return value


def _expected(grader: Grader, exercise: model.Exercise, case: model.Case) -> Any:
    if case.from_reference:
        return grader.runs.reference_answer(exercise, case.inputs)
    return case.expected


def margins(
    grader: Grader,
    exercise: model.Exercise,
    right: dict[str, Grades],
    wrong: dict[str, Grades],
) -> list[str]:
    """The margins table of a lesson judged within a tolerance (empty for any other): for each
    right answer (the variants of ``variants.py``) its largest gap over the cases, and for each
    known mistake its smallest gap over the cases that catch it, both in tolerances, with a
    warning when a right answer comes within :data:`MARGIN` times of the edge, or a mistake is
    caught by less than :data:`MARGIN` times it."""
    rows: list[tuple[str, str, str]] = []
    warnings: list[str] = []
    measured = False
    for variant, graded_list in right.items():
        gaps = [
            (gap(exercise, _expected(grader, exercise, c), g.answer, c.rtol, c.atol), c)
            for c, g in graded_list
            if g.answer is not None
        ]
        gaps = [(x, c) for x, c in gaps if not math.isnan(x)]
        if not gaps:
            continue
        measured = True
        largest, case = max(gaps, key=lambda pair: pair[0])
        name = "reference.py" if variant == "reference" else f"variant {variant}"
        where = f"largest, on {case.label}"
        own: list[float] = []
        if variant != "reference" and "reference" in right:
            # The variant's own difference, which typed (rounded) answers may hide.
            own = [
                gap(exercise, r.answer, g.answer, c.rtol, c.atol)
                for (c, g), (_, r) in zip(graded_list, right["reference"])
                if g.answer is not None and r.answer is not None
            ]
            own = [x for x in own if not math.isnan(x)]
            if own:
                where += f"; {_times(max(own))} from reference.py's answers"
        rows.append((name, _times(largest), where))
        # A typed answer is rounded to the decimals it is written with, which may take up to
        # half the tolerance by design (4 decimals against 1e-4): that share of the gap is
        # the author's writing, not the computation. The computation's own margin is the
        # variant's distance from the reference's answers, held to MARGIN.
        if largest * TYPED > 1:
            warnings.append(
                f"{name} is within {_factor(1 / largest)} of the tolerance on "
                f"{case.label}: write that case's expected values with more decimals, or "
                "widen rtol/atol"
            )
        elif own and max(own) * MARGIN > 1:
            warnings.append(
                f"{name} is within {_factor(1 / max(own))} of the tolerance from "
                "reference.py's answers: a right answer computed another way may fail; widen "
                "rtol/atol, or make the cases less sensitive to rounding (smaller values, "
                "fewer steps)"
            )
    for label, graded_list in wrong.items():
        # An answer of the wrong type (a float64 tensor for float32) is caught by its type,
        # not by a margin: its values tell nothing here.
        gaps = [
            (gap(exercise, _expected(grader, exercise, c), g.answer, c.rtol, c.atol), c)
            for c, g in graded_list
            if g.answer is not None
            and not (g.comparison is not None and g.comparison.problem == Problem.TYPE)
        ]
        caught = [(x, c) for x, c in gaps if not math.isnan(x) and x > 1]
        if not [x for x, _ in gaps if not math.isnan(x)]:
            continue
        measured = True
        if not caught:
            # A slow mistake's values are right: the work budget is what catches it.
            by_work = [c.label for c, g in graded_list if c.work is not None and not g.passed]
            said = f"caught by the work budget on {by_work[0]}" if by_work else "caught on no case"
            checked = [c.label for c, g in graded_list if not g.passed and _told(g) != g.answer]
            if checked and not by_work:  # stopped by the harness before any value
                said = f"stopped by the harness's check on {checked[0]}"
            rows.append((f"mistake {label}", "-", said))
            continue
        smallest, case = min(caught, key=lambda pair: pair[0])
        where = f"smallest, on {case.label}; caught on {len(caught)} of {len(gaps)}"
        rows.append((f"mistake {label}", _times(smallest), where))
        if smallest < MARGIN:
            warnings.append(
                f"mistake {label} is caught by only {_factor(smallest)} the tolerance on "
                f"{case.label}: a slightly wider tolerance lets it pass there; add a case "
                "where it differs more, or tighten rtol/atol"
            )
    if not measured:
        return []
    case = exercise.cases[0]
    lines = [
        f"{exercise.slug}: margins (gaps in tolerances: 1 is the edge; rtol {case.rtol:g}, "
        f"atol {case.atol:g})"
    ]
    width = max(len(name) for name, _, _ in rows)
    digits = max(len(value) for _, value, _ in rows)
    lines += [f"  {name:<{width}}  {value:>{digits}}  {where}" for name, value, where in rows]
    lines += [f"  WARNING: {warning}" for warning in warnings]
    return lines


def _told(graded: Graded) -> Any:
    """What a graded mistake gave on a case, to tell two mistakes apart: its answer, or for a
    case a check of the lesson's harness stopped, that check (``("check", id)``)."""
    outcome = graded.outcome
    if graded.answer is None and outcome is not None:
        found = behaviour.check_id(outcome)
        if found is not None:
            return ("check", found)
    return graded.answer


def _raises(graded: Graded) -> bool:
    """Whether a mistake function's own code raised on the case (not a missing function, a
    timeout or a stub's NotImplementedError)."""
    outcome = graded.outcome
    return (
        outcome is not None
        and outcome.kind == RAISED
        and outcome.error_type != "NotImplementedError"
    )


def _times(value: float) -> str:
    if math.isinf(value):
        return "inf"
    return f"{value:,.0f}" if value >= 100 else f"{value:.2g}"


def _factor(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.2g}x"


# --- snapshots -----------------------------------------------------------------------------


def snapshot_text(value: Any) -> str:
    """A snapshot file's text: the expected value as JSON, floats written to round-trip."""
    return json.dumps(value) + "\n"


def regenerate(grader: Grader, exercise: model.Exercise) -> list[str]:
    """Rewrite the snapshot files of *exercise* from its reference, and say what changed, one
    line per snapshot case. Raises :class:`LessonProblem` in a learner's copy (there is no
    reference to compute with, and the answers there are the course's to give), and when the
    reference fails on a case."""
    if export.is_learner_copy(exercise) and not export.marked(exercise):
        raise LessonProblem(
            f"Add {exercise.slug}'s reference.py, then regenerate: the snapshots are computed "
            "from it.\n"
        )
    if export.is_learner_copy(exercise):
        raise LessonProblem(
            f"Regenerate snapshots in the course's own folder, not here: {exercise.slug} is a "
            "learner's copy (made by --lesson-export, without reference.py), so its answers "
            "cannot be computed again.\n"
        )
    # Every answer first: a reference that fails on one case leaves every file as it was.
    computed = []
    for case in exercise.cases:
        if case.source != "snapshot" or case.snapshot is None:
            continue
        answer = grader.runs.reference_answer(exercise, case.inputs)
        if answer is None:
            why = grader.feedback.reference_failure(exercise, case).split("\n", 1)[0]
            raise LessonProblem(
                f"Fix {exercise.slug}'s reference.py: it fails on {case.label}, so "
                f"{case.snapshot} cannot be written (no snapshot was): {why}\n"
            )
        computed.append((case, case.snapshot, export.plain_answer(exercise, answer)))
    lines = []
    for case, snapshot, new in computed:
        file = exercise.folder / snapshot
        text = snapshot_text(new)
        old_text = file.read_text(encoding="utf-8") if file.is_file() else None
        if old_text == text:
            lines.append(f"{exercise.slug}: {snapshot} ({case.label}): unchanged")
            continue
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        said = f"written, {plural(_count(new), 'value')}"
        try:
            said = changes(json.loads(old_text), new) if old_text is not None else said
        except ValueError:
            said += " (the old file was not JSON)"
        lines.append(f"{exercise.slug}: {snapshot} ({case.label}): {said}")
    return lines


def _leaves(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key], (*at, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, (*at, i))]
    return [(at, value)]


def _count(value: Any) -> int:
    return len(_leaves(value))


def changes(old: Any, new: Any) -> str:
    """What changed from *old* to *new*, in the author's terms: how many values, the largest
    gap between numbers and where (``3 of 40 values changed, largest gap 0.002 at [1, 4]:
    0.5012 -> 0.5032``), or that the value's shape changed."""
    before, after = _leaves(old), _leaves(new)
    if [at for at, _ in before] != [at for at, _ in after]:
        return (
            f"the value's shape changed ({plural(len(before), 'value')} before, {len(after)} now)"
        )
    changed = [(at, a, b) for (at, a), (_, b) in zip(before, after) if a != b]
    if not changed:
        return "the same values, written anew"
    said = f"{len(changed)} of {plural(len(after), 'value')} changed"
    numeric = [
        (abs(b - a), at, a, b)
        for at, a, b in changed
        if isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ]
    if numeric:
        size, at, a, b = max(numeric, key=lambda row: row[0])
        where = "[" + ", ".join(str(i) for i in at) + "]"
        said += f", largest gap {size:.2g} at {where}: {a:.6g} -> {b:.6g}"
    else:
        at, a, b = changed[0]
        where = "[" + ", ".join(str(i) for i in at) + "]"
        said += f", first at {where}: {abbreviate(a, 40)} -> {abbreviate(b, 40)}"
    return said


def _function_source(path: Path, name: str) -> str | None:
    """The source of the function *name* in the author's file *path* (None when it cannot be
    read or has no such function: the grading says so already)."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(text, node)
    return None


def _lesson_error(text: str, case: model.Case) -> str:
    """The reference's failure on a generated *case*, for its author: the exception's sentence
    (file and line) and the inputs it failed on."""
    headline = text.split("\n", 1)[0]
    inputs = ", ".join(f"{name} = {abbreviate(value, 100)}" for name, value in case.inputs.items())
    return f"{headline} Inputs: {inputs}" if inputs else headline


def _plain(answer: Any) -> Any:
    """An encoded answer as plain lists for an author to read (never the wire encoding),
    numbers short: 6 for 6.0, 6 significant digits."""
    try:
        if isinstance(answer, list):
            return [_plain(part) for part in answer]
        return _short(kind_for(answer).plain(answer))
    except Exception:
        return answer if not isinstance(answer, dict) else f"a {answer.get('type', 'value')}"


def _short(value: Any) -> Any:
    if isinstance(value, list):
        return [_short(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return float(f"{value:.6g}") if isinstance(value, float) else value
