"""The course library: a package beside ``course.toml`` that lessons' code imports
(``from course_lib import square``), served from the job's bytes. A lesson on the library's
parts passes whatever the learner's earlier solution does; ``parts = "own"`` runs it on the
learner's own; learner code can neither change the library nor read the course beside it;
``--lesson-export`` ships it."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path

import pytest

from pytest_lessons.core import course, model, parts, settings
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.grader import Grader
from pytest_lessons.core.results import Status
from pytest_lessons.isolation import library, sandbox
from pytest_lessons.isolation.child import run_case
from pytest_lessons.isolation.outcome import Outcome
from pytest_lessons.isolation.runner import Job, Runner

from helpers import dedent, said

COURSE = """
[course]
title = "Squares"
lessons = ["square", {lessons}]

[library]
folder = "course_lib"
parts = {{ square = "square" }}
"""

#: The library: its package imports a module of its own, as a real one does.
LIBRARY = {
    "course_lib/__init__.py": '"""Parts."""\nfrom course_lib.ops import square\n',
    "course_lib/ops.py": "def square(x):\n    return x * x\n",
}

SQUARE_TOML = """
[exercise]
title = "Square"
inputs = ["x"]

[[case]]
x = 3
expected = 9
"""

#: A lesson on the square: x² + 1, from the library's part (or the learner's own).
PLUS_ONE_TOML = """
[exercise]
title = "{title}"
inputs = ["x"]
{parts}
[[case]]
x = 3
expected = 10
"""

USES = "from course_lib import square\n\ndef solve(x):\n    return square(x) + 1\n"
#: A wrong square: the lesson on the library's parts must not depend on it.
WRONG_SQUARE = "def solve(x):\n    return x + x\n"
REFERENCE_MARK = "# the author's square: 7e2b"

WRITES = """
import course_lib
from pathlib import Path

def solve(x):
    Path(course_lib.__file__).with_name("ops.py").write_text("def square(x):\\n    return 9\\n")
    return course_lib.square(x) + 1
"""

READS = """
import course_lib
from pathlib import Path

def solve(x):
    print(Path(course_lib.__file__).parents[1].joinpath("square", "reference.py").read_text())
    return course_lib.square(x) + 1
"""


def write_course(root: Path, lessons: dict[str, tuple[str, str]]) -> None:
    """A course of the square lesson (a wrong solution, and a reference) and *lessons*:
    name -> (exercise.toml, solution.py)."""
    names = ", ".join(f'"{n}"' for n in lessons)
    files = {
        "course.toml": COURSE.format(lessons=names),
        "square/exercise.toml": SQUARE_TOML,
        "square/solution.py": WRONG_SQUARE,
        "square/reference.py": REFERENCE_MARK + "\ndef solve(x):\n    return x * x\n",
        **LIBRARY,
    }
    for name, (toml, solution) in lessons.items():
        files[f"{name}/exercise.toml"] = toml
        files[f"{name}/solution.py"] = solution
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text) if name.endswith(".toml") else text)


def plus_one(title: str, own: bool = False) -> str:
    return PLUS_ONE_TOML.format(title=title, parts='parts = "own"\n' if own else "")


def digest(folder: Path) -> str:
    return hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted(folder.rglob("*.py")) if p.is_file())
    ).hexdigest()


needs_landlock = pytest.mark.skipif(
    not sandbox.probe().abi, reason="no Landlock on this machine: the sandbox is what is tested"
)


@needs_landlock
@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_lesson_runs_on_the_librarys_parts_and_cannot_change_it_or_read_beside_it(
    pytester: pytest.Pytester, isolation: str
) -> None:
    write_course(
        pytester.path,
        {
            "uses": (plus_one("Uses"), USES),
            "writes": (plus_one("Writes"), WRITES),
            "reads": (plus_one("Reads"), READS),
        },
    )
    before = digest(pytester.path / "course_lib")
    result = pytester.runpytest(
        ".", f"--lesson-isolation={isolation}", "--lesson-sandbox=require", "-p", "no:cacheprovider"
    )
    text = said(result)
    # The learner's square is wrong, and the lesson that builds on it passes on the library's.
    assert "square 0 of 1 cases" in text and "uses passed" in text
    result.assert_outcomes(passed=1, failed=3)
    # Writing the library and reading the reference beside it are refused, each in its case.
    for lesson, file in (("writes", "course_lib/ops.py"), ("reads", "square/reference.py")):
        assert f"{lesson}: case 1 _" in text
        part = text.split(f"{lesson}: case 1 _")[1]
        assert f"Remove the code that uses {file}: that is not allowed while grading" in part
    assert REFERENCE_MARK not in text
    assert digest(pytester.path / "course_lib") == before


@pytest.mark.usefixtures("no_preload")
def test_own_parts_are_the_learners_solutions_and_a_missing_one_says_which_lesson(
    pytester: pytest.Pytester,
) -> None:
    write_course(
        pytester.path,
        {"own": (plus_one("Own", own=True), USES), "library": (plus_one("Library"), USES)},
    )
    result = pytester.runpytest(".", "-p", "no:cacheprovider")
    text = said(result)
    # x + x for the square: the own lesson gets 7, the one on the library's parts 10.
    assert "own 0 of 1 cases" in text and "library passed" in text
    assert "got 7, expected 10" in text
    (pytester.path / "square" / "solution.py").unlink()
    text = said(pytester.runpytest("own", "-p", "no:cacheprovider"))
    assert "Write lesson square first: this lesson runs on your own solutions" in text
    assert "course_lib.square is your solve of" in text and "square/solution.py" in text


@pytest.mark.usefixtures("no_preload")
def test_the_export_ships_the_library_and_the_copy_grades_on_it(
    pytester: pytest.Pytester,
) -> None:
    write_course(pytester.path, {"uses": (plus_one("Uses"), USES)})
    (pytester.path / "course_lib" / "__pycache__").mkdir()
    (pytester.path / "course_lib" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"x")
    result = pytester.runpytest("--lesson-export=out", "uses", "square", "-p", "no:cacheprovider")
    assert result.ret == 0, said(result)
    out = pytester.path / "out"
    assert sorted(p.relative_to(out).as_posix() for p in (out / "course_lib").rglob("*")) == [
        "course_lib/__init__.py",
        "course_lib/ops.py",
    ]
    course = (out / "course.toml").read_text()
    assert '[library]\nfolder = "course_lib"\nparts = { square = "square" }' in course
    copy = pytester.runpytest("out/uses", "-p", "no:cacheprovider")
    assert copy.ret == 0 and "uses passed" in said(copy)


# --- the core, with a fake runner --------------------------------------------------------


class ServingRunner(Runner):
    """Runs no process: serves each job's library in this process and calls the job's
    file's entry, as the child does, so the core's jobs are what is tested. Keeps every job."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def run(self, job: Job) -> Outcome:
        self.jobs.append(job)
        source = base64.b64encode(job.solution.read_bytes()).decode("ascii")
        found = run_case(job.request(source=source))
        return Outcome(found["kind"], answer=found.get("answer"), message=found.get("message", ""))


