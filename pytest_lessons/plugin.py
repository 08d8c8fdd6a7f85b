"""The pytest plugin, registered through the ``pytest11`` entry point as ``lessons``.

It collects ``exercise.toml`` files, resolves the run settings once, owns the runner that
executes learner code, registers the diagnosis hooks and their built-in implementations, and
writes the ``lessons`` summary (progress, hints, worked solutions). Loading it imports neither
torch nor any learner code.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import course, diagnose, fit, model, reports, sandbox, settings, summary
from pytest_lessons.compare import Numbers, nested, read_numbers, split_outputs
from pytest_lessons.generate import smaller
from pytest_lessons.nodes import BrokenExercise, CaseItem, ExerciseFile, FailureText, judge
from pytest_lessons.outcome import RAISED, RETURNED, TAG, TIMEOUT, Outcome
from pytest_lessons.report import abbreviate
from pytest_lessons.runner import Runner, make_runner


@dataclass
class LessonSession:
    """The plugin's per-session state, kept in ``config.stash``."""

    settings: settings.Settings
    runner: Runner
    invocation_dir: Path
    config: pytest.Config | None = None
    first_seen: dict[tuple[str, ...], str] = field(default_factory=dict)
    """(exercise file, learner, diagnosis headline or fault key) -> the label of the first
    case that had it."""
    timed_out: dict[tuple[str, str], list[tuple[str, float]]] = field(default_factory=dict)
    """(exercise file, learner) -> the cases that ran out of time, with their limit."""
    output_shown: dict[tuple[str, str], int] = field(default_factory=dict)
    """(exercise file, learner) -> lines of printed output its failures showed so far."""
    output_kept: dict[tuple[str, str], int] = field(default_factory=dict)
    """(exercise file, learner) -> characters of printed output kept for the reports."""
    fault_reports: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)
    """(exercise file, learner, fault) -> (node id, label) of the first report with it, as
    the terminal saw them (also from pytest-xdist workers)."""
    raw_mistakes: dict[tuple[str, int, str, float | None], Any] = field(default_factory=dict)
    """(exercise file, case, watch-out, fitted value) -> the mistake function's answer."""
    fit_failed: set[tuple[str, str, str]] = field(default_factory=set)
    """(exercise file, learner, watch-out) whose search for a fitted value found nothing."""
    outcomes: dict[tuple[str, str, str, int], Outcome] = field(default_factory=dict)
    """(learner's file, entry, exercise file, case) -> the learner's outcome on it."""
    references: dict[tuple[str, str], Any] = field(default_factory=dict)
    shrunk: dict[tuple[str, str], str] = field(default_factory=dict)
    """(exercise file, learner) -> the case under which a smaller failing input is shown."""
    results: list[dict[str, Any]] = field(default_factory=list)
    """Every case's result, as it arrived on its report (also from xdist workers)."""
    submissions: Path | None = None
    """Batch grading: the folder of learners' folders."""
    policy: sandbox.Policy | None = None
    """The sandbox around learner code, before the course is known; None when isolation is
    off."""
    support: sandbox.Support = field(default_factory=lambda: sandbox.Support(0))
    """What the kernel offers, as probed (for the header)."""
    checkout: Path | None = None
    """pytest's root folder: none of it is readable to learner code."""
    course: set[Path] = field(default_factory=set)
    """Every exercise folder collected: none of it is readable to learner code."""
    _course_policy: sandbox.Policy | None = None

    def sandbox_policy(self) -> sandbox.Policy | None:
        """The sandbox for every job of this session, with the whole course out of reach
        (computed once, after collection, when the first job is made)."""
        if self.policy is None:
            return None
        if self._course_policy is None:
            fenced = set(self.course)
            if self.submissions is not None:
                fenced.add(self.submissions)
            self._course_policy = self.policy.for_course(sorted(fenced), self.checkout)
        return self._course_policy

    def show(self, path: Path | str) -> str:
        """*path* as the learner should see it: relative to where pytest was started."""
        try:
            return os.path.relpath(path, self.invocation_dir)
        except ValueError:  # another drive on Windows
            return str(path)

    def mistake_raw(
        self, item: CaseItem, watch: model.WatchOut, case: model.Case, value: float | None = None
    ) -> Any:
        """What the author's mistake function returns on *case* (encoded plain data; None if
        it fails), given *value* as its last argument when the watch-out has ``fit``.

        Author code, but it runs like learner code (in the worker), on fresh inputs: the judge
        only ever reads plain data, whoever wrote the code.
        """
        exercise = item.exercise
        key = (str(exercise.path), case.number, watch.id, value)
        if key not in self.raw_mistakes:
            answer = None
            if exercise.mistakes is not None and watch.mistake:
                job = item.job(exercise.mistakes, watch.mistake, case.inputs)
                if value is not None:
                    job = dataclasses.replace(job, inputs=[*job.inputs, value])
                outcome = self.runner.run(job)
                if outcome.kind == RETURNED:
                    answer = outcome.answer
            self.raw_mistakes[key] = answer
        return self.raw_mistakes[key]

    def mistake_answer(
        self, item: CaseItem, watch: model.WatchOut, part: int = -1, value: float | None = None
    ) -> Numbers | None:
        """:meth:`mistake_raw` on *item*'s case as numbers (of output *part*), or None."""
        raw = self.mistake_raw(item, watch, item.case, value)
        if raw is None:
            return None
        if part >= 0:
            parts = split_outputs(raw, len(item.exercise.outputs))
            raw = parts[part] if parts is not None else None
        try:
            return read_numbers(raw)
        except Exception:  # not numbers: this mistake cannot be matched
            return None

    def learner_outcome(self, item: CaseItem, case: model.Case) -> Outcome:
        """The learner's outcome on *case*, run once per session: the case's own grading and a
        watch-out's look at other cases share it. A timeout counts against the exercise's loop
        budget when it happens."""
        entry = f"{item.entry}({item.argument})" if item.argument else item.entry
        key = (str(item.solution), entry, str(item.exercise.path), case.number)
        if key not in self.outcomes:
            job = item.job(item.solution, item.entry, case.inputs, learner=True)
            outcome = self.runner.run(job)
            if outcome.kind == TIMEOUT:
                mine = (str(item.exercise.path), item.learner)
                self.timed_out.setdefault(mine, []).append((f"case {case.number}", job.timeout))
            self.outcomes[key] = outcome
        return self.outcomes[key]

    def fitted(
        self, item: CaseItem, watch: model.WatchOut, evidence: diagnose.Evidence
    ) -> diagnose.Fitted | None:
        """The value of *watch*'s free parameter that gives the learner's answer on *item*'s
        case, within its bounds: the author's named values first, then a search."""
        assert watch.fit is not None
        exercise = item.exercise
        sizes = _sizes(exercise, item.case.inputs)
        low, high = watch.fit
        right_value = fit.evaluate(watch.right, sizes) if watch.right else None
        right = ""
        if watch.right and right_value is not None:
            right = f"{fit.symbolic(watch.right)} = {fit.fmt(right_value)}"
        got, want = evidence.got, evidence.expected
        rtol, atol = evidence.rtol, evidence.atol

        def answer(value: float) -> Numbers | None:
            return self.mistake_answer(item, watch, evidence.part_index, value)

        def is_right(value: float) -> bool:
            return right_value is not None and math.isclose(value, right_value, rel_tol=1e-6)

        for expression, label in watch.named:
            value = fit.evaluate(expression, sizes)
            if value is None or not low <= value <= high or is_right(value):
                continue
            mine = answer(value)
            if (
                mine is not None
                and not diagnose.close(mine, want, rtol, atol)
                and diagnose.close(got, mine, rtol, atol)
            ):
                words = fit.fmt(value)
                shown = fit.numeric(expression, sizes)
                if shown != words:
                    words += f" = {shown}"
                found = diagnose.Fitted(value, f"{words}, {label}", right, expression)
                # Two expressions may give the same value on this case (√(2·2) = 2): the one
                # that explains the other cases too is the learner's.
                if self.consistent(item, watch, found):
                    return found
        searched = (str(exercise.path), item.learner, watch.id)
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
        for value in dict.fromkeys(float(f"{best:.{n}g}") for n in (1, 2, 3, 4)):
            mine = answer(value)
            if (
                mine is not None
                and not is_right(value)
                and not diagnose.close(mine, want, rtol, atol)
                and diagnose.close(got, mine, rtol, atol)
            ):
                break
        else:
            return None
        found = diagnose.Fitted(value, fit.fmt(value), right)
        if not self.consistent(item, watch, found):
            return None
        self.fit_failed.discard(searched)
        return found

    def consistent(
        self, item: CaseItem, watch: model.WatchOut, found: diagnose.Fitted | None
    ) -> bool:
        """Whether *watch* explains every other failing case where its mistake differs from the
        right answer (a degenerate case alone must not name a mistake). Cases whose code did
        not return an answer tell nothing and are left out."""
        exercise = item.exercise
        if item.case.hidden or any(self.timed_out.get((str(exercise.path), item.learner), [])):
            return True
        for case in exercise.cases:
            if case.number == item.case.number:
                continue
            if case.generated:
                expected = self.reference_answer(item, case.inputs)
                if expected is None:
                    continue
            else:
                expected = case.expected
            outcome = self.learner_outcome(item, case)
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
                mistake = self.mistake_raw(item, watch, case, value)
                if mistake is None or judge(exercise, expected, mistake, rtol, atol).passed:
                    continue
                if not _same(exercise, mistake, outcome.answer, rtol, atol):
                    return False
            except Exception:  # an answer that is not numbers tells nothing here
                continue
        return True

    def reference_answer(self, item: CaseItem, inputs: dict[str, Any]) -> Any:
        """The lesson's reference answer on *inputs* (encoded plain data), or None if the
        reference fails. Run in the worker like any code, once per input."""
        exercise = item.exercise
        key = (str(exercise.path), json.dumps(inputs, sort_keys=True))
        if key not in self.references:
            answer = None
            if exercise.reference is not None:
                outcome = self.runner.run(item.job(exercise.reference, exercise.entry, inputs))
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
            self.references[key] = answer
        return self.references[key]

    def smaller_failure(self, item: CaseItem, outcome: Outcome) -> str:
        """For a failing generated case: a smaller input on which the learner's code fails the
        same way, found by shrinking axes and rounding values; shown once per exercise."""
        exercise, case = item.exercise, item.case
        key = (str(exercise.path), item.learner)
        if key in self.shrunk:
            return f"\n  A smaller input that fails is shown under {self.shrunk[key]}.\n"
        spec = exercise.generate
        if spec is None or case.sizes is None:
            return ""
        self.shrunk[key] = case.label
        current: tuple[dict[str, int], dict[str, Any]] = (case.sizes, case.inputs)
        found: tuple[Any, str] | None = None
        budget = SHRINK_BUDGET
        progress = True
        while progress and budget > 0:
            progress = False
            for sizes, inputs in smaller(spec, *current):
                budget -= 1
                failing = self._fails_alike(item, inputs, outcome)
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
        self, item: CaseItem, inputs: dict[str, Any], original: Outcome
    ) -> tuple[str, str] | None:
        expected = self.reference_answer(item, inputs)
        if expected is None:
            return None
        outcome = self.runner.run(item.job(item.solution, item.entry, inputs))
        shown = abbreviate(_rounded(_view(expected)))
        if original.kind == RAISED:
            if outcome.kind == RAISED and outcome.error_type == original.error_type:
                return shown, f"raises {outcome.error_type}"
            return None
        if outcome.kind != RETURNED:
            return None
        verdict = judge(item.exercise, expected, outcome.answer, item.case.rtol, item.case.atol)
        if verdict.passed or verdict.got is None:
            return None
        return shown, abbreviate(_rounded(_view(outcome.answer)))


