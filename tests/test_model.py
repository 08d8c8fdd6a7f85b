"""The exercise format: what loads, and what each broken file says."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_lessons.core import initial, model

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
    assert exercise.preload == ()
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
        "rtol = 0.01\natol = 0\ntimeout = 3\nmemory = 512\n"
        'preload = ["torch._dynamo", "sympy"]',
    )
    exercise = model.parse(text, PATH)
    assert exercise.preload == ("torch._dynamo", "sympy")
    assert exercise.entry == "combine"
    assert exercise.solution.name == "mine.py"
    assert (exercise.rtol, exercise.atol) == (0.01, 0.0)
    assert exercise.limits == {"timeout": 3.0, "memory": 512.0}
    assert exercise.cases[0].rtol == 0.01


def problem(text: str) -> model.ExerciseError:
    """The error *text* raises; what the author reads begins with the file's name."""
    with pytest.raises(model.ExerciseError) as info:
        model.parse(text, PATH)
    assert str(info.value).startswith("exercise.toml")
    assert info.value.path == PATH
    return info.value


# A case's value problems (a negative tolerance, a ragged or non-numeric expected) are in
# test_a_value_problem_in_a_case_names_the_cases_line, with their exact words and line.
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
        ('title = "Combine attention heads"', "", 'exercise: missing "title"'),
        (
            'title = "Combine attention heads"',
            'title = "x"\ntitel = "y"',
            'exercise: unknown key "titel" (did you mean "title"?)',
        ),
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
        *(
            (
                'inputs = ["Q", "K", "V"]',
                f'inputs = ["Q", "K", "V"]\npreload = {value}',
                'exercise.preload must be a list of module names, such as ["torch._dynamo"]',
            )
            for value in (
                '"torch._dynamo"',
                '["torch.2x"]',
                "[1]",
                '["torch", 1]',
                '["torch..nn"]',
                '["tor ch"]',
            )
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


def lesson_problem(text: str, where: Path) -> model.ExerciseError:
    """The error *text* raises as an exercise in *where*, named after its file."""
    with pytest.raises(model.ExerciseError) as info:
        lesson(text, where)
    assert str(info.value).startswith("exercise.toml")
    assert info.value.path == where / "exercise.toml"
    return info.value


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


VALUES = "generate.values must be [lowest, highest], two numbers in order"
AXES = "must be [smallest, largest]: whole sizes from 1 to 64, in order"


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
        ("values = [-2, 2]", "values = [2, -2]", VALUES),
        ("values = [-2, 2]", "values = [1, 1]", None),
        ("values = [-2, 2]", "values = [1]", VALUES),
        ("values = [-2, 2]", "values = [1, 2, 3]", VALUES),
        ("values = [-2, 2]", 'values = [1, "2"]', VALUES),
        ("values = [-2, 2]", 'values = "wide"', VALUES),
        ("hidden = true", "hidden = 1", "generate.hidden must be true or false"),
        ("points = 2", "points = -1", "generate.points must not be negative"),
        ("rows = [2, 3]", "rows = [0, 3]", f'generate.axes axis "rows" {AXES}'),
        ("rows = [2, 3]", "rows = [3, 2]", f'generate.axes axis "rows" {AXES}'),
        ("cols = [1, 64]", "cols = [1, 65]", f'generate.axes axis "cols" {AXES}'),
        ("rows = [2, 3]", "rows = [2]", f'generate.axes axis "rows" {AXES}'),
        ("rows = [2, 3]", "rows = [2, 3, 4]", f'generate.axes axis "rows" {AXES}'),
        ("rows = [2, 3]", "rows = [2, 3.0]", f'generate.axes axis "rows" {AXES}'),
        ("rows = [2, 3]", 'rows = "2-3"', f'generate.axes axis "rows" {AXES}'),
        ("rows = [2, 3]", '"2rows" = [2, 3]', f'generate.axes axis "2rows" {AXES}'),
        (
            "[generate.axes]\nrows = [2, 3]\ncols = [1, 64]",
            "[generate.axes]",
            "generate.axes must be a table of axis names, such as heads = [1, 4]",
        ),
        (
            "[generate.axes]",
            "[generate.axes]\nthird = [2, 3]\nfourth = [2, 3]",
            "generate.axes: the size ranges leave no way to give every axis its own size",
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
    assert lesson_problem(text, tmp_path).problem == words


def test_generate_needs_a_reference_and_axes_as_a_table(tmp_path: Path) -> None:
    assert "[generate] needs reference.py, which computes the expected answers" in str(
        problem(SMALL + GENERATE)
    )
    axes = GENERATE.replace("[generate.axes]\nrows = [2, 3]\ncols = [1, 64]\n", "")
    axes = axes.replace("hidden = true\n", "hidden = true\naxes = 3\n")
    assert lesson_problem(SMALL + axes, tmp_path).problem == (
        "generate.axes must be a table of axis names, such as heads = [1, 4]"
    )


def test_generate_inputs_must_be_a_table() -> None:
    text = SMALL + GENERATE.replace('[generate.inputs]\nm = ["rows", "cols"]\nn = "rows"\n', "")
    text = text.replace("hidden = true\n", 'hidden = true\ninputs = ["m"]\n')
    assert problem(text).problem == "generate.inputs must be a table: input name = [axis names]"
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
    assert (
        "watch_out 1.detector must be one of layout, offset, scaled, triangle, rows, shuffled"
        in str(error)
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


# --- what an author and a learner see: names, ids, lines and each refusal's words ----------


def test_case_labels_and_ids_name_the_case_the_way_a_learner_reads_it() -> None:
    plain = model.Case(1, {}, 1, 0.0, 0.0)
    named = model.Case(2, {}, 1, 0.0, 0.0, name="Worked example!")
    hidden = model.Case(3, {}, 1, 0.0, 0.0, name="the trick", hidden=True)
    generated = model.Case(4, {}, None, 0.0, 0.0, generated=True)
    assert [c.label for c in (plain, named, hidden, generated)] == [
        "case 1",
        "case 2 (Worked example!)",
        "hidden case 3",
        "case 4 (generated)",
    ]
    assert [c.id for c in (plain, named, hidden, generated)] == [
        "case-1",
        "case-2-worked-example",
        "case-3",
        "generated-4",
    ]
    # Generated and hidden: hidden wins in the label, the id stays the generated one.
    both = model.Case(5, {}, None, 0.0, 0.0, hidden=True, generated=True)
    assert (both.label, both.id) == ("hidden case 5", "generated-5")
    # A name with nothing an id can carry leaves the number alone.
    assert model.Case(6, {}, 1, 0.0, 0.0, name="???").id == "case-6"


def test_a_long_case_name_is_cut_at_a_dash_within_forty_characters() -> None:
    words = "one two three four five six seven eight nine ten"
    case = model.Case(1, {}, 1, 0.0, 0.0, name=words)
    assert case.id == "case-1-one-two-three-four-five-six-seven-eight"
    exact = "a" * 36 + " bcd efg"  # "aaa...-bcd" is 40 characters: kept whole
    assert model.Case(1, {}, 1, 0.0, 0.0, name=exact).id == "case-1-" + "a" * 36 + "-bcd"
    # One long word has no dash to cut at: it is cut at the limit itself.
    assert model.Case(1, {}, 1, 0.0, 0.0, name="x" * 50).id == "case-1-" + "x" * 40
    assert model.Case(1, {}, 1, 0.0, 0.0, name="x" * 40).id == "case-1-" + "x" * 40


def test_an_error_without_a_line_names_the_file_only() -> None:
    error = model.ExerciseError(PATH, "something is wrong")
    assert str(error) == "exercise.toml: something is wrong"
    assert (error.path, error.problem, error.line, error.args) == (
        PATH,
        "something is wrong",
        None,
        ("something is wrong",),
    )
    assert str(model.ExerciseError(PATH, "x", 3)) == "exercise.toml, line 3: x"


def test_exercise_points_scale_the_cases_and_a_file_says_where_it_is() -> None:
    text = GOOD.replace('inputs = ["Q", "K", "V"]', 'inputs = ["Q", "K", "V"]\npoints = 10')
    text = text.replace('name = "tiny"', 'name = "tiny"\npoints = 3')
    exercise = model.parse(text, PATH)
    assert [c.points for c in exercise.cases] == [2.5, 7.5]
    assert exercise.points == 10
    assert exercise.folder == Path("/lessons/demo")
    assert exercise.mistakes == Path("/lessons/demo/mistakes.py")
    assert exercise.reference == Path("/lessons/demo/reference.py")
    unscaled = model.parse(GOOD.replace('name = "tiny"', 'name = "tiny"\npoints = 3'), PATH)
    assert [c.points for c in unscaled.cases] == [1.0, 3.0] and unscaled.points == 4
    worthless = text.replace("points = 3", "points = 0").replace(
        "V = [[[2], [4]], [[10], [30]]]", "V = [[[2], [4]], [[10], [30]]]\npoints = 0"
    )
    assert problem(worthless).problem == (
        "exercise.points is set, but every case is worth 0 points"
    )


def test_hints_and_solution_steps_are_read_in_order_without_surrounding_space() -> None:
    text = (
        GOOD
        + '\n[[hint]]\ntitle = " Shapes "\ntext = """\nLook at the shapes.\n"""\n'
        + '\n[[hint]]\ntitle = "Order"\ntext = "Mind the order."\n'
        + '\n[solution]\nsteps = ["  first  ", "second\\n"]\n'
    )
    exercise = model.parse(text, PATH)
    assert exercise.hints == (
        model.Hint("Shapes", "Look at the shapes."),
        model.Hint("Order", "Mind the order."),
    )
    assert exercise.solution_steps == ("first", "second")
    assert model.parse(GOOD, PATH).hints == () and model.parse(GOOD, PATH).solution_steps == ()
    assert problem(GOOD + "\n[[hint]]\ntitle = 'x'\n").problem == 'hint 1: missing "text"'
    assert problem("hint = 3\n" + GOOD).problem == "hint must be written as [[hint]] tables"
    assert problem(GOOD + "\n[solution]\nsteps = [1]\n").problem == (
        "solution.steps must be a list of strings"
    )
    assert problem(GOOD + "\n[solution]\nsteps = 'x'\n").problem == (
        "solution.steps must be a list of strings"
    )
    assert problem("solution = 3\n" + GOOD).problem == "solution must be a table"


def test_a_top_level_case_that_is_not_an_array_of_tables_is_refused() -> None:
    text = GOOD.split("[[case]]")[0].replace("[exercise]", "case = 3\n[exercise]")
    assert problem(text).problem == "case must be written as [[case]] tables"
    text = GOOD.split("[[case]]")[0].replace("[exercise]", "case = [3]\n[exercise]")
    assert problem(text).problem == "case 1 must be a table"
    assert problem("exercise = 3\n[[case]]\nexpected = 1\n").problem == ("exercise must be a table")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("[]", "exercise.inputs must name at least one input"),
        ('["Q", "Q"]', "exercise.inputs must not name an input twice"),
        ('["Q", "2K"]', 'exercise.inputs must be a list of names, such as ["Q", "K", "V"]'),
        ('["Q", 3]', 'exercise.inputs must be a list of names, such as ["Q", "K", "V"]'),
    ],
)
def test_input_names_must_be_distinct_python_names(value: str, words: str) -> None:
    assert problem(GOOD.replace('["Q", "K", "V"]', value, 1)).problem == words


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("rtol = true", "exercise.rtol must be a number"),
        ("rtol = nan", "exercise.rtol must be a number"),
        ("rtol = inf", "exercise.rtol must be a number"),
        ("rtol = 0", None),
        ("atol = 0.0", None),
        ("memory = -1", "exercise.memory must be greater than 0"),
        ("memory = 0.001", None),
        ("points = 0", "exercise.points must be greater than 0"),
        ('points = "ten"', "exercise.points must be a number"),
        ("title = 3", "exercise.title must be a string"),
        ("task = 3", "exercise.task must be a string"),
        ('entry = "solve-it"', 'exercise.entry must be a Python name such as "solve"'),
        ("entry = 3", 'exercise.entry must be a Python name such as "solve"'),
        ('entry = "_x9"', None),
        (
            'solution = "/abs/mine.py"',
            "exercise.solution must be a path inside the exercise folder",
        ),
        (
            'solution = "sub/../../x.py"',
            "exercise.solution must be a path inside the exercise folder",
        ),
        ('solution = "sub/mine.py"', None),
        ('reference = "ref.txt"', "exercise.reference must be the name of a .py file"),
        ('mistakes = "../m.py"', "exercise.mistakes must be a path inside the exercise folder"),
        ('outputs = "ab"', 'exercise.outputs must be a list of names, such as ["Q", "K", "V"]'),
    ],
)
def test_each_exercise_key_names_what_it_accepts(line: str, words: str | None) -> None:
    key = line.split(" =")[0]
    text = GOOD
    if key == "title":
        text = text.replace('title = "Combine attention heads"\n', "")
    text = text.replace('inputs = ["Q", "K", "V"]', f'inputs = ["Q", "K", "V"]\n{line}', 1)
    if words is None:
        model.parse(text, PATH)
        return
    assert problem(text).problem.startswith(words)


