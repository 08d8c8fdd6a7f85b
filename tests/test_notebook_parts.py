"""The notebook front end's parts that need no kernel: finding the course and pytest's root
folder, pytest's cache read and written without pytest, and IPython kept out of the plugin."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import notebook
from pytest_lessons.core import course as course_toml
from pytest_lessons.core import settings
from pytest_lessons.isolation.runner import Job, make_runner
from pytest_lessons.notebook import magics

from helpers import (
    DOUBLE_RIGHT,
    DOUBLE_TOML,
    ROOT,
    FakeRunner,
    alive,
    descendants,
    double,
    lesson,
    wait_until,
)

#: The course's lessons by name, as the magics list them: a lesson added changes no test here.
NAMES = sorted(p.parent.name for p in course_toml.load(ROOT / "exercises" / "course.toml").lessons)


@pytest.mark.slow
def test_the_plugin_and_a_pytest_run_never_import_ipython() -> None:
    code = (
        "import sys, pytest, pytest_lessons, pytest_lessons.plugin, pytest_lessons.notebook\n"
        "pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', 'exercises/split_heads'])\n"
        "print(sorted(m for m in ('IPython', 'ipykernel') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.rstrip().split("\n")[-1] == "[]", done.stdout + done.stderr


def test_pytest_reads_what_the_notebook_writes_in_its_cache_and_back(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        def pytest_sessionfinish(session):
            cache = session.config.cache
            print("ROOT", session.config.rootpath)
            print("GOT", cache.get("lessons/hints/from-notebook", None))
            cache.set("lessons/hints/from-pytest", {"opened": 2, "word": "é"})
        """
    )
    root, _ = notebook.pytest_root(pytester.path)
    cache = notebook.cache_of(pytester.path)
    cache.set("lessons/hints/from-notebook", 3)
    result = pytester.runpytest("-s")
    result.stdout.fnmatch_lines([f"ROOT {root}", "GOT 3"])
    assert cache.get("lessons/hints/from-pytest", None) == {"opened": 2, "word": "é"}
    assert cache.get("lessons/hints/never-set", "default") == "default"
    # The folder is pytest's own: git ignores it.
    assert (cache.folder / ".gitignore").read_text().endswith("*\n")
    with pytest.raises(ValueError, match="outside the cache"):
        cache.set("../../escape", 1)


@pytest.mark.parametrize(
    ("files", "root"),
    [
        ({"pytest.ini": "[pytest]\n"}, "."),
        ({"pyproject.toml": "[tool.pytest.ini_options]\nlesson_timeout = 3\n"}, "."),
        ({"setup.cfg": "[tool:pytest]\n"}, "."),
        ({"tox.ini": "[tox]\n", "pyproject.toml": "[project]\nname = 'x'\n"}, "."),
        ({"course/setup.cfg": "[metadata]\n", "setup.py": ""}, "."),
        ({"course/pytest.ini": "[pytest]\n", "pyproject.toml": "[tool.pytest]\n"}, "course"),
        ({"course/.pytest.toml": "", "course/pytest.ini": "[pytest]\n"}, "course"),
    ],
)
def test_the_root_folder_is_the_one_pytest_picks(
    tmp_path: Path, files: dict[str, str], root: str
) -> None:
    lesson = tmp_path / "course" / "lesson"
    lesson.mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found, _ = notebook.pytest_root(lesson)
    assert found == (tmp_path / root).resolve()


def test_lesson_settings_come_from_the_course_ini_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nlesson_timeout = 3\n")
    folder = tmp_path / "double"
    folder.mkdir()
    (folder / "exercise.toml").write_text("[exercise]\ntitle = 'x'\ninputs = ['x']\n")
    lesson = notebook.Lesson(folder / "exercise.toml", None)
    assert notebook.Lessons(environ={}).run_settings(lesson).limits({}).timeout == 3
    environ = {"PYTEST_LESSONS_TIMEOUT": "5", "PYTEST_LESSONS_ISOLATION": "off"}
    resolved = notebook.Lessons(environ=environ).run_settings(lesson)
    assert resolved.limits({}).timeout == 5
    # A cell never runs in the kernel, whatever the setting says.
    assert resolved.isolation != "off"