class _Shown(str):
    """Text shown as is inside a rendered value (its repr is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


#: Steps of the search for a fitted parameter (each runs the mistake function once).
FIT_STEPS = 16


def _same(exercise: model.Exercise, a: Any, b: Any, rtol: float, atol: float) -> bool:
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


def _sizes(exercise: model.Exercise, inputs: dict[str, Any]) -> dict[str, int]:
    """The sizes of the lesson's named axes in a case with *inputs*."""
    if exercise.generate is None:
        return {}
    return fit.axis_sizes(exercise.generate.inputs, inputs)


def _view(answer: Any) -> Any:
    """An encoded answer as nested lists, for display (packed parts unpacked). Our wire
    encoding never reaches a person: a tensor shows its values and type, another object its
    type."""
    if isinstance(answer, list):
        return [_view(part) for part in answer]
    try:
        return nested(read_numbers(answer))
    except Exception:
        pass
    if isinstance(answer, dict) and TAG in answer:
        kind = str(answer.get("type", answer[TAG]))
        if "values" in answer:
            return _Shown(f"{kind}({abbreviate(_rounded(_view(answer['values'])))})")
        return _Shown(f"<a {kind}>")
    return answer


def _rounded(value: Any) -> Any:
    """Values rounded to 4 decimals, for showing a small input's answers at a glance."""
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return round(value, 4) if isinstance(value, float) and math.isfinite(value) else value