def test_a_case_key_close_to_a_known_one_is_called_a_typo_and_others_unknown_inputs() -> None:
    # "nme" is close enough to "name" to be a typo; "q" is not close to any key.
    assert problem(GOOD.replace('name = "tiny"', 'nme = "tiny"')).problem == (
        'case 2: unknown key "nme" (did you mean "name"?)'
    )
    assert problem(GOOD.replace('name = "tiny"', "q = 1")).problem == (
        'case 2 has unknown input "q" (the inputs are Q, K, V)'
    )
    # Far from every key: no suggestion at the top level either.
    assert problem(GOOD + "\n[zzzz]\n").problem == 'top level: unknown key "zzzz"'


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("{ a = 1 }", "case 2.V must be a number, a string, a boolean or a list of them"),
        ("[[1], { a = 1 }]", "case 2.V must be a number, a string, a boolean or a list of them"),
        ("1979-05-27", "case 2.V must be a number, a string, a boolean or a list of them"),
        ('[true, "x", 1.5, [2]]', None),
        ('"text"', None),
    ],
)
def test_inputs_are_plain_values(value: str, words: str | None) -> None:
    text = GOOD.replace("V = [[[5]]]", f"V = {value}")
    if words is None:
        assert model.parse(text, PATH).cases[1].inputs["V"] is not None
        return
    error = problem(text)
    assert error.problem == words + " (not a table or a date)"
    assert error.line == 12