def test_a_lesson_is_found_by_name_in_the_nearest_course_or_by_path(tmp_path: Path) -> None:
    exercises = ROOT / "exercises"
    found = notebook.find_lesson("combine_heads", ROOT, None)
    assert found.path == exercises / "combine_heads" / "exercise.toml"
    assert found.course is not None and found.course.path == exercises / "course.toml"
    inside = notebook.find_lesson("split_heads", exercises / "combine_heads", None)
    assert inside.folder == exercises / "split_heads"
    by_path = notebook.find_lesson(str(exercises / "kv_cache_step"), tmp_path, None)
    assert by_path.folder == exercises / "kv_cache_step"
    given = notebook.find_lesson("split_heads", tmp_path, exercises)
    assert given.folder == exercises / "split_heads"
    with pytest.raises(notebook.NotebookError) as error:
        notebook.find_lesson("combine_head", ROOT, None)
    said = str(error.value)
    assert said.startswith("Name a lesson of the course, or give the path of its folder")
    assert ", ".join(NAMES[:4]) in said
    with pytest.raises(notebook.NotebookError, match=r"in .* or its parents"):
        notebook.find_lesson("combine_heads", tmp_path, None)


def test_a_kernel_reads_an_edited_course_toml_again(tmp_path: Path) -> None:
    # A kernel lives for hours: the course an author edits meanwhile is the one it grades in.
    for name in ("split_heads", "combine_heads"):
        shutil.copytree(ROOT / "exercises" / name, tmp_path / name)
    toml = tmp_path / "course.toml"
    toml.write_text('[course]\nlessons = ["split_heads"]\n', encoding="utf-8")
    first = notebook.find_lesson("split_heads", tmp_path, None).course
    assert first is not None and [p.parent.name for p in first.lessons] == ["split_heads"]
    assert notebook.find_lesson("split_heads", tmp_path, None).course is first  # read once
    toml.write_text('[course]\nlessons = ["split_heads", "combine_heads"]\n', encoding="utf-8")
    again = notebook.find_lesson("combine_heads", tmp_path, None).course
    assert again is not None
    assert [p.parent.name for p in again.lessons] == ["split_heads", "combine_heads"]
    toml.write_text("[course]\nlessons = 1\n", encoding="utf-8")
    with pytest.raises(notebook.NotebookError, match=r"course\.lessons must be a list"):
        notebook.find_lesson("split_heads", tmp_path, None)


def test_the_course_magic_takes_the_course_folder_or_its_parent(tmp_path: Path) -> None:
    lessons = notebook.Lessons(cwd=tmp_path, environ={})
    said = lessons.set_course(str(ROOT)).text()
    assert lessons.course_folder == ROOT / "exercises"
    assert said.startswith(f"lessons: the course in {ROOT / 'exercises'}: {NAMES[0]},")
    assert lessons.lesson("split_heads").folder == ROOT / "exercises" / "split_heads"
    with pytest.raises(notebook.NotebookError, match="holds no lesson"):
        lessons.set_course(str(tmp_path))
    shown = notebook.lesson_course(str(tmp_path))
    assert "holds no lesson" in repr(shown)
    magics._LESSONS = notebook.Lessons(cwd=tmp_path, environ={})
    try:
        assert repr(notebook.lesson_course("")).startswith(
            "Give the course's folder with `%lesson_course PATH`: there is no course.toml in"
        )
    finally:
        magics._LESSONS = None


def test_a_magic_without_a_lesson_says_how_to_name_one() -> None:
    assert repr(notebook.lesson_cell("", "x = 1")).startswith("Name the lesson: for example")
    assert "`%lesson_hints combine_heads`" in repr(notebook.lesson_hints(""))


