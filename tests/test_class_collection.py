"""A class run collects the course and nothing of the submissions folder (issue 35, point 3):
whatever pytest is asked to collect, no learner's ``conftest.py``, ``__init__.py``,
``test_*.py`` or ``exercise.toml`` is collected or imported into pytest, and no learner's
``pytest.ini``, ``tox.ini`` or ``pyproject.toml`` becomes the run's configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import DOUBLE_RIGHT, DOUBLE_TOML, said

pytestmark = pytest.mark.usefixtures("no_preload")

#: What each planted file writes when it runs: none of them may.
MARK = "import pathlib\npathlib.Path({path!r}).write_text('ran')\n"

#: A learner's conftest.py that would give every case full points, were it imported.
CONFTEST = (
    MARK
    + """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""
)

WRONG = "def solve(x):\n    return x\n"


def plant(folder: Path, marks: Path) -> None:
    """A learner's folder with every file pytest could collect, import or read as its
    configuration; each that runs leaves a file in *marks*."""

    def mark(name: str) -> str:
        return MARK.format(path=str(marks / name))

    files = {
        "conftest.py": CONFTEST.format(path=str(marks / "conftest")),
        "__init__.py": mark("init"),
        "double/__init__.py": mark("lesson-init"),
        "double/conftest.py": mark("lesson-conftest"),
        "double/test_points.py": mark("test-module") + "\ndef test_points():\n    pass\n",
        "double/exercise.toml": DOUBLE_TOML.replace("expected = [2, 4]", "expected = [1, 2]"),
        "double/solution.py": WRONG,
        "alice_plugin.py": mark("plugin"),
        # As a configuration each would import alice_plugin from her folder.
        "pytest.ini": "[pytest]\npythonpath = .\naddopts = -p alice_plugin\n",
        "tox.ini": "[pytest]\npythonpath = .\naddopts = -p alice_plugin\n",
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-p alice_plugin"\n',
    }
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make(root: Path, submissions: Path, marks: Path) -> None:
    """A course of one lesson in *root*; a class in *submissions*: alice plants every file,
    bob hands in a right solution."""
    (root / "double").mkdir(parents=True)
    (root / "course.toml").write_text('[course]\nlessons = ["double"]\n')
    (root / "double" / "exercise.toml").write_text(DOUBLE_TOML)
    (root / "double" / "solution.py").write_text("def solve(x):\n    raise NotImplementedError\n")
    plant(submissions / "alice", marks)
    (submissions / "bob" / "double").mkdir(parents=True)
    (submissions / "bob" / "double" / "solution.py").write_text(DOUBLE_RIGHT)


#: Each learner's cases, as collection lists them.
ITEMS = ["alice/case-1-a-row", "alice/case-2", "bob/case-1-a-row", "bob/case-2"]


def test_nothing_in_the_submissions_folder_is_collected_or_imported_whatever_the_command_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    marks = pytester.path / "marks"
    marks.mkdir()
    inside, outside = pytester.path / "a", pytester.path / "b"
    make(inside / "course", inside / "course" / "submissions", marks)
    make(outside / "course", outside / "class", marks)  # a class kept beside its course

    # Graded from the course's folder with no lesson named: pytest walks the whole folder.
    monkeypatch.chdir(inside / "course")
    result = pytester.runpytest(
        "--lesson-submissions=submissions",
        "--lesson-show-failures",
        "-rf",
        "-p",
        "no:cacheprovider",
    )
    text = said(result)
    # Alice's wrong solution fails her cases (her conftest.py would have passed them), and
    # only hers: bob's right one passes in the same run. The configuration is the course's.
    result.assert_outcomes(passed=2, failed=2)
    failed = [line.split()[1] for line in result.stdout.lines if line.startswith("FAILED ")]
    assert failed == [f"double/exercise.toml::{item}" for item in ITEMS[:2]], text
    assert f"rootdir: {inside / 'course'}" in text and "configfile" not in text

    # Every other way to name the class and its course; collection alone would import.
    runs = [
        (inside / "course", ["--lesson-submissions=submissions", "."]),
        (inside / "course", ["--lesson-submissions", "submissions"]),
        (inside, ["--lesson-submissions=course/submissions", "course"]),
        (inside, ["--lesson-submissions", "course/submissions"]),
        (outside / "course", ["--lesson-submissions=../class", "."]),
        (outside, ["--lesson-submissions=class", "course"]),
        (outside, ["--lesson-submissions=class"]),
    ]
    for where, args in runs:
        monkeypatch.chdir(where)
        listed = pytester.runpytest(*args, "--collect-only", "-q", "-p", "no:cacheprovider")
        items = [line.split("::", 1)[1] for line in listed.stdout.lines if "::" in line]
        assert (listed.ret, items) == (0, ITEMS), (where, args, said(listed))

    # A path inside the class is refused before pytest imports a conftest.py above it.
    monkeypatch.chdir(outside / "course")
    refused = pytester.runpytest("--lesson-submissions=../class", "../class/bob")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "Name the course, not a folder inside --lesson-submissions" in refused.stderr.str()
    # So is a class folder named test* with a conftest.py of its own, which pytest would
    # import for the course's path beside it.
    (outside / "course" / "test_class").mkdir()
    (outside / "course" / "test_class" / "conftest.py").write_text(
        MARK.format(path=str(marks / "test-folder"))
    )
    refused = pytester.runpytest("--lesson-submissions=test_class", "--collect-only")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "or give the folder a name that does not start with 'test'" in refused.stderr.str()
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_classmates_hard_link_blames_neither_learner_and_a_link_out_of_the_class_is_refused(
    pytester: pytest.Pytester,
) -> None:
    """A red team's archive, unpacked into alice's folder without a filter, made bob's
    solution.py a name of its own (a hard link): bob was told to hand in his file itself,
    not a link. A file whose every name is in the class is now the class's unpacking, and
    both learners are told to ask the instructor; a link to a file outside the class (the
    course's own) is still its learner's to undo."""
    root, submissions = pytester.path / "course", pytester.path / "class"
    make(root, submissions, pytester.path)
    (submissions / "alice" / "double" / "solution.py").write_text(DOUBLE_RIGHT)
    bob = submissions / "bob" / "double" / "solution.py"
    os.link(bob, submissions / "alice" / "double" / "decoy")
    (submissions / "carol" / "double").mkdir(parents=True)
    os.link(root / "double" / "solution.py", submissions / "carol" / "double" / "solution.py")
    result = pytester.runpytest(
        "course/double",
        "--lesson-submissions=class",
        "--lesson-gradebook=grades.csv",
        "--lesson-show-failures",
        "-rf",
        "-p",
        "no:cacheprovider",
    )
    text = " ".join(said(result).split())
    book = sorted((pytester.path / "grades.csv").read_text().splitlines()[1:])
    assert book == ["alice,double,2,2,", "bob,double,0,2,", "carol,double,0,2,"], text
    assert (
        "Ask your instructor to unpack the class's files again: class/bob/double/solution.py "
        "is one file with a file in another learner's folder" in text
    )
    assert "Hand in class/bob/double/solution.py itself" not in text
    assert "Hand in class/carol/double/solution.py itself, not a link: it is a hard link" in text