SEVERAL = """
[exercise]
title = "Split"
inputs = ["x"]
outputs = ["low", "high"]

[[case]]
x = [1, 2]
expected = { low = 1, high = [2] }
"""


def test_several_outputs_are_read_and_each_checked() -> None:
    exercise = model.parse(SEVERAL, PATH)
    assert exercise.outputs == ("low", "high")
    assert exercise.cases[0].expected == {"low": 1, "high": [2]}
    assert model.parse(GOOD, PATH).outputs == ()
    for expected, words in [
        ("[1, 2]", "case 1.expected must be a table of the outputs: { low = ..., high = ... }"),
        ("{ low = 1 }", 'case 1.expected lacks output "high"'),
        ("{ low = 1, high = 2, mid = 3 }", 'case 1.expected has unknown output "mid"'),
        ('{ low = 1, high = "x" }', "case 1.expected.high must be a number or a nested list"),
        ("{ low = [[1], [1, 2]], high = 2 }", "case 1.expected.low must be a rectangular"),
    ]:
        error = problem(SEVERAL.replace("{ low = 1, high = [2] }", expected))
        assert error.problem.startswith(words), error.problem
        assert error.line == 7


def test_watch_outs_are_read_and_their_problems_named(tmp_path: Path) -> None:
    (tmp_path / "mistakes.py").write_text("def swap(m, n):\n    return m\n")
    where = tmp_path / "exercise.toml"
    text = SMALL + WATCH.replace('detector = "layout"', 'mistake = "swap"')
    (watch,) = model.parse(text, where).watch_outs
    assert (watch.id, watch.message, watch.mistake, watch.detector) == (
        "swap",
        "Swap rows and columns.",
        "swap",
        None,
    )
    assert (watch.fit, watch.right, watch.named) == (None, None, ())
    # Without mistakes.py a named mistake function cannot run.
    assert problem(text).problem == (
        "a watch_out names a mistake function, but mistakes.py is missing"
    )
    twice = SMALL + WATCH + WATCH.replace('"layout"', '"rows"') + WATCH.replace("swap", "b")
    assert problem(twice).problem == 'watch_out id "swap" is used twice'
    assert problem("watch_out = 1\n" + SMALL).problem == (
        "watch_out must be written as [[watch_out]] tables"
    )
    assert problem(SMALL + WATCH.replace('message = "Swap rows and columns."\n', "")).problem == (
        'watch_out 1: missing "message"'
    )


