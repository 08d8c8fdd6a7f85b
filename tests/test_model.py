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


# --- [generate], watch-outs and several outputs ---------------------------------------------

SMALL = """
[exercise]
title = "Transpose"
inputs = ["m", "n"]

[[case]]
m = [[1, 2, 3], [4, 5, 6]]
n = 2
expected = [[1, 4], [2, 5], [3, 6]]
"""

GENERATE = """
[generate]
count = 3
seed = 7
values = [-2, 2]
decimals = 1
points = 2
hidden = true

[generate.axes]
rows = [2, 3]
cols = [1, 64]

[generate.inputs]
m = ["rows", "cols"]
n = "rows"
"""


def lesson(text: str, where: Path) -> model.Exercise:
    """Parse *text* as an exercise in *where*, which has a reference.py ([generate] needs one)."""
    (where / "reference.py").write_text("def solve(m, n):\n    return m\n")
    return model.parse(text, where / "exercise.toml")


def test_a_generate_table_loads_and_draws_its_cases(tmp_path: Path) -> None:
    exercise = lesson(SMALL + GENERATE, tmp_path)
    spec = exercise.generate
    assert spec is not None
    assert (spec.count, spec.seed, spec.values, spec.decimals) == (3, 7, (-2.0, 2.0), 1)
    assert (spec.points, spec.hidden) == (2.0, True)
    assert spec.axes == {"rows": (2, 3), "cols": (1, 64)}
    assert spec.inputs == {"m": ("rows", "cols"), "n": "rows"}
    generated = exercise.cases[1:]
    assert len(generated) == 3 and all(c.generated and c.hidden for c in generated)
    assert all(c.points == 2 for c in generated)
    for case in generated:
        assert case.sizes is not None and case.inputs["n"] == case.sizes["rows"]
        assert len(case.inputs["m"]) == case.sizes["rows"]


def test_generate_defaults(tmp_path: Path) -> None:
    text = SMALL + GENERATE.replace("seed = 7\nvalues = [-2, 2]\ndecimals = 1\npoints = 2\n", "")
    spec = lesson(text.replace("hidden = true\n", ""), tmp_path).generate
    assert spec is not None
    assert (spec.seed, spec.values, spec.decimals, spec.points, spec.hidden) == (
        0,
        (-1.0, 1.0),
        2,
        1.0,
        False,
    )


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("count = 3", "count = 0", "generate.count must be between 1 and 1000"),
        ("count = 3", "count = 1001", "generate.count must be between 1 and 1000"),
        ("count = 3", "count = 1000", None),
        ("count = 3", "count = 1", None),
        ("count = 3", "count = 2.0", "generate.count must be a whole number"),
        ("count = 3", "count = true", "generate.count must be a whole number"),
        ("seed = 7", 'seed = "x"', "generate.seed must be a whole number"),
        ("decimals = 1", "decimals = 11", "generate.decimals must be between 0 and 10"),
        ("decimals = 1", "decimals = -1", "generate.decimals must be between 0 and 10"),
        ("decimals = 1", "decimals = 10", None),
        ("decimals = 1", "decimals = 0", None),
        ("values = [-2, 2]", "values = [2, -2]", "generate.values must be [lowest, highest]"),
        ("values = [-2, 2]", "values = [1, 1]", None),
        ("values = [-2, 2]", "values = [1]", "generate.values must be [lowest, highest]"),
        ("values = [-2, 2]", "values = [1, 2, 3]", "generate.values must be [lowest, highest]"),
        ("values = [-2, 2]", 'values = [1, "2"]', "generate.values must be [lowest, highest]"),
        ("values = [-2, 2]", 'values = "wide"', "generate.values must be [lowest, highest]"),
        ("hidden = true", "hidden = 1", "generate.hidden must be true or false"),
        ("points = 2", "points = -1", "generate.points must not be negative"),
        ("rows = [2, 3]", "rows = [0, 3]", 'axis "rows" must be [smallest, largest]'),
        ("rows = [2, 3]", "rows = [3, 2]", 'axis "rows" must be [smallest, largest]'),
        ("cols = [1, 64]", "cols = [1, 65]", 'axis "cols" must be [smallest, largest]'),
        ("rows = [2, 3]", "rows = [2]", 'axis "rows" must be [smallest, largest]'),
        ("rows = [2, 3]", "rows = [2, 3, 4]", 'axis "rows" must be [smallest, largest]'),
        ("rows = [2, 3]", "rows = [2, 3.0]", 'axis "rows" must be [smallest, largest]'),
        ("rows = [2, 3]", 'rows = "2-3"', 'axis "rows" must be [smallest, largest]'),
        ("rows = [2, 3]", '"2rows" = [2, 3]', 'axis "2rows" must be [smallest, largest]'),
        (
            "[generate.axes]\nrows = [2, 3]\ncols = [1, 64]",
            "[generate.axes]",
            "generate.axes must be a table",
        ),
        (
            "[generate.axes]",
            "[generate.axes]\nthird = [2, 3]\nfourth = [2, 3]",
            "generate.axes: the size ranges leave no way",
        ),
        ('n = "rows"', "", 'generate.inputs lacks input "n"'),
        ('n = "rows"', 'n = "rows"\nk = "rows"', 'generate.inputs has unknown input "k"'),
        ('n = "rows"', "n = 3", "generate.inputs.n must be a list of axis names, or one axis name"),
        (
            'n = "rows"',
            "n = [1]",
            "generate.inputs.n must be a list of axis names, or one axis name",
        ),
        ('n = "rows"', 'n = "depth"', 'generate.inputs.n names unknown axis "depth"'),
        (
            'm = ["rows", "cols"]',
            'm = ["rows*depth"]',
            'generate.inputs.m names unknown axis "depth"',
        ),
        ('m = ["rows", "cols"]', 'm = ["rows * cols"]', None),
        (
            "count = 3",
            "count = 3\ncont = 4",
            'generate: unknown key "cont" (did you mean "count"?)',
        ),
    ],
)
def test_each_broken_generate_table_names_the_key(
    old: str, new: str, words: str | None, tmp_path: Path
) -> None:
    text = SMALL + GENERATE
    assert old in text
    text = text.replace(old, new, 1)
    if words is None:
        assert lesson(text, tmp_path).generate is not None
        return
    with pytest.raises(model.ExerciseError) as error:
        lesson(text, tmp_path)
    assert words in str(error.value)