#: How many smaller inputs the shrinker may try for one failing generated case (each try runs
#: the reference and the learner's code once).
SHRINK_BUDGET = 30

_KEY = pytest.StashKey[LessonSession]()
_STARTED = pytest.StashKey[float]()


def session_of(config: pytest.Config) -> LessonSession:
    """The plugin's state for *config*."""
    return config.stash[_KEY]


class WatchOutMatcher:
    """Built-in: the lesson's ``[[watch_out]]`` entries (plugin name ``lessons.watch_outs``)."""

    @pytest.hookimpl(trylast=True)
    def pytest_lessons_diagnose(
        self, item: CaseItem, evidence: diagnose.Evidence
    ) -> diagnose.Diagnosis | None:
        watch_outs = item.exercise.watch_outs
        if not watch_outs:
            return None
        lessons = session_of(item.config)
        answers = {
            w.id: lessons.mistake_answer(item, w, evidence.part_index)
            for w in watch_outs
            if w.mistake and w.fit is None
        }
        generic = diagnose.detect(evidence) if any(w.detector for w in watch_outs) else None
        return diagnose.match_watch_outs(
            evidence,
            watch_outs,
            answers,
            generic,
            fitter=lambda watch: lessons.fitted(item, watch, evidence),
            consistent=lambda watch, found: lessons.consistent(item, watch, found),
        )