FITTED = """
[[watch_out]]
id = "wrong-scale"
mistake = "scaled_by"
fit = [0.5, 50]
right = "sqrt(cols)"
named = { "1" = "not scaled at all", "rows*cols" = "the size" }
message = "Divide by {right}, not {fitted}."
"""


def fitted_lesson(text: str, where: Path) -> model.Exercise:
    (where / "mistakes.py").write_text("def scaled_by(m, n, s):\n    return m\n")
    return lesson(text, where)


def test_a_fitted_watch_out_is_read(tmp_path: Path) -> None:
    exercise = fitted_lesson(SMALL + GENERATE + FITTED, tmp_path)
    (watch,) = exercise.watch_outs
    assert watch.fit == (0.5, 50.0) and isinstance(watch.fit[0], float)
    assert watch.right == "sqrt(cols)"
    assert watch.named == (("1", "not scaled at all"), ("rows*cols", "the size"))
    assert watch.message == "Divide by {right}, not {fitted}."
    # Without [generate] the sizes are unknown: the names are not checked.
    (watch,) = fitted_lesson(SMALL + FITTED.replace("cols", "depth"), tmp_path).watch_outs
    assert watch.right == "sqrt(depth)"


SCALE = 'watch_out "wrong-scale"'


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("fit = [0.5, 50]\n", "", f"{SCALE}: right and named need fit = [lowest, highest]"),
        (
            'fit = [0.5, 50]\nright = "sqrt(cols)"\n',
            "",
            f"{SCALE}: right and named need fit = [lowest, highest]",
        ),
        ('mistake = "scaled_by"\n', "", f"{SCALE}: fit needs a mistake function to fit"),
        (
            "fit = [0.5, 50]",
            "fit = [0, 50]",
            f"{SCALE}.fit must be [lowest, highest], both above 0",
        ),
        (
            "fit = [0.5, 50]",
            "fit = [-1, 50]",
            f"{SCALE}.fit must be [lowest, highest], both above 0",
        ),
        (
            "fit = [0.5, 50]",
            "fit = [50, 0.5]",
            "watch_out 1.fit must be [lowest, highest], two numbers in order",
        ),
        (
            'right = "sqrt(cols)"',
            'right = "sqrt(depth)"',
            f'{SCALE}: "sqrt(depth)" names "depth", which is not an axis of [generate.axes]',
        ),
        (
            '"rows*cols" = "the size"',
            '"rows*width" = "the size"',
            f'{SCALE}: "rows*width" names "width", which is not an axis of [generate.axes]',
        ),
        (
            'right = "sqrt(cols)"',
            'right = "sqrt(cols"',
            f'{SCALE}: "sqrt(cols" is not an expression such as sqrt(heads*width) or 1/sqrt(width): the ( at position 5 is never closed',
        ),
        (
            '"1" = "not scaled at all"',
            '"1" = 1',
            'watch_out 1.named must be a table of expression = "words"',
        ),
    ],
)
def test_each_broken_fitted_watch_out_names_its_problem(
    old: str, new: str, words: str, tmp_path: Path
) -> None:
    text = SMALL + GENERATE + FITTED
    assert old in text
    (tmp_path / "mistakes.py").write_text("def scaled_by(m, n, s):\n    return m\n")
    assert lesson_problem(text.replace(old, new, 1), tmp_path).problem == words


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            "seed = 7",
            "seed = 7\nranges = 3",
            "generate.ranges must be a table of input name = [lowest, highest]",
        ),
        (
            "seed = 7",
            "seed = 7\nranges = { m = [2, 1] }",
            "generate.ranges must be a table of input name = [lowest, highest]",
        ),
        ("seed = 7", "seed = 7\nranges = { z = [0, 1] }", 'generate.ranges: unknown key "z"'),
        (
            "seed = 7",
            "seed = 7\nranges = { mm = [0, 1] }",
            'generate.ranges: unknown key "mm" (did you mean "m"?)',
        ),
        (
            "seed = 7",
            "seed = 7\nranges = { n = [0, 1] }",
            "generate.ranges.n: this input is an axis size, drawn from its axis",
        ),
    ],
)
def test_generate_ranges_name_their_problem(old: str, new: str, words: str, tmp_path: Path) -> None:
    assert lesson_problem((SMALL + GENERATE).replace(old, new, 1), tmp_path).problem == words


