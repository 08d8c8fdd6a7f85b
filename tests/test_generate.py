"""Generated cases drawn from a [generate] table, and the smaller inputs proposed on a failure."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_lessons.core.generate import (
    GenerateSpec,
    axis_names,
    distinct_possible,
    draw,
    size_of,
    smaller,
)


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