class GenericDetectors:
    """Built-in: layout, scaling, mask, row and order detectors (``lessons.detectors``)."""

    @pytest.hookimpl(trylast=True)
    def pytest_lessons_diagnose(
        self, item: CaseItem, evidence: diagnose.Evidence
    ) -> diagnose.Diagnosis | None:
        return diagnose.detect(evidence)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_lessons import hooks

    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lessons", "pytest-lessons: grading exercises")
    for setting in settings.SETTINGS:
        help_text = f"{setting.help} Also ini {setting.ini}, env {setting.env}."
        group.addoption(
            setting.option,
            dest=f"lesson_{setting.name}",
            metavar=setting.metavar,
            default=None,
            help=help_text,
        )
        parser.addini(setting.ini, setting.help, default=None)
    group.addoption(
        "--lesson-report",
        dest="lesson_report",
        metavar="PATH",
        default=None,
        help="Write the grading report to PATH (always, also when cases crash or an exercise "
        "file is broken).",
    )
    group.addoption(
        "--lesson-report-format",
        dest="lesson_report_format",
        default="json",
        choices=reports.FORMATS,
        help="The report's dialect: gradescope (results.json), classroom (the GitHub "
        "Classroom runner result), exercism (results.json version 3) or json (ours; default).",
    )
    group.addoption(
        "--lesson-hidden-visibility",
        dest="lesson_hidden_visibility",
        default="after_published",
        choices=("hidden", "after_due_date", "after_published", "visible"),
        help="Gradescope visibility of hidden cases (default after_published).",
    )
    group.addoption(
        "--lesson-submissions",
        dest="lesson_submissions",
        metavar="DIR",
        default=None,
        help="Grade a class: DIR/<learner>/<exercise>/solution.py for each learner and each "
        "collected exercise. Only the solution files are read from DIR.",
    )
    group.addoption(
        "--lesson-gradebook",
        dest="lesson_gradebook",
        metavar="PATH",
        default="gradebook.csv",
        help="With --lesson-submissions: where to write the gradebook CSV (default gradebook.csv).",
    )
    group.addoption(
        "--lesson-check",
        dest="lesson_check",
        action="store_true",
        default=False,
        help="Check each collected lesson instead of grading it: the reference passes every "
        "case, the starter fails, and each mistake gets its own watch-out and no other.",
    )
    group.addoption(
        "--lesson-export",
        dest="lesson_export",
        metavar="DIR",
        default=None,
        help="Write the learner's copy of each collected lesson to DIR/<lesson>: the starter, "
        "public cases, generated cases frozen with their answers, watch-outs and hints; no "
        "reference, no hidden cases, no worked solution.",
    )
    group.addoption(
        "--lesson-hints",
        dest="lesson_hints",
        nargs="?",
        const="next",
        default=None,
        choices=("next", "all", "reset"),
        help="For each failing exercise, show the hints opened so far and open the next "
        "(remembered in pytest's cache); 'all' shows every hint; 'reset' closes them again.",
    )
    group.addoption(
        "--lesson-solution",
        dest="lesson_solution",
        nargs="?",
        const="passed",
        default=None,
        choices=("passed", "show-anyway"),
        help="Show the worked solution of each exercise you have passed; 'show-anyway' shows "
        "it for exercises you have not passed yet too.",
    )