def test_generate_ranges_and_points_are_read_as_floats(tmp_path: Path) -> None:
    text = (SMALL + GENERATE).replace("seed = 7", "seed = 7\nranges = { m = [0, 3] }")
    exercise = lesson(text, tmp_path)
    spec = exercise.generate
    assert spec is not None and spec.ranges == {"m": (0.0, 3.0)}
    assert lesson(SMALL + GENERATE, tmp_path).generate.ranges == {}  # type: ignore[union-attr]
    generated = exercise.cases[1]
    assert (generated.rtol, generated.atol) == (1e-4, 1e-4)
    assert generated.expected is None and generated.number == 2
    # An IDE jumps to the [generate] table a case was drawn from.
    assert generated.line == (SMALL + GENERATE).splitlines().index("[generate]") + 1
    assert generated.id == "generated-2" and generated.label == "hidden case 2"


def test_a_generated_exercise_needs_no_written_case(tmp_path: Path) -> None:
    text = SMALL.split("[[case]]")[0] + GENERATE
    exercise = lesson(text, tmp_path)
    assert [c.number for c in exercise.cases] == [1, 2, 3]
    assert exercise.points == 6


def test_an_unknown_key_is_found_on_its_own_line() -> None:
    error = problem(GOOD.replace('name = "tiny"', 'name = "tiny"\nexpectd = 1'))
    assert error.line == 14
    assert str(error).startswith("exercise.toml, line 14: case 2: unknown key")
    error = problem(GOOD.replace('title = "C', 'titel = "x"\ntitle = "C'))
    assert error.line == 3 and error.problem.startswith('exercise: unknown key "titel"')
    # A key of another table with the same name is not taken for the wrong one.
    error = problem(GOOD.replace("V = [[[5]]]", ""))
    assert error.line == 12 and error.problem == 'case 2 lacks input "V"'


