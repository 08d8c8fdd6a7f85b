"""What learners on Windows and macOS meet: files their editors save (CRLF line endings, a
byte-order mark, tabs), courses in folders with spaces and non-ASCII letters, messages that name
files the way their system writes paths, and the isolation mode each system gets by default.

These run on every system; the workflow (.github/workflows/ci.yml) runs them on Windows and
macOS runners too."""

from __future__ import annotations

import json
import ntpath
import os
import posixpath
import sys
from functools import partial
from pathlib import Path, PureWindowsPath

import pytest

from pytest_lessons.core import settings
from pytest_lessons.core.frontend import shown_path
from pytest_lessons.core.texts import Context, describe_error
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.outcome import RAISED, Frame, Outcome

from helpers import DOUBLE_TOML, dedent, said

#: A learner on Windows, whose course sits in a folder with a space, an apostrophe and an é.
HOME = PureWindowsPath(r"C:\Users\José")
SOLUTION = HOME / "José's course" / "split_heads" / "solution.py"


def test_auto_isolation_is_spawn_on_macos_and_windows_and_fork_elsewhere() -> None:
    # macOS: a forked child of a process that loaded torch (Accelerate, libobjc) may crash;
    # Windows has no fork. docs/instructors/sandbox.md, Isolation, says why and cites the reports.
    assert settings.default_isolation("darwin") == "spawn"
    assert settings.default_isolation("win32") == "spawn"
    assert settings.default_isolation("linux") == ("fork" if hasattr(os, "fork") else "spawn")
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    assert resolved.isolation == settings.default_isolation()
    if sys.platform in ("darwin", "win32"):
        assert resolved.isolation == "spawn"
    debugging = settings.resolve(lambda name: None, lambda name: None, {}, debugging=True)
    assert debugging.isolation == "off"


def test_messages_name_windows_paths_with_backslashes_relative_to_where_pytest_runs() -> None:
    show = partial(shown_path, start=HOME, flavour=ntpath)
    assert show(SOLUTION) == r"José's course\split_heads\solution.py"
    assert show(str(SOLUTION)) == r"José's course\split_heads\solution.py"
    # Another drive has no relative path: the whole path, as Windows writes it.
    assert show(PureWindowsPath(r"D:\course\solution.py")) == r"D:\course\solution.py"
    # A Windows path never shows a forward slash; a POSIX one keeps its own.
    assert shown_path("/home/jose/c/s.py", "/home/jose", posixpath) == "c/s.py"

    ctx = Context(
        slug="split_heads",
        entry="solve",
        solution=Path(str(SOLUTION)),
        inputs={"X": [[1, 2]], "heads": 2},
        timeout=10,
        memory_mb=2048,
        show=show,
    )
    raised = Outcome(
        kind=RAISED,
        error_type="ValueError",
        message="heads must divide the width",
        phase="call",
        frames=(Frame(str(SOLUTION), 7, "solve", "\traise ValueError('heads must divide')"),),
    )
    text = describe_error(raised, ctx).render()
    # The headline names the file as this system splits paths (here a Windows path is one
    # name): the traceback below is where the Windows layout shows.
    assert "solve raised ValueError at line 7 of " in text
    assert r"José's course\split_heads\solution.py, line 7, in solve" in text
    assert "raise ValueError('heads must divide')" in text and "\t" not in text
    assert "/" not in text.replace("//", "")

    mixed = Outcome(
        kind=RAISED,
        error_type="TabError",
        message="inconsistent use of tabs and spaces in indentation",
        phase="import",
        frames=(Frame(str(SOLUTION), 4, "<module>", "\t    return x"),),
    )
    text = describe_error(mixed, ctx).render()
    assert text.startswith(r"Fix the syntax error in José's course\split_heads\solution.py:")
    assert r"José's course\split_heads\solution.py, line 4" in text
    assert "TabError: inconsistent use of tabs and spaces in indentation" in text


def windows_file(text: str) -> bytes:
    """*text* as a Windows editor saves it: a byte-order mark and CRLF line endings."""
    return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8")