def pytest_configure(config: pytest.Config) -> None:
    debugging = bool(config.getoption("usepdb", False) or config.getoption("trace", False))
    try:
        resolved = settings.resolve(
            option=lambda name: config.getoption(f"lesson_{name}"),
            ini=lambda name: config.getini(f"lesson_{name}"),
            debugging=debugging,
        )
    except settings.SettingError as error:
        raise pytest.UsageError(str(error)) from None
    submissions = config.getoption("lesson_submissions")
    if submissions is not None:
        submissions = Path(config.invocation_params.dir, submissions).resolve()
        if not submissions.is_dir():
            raise pytest.UsageError(f"--lesson-submissions={submissions}: no such folder")
    support, policy = _sandbox(resolved)
    config.stash[_KEY] = LessonSession(
        settings=resolved,
        runner=make_runner(
            resolved.isolation,
            resolved.value("preload"),
            env=dict(policy.env) if policy is not None else None,
        ),
        invocation_dir=config.invocation_params.dir,
        config=config,
        submissions=submissions,
        policy=policy,
        support=support,
        checkout=config.rootpath,
    )
    config.stash[_STARTED] = time.monotonic()
    config.pluginmanager.register(ResultCollector(config.stash[_KEY]), "lessons.results")
    config.pluginmanager.register(WatchOutMatcher(), "lessons.watch_outs")
    config.pluginmanager.register(GenericDetectors(), "lessons.detectors")


def _sandbox(resolved: settings.Settings) -> tuple[sandbox.Support, sandbox.Policy | None]:
    """What the kernel offers and the session's sandbox policy, as the settings ask."""
    if resolved.isolation == "off":
        return sandbox.Support(0, "learner code runs inside pytest"), None
    mode = resolved.value("sandbox")
    if mode == "off":
        support = sandbox.Support(0, "--lesson-sandbox=off was given", seccomp=False)
    else:
        support = sandbox.probe()
        if mode == "require" and not support.abi:
            raise pytest.UsageError(
                f"--lesson-sandbox=require: no sandbox can be had here: {support.reason}. "
                "Grade as a separate user or in a container, or drop 'require'."
            )
    user = resolved.value("sandbox_user")
    try:
        policy = sandbox.make_policy(
            support,
            os.environ,
            passed=resolved.value("pass_env"),
            user=None if user == "none" or mode == "off" else user,
        )
    except ValueError as error:
        raise pytest.UsageError(f"--lesson-sandbox-user: {error}") from None
    return support, policy


def pytest_unconfigure(config: pytest.Config) -> None:
    lessons = config.stash.get(_KEY, None)
    if lessons is not None:
        lessons.runner.close()


def pytest_report_header(config: pytest.Config) -> str | list[str] | None:
    lessons = config.stash.get(_KEY, None)
    if lessons is None:
        return None
    resolved = lessons.settings
    try:
        torch = f"torch {importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        torch = "torch not installed"
    timeout = resolved.value("timeout")
    if resolved.isolation == "off":
        why = f" because {resolved.isolation_reason}" if resolved.isolation_reason else ""
        return (
            f"lessons: NOT isolated{why}: learner code runs inside pytest ({torch}); "
            "use this for debugging, never for grading"
        )
    support = lessons.support
    if support.abi:
        boxed = f"sandbox Landlock ABI {support.abi}" + (" + seccomp" if support.seccomp else "")
    else:
        boxed = "sandbox OFF"
    lines = [
        f"lessons: learner code runs isolated ({resolved.isolation}, {boxed}, {torch}, "
        f"timeout {timeout:g} s a case)",
        "lessons: " + sandbox_line(lessons),
    ]
    if _grading(config) and not lessons.support.abi:
        lines.append(UNSANDBOXED_GRADING)
    return lines