def test_a_key_line_is_searched_for_in_the_errors_own_table_only() -> None:
    # case 1 lacks "V", and case 2 has a V: the error stays on case 1's header.
    text = GOOD.replace("V = [[[2], [4]], [[10], [30]]]\n", "", 1)
    error = problem(text)
    assert error.problem == 'case 1 lacks input "V"' and error.line == 6


@pytest.mark.parametrize(
    ("broken", "line"),
    [
        # An array left open on line 8: the parser stops on the next key, line 9.
        ("Q = [[[0], [0]], [[1], [1]]]", 7),
        ("K = [[[0], [0]], [[0], [5]]]", 8),
    ],
)
def test_an_unclosed_array_names_the_line_where_the_bracket_is_missing(
    broken: str, line: int
) -> None:
    error = problem(GOOD.replace(broken, broken[:-1], 1))
    assert error.line == line, str(error)
    assert "is not valid TOML" in error.problem and "(at line" not in error.problem


def test_brackets_count_outside_strings_and_comments() -> None:
    assert model._brackets("x = [1, \"[\", ']', [2]  # ]]") == 1
    assert model._brackets("x = [[1]]") == 0
    assert model._brackets("]") == -1
    assert model._brackets('s = "a\'b" # [') == 0


def test_numeric_array_problems_are_named() -> None:
    assert model.numeric_array_problem(1) is None and model.numeric_array_problem(2.5) is None
    assert model.numeric_array_problem([[1, 2], [3, 4]]) is None
    assert model.numeric_array_problem(True) == (
        "must be a number or a nested list of numbers, not true/false"
    )
    assert model.numeric_array_problem("x") == "must be a number or a nested list of numbers"
    assert model.numeric_array_problem({"a": 1}) == "must be a number or a nested list of numbers"
    # An empty row next to a row of one: two lengths, 0 and 1.
    assert model.numeric_array_problem([[0], []]) == model.numeric_array_problem([[1], [2, 3]])
    assert model.numeric_array_problem([[], []]) is None
    assert model.numeric_array_problem([[1], [2, 3]]) == (
        "must be a rectangular nested list of numbers (every row the same length)"
    )


def test_a_case_name_becomes_an_id_cut_at_the_last_dash_before_forty_characters() -> None:
    def slug(name: str) -> str:
        return model.Case(1, {}, 1, 0.0, 0.0, name=name).id.removeprefix("case-1-")

    assert slug("a" * 36 + " bcd") == "a" * 36 + "-bcd"  # exactly 40: kept whole
    assert slug("x" * 41 + " y") == "x" * 40  # the dash at 41 is past the limit
    assert slug("a " + "b" * 50) == "a"  # the only dash, right after the first letter
    assert slug("-- Tiny, tidy! --") == "tiny-tidy"


def test_an_axis_may_have_one_size(tmp_path: Path) -> None:
    text = (SMALL + GENERATE).replace("rows = [2, 3]", "rows = [2, 2]")
    spec = lesson(text, tmp_path).generate
    assert spec is not None and spec.axes["rows"] == (2, 2)


def test_a_top_level_unknown_key_on_the_first_line_is_found_there() -> None:
    error = problem("hnt = 1\n" + GOOD)
    assert error.problem == 'top level: unknown key "hnt" (did you mean "hint"?)'
    assert error.line == 1


def test_a_key_on_the_last_line_is_found_there() -> None:
    text = GOOD.rstrip("\n") + "\nnme = 1"
    error = problem(text)
    assert error.problem == 'case 2: unknown key "nme" (did you mean "name"?)'
    assert error.line == len(text.splitlines())


def test_a_key_line_stops_at_an_indented_table_header() -> None:
    text = GOOD.replace("V = [[[2], [4]], [[10], [30]]]\n", "", 1).replace(
        '[[case]]\nname = "tiny"', '  [[case]]\nname = "tiny"'
    )
    error = problem(text)
    assert error.problem == 'case 1 lacks input "V"' and error.line == 6


