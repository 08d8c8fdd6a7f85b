"""The exercise format: what loads, and what each broken file says."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_lessons import model

GOOD = """
[exercise]
title = "Combine attention heads"
inputs = ["Q", "K", "V"]

[[case]]
Q = [[[0], [0]], [[1], [1]]]
K = [[[0], [0]], [[0], [5]]]
V = [[[2], [4]], [[10], [30]]]
expected = [[3, 29.8661], [3, 29.8661]]

[[case]]
name = "tiny"
atol = 0.5
Q = [[[0]]]
K = [[[0]]]
V = [[[5]]]
expected = [[5]]
"""

PATH = Path("/lessons/demo/exercise.toml")


def test_a_valid_file_loads_with_documented_defaults() -> None:
    exercise = model.parse(GOOD, PATH)
    assert exercise.title == "Combine attention heads"
    assert exercise.inputs == ("Q", "K", "V")
    assert exercise.entry == "solve"
    assert exercise.solution == Path("/lessons/demo/solution.py")
    assert (exercise.rtol, exercise.atol) == (1e-4, 1e-4)
    assert exercise.limits == {}
    assert exercise.slug == "demo"
    first, second = exercise.cases
    assert first.label == "case 1" and first.line == 6
    assert first.inputs["V"] == [[[2], [4]], [[10], [30]]]
    assert second.label == "case 2 (tiny)" and second.line == 12
    assert (second.rtol, second.atol) == (1e-4, 0.5)


def test_optional_exercise_keys_are_read() -> None:
    text = GOOD.replace(
        'inputs = ["Q", "K", "V"]',
        'inputs = ["Q", "K", "V"]\nentry = "combine"\nsolution = "mine.py"\n'
        "rtol = 0.01\natol = 0\ntimeout = 3\nmemory = 512",
    )
    exercise = model.parse(text, PATH)
    assert exercise.entry == "combine"
    assert exercise.solution.name == "mine.py"
    assert (exercise.rtol, exercise.atol) == (0.01, 0.0)
    assert exercise.limits == {"timeout": 3.0, "memory": 512.0}
    assert exercise.cases[0].rtol == 0.01


def problem(text: str) -> model.ExerciseError:
    with pytest.raises(model.ExerciseError) as info:
        model.parse(text, PATH)
    return info.value


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("expected = [[5]]", "", 'case 2: missing "expected"'),
        (
            "expected = [[5]]",
            "expectd = [[5]]",
            'case 2: unknown key "expectd" (did you mean "expected"?)',
        ),
        ("V = [[[5]]]", "Wq = [[[5]]]", 'case 2 has unknown input "Wq" (the inputs are Q, K, V)'),
        ("V = [[[5]]]", "", 'case 2 lacks input "V"'),
        ('inputs = ["Q", "K", "V"]', 'inputs = "QKV"', "exercise.inputs must be a list of names"),
        (
            'inputs = ["Q", "K", "V"]',
            'inputs = ["Q", "K", "V"]\nrtol = "tight"',
            "exercise.rtol must be a number",
        ),
        (
            'inputs = ["Q", "K", "V"]',
            'inputs = ["Q", "K", "V"]\natol = -1',
            "exercise.atol must not be negative",
        ),
        ("atol = 0.5", "atol = -0.5", "case 2.atol must not be negative"),
        ('title = "Combine attention heads"', "", 'exercise: missing "title"'),
        (
            'title = "Combine attention heads"',
            'title = "x"\ntitel = "y"',
            'exercise: unknown key "titel" (did you mean "title"?)',
        ),
        (
            "expected = [[5]]",
            "expected = [[5], [1, 2]]",
            "case 2.expected must be a rectangular nested list of numbers",
        ),
        ("expected = [[5]]", 'expected = "five"', "case 2.expected must be a number"),
        ("expected = [[5]]", "expected = [[true]]", "case 2.expected must be"),
        (
            'inputs = ["Q", "K", "V"]',
            'inputs = ["Q", "K", "V"]\nentry = "2x"',
            "exercise.entry must be a Python name",
        ),
        (
            'inputs = ["Q", "K", "V"]',
            'inputs = ["Q", "K", "V"]\nsolution = "../x.py"',
            "exercise.solution must be a path inside the exercise folder",
        ),
        (
            'inputs = ["Q", "K", "V"]',
            'inputs = ["Q", "K", "V"]\ntimeout = 0',
            "exercise.timeout must be greater than 0",
        ),
    ],
)
def test_each_broken_file_names_the_key(old: str, new: str, words: str) -> None:
    assert old in GOOD
    error = problem(GOOD.replace(old, new, 1))
    assert words in str(error)
    assert str(error).startswith("exercise.toml")


def test_case_problems_name_the_line_of_the_case() -> None:
    error = problem(GOOD.replace("expected = [[5]]", ""))
    assert error.line == 12
    assert str(error).startswith("exercise.toml, line 12: case 2")


def test_a_toml_syntax_error_names_the_line() -> None:
    error = problem(GOOD.replace("[[case]]\nname", "[[case]\nname"))
    assert error.line == 12
    assert "is not valid TOML" in str(error)
    assert "line 12" in str(error)


def test_a_file_without_cases_says_so() -> None:
    error = problem(GOOD.split("[[case]]")[0])
    assert "no [[case]] in exercise.toml" in str(error)


def test_unknown_top_level_table_is_rejected() -> None:
    error = problem(GOOD + "\n[[hnt]]\ntitle = 'x'\n")
    assert 'top level: unknown key "hnt"' in str(error)


def test_missing_exercise_table() -> None:
    error = problem("[[case]]\nexpected = 1\n")
    assert "missing the [exercise] table" in str(error)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(model.ExerciseError, match="cannot be read"):
        model.load(tmp_path / "exercise.toml")