def test_hint_and_solution_words_name_the_magics() -> None:
    line = "Stuck? `pytest combine_heads --lesson-hints` opens a hint."
    assert notebook.magic_words(line, "combine_heads") == (
        "Stuck? `%lesson_hints combine_heads` opens a hint."
    )
    data = json.dumps(notebook.magic_words("x `pytest a --lesson-solution=show-anyway`", "a"))
    assert "%lesson_solution a show-anyway" in data


def test_a_notebooks_lesson_cells_become_a_learners_submission(
    pytester: pytest.Pytester, make_exercise: Any, no_preload: None
) -> None:
    make_exercise("double", solution=None)
    cells = [
        {"cell_type": "markdown", "source": ["%%lesson double\n", "words"]},
        {"cell_type": "code", "source": ["%%lesson double\n", "def solve(x):\n", "    return x\n"]},
        {"cell_type": "code", "source": "%%lesson ./double/\n" + DOUBLE_RIGHT},
        {"cell_type": "code", "source": "%lesson_hints double"},
    ]
    book = pytester.path / "alice.ipynb"
    book.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    alice = pytester.path / "submissions" / "alice"
    assert notebook.main([str(book), str(alice)]) == 0
    # The last cell of a lesson is the learner's answer.
    assert (alice / "double" / "solution.py").read_text() == DOUBLE_RIGHT
    result = pytester.runpytest("double", "--lesson-submissions=submissions")
    result.assert_outcomes(passed=2)
    assert notebook.main([str(pytester.path / "missing.ipynb"), str(alice)]) == 1


def test_a_cell_is_graded_outside_the_kernel_and_says_once_that_the_sandbox_is_off(
    make_exercise: Any,
) -> None:
    folder = make_exercise("double", solution=None)
    environ = {"PYTEST_LESSONS_SANDBOX": "off", "PYTEST_LESSONS_PRELOAD": "none"}
    lessons = notebook.Lessons(cwd=folder.parent, environ=environ)
    try:
        right = lessons.grade("double", DOUBLE_RIGHT)
        wrong = lessons.grade("double", "def solve(x):\n    return x\n")
    finally:
        lessons.close()
    assert right.passed and right.points == right.max_points == 2
    said = right.text()
    assert said.startswith("double: every case passed (2 passed).")
    assert "lessons: sandbox OFF (PYTEST_LESSONS_SANDBOX=off was given)" in said
    assert said.rstrip("\n").split("\n")[-1] == "lessons: 1/1 passed [##########]"
    assert not wrong.passed and wrong.points == 0
    assert wrong.text().startswith("double: 2 failed") and "sandbox OFF" not in wrong.text()
    assert "your code  your cell" in wrong.text()
    # The last graded cell decides the lesson's state, as the last pytest run does.
    assert wrong.text().rstrip("\n").split("\n")[-1] == "lessons: 0/1 passed [----------]"
    # The same finding on both cases: the second is folded under the first.
    assert "case 2 made the same mistake as case 1 (a row)</summary>" in wrong._repr_html_()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_an_interrupted_case_leaves_no_process(mode: str, tmp_path: Path) -> None:
    """Ctrl-C (a notebook's interrupt) in the middle of a case, then abort(): the case's
    processes and the worker are gone, and the runner runs the next job afresh."""
    if not sys.platform.startswith("linux"):
        pytest.skip("processes are looked for in /proc")
    solution = tmp_path / "solution.py"
    solution.write_text("def solve(x):\n    while True:\n        pass\n")
    before = descendants(os.getpid())
    runner = make_runner(mode, preload=())
    job = Job(solution, "solve", [1], timeout=60, memory_mb=0, output_cap=1000, threads=1)

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        # Time enough for the case to start; the case itself would run for a minute.
        signal.setitimer(signal.ITIMER_REAL, 3.0)
        with pytest.raises(KeyboardInterrupt):
            runner.run(job)
        started = descendants(os.getpid()) - before
        assert started, "no process ran the case"
        runner.abort()
        assert wait_until(lambda: not alive(started), 10), "processes left after abort()"
        solution.write_text("def solve(x):\n    return x + 1\n")
        assert runner.run(dataclasses.replace(job, timeout=30)).answer == 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        runner.close()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the user is looked up only as root"
)
def test_a_user_that_does_not_exist_is_named_by_its_variable(make_exercise: Any) -> None:
    folder = make_exercise("double", solution=None)
    environ = {"PYTEST_LESSONS_SANDBOX_USER": "no-such-learner-user"}
    lessons = notebook.Lessons(cwd=folder.parent, environ=environ)
    try:
        with pytest.raises(notebook.NotebookError) as error:
            lessons.grade("double", DOUBLE_RIGHT)
    finally:
        lessons.close()
    assert str(error.value) == (
        "PYTEST_LESSONS_SANDBOX_USER: there is no user 'no-such-learner-user' on this system"
    )


