"""The learner's copy of a course (``--lesson-export``): no answers in it, and it grades like the
full course; ``--lesson-check`` proves the second."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from helpers import TRANSPOSE_REFERENCE, said
from helpers.course import EXERCISES, copy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Make = Callable[..., Path]

SECRET = "-7123.25"

COURSE = f"""
[exercise]
title = "Transpose"
inputs = ["m"]
points = 10

[[case]]
name = "worked example"
m = [[1, 2, 3], [4, 5, 6]]
expected = [[1, 4], [2, 5], [3, 6]]

[[case]]
hidden = true
m = [[{SECRET}, 1], [2, 3], [4, 5]]
expected = [[{SECRET}, 2, 4], [1, 3, 5]]

[generate]
count = 2
seed = 3
[generate.axes]
rows = [2, 3]
cols = [4, 5]
[generate.inputs]
m = ["rows", "cols"]

[[watch_out]]
id = "unchanged"
mistake = "unchanged"
message = "Swap rows and columns: your answer is the input as it came."

[[hint]]
title = "The idea"
text = "Row r of the answer is column r of the input."

[solution]
steps = ["zip(*m) walks the columns."]
"""

MISTAKES = "def unchanged(m):\n    return m\n"
STARTER = "def solve(m):\n    raise NotImplementedError\n"


@pytest.mark.usefixtures("no_preload")
def test_the_learner_copy_has_no_answers_and_grades_like_the_course(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        "transpose",
        toml=COURSE,
        solution=STARTER,
        reference__py=TRANSPOSE_REFERENCE,
        mistakes__py=MISTAKES,
    )
    result = pytester.runpytest("transpose", "--lesson-export=learners")
    result.assert_outcomes(passed=1)
    copy = pytester.path / "learners" / "transpose"
    assert sorted(p.name for p in copy.iterdir()) == [
        "exercise.toml",
        "mistakes.py",
        "solution.py",
    ]
    text = (copy / "exercise.toml").read_text()
    assert SECRET not in text and "hidden" not in text.replace("No reference, no hidden", "")
    assert "[generate]" not in text and "[solution]" not in text and "zip(*m)" not in text
    data = tomllib.loads(text)
    assert "points" not in data["exercise"] and "reference" not in data["exercise"]
    assert [case["name"] for case in data["case"]] == [
        "worked example",
        "drawn at random",
        "drawn at random",
    ]
    for case in data["case"]:  # frozen: the reference's answers, written out
        assert case["expected"] == [list(column) for column in zip(*case["m"])]
        assert case["points"] == 2.5  # 10 points over 4 cases in the course
    assert data["watch_out"][0]["id"] == "unchanged" and data["hint"][0]["title"] == "The idea"
    assert (copy / "solution.py").read_text() == STARTER
    # A learner grades the copy: the starter fails, a known mistake gets its watch-out.
    (copy / "solution.py").write_text(MISTAKES.replace("unchanged", "solve"))
    graded = pytester.runpytest("learners/transpose")
    graded.assert_outcomes(failed=3)
    assert said(graded).count("Watch out: Swap rows and columns") >= 1
    (copy / "solution.py").write_text(TRANSPOSE_REFERENCE)
    pytester.runpytest("learners/transpose").assert_outcomes(passed=3)


@pytest.mark.usefixtures("no_preload")
def test_lesson_check_says_when_only_hidden_cases_catch_a_mistake(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # The mistake is right on the one public case: only the hidden case catches it.
    toml = COURSE.split("[generate]")[0].replace(
        "m = [[1, 2, 3], [4, 5, 6]]\nexpected = [[1, 4], [2, 5], [3, 6]]",
        "m = [[7]]\nexpected = [[7]]",
    )
    toml += '\n[[watch_out]]\nid = "unchanged"\nmistake = "unchanged"\nmessage = "Swap them."\n'
    make_exercise(
        "transpose",
        toml=toml,
        solution=STARTER,
        reference__py=TRANSPOSE_REFERENCE,
        mistakes__py=MISTAKES,
    )
    result = pytester.runpytest("transpose", "--lesson-check")
    result.assert_outcomes(failed=1)
    assert (
        "transpose: watch-out unchanged (mistake unchanged) passes every case of the learner's "
        "copy: only hidden cases catch it, so a learner would never see it caught"
    ) in said(result)


@pytest.mark.usefixtures("no_preload")
def test_the_learner_copy_keeps_the_course_order_and_lesson_check_flags_an_unlisted_lesson(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    lesson = COURSE.split("[generate]")[0]
    for name in ("zeta", "alpha", "stray"):
        make_exercise(name, toml=lesson, solution=STARTER, reference__py=TRANSPOSE_REFERENCE)
    (pytester.path / "course.toml").write_text(
        '[course]\ntitle = "Two lessons"\nlessons = ["zeta", "alpha"]\n'
    )
    pytester.runpytest("zeta", "alpha", "--lesson-export=learners").assert_outcomes(passed=2)
    data = tomllib.loads((pytester.path / "learners" / "course.toml").read_text())
    assert data == {"course": {"title": "Two lessons", "lessons": ["zeta", "alpha"]}}
    # The learners' copy runs its lessons in the course's order, not the folders'.
    graded = pytester.runpytest("learners", "-v")
    lines = [line for line in graded.outlines if line.startswith("learners/")]
    assert [line.split("/")[1] for line in lines] == ["zeta", "alpha"]
    # A lesson folder the course does not list: a warning in a run, a problem in the check.
    run = pytester.runpytest("stray", "zeta")
    assert (
        "lessons: WARNING: add 'stray' to course.lessons in course.toml, or move the lesson out "
        "of the course's folder: it is beside the course's lessons but not in the course, so it "
        "runs outside the course's order and its progress."
    ) in said(run)
    check = pytester.runpytest("stray", "--lesson-check")
    check.assert_outcomes(failed=1)
    assert "stray: add 'stray' to course.lessons in " in said(check)


@pytest.mark.torch
def test_the_learner_copy_ships_the_courses_generate_py_and_it_runs_there(
    pytester: pytest.Pytester,
) -> None:
    copy(pytester, "greedy_decode", library=True)
    shutil.copyfile(EXERCISES / "generate.py", pytester.path / "generate.py")
    result = pytester.runpytest(
        "greedy_decode", "--lesson-export=learners", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, said(result)
    out = pytester.path / "learners"
    assert (out / "generate.py").read_bytes() == (EXERCISES / "generate.py").read_bytes()

    def generate() -> subprocess.CompletedProcess[str]:
        # As the course's README tells learners (python exercises/generate.py "once upon"),
        # on the library's forward pass: the copy holds the decoding lesson only.
        command = [sys.executable, "learners/generate.py", "once upon", "-n", "20", "--library"]
        return subprocess.run(command, cwd=pytester.path, capture_output=True, text=True)

    # The starter: it names the lesson to solve first, and the copy's folder to grade it in.
    run = generate()
    assert run.returncode == 1, run.stderr
    assert (
        "generate.py: Solve lesson greedy_decode first: learners/greedy_decode/solution.py "
        "still raises NotImplementedError. Check it with: pytest learners/greedy_decode"
    ) in run.stderr
    solved = (EXERCISES / "greedy_decode" / "reference.py").read_bytes()
    (out / "greedy_decode" / "solution.py").write_bytes(solved)
    run = generate()
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("once upon") and len(run.stdout.rstrip("\n")) == 29
    # The copy still grades, on the solution generate.py ran.
    graded = pytester.runpytest("learners", "-p", "no:cacheprovider")
    assert graded.ret == 0 and "greedy_decode passed" in said(graded), said(graded)
