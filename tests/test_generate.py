"""Generated cases drawn from a [generate] table, and the smaller inputs proposed on a failure."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_lessons import schema
from pytest_lessons.core import model
from pytest_lessons.core.generate import (
    GenerateSpec,
    InputSpec,
    axis_names,
    distinct_possible,
    draw,
    draw_at,
    elements_at,
    size_of,
    smaller,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest Pythons
    import tomli as tomllib

from helpers import failed, said


def spec(**changes: Any) -> GenerateSpec:
    fields: dict[str, Any] = {
        "count": 6,
        "seed": 3,
        "axes": {"rows": (2, 4), "cols": (2, 4)},
        "inputs": {"m": ("rows", "cols"), "n": "rows"},
        "values": (-9.0, 9.0),
        "decimals": 2,
        "points": 1.0,
        "hidden": False,
    }
    fields.update(changes)
    return GenerateSpec(**fields)


def shape(value: Any) -> list[int]:
    dims = []
    while isinstance(value, list):
        dims.append(len(value))
        value = value[0]
    return dims


def test_the_same_spec_draws_the_same_cases_and_another_seed_others() -> None:
    assert draw(spec()) == draw(spec())
    assert draw(spec()) != draw(spec(seed=4))
    assert len(draw(spec())) == 6 and draw(spec(count=0)) == []


def test_each_case_gives_every_axis_its_own_size_within_its_range() -> None:
    for sizes, inputs in draw(spec(count=30)):
        assert set(sizes) == {"rows", "cols"}
        assert sizes["rows"] != sizes["cols"]
        assert all(2 <= size <= 4 for size in sizes.values())
        assert shape(inputs["m"]) == [sizes["rows"], sizes["cols"]]
        assert inputs["n"] == sizes["rows"]


def test_sizes_reach_both_ends_of_each_range() -> None:
    seen = {size for sizes, _ in draw(spec(count=60)) for size in sizes.values()}
    assert seen == {2, 3, 4}


def test_values_are_in_range_and_rounded_to_the_decimals() -> None:
    values = [v for _, i in draw(spec(count=20)) for row in i["m"] for v in row]
    assert all(-9 <= v <= 9 for v in values)
    assert all(round(v, 2) == v for v in values)
    assert any(round(v, 1) != v for v in values)  # two decimals, not fewer
    assert min(values) < -4 and max(values) > 4
    whole = [v for _, i in draw(spec(decimals=0)) for row in i["m"] for v in row]
    assert all(v == int(v) for v in whole)


def test_a_product_axis_is_the_product_of_its_sizes() -> None:
    product = spec(axes={"heads": (2, 2), "width": (3, 3)}, inputs={"x": ("heads*width",)})
    ((sizes, inputs),) = draw(spec(**{**product.__dict__, "count": 1}))
    assert sizes == {"heads": 2, "width": 3} and shape(inputs["x"]) == [6]
    assert size_of("heads * width", sizes) == 6 and size_of("heads", sizes) == 2
    assert axis_names("heads * width") == ["heads", "width"] and axis_names("a") == ["a"]


def test_distinct_sizes_are_possible_only_when_a_matching_exists() -> None:
    assert distinct_possible({"a": (1, 1), "b": (1, 2)})
    assert distinct_possible({"a": (2, 3), "b": (2, 3)})
    assert not distinct_possible({"a": (1, 1), "b": (1, 1)})
    assert not distinct_possible({"a": (1, 2), "b": (1, 2), "c": (2, 2)})
    assert distinct_possible({"a": (1, 3), "b": (1, 2), "c": (2, 2)})
    assert distinct_possible({})


def test_axes_that_cannot_all_differ_raise() -> None:
    with pytest.raises(ValueError, match="leave no way to give every axis its own size"):
        draw(spec(axes={"rows": (2, 2), "cols": (2, 2)}))


def test_smaller_cuts_each_axis_by_one_then_rounds_the_values() -> None:
    s = spec()
    sizes = {"rows": 3, "cols": 4}
    m = [[1.5, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.25]]
    proposals = list(smaller(s, sizes, {"m": m, "n": 3}))
    assert proposals == [
        ({"rows": 2, "cols": 4}, {"m": m[:2], "n": 2}),
        ({"rows": 3, "cols": 3}, {"m": [row[:3] for row in m], "n": 3}),
        (
            sizes,
            {
                "m": [[2.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]],
                "n": 3,
            },
        ),
    ]


def test_smaller_stops_at_the_lower_bound_and_skips_rounding_whole_values() -> None:
    s = spec()
    m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert list(smaller(s, {"rows": 2, "cols": 3}, {"m": m, "n": 2})) == [
        ({"rows": 2, "cols": 2}, {"m": [[1.0, 2.0], [4.0, 5.0]], "n": 2})
    ]
    assert list(smaller(spec(axes={"rows": (0, 4)}), {"rows": 1}, {"n": 1})) == []


def test_smaller_leaves_axes_inside_a_product_alone() -> None:
    s = spec(
        axes={"heads": (1, 3), "width": (1, 3), "time": (1, 3)},
        inputs={"x": ("time", "heads*width")},
    )
    x = [[1.0] * 6, [2.0] * 6]
    assert list(smaller(s, {"heads": 2, "width": 3, "time": 2}, {"x": x})) == [
        ({"heads": 2, "width": 3, "time": 1}, {"x": [[1.0] * 6]})
    ]


def test_an_input_without_the_cut_axis_is_kept_as_it_is() -> None:
    s = spec(axes={"rows": (1, 3), "cols": (1, 3)}, inputs={"a": ("rows",), "b": ("cols",)})
    a, b = [1.0, 2.0], [3.0, 4.0, 5.0]
    first = next(iter(smaller(s, {"rows": 2, "cols": 3}, {"a": a, "b": b})))
    assert first == ({"rows": 1, "cols": 3}, {"a": [1.0], "b": b})


def test_a_size_input_stays_a_whole_number_when_values_are_rounded() -> None:
    m = [[1.5, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]
    *_, (_sizes, rounded) = smaller(spec(), {"rows": 3, "cols": 4}, {"m": m, "n": 3})
    assert type(rounded["n"]) is int and rounded["m"][0][0] == 2.0


# --- inputs written as tables: every kind of value (format 2) --------------------------------


def leaves(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def test_tables_draw_ints_below_an_axis_bools_strings_and_ragged_rows() -> None:
    kinds = {
        "ids": InputSpec("int", ("rows",), below="vocab"),
        "seed": InputSpec("int", (), low=5, high=7),
        "flags": InputSpec("bool", ("rows", "cols")),
        "words": InputSpec("str", ("rows",), alphabet="ab", length=(2, 3)),
        "rows_of": InputSpec("int", ("rows",), low=-1, high=1, ragged=(1, 3)),
        "x": InputSpec("float", ("cols",), low=0.0, high=1.0, decimals=1),
        "ragged_x": InputSpec("float", ("rows",), low=0.0, high=1.0, ragged=(1, 2)),
        "ragged_ids": InputSpec("int", ("rows",), below="vocab", ragged=(1, 2)),
    }
    drawn = draw(
        spec(
            count=40,
            axes={"rows": (2, 3), "cols": (2, 3), "vocab": (3, 4)},
            inputs={name: kind.axes for name, kind in kinds.items()},
            kinds=kinds,
        )
    )
    for sizes, inputs in drawn:
        assert len(inputs["ids"]) == sizes["rows"]
        assert all(type(i) is int and 0 <= i < sizes["vocab"] for i in inputs["ids"])
        assert type(inputs["seed"]) is int and 5 <= inputs["seed"] <= 7
        assert all(type(b) is bool for b in leaves(inputs["flags"]))
        assert all(set(w) <= {"a", "b"} and 2 <= len(w) <= 3 for w in inputs["words"])
        assert all(1 <= len(row) <= 3 for row in inputs["rows_of"])
        assert all(type(v) is int and -1 <= v <= 1 for v in leaves(inputs["rows_of"]))
        assert all(type(v) is float and v == round(v, 1) and 0 <= v <= 1 for v in inputs["x"])
        assert shape(inputs["flags"]) == [sizes["rows"], sizes["cols"]]
        assert shape(inputs["rows_of"])[0] == sizes["rows"]
        assert all(type(v) is float for v in leaves(inputs["ragged_x"]))
        assert all(v == round(v, 2) for v in leaves(inputs["ragged_x"]))
        assert all(0 <= i < sizes["vocab"] for i in leaves(inputs["ragged_ids"]))
    # Every end of every range is reached over 40 draws: both booleans, both lengths.
    assert {i for _, d in drawn for i in d["ids"]} == {0, 1, 2, 3}
    assert {d["seed"] for _, d in drawn} == {5, 6, 7}
    assert {b for _, d in drawn for b in leaves(d["flags"])} == {True, False}
    assert {len(w) for _, d in drawn for w in d["words"]} == {2, 3}
    assert {len(r) for _, d in drawn for r in d["rows_of"]} == {1, 2, 3}
    assert {v for _, d in drawn for v in leaves(d["rows_of"])} == {-1, 0, 1}
    # A table's float keeps the table's decimals when it gives none.
    plain = draw(spec(inputs={"x": ("cols",)}, kinds={"x": InputSpec("float", ("cols",))}))
    assert all(type(v) is float and v == round(v, 2) for _, d in plain for v in d["x"])
    assert {v != round(v, 1) for _, d in plain for v in d["x"]} == {True, False}
    # An input written as a list of axes draws from its own range where it has one.
    own = draw(spec(ranges={"m": (100.0, 101.0)}))
    assert all(100 <= v <= 101 for _, d in own for v in leaves(d["m"]))


def test_axes_that_cannot_each_get_their_own_size_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^the axes' size ranges leave no way to give every axis"):
        draw(spec(axes={"rows": (2, 2), "cols": (2, 2)}))


def test_a_tables_most_values_count_every_axis_ragged_row_and_letter() -> None:
    axes = {"rows": (1, 3), "cols": (2, 5)}
    assert InputSpec("int", ("rows", "cols")).elements(axes) == 15
    assert InputSpec("int", ("rows*cols",)).elements(axes) == 15
    assert InputSpec("int", ("rows",), ragged=(0, 4)).elements(axes) == 12
    assert InputSpec("int", ("rows",), ragged=(0, 0)).elements(axes) == 3
    assert InputSpec("str", ("rows",), length=(1, 6)).elements(axes) == 18
    assert InputSpec("str", ("rows",), length=(0, 0)).elements(axes) == 3
    assert InputSpec("bool", ()).elements(axes) == 1


def test_smaller_inputs_round_only_floats_and_never_cut_an_axis_ids_are_drawn_below() -> None:
    kinds = {
        "ids": InputSpec("int", ("rows",), below="vocab"),
        "x": InputSpec("float", ("rows",)),
        "flags": InputSpec("bool", ("rows",)),
    }
    table = spec(
        axes={"rows": (1, 4), "vocab": (2, 5)},
        inputs={"ids": ("rows",), "x": ("rows",), "flags": ("rows",), "n": "vocab"},
        kinds=kinds,
    )
    inputs = {"ids": [4, 1], "x": [0.4, 1.6], "flags": [True, False], "n": 5}
    proposed = list(smaller(table, {"rows": 2, "vocab": 5}, inputs))
    assert [sizes for sizes, _ in proposed] == [{"rows": 1, "vocab": 5}, {"rows": 2, "vocab": 5}]
    assert proposed[0][1] == {"ids": [4], "x": [0.4], "flags": [True], "n": 5}
    assert proposed[1][1] == {"ids": [4, 1], "x": [0.0, 2.0], "flags": [True, False], "n": 5}


def test_a_work_budgets_inputs_are_drawn_at_its_sizes_the_same_in_every_version() -> None:
    # A learner's copy freezes the reference's work figures for these very inputs: a change
    # in how they are drawn would make every exported budget case measure other inputs.
    table = spec(
        axes={"rows": (2, 4), "cols": (2, 4), "vocab": (3, 9)},
        inputs={"m": ("rows", "cols"), "n": "rows", "ids": ("rows",)},
        kinds={"ids": InputSpec("int", ("rows",), below="vocab")},
    )
    at = {"rows": 2, "cols": 3, "vocab": 5}
    assert draw_at(table, at, "work budget") == {
        "m": [[7.0, 2.45, -5.26], [4.94, -1.07, 7.49]],
        "n": 2,
        "ids": [4, 2],
    }
    assert draw_at(table, at, "work growth") == {
        "m": [[-0.08, 5.66, -4.81], [2.54, 8.64, 2.12]],
        "n": 2,
        "ids": [1, 4],
    }
    # the values the inputs hold at those sizes: 2 x 3 floats and 2 ids; a size input holds none
    assert elements_at(table, at) == 8
    assert elements_at(table, {"rows": 4, "cols": 4, "vocab": 5}) == 20
    ragged = spec(inputs={"r": ("rows",)}, kinds={"r": InputSpec("int", ("rows",), ragged=(0, 3))})
    assert elements_at(ragged, {"rows": 2, "cols": 2}) == 6


# --- a file input beside drawn inputs, as a pytest run shows it -----------------------------

WEIGHTED_TOML = """
[exercise]
title = "Weighted sums"
inputs = ["weights", "x"]
format = 2