#: Said at the start and the end of a grading run without the sandbox.
UNSANDBOXED_GRADING = (
    "lessons: WARNING: grading without a sandbox. Learner code can read the expected answers "
    "and change the course's files; run the grader as a separate user or in a container "
    "(docs/ci-grading.md, 'What the sandbox protects')."
)


def sandbox_line(lessons: LessonSession) -> str:
    """What protects the course from learner code in this run, in one line."""
    support, policy = lessons.support, lessons.policy
    if policy is None:
        return "sandbox off"
    if policy.uid is not None:
        who = f"runs as user {policy.user}"
    elif policy.user_note:
        who = f"runs as root ({policy.user_note})"
    else:
        who = "runs as you"
    if support.abi:
        kinds = ", ".join(support.protections)
        return f"the sandbox denies {kinds} outside the case; clean environment; {who}"
    return (
        f"sandbox OFF ({support.reason}): learner code can read and change what you can; "
        f"clean environment; {who}"
    )


def _courses(paths: Any) -> list[course.Course]:
    """The courses of the exercise files *paths*, each once, in order of first appearance."""
    found: list[course.Course] = []
    for path in paths:
        try:
            mine = course.find(path)
        except course.CourseError as error:
            raise pytest.UsageError(str(error)) from None
        if mine is not None and mine not in found:
            found.append(mine)
    return found


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Lessons of a course run in the order its ``course.toml`` gives (stable otherwise)."""
    files = [item.path for item in items if item.path.name == model.EXERCISE_FILE]
    courses = _courses(dict.fromkeys(files))
    if not courses:
        return
    order = summary.course_order(courses)
    first: dict[Any, int] = {}
    for index, item in enumerate(items):
        if item.path.name == model.EXERCISE_FILE:
            found = order(item.path)
            first.setdefault(found[0] if found[0] < len(courses) else item.path, index)

    def key(pair: tuple[int, pytest.Item]) -> tuple[int, int, int]:
        index, item = pair
        if item.path.name != model.EXERCISE_FILE:
            return index, 0, index
        number, position, _ = order(item.path)
        group = number if number < len(courses) else item.path
        return first[group], position, index

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if file_path.name == model.EXERCISE_FILE:
        return ExerciseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and isinstance(item, (CaseItem, BrokenExercise)):
        # Plain data on the report, so the summary also works under pytest-xdist.
        report.lessons = item.lesson_result
    if isinstance(report.longrepr, FailureText):
        crash = report.longrepr.reprcrash
        report.lessons_crash = [crash.path, crash.lineno, crash.message]


@pytest.hookimpl(hookwrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: dict[str, Any]) -> Any:
    outcome = yield
    report = outcome.get_result()
    crash = getattr(report, "lessons_crash", None)
    # pytest-xdist sends a failure's text as a string; give it back its one-line headline.
    if crash and isinstance(getattr(report, "longrepr", None), str):
        path, lineno, headline = crash
        report.longrepr = FailureText(report.longrepr, headline, path, lineno)


#: The terminal's category for a case that failed for the same reason as an earlier case of
#: its exercise: counted in the last line, not shown again in the failures and the summary.
SAME_WAY = "failed the same way"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    if report.when != "call" or not report.failed or config.option.verbose > 1:
        return None
    result = getattr(report, "lessons", None)
    lessons = config.stash.get(_KEY, None)
    if not result or not result.get("fault") or lessons is None:
        return None
    key = (str(result["path"]), str(result.get("learner", "")), str(result["fault"]))
    node, label = lessons.fault_reports.setdefault(key, (report.nodeid, str(result["label"])))
    if node == report.nodeid:
        return None
    return SAME_WAY, "F", (f"FAILED (as {label})", {"red": True})


class ResultCollector:
    """Gathers each case's result from its report, also from pytest-xdist workers, and hands
    each to pytest's JUnit XML writer as a suite-level property (see :func:`junit_property`)."""

    def __init__(self, lessons: LessonSession) -> None:
        self.lessons = lessons
        self.junit: Any = None
        self.looked = False

    def _junit(self, config: pytest.Config) -> Any:
        # pytest's JUnit writer (--junitxml) is registered without a public name; its public
        # method add_global_property is what the record_testsuite_property fixture calls.
        if not self.looked:
            self.looked = True
            self.junit = next(
                (
                    plugin
                    for plugin in config.pluginmanager.get_plugins()
                    if callable(getattr(plugin, "add_global_property", None))
                ),
                None,
            )
        return self.junit

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, "lessons", None)
        if result and report.when == "call":
            self.lessons.results.append(result)
            config = self.lessons.config
            junit = self._junit(config) if config is not None else None
            if junit is not None:
                junit.add_global_property(*junit_property(report.nodeid, result))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        junit = self._junit(session.config)
        if junit is not None and self.lessons.results:
            totals = reports.totals(self.lessons.results)
            junit.add_global_property("lessons:points", f"{totals['points']:g}")
            junit.add_global_property("lessons:max_points", f"{totals['max_points']:g}")