def test_quoted_keys_keep_the_line_of_their_case() -> None:
    # The key's own line is found only for a bare key; a quoted one keeps its case's header.
    for key, words in [
        ('"expectd"', 'case 2: unknown key "expectd" (did you mean "expected"?)'),
        ('"Wq"', 'case 2 has unknown input "Wq" (the inputs are Q, K, V)'),
    ]:
        error = problem(GOOD.replace('name = "tiny"', f'name = "tiny"\n{key} = 1'))
        assert (error.problem, error.line) == (words, 12)


def test_a_key_only_somewhat_like_a_case_key_is_an_unknown_input() -> None:
    # "expt" shares most of "expected", but not enough to be called a typo of it.
    assert problem(GOOD.replace('name = "tiny"', "expt = 1")).problem == (
        'case 2 has unknown input "expt" (the inputs are Q, K, V)'
    )


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("atol = 0.5", "atol = -0.5", "case 2.atol must not be negative"),
        ("atol = 0.5", 'atol = "x"', "case 2.atol must be a number"),
        ('name = "tiny"', "name = 3", "case 2.name must be a string"),
        (
            "expected = [[5]]",
            'expected = "five"',
            "case 2.expected must be a number or a nested list of numbers",
        ),
        (
            "expected = [[5]]",
            "expected = [[5], [1, 2]]",
            "case 2.expected must be a rectangular nested list of numbers (every row the same length)",
        ),
        (
            "V = [[[5]]]",
            "V = { a = 1 }",
            "case 2.V must be a number, a string, a boolean or a list of them (not a table or a date)",
        ),
    ],
)
def test_a_value_problem_in_a_case_names_the_cases_line(old: str, new: str, words: str) -> None:
    error = problem(GOOD.replace(old, new, 1))
    assert (error.problem, error.line) == (words, 12)
    assert str(error) == f"exercise.toml, line 12: {words}"


def test_a_cases_own_tolerances_win_over_the_exercises() -> None:
    text = GOOD.replace("atol = 0.5", "atol = 0.5\nrtol = 0.25")
    second = model.parse(text, PATH).cases[1]
    assert (second.rtol, second.atol) == (0.25, 0.5)
    assert isinstance(second.rtol, float) and isinstance(second.atol, float)


def test_messages_about_whole_tables_are_exact() -> None:
    assert problem("[[case]]\nexpected = 1\n").problem == (
        "missing the [exercise] table (title and inputs)"
    )
    assert problem(GOOD.split("[[case]]")[0]).problem == (
        "no [[case]] in exercise.toml: add at least one case"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # The parser stops on the line after the open array; the author needs the open one.
        ("x = [1, 2\ny = 3\n", 1),
        ("x = [1, 2\ny = [3\n", 1),
        # An open nested array on a continuation line: that line, not the key's.
        ("[exercise]\nx = [\n  1, [2,\n  3]\ny = 1\n", 3),
        # A continuation line that starts with "[": the key's line.
        ("[exercise]\nx = [\n  [1, 2],\n  [3, 4\ny = 1\n", 2),
        # ... unless it holds a key of an inline table.
        ("x = [\n  [{ a = 1 }, [2,\n  3]\ny = 1\n", 2),
        # Looked for up to 21 lines above where the parser stopped, no further.
        ("x = [1,\n" + "2,\n" * 19 + "3\ny = 1\n", 1),
        ("x = [1,\n" + "2,\n" * 20 + "3\ny = 1\n", 23),
    ],
)
def test_an_open_array_is_named_at_its_line(text: str, line: int) -> None:
    error = problem(text)
    assert error.problem == "is not valid TOML: Unclosed array"
    assert error.line == line


def test_brackets_in_strings_and_comments_do_not_count() -> None:
    assert model._brackets('x = "["') == 0
    assert model._brackets("x = '[' # [") == 0
    assert model._brackets("AXIS = [1") == 1
    assert model._brackets("[") == 1


def test_read_toml_reads_toml() -> None:
    assert model.read_toml('a = 1\n[b]\nc = "d"\n') == {"a": 1, "b": {"c": "d"}}


def test_a_toml_error_at_the_end_of_the_file_has_no_line() -> None:
    error = problem('[exercise]\ninputs = ["x"\n')
    assert error.problem == "is not valid TOML: Unclosed array (at end of document)"
    assert error.line is None and str(error).startswith("exercise.toml: is not valid TOML")


def test_the_task_is_read() -> None:
    text = GOOD.replace('inputs = ["Q", "K", "V"]', 'inputs = ["Q", "K", "V"]\ntask = "Combine."')
    assert model.parse(text, PATH).task == "Combine."
    assert model.parse(GOOD, PATH).task == ""