def grade(exercise: model.Exercise) -> tuple[list[Status], ServingRunner]:
    runner = ServingRunner()
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grader = Grader(runner, resolved, show=lambda path: Path(path).name)
    return [grader.grade(Attempt(exercise, case)).status for case in exercise.cases], runner


def test_each_job_carries_the_library_and_only_the_learners_own_parts(tmp_path: Path) -> None:
    write_course(
        tmp_path,
        {"own": (plus_one("Own", own=True), USES), "library": (plus_one("Library"), USES)},
    )
    for name, status in (("library", Status.PASSED), ("own", Status.FAILED)):
        exercise = model.load(tmp_path / name / "exercise.toml")
        statuses, runner = grade(exercise)
        assert statuses == [status]
        job = runner.jobs[0]
        assert job.library is not None and job.library.package == "course_lib"
        assert [m[0] for m in job.library.modules] == ["course_lib", "course_lib.ops"]
        own = job.library.request()["own"]
        if name == "own":
            # The learner's square.py, read as bytes beneath the course folder.
            ((part, shown, source, entry, lesson, problem),) = own
            assert (part, entry, lesson, problem) == ("square", "solve", "square", "")
            assert source == WRONG_SQUARE and shown.endswith("square/solution.py")
        else:
            assert own == []
    # The library's modules leave this process with each job: nothing is left to import.
    assert "course_lib" not in sys.modules
    assert not any(isinstance(f, library._Finder) for f in sys.meta_path)
    # The reference and the mistakes never get the learner's parts.
    exercise = model.load(tmp_path / "own" / "exercise.toml")
    assert parts.code(exercise).own == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ('folder = "nope"', "library.folder 'nope' needs an __init__.py"),
        ('folder = "course-lib"', "whose name is a Python name"),
        ('folder = "course_lib"\nparts = { square = "cube" }', "names 'cube', which is not"),
        ('folder = "course_lib"\nsize = 1', "unknown key library.size (known: folder, parts)"),
    ],
)
def test_a_broken_library_table_names_the_file_and_the_problem(
    tmp_path: Path, table: str, words: str
) -> None:
    write_course(tmp_path, {})
    text = (tmp_path / "course.toml").read_text()
    head = text.split("[library]")[0]
    (tmp_path / "course.toml").write_text(f"{head}[library]\n{table}\n")
    with pytest.raises(course.CourseError) as raised:
        course.load(tmp_path / "course.toml")
    assert str(tmp_path / "course.toml") in str(raised.value) and words in str(raised.value)