def test_a_cell_that_names_no_lesson_is_refused_in_words_and_nothing_leaves_the_folder(
    tmp_path: Path,
) -> None:
    cells = [
        {"cell_type": "code", "source": "%%lesson ..\ndef solve(x):\n    return 1\n"},
        {"cell_type": "code", "source": "%%lesson solution.py\ndef solve(x):\n    return 2\n"},
        {"cell_type": "code", "source": "%%lesson .\ndef solve(x):\n    return 3\n"},
        {"cell_type": "code", "source": "%%lesson ../../x\x1b[2J\ndef solve(x):\n    return 4\n"},
        {"cell_type": "code", "source": "%%lesson exercises/double/\n" + DOUBLE_RIGHT},
    ]
    book = tmp_path / "alice.ipynb"
    book.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    submissions = tmp_path / "submissions"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_lessons.notebook", str(book), "submissions/alice"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["alice.ipynb", "submissions/alice/double/solution.py"]
    assert [p.name for p in submissions.iterdir()] == ["alice"]
    lines = done.stderr.splitlines()
    assert len(lines) == 4 and "\x1b" not in done.stderr
    assert lines[0] == (
        f"{book}: cell 1: write the lesson's name after %%lesson, such as `%%lesson "
        "combine_heads`: `..` is no lesson's name (a lesson's folder name: letters, digits, "
        "_ and -). This cell's code was not handed in."
    )
    assert "`solution.py` is no lesson's name" in lines[1] and "cell 3: " in lines[2]
    assert "`../../x\\x1b[2J` is no lesson's name" in lines[3]


def test_a_cell_grades_its_hidden_cases_last_and_tells_them_in_the_lessons_order(
    tmp_path: Path,
) -> None:
    """As under pytest: no learner code runs after a hidden case, where it could print the
    time it took; the results come back in the lesson's own order."""
    toml = DOUBLE_TOML.replace(
        "[[case]]\nx = [[1.5, 2], [3, 4]]",
        "[[case]]\nhidden = true\nx = [5, 6]\nexpected = [10, 12]\n\n[[case]]\nx = [[1.5, 2], [3, 4]]",
    )
    exercise = lesson(tmp_path, toml, **{"solution.py": DOUBLE_RIGHT})
    runner = FakeRunner({("solution.py", "solve"): double})
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    no_sandbox: Any = None  # the fake runner runs no code
    graded = notebook.grade_cells(
        runner,
        resolved,
        no_sandbox,
        lambda p: Path(p).name,
        exercise,
        exercise.folder / "solution.py",
    )
    assert [job.inputs[0] for job in runner.jobs] == [[1, 2], [[1.5, 2], [3, 4]], [5, 6]]
    assert [result.case for result, _ in graded] == [1, 2, 3]
    assert [result.hidden for result, _ in graded] == [False, True, False]