[[case]]
weights = { file = "weights.json" }
x = [[1.0, 1.0, 1.0]]
expected = [6.0]

[[watch_out]]
id = "weights-ignored"
mistake = "unweighted"
message = "multiply each value by its weight before adding them up."

[generate]
count = 4
seed = 5

[generate.axes]
rows = [1, 3]
features = [3, 3]

[generate.inputs]
weights = { file = "weights.json" }
x = ["rows", "features"]
"""

WEIGHTED = (
    "def solve(weights, x):\n    return [sum(w * v for w, v in zip(weights, row)) for row in x]\n"
)


@pytest.mark.usefixtures("no_preload")
def test_a_generate_table_reads_one_input_from_a_file_and_draws_the_others(
    pytester: pytest.Pytester, make_exercise: Any
) -> None:
    make_exercise(
        "weighted",
        toml=WEIGHTED_TOML,
        solution="def solve(weights, x):\n    raise NotImplementedError\n",
        reference__py=WEIGHTED,
        mistakes__py="def unweighted(weights, x):\n    return [sum(row) for row in x]\n",
        weights__json="[1.0, 2.0, 3.0]",
    )
    # The check proves the watch-out on the drawn cases, which all read weights.json.
    check = pytester.runpytest("weighted", "--lesson-check")
    assert check.ret == pytest.ExitCode.OK, said(check)
    (pytester.path / "weighted" / "solution.py").write_text(WEIGHTED)
    right = pytester.runpytest("weighted")
    assert right.ret == pytest.ExitCode.OK, said(right)
    assert right.parseoutcomes()["passed"] == 5
    # Code that ignores the file's weights fails the drawn cases with the watch-out.
    (pytester.path / "weighted" / "solution.py").write_text(
        "def solve(weights, x):\n    return [sum(row) for row in x]\n"
    )
    wrong = pytester.runpytest("weighted")
    assert wrong.ret == pytest.ExitCode.TESTS_FAILED
    assert failed(wrong) == 5
    assert "Watch out: multiply each value by its weight before adding them up." in said(wrong)


@pytest.mark.parametrize(
    ("table", "words"),
    [
        (
            'weights = { file = "weight.json" }',
            "generate.inputs.weights: ",
        ),
        (
            'weights = { file = "weights.json", kind = "float" }',
            "generate.inputs.weights: leave out kind, or the file: an input is either read "
            "from a file (file, key) or drawn (kind, axes, range), not both",
        ),
        (
            'weights = { file = "weights.json", keys = "w" }',
            'generate.inputs.weights: unknown key "keys" in the file table (did you mean "key"?)',
        ),
    ],
)
def test_a_generated_file_input_the_grader_cannot_use_is_named_for_the_author(
    tmp_path: Path, table: str, words: str
) -> None:
    folder = tmp_path / "weighted"
    folder.mkdir()
    (folder / "reference.py").write_text(WEIGHTED)
    (folder / "weights.json").write_text("[1.0, 2.0, 3.0]")
    toml = WEIGHTED_TOML.replace(
        'weights = { file = "weights.json" }\nx = ["rows"', table + '\nx = ["rows"'
    )
    (folder / "exercise.toml").write_text(toml)
    with pytest.raises(model.ExerciseError) as error:
        model.load(folder / "exercise.toml")
    assert error.value.problem.startswith(words), error.value.problem
    # A range for it is refused too: nothing is drawn for a file input.
    (folder / "exercise.toml").write_text(WEIGHTED_TOML + "\n[generate.ranges]\nweights = [0, 1]\n")
    with pytest.raises(model.ExerciseError) as ranged:
        model.load(folder / "exercise.toml")
    assert ranged.value.problem.startswith(
        "generate.ranges.weights: leave this range out: the input is read from weights.json"
    )


def test_smaller_inputs_and_a_budgets_draw_keep_the_file_input_as_it_is() -> None:
    table = {"file": "weights.json"}
    with_file = spec(fixed={"w": table})
    (sizes, inputs), *_ = draw(with_file)
    assert inputs["w"] == table
    assert all(variant["w"] == table for _, variant in smaller(with_file, sizes, inputs))
    # In whatever order the case's inputs come, every variant holds each of them.
    first = {"w": inputs["w"], **{k: v for k, v in inputs.items() if k != "w"}}
    variants = list(smaller(with_file, sizes, first))
    assert variants and all(list(variant) == list(first) for _, variant in variants)
    assert draw_at(with_file, sizes, "budget")["w"] == table


def test_the_editor_schema_takes_a_file_input_in_generate() -> None:
    shipped = json.loads(schema.SHIPPED.read_text())
    jsonschema.validate(tomllib.loads(WEIGHTED_TOML), shipped)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            tomllib.loads(
                WEIGHTED_TOML.replace('"weights.json" }\nx', '"weights.json", k = 1 }\nx')
            ),
            shipped,
        )
