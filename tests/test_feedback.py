"""Learner feedback: watch-outs, generic detectors through the hook, hints, the solution gate
and the progress summary."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pytest

from helpers import (
    COMBINE_HEADS,
    DOUBLE_RIGHT,
    DOUBLE_TOML,
    NO_TRANSPOSE,
    REFERENCE,
    TRANSPOSE_TOML,
    said,
)

Make = Callable[..., Path]

WATCH_OUTS = {
    "missing-transpose": (
        "reshape_without_transpose",
        "each row of your answer mixes different tokens.",
    ),
    "causal-mask": (
        "with_causal_mask",
        "leave out the causal mask (is_causal=True, or a mask you build).",
    ),
    "missing-scale": (
        "scores_not_scaled",
        "divide the scores Q @ K.T by the square root of the width",
    ),
    "softmax-over-queries": (
        "softmax_over_queries",
        "take the softmax over the last dimension (dim=-1).",
    ),
}


def as_solution(function: str) -> str:
    """A learner's solution that makes exactly the mistake *function* makes (its code copied:
    graded code cannot import the lesson's mistakes.py)."""
    return (COMBINE_HEADS / "mistakes.py").read_text() + f"\n\nsolve = {function}\n"


@pytest.mark.parametrize("watch_id", list(WATCH_OUTS))
def test_each_combine_heads_mistake_gets_its_own_watch_out_and_no_other(
    pytester: pytest.Pytester, combine_heads: Make, watch_id: str
) -> None:
    function, words = WATCH_OUTS[watch_id]
    combine_heads(as_solution(function))
    result = pytester.runpytest("combine_heads")
    assert result.ret == 1
    text = said(result).split("short test summary")[0]
    failed = len(re.findall(r"_ combine_heads: case \d", result.stdout.str()))
    assert failed >= 1
    assert text.count(f"Watch out: {words}") == failed
    for other, (_, other_words) in WATCH_OUTS.items():
        if other != watch_id:
            assert other_words not in text
    assert f"watch out: {watch_id} (case" in text