def junit_property(nodeid: str, result: dict[str, Any]) -> tuple[str, str]:
    """A case's grading data as a JUnit ``<property>`` of the test suite: name ``lessons:`` and
    the test's node id, value a JSON object. Properties inside a ``<testcase>`` are not valid
    for Jenkins' xUnit (junit-10.xsd) nor pytest's default ``junit_family`` (xunit2); a
    suite's ``<properties>`` is valid for both."""
    data: dict[str, Any] = {
        "exercise": result["exercise"],
        "points": result["points"],
        "max_points": result["max_points"],
    }
    if result.get("diagnosis_kind") == "watch_out":
        data["watch_out"] = result["diagnosis"]
    if result.get("learner"):
        data["learner"] = result["learner"]
    return f"lessons:{nodeid}", json.dumps(data, ensure_ascii=False, sort_keys=True)


def _grading(config: pytest.Config) -> bool:
    return bool(config.getoption("lesson_report") or config.getoption("lesson_submissions"))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if hasattr(config, "workerinput"):
        return
    lessons = config.stash.get(_KEY, None)
    if lessons is None:
        return
    results = lessons.results
    seconds = time.monotonic() - config.stash.get(_STARTED, time.monotonic())
    if _grading(config) and not results and session.exitstatus == pytest.ExitCode.OK:
        # Grading that graded nothing must not look like success.
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
    target = config.getoption("lesson_report")
    if target:
        path = Path(config.invocation_params.dir, target)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = reports.render(
            config.getoption("lesson_report_format"),
            results,
            seconds,
            config.getoption("lesson_hidden_visibility"),
        )
        path.write_text(text, encoding="utf-8")
    if lessons.submissions is not None and results:
        book = Path(config.invocation_params.dir, config.getoption("lesson_gradebook"))
        book.parent.mkdir(parents=True, exist_ok=True)
        book.write_text(reports.gradebook(results), encoding="utf-8")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary and results:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(reports.step_summary(results))


def _paths(config: pytest.Config) -> list[str]:
    """The paths this run was given, without its options (repeating `-p no:cacheprovider`
    would lose the hints it suggests opening)."""
    here = config.invocation_params.dir
    return [
        str(arg)
        for arg in config.invocation_params.args
        if not str(arg).startswith("-") and Path(here, str(arg).split("::")[0]).exists()
    ]


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if hasattr(config, "workerinput"):
        return
    lessons = config.stash.get(_KEY, None)
    if lessons is None or not lessons.results:
        return
    results = lessons.results
    if _grading(config) and not lessons.support.abi:
        terminalreporter.write_line(UNSANDBOXED_GRADING, yellow=True, bold=True)
    if lessons.submissions is not None:
        terminalreporter.write_sep("=", "lessons: the class")
        for line in reports.class_lines(results):
            terminalreporter.write_line(line)
        terminalreporter.write_line(reports.summary_text(results))
        return
    show = lessons.show
    lines = summary.render(
        results,
        show=show,
        cache=getattr(config, "cache", None),
        hints=config.getoption("lesson_hints"),
        solution=config.getoption("lesson_solution"),
        rerun=_paths(config),
        courses=_courses(Path(str(r["path"])) for r in results),
    )
    terminalreporter.write_sep("=", "lessons")
    for line in lines:
        terminalreporter.write_line(line)
    if any(r.get("hidden") for r in results) or _grading(config):
        terminalreporter.write_line(reports.summary_text(results))