#: Right, indented with tabs (as some editors do).
DOUBLE_TABS = "def solve(x):\n\tif isinstance(x[0], list):\n\t\treturn [[2 * v for v in row] for row in x]\n\treturn [2 * v for v in x]\n"

#: Wrong on the first case only; the error is raised on line 6, after printing letters that
#: Windows' ANSI code page has no room for, to stdout and stderr in turn.
TRIPLE_TABS = (
    "import sys\n"
    "def solve(x):\n"
    "\tif not isinstance(x[0], list):\n"
    "\t\tprint('José → 1')\n"
    "\t\tprint('ligne ✓ 2', file=sys.stderr)\n"
    "\t\traise ValueError('not a row of rows')\n"
    "\treturn [[3 * v for v in row] for row in x]\n"
)


@pytest.mark.usefixtures("no_preload")
def test_a_course_saved_on_windows_in_a_folder_named_with_spaces_and_accents_grades(
    pytester: pytest.Pytester,
) -> None:
    course = pytester.path / "José's course"
    triple_toml = (
        dedent(DOUBLE_TOML)
        .replace("Double every number", "Triple every number")
        .replace("expected = [2, 4]", "expected = [3, 6]")
        .replace("expected = [[3, 4], [6, 8]]", "expected = [[4.5, 6], [9, 12]]")
    )
    for name, toml, solution in (
        ("double", dedent(DOUBLE_TOML), DOUBLE_TABS),
        ("triple", triple_toml, TRIPLE_TABS),
    ):
        (course / name).mkdir(parents=True)
        (course / name / "exercise.toml").write_bytes(windows_file(toml))
        (course / name / "solution.py").write_bytes(windows_file(solution))
    (course / "double" / "reference.py").write_bytes(windows_file(DOUBLE_TABS))
    (course / "course.toml").write_bytes(
        windows_file('[course]\ntitle = "Cours de José"\nlessons = ["double", "triple"]\n')
    )

    # spawn: how macOS and Windows run every case, here too.
    result = pytester.runpytest(
        course.name, "-p", "no:cacheprovider", "--lesson-report=r.json", "--lesson-isolation=spawn"
    )

    result.assert_outcomes(passed=3, failed=1)
    text = said(result)
    where = os.path.join("José's course", "triple", "solution.py")
    assert "solve raised ValueError at line 6 of solution.py: " in text
    assert f"{where}, line 6, in solve" in text
    assert "what your code printed: | José → 1 | ligne ✓ 2" in text
    assert "Traceback" not in text
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert [(r["exercise"], r["status"]) for r in report["results"]] == [
        ("double", "passed"),
        ("double", "passed"),
        ("triple", "error"),
        ("triple", "passed"),
    ]


def test_the_header_says_what_windows_job_object_holds_or_which_walls_are_missing() -> None:
    # What `pytest -v` says on Windows, built from plain data here: a Job Object around each
    # case (tests/test_windows_jobs.py shows it holding, on Windows), or none and Windows' why.
    support = sandbox.Support(0, "Landlock is a Linux feature and this is Windows")
    held = sandbox.describe(support, sandbox.Policy(abi=0, job_object="held"))
    assert held.endswith(
        "; limits: memory for the case as a whole, and every process it starts ended with it "
        "(a Job Object)"
    )
    why = "AssignProcessToJobObject failed: Access is denied. (Windows error 5)"
    missing = sandbox.describe(support, sandbox.Policy(abi=0, job_object=why))
    assert missing.endswith(
        f"; limits: no memory cap, and processes a case starts outlive it (no Job Object: {why})"
    )
    # Other systems have no Job Object, and their header says nothing of one.
    assert "Job Object" not in sandbox.describe(support, sandbox.Policy(abi=0))
    # The probe on this system: Windows (8 and later nest jobs) holds each case in one.
    expected = "held" if sys.platform == "win32" else ""
    assert sandbox.make_policy(support, {}).job_object == expected