def test_the_missing_transpose_is_named_on_the_first_and_third_case(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(NO_TRANSPOSE)
    result = pytester.runpytest("combine_heads")
    result.assert_outcomes(passed=2, failed=8)  # 2 of the 4 seed cases, no generated one
    result.stdout.fnmatch_lines(
        [
            "*combine_heads: case 1 (worked example)*",
            "Watch out: each row of your answer mixes different tokens. Swap the first two dimensions",
            "*combine_heads: case 3 (two heads of width 2)*",
            "Watch out: each row of your answer mixes different tokens.",
            "*(the same mistake as case 1 (worked example); its explanation is there)",
            "*where it differs: x is outside tolerance",
            "*0  . . x x",
            "*1  x x . .",
        ]
    )
    result.stdout.fnmatch_lines(
        ["combine_heads   2 of 10 cases   watch out: missing-transpose (cases 1, 3, 5 to 10)"]
    )


def test_a_right_solution_gets_no_watch_out_and_no_hint(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(REFERENCE)
    result = pytester.runpytest("combine_heads", "--lesson-hints")
    result.assert_outcomes(passed=10)
    text = said(result)
    assert "Watch out" not in text and "Hint" not in text and "Stuck?" not in text
    result.stdout.fnmatch_lines(["combine_heads   passed", "lessons: 1/1 passed [##########]"])


SQUARE_TRANSPOSE_TOML = (
    TRANSPOSE_TOML + "\n[[case]]\nm = [[1, 2], [3, 4]]\nexpected = [[1, 3], [2, 4]]\n"
)


@pytest.mark.usefixtures("no_preload")
def test_generic_detectors_name_a_layout_mistake_with_no_authoring(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise("transpose", solution="def solve(m):\n    return m\n", toml=SQUARE_TRANSPOSE_TOML)
    result = pytester.runpytest("transpose")
    result.assert_outcomes(failed=2)
    assert (
        said(result).count("Swap rows and columns: your answer is the expected one transposed.")
        == 2
    )


@pytest.mark.usefixtures("no_preload")
def test_generic_detectors_can_be_turned_off(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise("transpose", solution="def solve(m):\n    return m\n", toml=SQUARE_TRANSPOSE_TOML)
    result = pytester.runpytest("transpose", "-p", "no:lessons.detectors")
    result.assert_outcomes(failed=2)
    assert "Swap rows and columns" not in said(result)
    assert "Return shape [3, 2]: your answer has shape [2, 3]" in said(result)


CONFTEST = """
from pytest_lessons.core.detectors import WATCH_OUT, Diagnosis

def pytest_lessons_diagnose(item, evidence):
    if evidence.got.shape == evidence.expected.shape[::-1]:
        return Diagnosis(id="rows-are-columns", headline="Watch out: lesson words here.",
                         rank=WATCH_OUT, kind="watch_out")
    return None
"""


@pytest.mark.usefixtures("no_preload")
def test_a_lessons_conftest_diagnoses_that_lesson_only(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        "transpose",
        solution="def solve(m):\n    return m\n",
        toml=SQUARE_TRANSPOSE_TOML,
        conftest__py=CONFTEST,
    )
    make_exercise("other", solution="def solve(m):\n    return m\n", toml=SQUARE_TRANSPOSE_TOML)
    result = pytester.runpytest()
    result.assert_outcomes(failed=4)
    text = said(result).split("short test summary info")[0]
    assert text.count("Watch out: lesson words here.") == 2  # case 2 repeats it in short
    assert "the same mistake as case 1" in text
    assert text.count("Swap rows and columns") == 2
    result.stdout.fnmatch_lines(["transpose*watch out: rows-are-columns (cases 1, 2)"])


@pytest.mark.usefixtures("no_preload")
def test_a_watch_out_can_word_a_generic_detector(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = (
        SQUARE_TRANSPOSE_TOML
        + '\n[[watch_out]]\nid = "same-as-input"\ndetector = "layout"\nmessage = "return the columns, not the rows."\n'
    )
    make_exercise("transpose", solution="def solve(m):\n    return m\n", toml=toml)
    result = pytester.runpytest("transpose")
    text = said(result).split("short test summary info")[0]
    assert text.count("Watch out: return the columns, not the rows.") == 2
    assert "Swap rows and columns" not in said(result)


WORDED_TOML = (
    SQUARE_TRANSPOSE_TOML
    + '\n[[watch_out]]\nid = "same-as-input"\ndetector = "layout"\n'
    + 'message = "return the columns, not the rows."\n'
)

PLUGIN_DIAGNOSES = """
from pytest_lessons import DETECTOR, WATCH_OUT, Diagnosis

def pytest_lessons_diagnose(evidence):
    return Diagnosis(id="plugins-own", headline="Plugin: {words}.", rank={rank})
"""


@pytest.mark.usefixtures("no_preload")
def test_a_plugins_detector_is_outranked_by_the_lessons_watch_out_and_wins_over_detectors(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # The built-in diagnosis is the core's own; a plugin's is ranked with it, as before.
    conftest = PLUGIN_DIAGNOSES.format(words="generic words", rank="DETECTOR")
    make_exercise("worded", solution="def solve(m):\n    return m\n", toml=WORDED_TOML)
    make_exercise("plain", solution="def solve(m):\n    return m\n", toml=SQUARE_TRANSPOSE_TOML)
    pytester.makeconftest(conftest)
    text = said(pytester.runpytest("-p", "no:randomly")).split("short test summary info")[0]
    assert text.count("Watch out: return the columns, not the rows.") == 2  # worded: the lesson's
    # plain: the plugin's detector and the built-in one tie; the plugin's came first, and wins.
    assert text.count("Plugin: generic words.") == 2
    assert "Swap rows and columns" not in text


@pytest.mark.usefixtures("no_preload")
def test_a_plugins_watch_out_comes_first_among_equals_and_the_lessons_can_be_turned_off(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise("worded", solution="def solve(m):\n    return m\n", toml=WORDED_TOML)
    pytester.makeconftest(PLUGIN_DIAGNOSES.format(words="mine", rank="WATCH_OUT"))
    text = said(pytester.runpytest("worded")).split("short test summary info")[0]
    assert "Plugin: mine." in text and "return the columns" not in text
    pytester.makeconftest("")
    off = said(pytester.runpytest("worded", "-p", "no:lessons.watch_outs"))
    assert "return the columns" not in off and "Swap rows and columns" in off


HINTED_TOML = (
    DOUBLE_TOML
    + """
[[hint]]
title = "First"
text = "Multiply."

[[hint]]
title = "Second"
text = "By two."

[[hint]]
title = "Third"
text = "Each value, v * 2."
"""
)


DELETE_AFTER_COLLECTION = """
def pytest_collection_finish(session):
    for item in session.items:
        item.path.unlink(missing_ok=True)
"""


@pytest.mark.usefixtures("no_preload")
def test_the_summary_uses_what_collection_read_and_never_parses_the_file_again(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # The file is gone by the time the summary is written: its hints come from collection.
    folder = make_exercise(solution="def solve(x):\n    return x\n", toml=HINTED_TOML)
    pytester.makeconftest(DELETE_AFTER_COLLECTION)
    first = pytester.runpytest("double")
    assert not (folder / "exercise.toml").exists()
    first.stdout.fnmatch_lines(["Stuck? `pytest double --lesson-hints` opens a hint."])
    make_exercise(solution="def solve(x):\n    return x\n", toml=HINTED_TOML)
    opened = pytester.runpytest("double", "--lesson-hints", "--lesson-solution=show-anyway")
    opened.stdout.fnmatch_lines(["Worked solution of double", "Hint 1: First", "    Multiply."])


@pytest.mark.usefixtures("no_preload")
def test_hints_open_one_per_run_and_are_remembered(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(solution="def solve(x):\n    return x\n", toml=HINTED_TOML)
    first = pytester.runpytest("double", "-p", "no:randomly", "-k", "case")
    first.stdout.fnmatch_lines(["Stuck? `pytest double --lesson-hints` opens a hint."])
    assert "Hint 1" not in first.stdout.str()

    opened = []
    for _ in range(4):
        result = pytester.runpytest("double", "--lesson-hints")
        opened.append(re.findall(r"^Hint (\d): (\w+)", result.stdout.str(), re.M))
        assert "left" not in said(result) and "remain" not in said(result)
    assert opened == [
        [("1", "First")],
        [("1", "First"), ("2", "Second")],
        [("1", "First"), ("2", "Second"), ("3", "Third")],
        [("1", "First"), ("2", "Second"), ("3", "Third")],
    ]
    result = pytester.runpytest("double", "--lesson-hints")
    result.stdout.fnmatch_lines(["Hint 2: Second", "    By two."])

    pytester.runpytest("double", "--lesson-hints=reset").stdout.fnmatch_lines(
        ["Hints for double are closed again."]
    )
    again = pytester.runpytest("double", "--lesson-hints")
    assert re.findall(r"^Hint (\d)", again.stdout.str(), re.M) == ["1"]


@pytest.mark.usefixtures("no_preload")
def test_all_hints_at_once_and_none_for_a_passed_exercise(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(solution="def solve(x):\n    return x\n", toml=HINTED_TOML)
    result = pytester.runpytest("double", "--lesson-hints=all")
    assert re.findall(r"^Hint (\d)", result.stdout.str(), re.M) == ["1", "2", "3"]
    make_exercise(solution=DOUBLE_RIGHT, toml=HINTED_TOML)
    result = pytester.runpytest("double", "--lesson-hints")
    result.assert_outcomes(passed=2)
    assert "Hint" not in result.stdout.str()


def test_the_solution_opens_only_once_passed_or_when_asked_anyway(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads()  # the stub
    result = pytester.runpytest("combine_heads", "--lesson-solution")
    text = said(result)
    assert "opens once all its cases pass" in text
    assert "Worked solution" not in text and "scaled_dot_product_attention(q, k, v)" not in text
    # show-anyway and a run without the option: tests/test_summary.py, without pytest.

    combine_heads(REFERENCE)
    result = pytester.runpytest("combine_heads", "--lesson-solution")
    text = said(result)
    assert "Worked solution of combine_heads" in text and "not passed" not in text
    assert "out = F.scaled_dot_product_attention(q, k, v)" in text

    # Passing is remembered: the solution stays open after the learner changes their code.
    combine_heads(NO_TRANSPOSE)
    result = pytester.runpytest("combine_heads", "--lesson-solution")
    assert "Worked solution of combine_heads" in said(result)


@pytest.mark.usefixtures("no_preload")
def test_progress_is_the_same_under_xdist(pytester: pytest.Pytester, make_exercise: Make) -> None:
    make_exercise("one", solution=DOUBLE_RIGHT)
    make_exercise("two", solution="def solve(x):\n    return x\n")
    make_exercise("three", solution=DOUBLE_RIGHT)
    lines = [
        "one     passed",
        "three   passed",
        "two     0 of 2 cases",
        "lessons: 2/3 passed [#######---]",
    ]
    serial = pytester.runpytest()
    serial.stdout.fnmatch_lines(lines)
    parallel = pytester.runpytest("-n", "2")
    parallel.assert_outcomes(passed=4, failed=2)
    parallel.stdout.fnmatch_lines(lines)


def test_the_seed_lesson_has_three_hints_and_a_solution() -> None:
    from pytest_lessons.core import model

    exercise = model.load(COMBINE_HEADS / "exercise.toml")
    assert len(exercise.hints) == 3
    assert [w.id for w in exercise.watch_outs if w.fit is None] == list(WATCH_OUTS)
    assert "wrong-scale" in [w.id for w in exercise.watch_outs]
    assert exercise.solution_steps
    assert [h.title for h in exercise.hints] == ["The idea", "Where to look", "Nearly there"]
    assert all(h.text.strip() for h in exercise.hints)