def test_a_file_saved_by_a_windows_editor_loads_as_the_same_exercise(tmp_path: Path) -> None:
    # A byte-order mark and CRLF line endings, as Notepad or VS Code's "UTF-8 with BOM" write.
    path = tmp_path / "demo" / "exercise.toml"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode("utf-8"))
    loaded, plain = model.load(path), model.parse(GOOD, path)
    assert loaded.title == plain.title == "Combine attention heads"
    assert [(c.label, c.line, c.inputs) for c in loaded.cases] == [
        (c.label, c.line, c.inputs) for c in plain.cases
    ]


def test_behaviour_keys_a_harness_and_mutation_rules_load_or_name_their_problem(
    tmp_path: Path,
) -> None:
    head = '[exercise]\ntitle = "t"\n'
    case = "\n[[case]]\ng = [1]\nexpected = 1\n"
    path = tmp_path / "exercise.toml"
    fitted = '\n[[watch_out]]\nid = "w"\nmistake = "m"\nmessage = "m"\nfit = [1, 2]\n'
    (tmp_path / "mistakes.py").write_text("")
    wrong = {
        'inputs = ["g"]\nharness = "harness.py"': (
            "exercise.harness names harness.py, which is missing"
        ),
        'inputs = ["g"]\nharness = "../harness.py"': (
            "exercise.harness must be a path inside the exercise folder"
        ),
        'inputs = [{ name = "g", after = "updated" }]': (
            'exercise.outputs must name "g", the input updated in place, so that its new value '
            'is judged: outputs = [{ name = "g", kind = "tensor" }]'
        ),
        'inputs = [{ name = "g", after = "kept" }]': (
            'exercise.inputs input "g": after must be "copy", "unchanged" or "updated"'
        ),
        'inputs = [{ name = "g", aftr = "copy" }]': (
            'exercise.inputs input "g": unknown key "aftr" (did you mean "after"?)'
        ),
        'inputs = ["g"]\nharness = "h.py"' + case + fitted: (
            'watch_out "w": fit is for a function called once, not a harness'
        ),
    }
    (tmp_path / "h.py").write_text("")
    for exercise, said in wrong.items():
        path.write_text(head + exercise + ("" if "[[case]]" in exercise else case))
        with pytest.raises(model.ExerciseError) as error:
            model.load(path)
        assert error.value.problem == said
    path.write_text(
        head + 'inputs = [{ name = "g", after = "updated" }, { name = "h", after = "copy" }, '
        '{ name = "k", after = "unchanged" }]\noutputs = [{ name = "g" }]\nharness = "h.py"\n'
        "\n[[case]]\ng = [1]\nh = 2\nk = 3\nexpected = 1\n"
    )
    loaded = model.load(path)
    assert loaded.after == {"g": "updated", "k": "unchanged"}
    assert (loaded.observed, loaded.harness) == (("g",), tmp_path / "h.py")
    path.write_text(
        head + 'inputs = ["g"]\noutputs = ["a", "b"]' + case.replace("1\n", "{ a = 1, b = 2 }\n")
    )
    loaded = model.load(path)
    assert (loaded.observed, loaded.after, loaded.harness) == (("a", "b"), {}, None)


INITIAL = """
[[initial]]
parameter = "weight"
within = 6.0
spread = [0.2, 2.0]
random = true
fan_in = "m.shape[1]"
scale_words = "sqrt(in_features)"
what = "Linear"
"""


def test_an_initial_table_is_read_for_a_lesson_with_a_harness(tmp_path: Path) -> None:
    (tmp_path / "harness.py").write_text("def drive(learner, m, n):\n    return m\n")
    harnessed = SMALL.replace('inputs = ["m", "n"]', 'inputs = ["m", "n"]\nharness = "harness.py"')
    assert lesson(harnessed, tmp_path).initial == ()
    (rule,) = lesson(harnessed + INITIAL, tmp_path).initial
    assert rule == initial.Initial(
        "weight", 6.0, (0.2, 2.0), True, ("m", 1), "sqrt(in_features)", "Linear"
    )
    # Its problems are the file's, with the table's number and key.
    bad = INITIAL.replace('fan_in = "m.shape[1]"', 'fan_in = "x.shape[1]"')
    assert lesson_problem(harnessed + bad, tmp_path).problem == (
        'initial 1.fan_in must be an input\'s axis, such as "weight.shape[1]", of one of the '
        "inputs m, n"
    )
    # Without a harness nothing could send the values it judges.
    assert lesson_problem(SMALL + INITIAL, tmp_path).problem == (
        "[[initial]] needs a harness: its check_initial sends the values it judges"
    )
