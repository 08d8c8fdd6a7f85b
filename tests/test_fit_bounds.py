"""A fitted watch-out names only values inside its ``fit = [lowest, highest]``: the grading
core with a fake runner (no process), on a lesson whose right divisor is the length ``n``.

A learner who divides by a value outside the bounds gets the generic scaling message, whether
the value would come from the search or from one of the author's ``named`` expressions; the
bounds themselves are inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core.attempt import Attempt

from helpers import grader, lesson

LESSON = """
[exercise]
title = "Scale"
inputs = ["x"]

[[case]]
x = [1.0, 2.0]
expected = [0.5, 1.0]

[[case]]
x = [1.0, 2.0, 3.0, 4.0]
expected = [0.25, 0.5, 0.75, 1.0]

[generate]
count = 2
seed = 1

[generate.axes]
n = [2, 5]

[generate.inputs]
x = ["n"]

[[watch_out]]
id = "wrong-divisor"
mistake = "divided_by"
fit = [LOWEST, HIGHEST]
right = "n"
message = "divide by {right}, the length: yours divides by {fitted}."
"""

NAMED = (
    'named = { "n/40" = "the length over 40", "n/20" = "the length over 20", '
    '"sqrt(n)" = "its square root", "50*n" = "fifty lengths", "500*n" = "500 lengths" }\n'
)

#: What a learner sees when no watch-out explains the answer: the generic detector's words.
GENERIC = "Check your scaling: every value is "


def headline(
    tmp_path: Path, bounds: tuple[float, float], divisor: Callable[[int], float], named: bool
) -> str:
    """The learner's headline on case 1 (n = 2) for code that divides by ``divisor(n)``."""
    toml = LESSON.replace("LOWEST", f"{bounds[0]!r}").replace("HIGHEST", f"{bounds[1]!r}")
    if named:
        toml = toml.replace('right = "n"\n', f'right = "n"\n{NAMED}')
    exercise = lesson(tmp_path, toml, **{"mistakes.py": ""})

    def divided(x: list[float], by: float) -> list[float]:
        return [v / by for v in x]

    code: dict[tuple[str, str], Callable[..., Any]] = {
        ("solution.py", "solve"): lambda x: divided(x, divisor(len(x))),
        ("reference.py", "solve"): lambda x: divided(x, len(x)),
        ("mistakes.py", "divided_by"): divided,
    }
    grade, _ = grader(code)
    return grade.grade(Attempt(exercise, exercise.cases[0])).result.headline


def watch_out(fitted: str) -> str:
    return f"Watch out: divide by n = 2, the length: yours divides by {fitted}."


@pytest.mark.parametrize(
    ("bounds", "divisor", "said"),
    [
        pytest.param((0.1, 100.0), 0.05, GENERIC, id="below"),
        pytest.param((0.1, 100.0), 0.1, watch_out("0.1"), id="lowest"),
        pytest.param((0.1, 100.0), 7.0, watch_out("7"), id="inside"),
        pytest.param((0.1, 100.0), 100.0, watch_out("100"), id="highest"),
        pytest.param((0.1, 100.0), 500.0, GENERIC, id="above"),
        # Just outside: the search ends on the bound (95.99...), and its roundest value, 100,
        # explains the answer; it is still outside and must not be named.
        pytest.param((0.1, 96.0), 100.0, GENERIC, id="rounded-above"),
        pytest.param((0.1, 96.0), 96.0, watch_out("96"), id="rounded-highest"),
        pytest.param((0.14, 100.0), 0.1, GENERIC, id="rounded-below"),
    ],
)
def test_the_search_names_only_a_divisor_within_the_bounds(
    tmp_path: Path, bounds: tuple[float, float], divisor: float, said: str
) -> None:
    shown = headline(tmp_path, bounds, lambda n: divisor, named=False)
    assert shown.startswith(said), shown
    if said == GENERIC:
        assert "Watch out" not in shown and "yours divides by" not in shown


@pytest.mark.parametrize(
    ("divisor", "said"),
    [
        # n = 2 on case 1: n/40 = 0.05 and 500*n = 1000 are outside [0.1, 100], n/20 = 0.1
        # and 50*n = 100 are its edges. The search alone cannot reach a value outside either.
        pytest.param(lambda n: n / 40, GENERIC, id="below"),
        pytest.param(lambda n: n / 20, watch_out("0.1 = 2/20, the length over 20"), id="lowest"),
        pytest.param(lambda n: n**0.5, watch_out("1.41 = √2, its square root"), id="inside"),
        pytest.param(lambda n: 50 * n, watch_out("100, fifty lengths"), id="highest"),
        pytest.param(lambda n: 500 * n, GENERIC, id="above"),
    ],
)
def test_a_named_value_is_named_only_within_the_bounds(
    tmp_path: Path, divisor: Callable[[int], float], said: str
) -> None:
    shown = headline(tmp_path, (0.1, 100.0), divisor, named=True)
    assert shown.startswith(said), shown
    if said == GENERIC:
        assert "Watch out" not in shown and "yours divides by" not in shown