def test_generate_needs_a_reference_and_axes_as_a_table(tmp_path: Path) -> None:
    assert "[generate] needs reference.py, which computes the expected answers" in str(
        problem(SMALL + GENERATE)
    )
    axes = GENERATE.replace("[generate.axes]\nrows = [2, 3]\ncols = [1, 64]\n", "")
    axes = axes.replace("hidden = true\n", "hidden = true\naxes = 3\n")
    with pytest.raises(model.ExerciseError) as error:
        lesson(SMALL + axes, tmp_path)
    assert "generate.axes must be a table of axis names, such as heads = [1, 4]" in str(error.value)


def test_generate_inputs_must_be_a_table() -> None:
    text = SMALL + GENERATE.replace('[generate.inputs]\nm = ["rows", "cols"]\nn = "rows"\n', "")
    text = text.replace("hidden = true\n", 'hidden = true\ninputs = ["m"]\n')
    assert "generate.inputs must be a table: input name = [axis names]" in str(problem(text))
    assert "generate must be a table" in str(problem("generate = 3\n" + SMALL))


WATCH = """
[[watch_out]]
id = "swap"
message = "Swap rows and columns."
detector = "layout"
"""


def test_a_watch_out_may_word_a_generic_detector() -> None:
    (watch,) = model.parse(SMALL + WATCH, PATH).watch_outs
    assert (watch.id, watch.detector, watch.mistake) == ("swap", "layout", None)
    error = problem(SMALL + WATCH.replace('"layout"', '"transpose"'))
    assert "watch_out 1.detector must be one of layout, scaled, triangle, rows, shuffled" in str(
        error
    )
    for bad in ('"Swap"', '"swap rows"', '"swap_rows"', '""', "3"):
        error = problem(SMALL + WATCH.replace('"swap"', bad))
        assert error.problem == (
            "watch_out 1.id must be lower-case letters, digits and dashes, such as "
            '"missing-transpose"'
        )
    assert model.parse(SMALL + WATCH.replace('"swap"', '"swap-2"'), PATH).watch_outs[0].id == (
        "swap-2"
    )


def test_a_boolean_case_key_must_be_true_or_false() -> None:
    assert "case 1.hidden must be true or false" in str(
        problem(SMALL.replace("n = 2", 'n = 2\nhidden = "yes"'))
    )
    assert model.parse(SMALL.replace("n = 2", "n = 2\nhidden = true"), PATH).cases[0].hidden


def test_file_keys_and_limits_name_what_they_accept() -> None:
    for bad in ('"x.txt"', "3"):
        error = problem(
            GOOD.replace('inputs = ["Q", "K", "V"]', f'inputs = ["Q", "K", "V"]\nsolution = {bad}')
        )
        assert (
            error.problem
            == "exercise.solution must be the name of a .py file in the exercise folder"
        )
    half = model.parse(
        GOOD.replace('inputs = ["Q", "K", "V"]', 'inputs = ["Q", "K", "V"]\ntimeout = 0.5'), PATH
    )
    assert half.limits["timeout"] == 0.5
