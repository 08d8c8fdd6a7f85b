"""pytest collection nodes: an ``exercise.toml`` file and one item per case (pytest layer).

Thin glue over the grading core: reading the file is :mod:`~pytest_lessons.core.model`'s job,
grading a case :class:`~pytest_lessons.core.grader.Grader`'s, checking a lesson
:mod:`~pytest_lessons.core.authoring`'s. The items turn what they give back into pytest's outcomes
and add the ``pytest_lessons_diagnose`` hook to the core's own diagnosis. Collection parses
TOML only; it imports neither torch nor learner code.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import authoring, datafiles, export, model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.detectors import Diagnosis, Evidence, best
from pytest_lessons.core.explain import BUILT_IN, Diagnoser
from pytest_lessons.core.frontend import grader_failed
from pytest_lessons.core.record import broken_result
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll, handed_in
from pytest_lessons.core.texts import colour_map
from pytest_lessons.isolation.text import visible_name
from pytest_lessons.session import session_of


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
        lessons = session_of(self.config)
        # Out of learner code's reach, however broken the file is.
        lessons.course.add(self.path.parent)
        try:
            exercise = model.load(self.path)
        except model.ExerciseError as error:
            lessons.exercises[self.path] = None
            yield BrokenExercise.from_parent(self, name="exercise", error=error)
            return
        # The summary's hints and worked solution come from here: the file is parsed once.
        lessons.exercises[exercise.path] = exercise
        # Its input files too, wherever in the course they are.
        lessons.course.update(datafiles.folders(exercise.folder, exercise.cases))
        if lessons.runs_cases:
            lessons.runner.warm_up()
        if self.config.getoption("lesson_export"):
            yield LessonExport.from_parent(self, name="lesson-export", exercise=exercise)
            return
        if self.config.getoption("lesson_check"):
            yield LessonCheckItem.from_parent(self, name="lesson-check", exercise=exercise)
            return
        if lessons.submissions is None:
            for case in exercise.cases:
                yield CaseItem.from_parent(self, name=case.id, exercise=exercise, case=case)
            return
        # Batch grading: only each learner's solution file is taken from their folder.
        relative = exercise.solution.relative_to(exercise.folder)
        roll = lessons.roll()
        for learner in roll.members() if roll is not None else ():
            # Solution.py counts as solution.py, as on macOS and Windows.
            solution = handed_in(lessons.submissions / learner, exercise.slug / relative)
            # The node id is printed as it is (pytest -v, a failure's header): the folder
            # name shows its escape sequences and control characters, never runs them, and
            # two folders never show as one.
            shown = visible_name(learner)
            for case in exercise.cases:
                yield CaseItem.from_parent(
                    self,
                    name=f"{shown}/{case.id}",
                    exercise=exercise,
                    case=case,
                    solution=solution,
                    learner=learner,
                    folder=lessons.submissions / learner,
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


def learners(submissions: Path, shard: tuple[int, int] | None = None) -> list[str]:
    """The learners of a submissions folder: its sub-folders but version control and tool
    folders (:data:`~pytest_lessons.core.submissions.NOT_LEARNERS`), in name order (with *shard*
    (K, N), only those of the K-th of N shards)."""
    return Roll.of(submissions, shard).members()


def diagnoser(node: pytest.Item) -> Diagnoser:
    """The ``pytest_lessons_diagnose`` hook as the front end's addition to the core's built-in
    diagnosis, called through *node*'s ``ihook`` so a lesson's own ``conftest.py`` speaks for
    that lesson only."""

    def diagnose(attempt: Attempt, evidence: Evidence) -> Diagnosis | None:
        item = node if isinstance(node, CaseItem) else attempt
        found = node.ihook.pytest_lessons_diagnose(item=item, evidence=evidence, attempt=attempt)
        return best(found)

    return diagnose


def built_in(config: pytest.Config) -> frozenset[str]:
    """The parts of the core's built-in diagnosis this run keeps: each is turned off by
    blocking its plugin name, ``lessons.watch_outs`` or ``lessons.detectors`` (``-p
    no:lessons.detectors``, or ``config.pluginmanager.set_blocked``). Asked for each case, so a
    name blocked after start-up counts, as it did when the parts were hookimpls."""
    manager = config.pluginmanager
    return frozenset(part for part in BUILT_IN if not manager.is_blocked(f"lessons.{part}"))


class BrokenExercise(pytest.Item):
    """Stands for an ``exercise.toml`` that cannot be read, so the run fails and says why."""

    def __init__(self, *, error: model.ExerciseError, learner: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.learner = learner
        self.lesson_result: CaseResult | None = None

    def runtest(self) -> None:
        self.lesson_result = broken_result(self.path, self.error, self.learner)
        where = session_of(self.config).show(self.error.path)
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


class CaseItem(pytest.Item):
    """One case of an exercise: the grading core grades it; a failure is raised with the
    learner's text."""

    def __init__(
        self,
        *,
        exercise: model.Exercise,
        case: model.Case,
        solution: Path | None = None,
        learner: str = "",
        folder: Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise
        self.case = case
        self.attempt = Attempt(
            exercise, case, solution or exercise.solution, learner, folder=folder
        )
        """What is graded: the learner's file on this case."""
        self.lesson_result: CaseResult | None = None
        """What the summary and the report files need (it travels with pytest-xdist as plain
        data); set by :meth:`runtest`."""

    @property
    def learner(self) -> str:
        return self.attempt.learner

    @property
    def solution(self) -> Path:
        return self.attempt.solution

    def runtest(self) -> None:
        grader = session_of(self.config).grader
        try:
            graded = grader.grade(self.attempt, diagnoser(self), built_in(self.config))
        except Exception as error:
            # The grader's own fault; the case still has its result and its full points.
            graded = grader.failed(self.attempt, error)
            self.lesson_result = graded.result
            raise LessonFailure(graded.text, graded.result.headline) from error
        self.lesson_result = graded.result
        if not graded.passed:
            text = graded.text
            if graded.result.lesson_error and self.config.option.verbose > 1:
                # -vv is for the lesson's author: why the lesson's own code failed here.
                text += "\n  For the lesson's author (-vv):\n\n" + "".join(
                    f"  {line}\n" if line else "\n"
                    for line in graded.result.lesson_error.rstrip("\n").split("\n")
                )
            raise LessonFailure(text, graded.result.headline)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return repr_failure(self, excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line - 1 if self.case.line else 0
        # A failure's header (pytest's head_line) prints this as it is: the folder name as
        # the node id shows it, never a character a terminal would act on.
        who = f"{visible_name(self.learner)}: " if self.learner else ""
        return self.path, line, f"{who}{self.exercise.slug}: {self.case.label}"


class LessonCheckItem(pytest.Item):
    """``--lesson-check``: the authoring check of one exercise (see
    :mod:`pytest_lessons.core.authoring`)."""

    def __init__(self, *, exercise: model.Exercise, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise
        self.lesson_notes: list[str] = []
        """What the check tells the author besides problems: snapshot changes, margins."""

    def runtest(self) -> None:
        grader = session_of(self.config).grader
        exercise = self.exercise
        if self.config.getoption("lesson_regenerate"):
            try:
                self.lesson_notes += authoring.regenerate(grader, exercise)
                exercise = model.load(exercise.path)  # the check reads the new snapshots
            except (authoring.LessonProblem, model.ExerciseError) as problem:
                raise LessonFailure(str(problem)) from None
        check = authoring.LessonCheck(
            grader, exercise, diagnoser(self), committed, built_in(self.config)
        )
        problems = check.problems()
        self.lesson_notes += check.notes
        if problems:
            raise LessonFailure(authoring.check_text(self.exercise, problems))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LessonFailure):
            return repr_failure(self, excinfo, style)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{self.exercise.slug}: lesson check"


class LessonExport(pytest.Item):
    """``--lesson-export=DIR``: writes one lesson's learner copy to ``DIR/<lesson>``."""

    def __init__(self, *, exercise: model.Exercise, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise

    def runtest(self) -> None:
        exercise = self.exercise
        try:
            text, _ = authoring.learner_copy(session_of(self.config).grader, exercise)
        except authoring.LessonProblem as problem:
            raise LessonFailure(str(problem)) from None
        target = Path(self.config.invocation_params.dir, self.config.getoption("lesson_export"))
        export.write_files(target / exercise.slug, exercise, text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, LessonFailure):
            return repr_failure(self, excinfo, style)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, f"{self.exercise.slug}: learner's copy"


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
    said = grader_failed(
        "this case", excinfo.value, "Run again with -vv to see where, and tell your instructor."
    )
    return "\n".join(said) + "\n"


def committed(path: Path) -> bytes | None:
    """*path* as git has it in the last commit of its repository; None where the file is not
    in git or git is missing. The lesson check grades this starter: what learners get, not
    the author's working copy (an author who solved the lesson to try it)."""
    try:
        return subprocess.run(
            ["git", "show", f"HEAD:./{path.name}"],
            cwd=path.parent,
            capture_output=True,
            check=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
