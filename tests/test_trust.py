"""Feedback a learner can trust (issue 11): loops cost the lesson twice the per-case limit, one
fault gets one message, shapes and outputs are named, nothing internal shows, hints say when
the last one is open, and the course's own order and progress hold whatever the selection."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from helpers import CASE_TIMEOUT, COMBINE_HEADS, DOUBLE_RIGHT, REFERENCE, dedent, said

Make = Callable[..., Path]
EXERCISES = COMBINE_HEADS.parent

FIVE_CASES = f"""
[exercise]
title = "Double every number"
inputs = ["x"]
timeout = {CASE_TIMEOUT}

[[case]]
x = [1, 2]
expected = [2, 4]

[[case]]
x = [3, 4]
expected = [6, 8]

[[case]]
x = [5, 6]
expected = [10, 12]

[[case]]
x = [7, 8]
expected = [14, 16]

[[case]]
x = [9, 10]
expected = [18, 20]
"""

LOOP = "def solve(x):\n    while True:\n        pass\n"


def failures(result: pytest.RunResult) -> str:
    return said(result).split("short test summary info")[0]


# --- 1. loops ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_preload")
def test_a_loop_spends_two_limits_then_the_rest_is_reported_not_run(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(solution=LOOP, toml=FIVE_CASES)
    result = pytester.runpytest("double", "--lesson-report=report.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*= 2 failed, 3 failed the same way in *"])
    text = failures(result)
    assert f"Make solve finish sooner: it ran longer than {CASE_TIMEOUT} s and was stopped." in text
    assert (
        "Make solve finish sooner, then run the lesson again: this case was not run, because "
        "cases 1, 2 of double already ran out of time." in text
    )
    assert "they score no points" in text
    assert "double 0 of 5 cases case 2 failed as case 1 did cases 3 to 5 not run" in text
    report = json.loads((pytester.path / "report.json").read_text())
    cases = report["results"]
    assert [r["passed"] for r in cases] == [False] * 5
    assert [r["points"] for r in cases] == [0] * 5
    assert all("was not run" in r["message"] for r in cases[2:])


@pytest.mark.usefixtures("no_preload")
def test_a_right_but_slow_solution_under_the_limit_passes_every_case(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = FIVE_CASES.replace(f"timeout = {CASE_TIMEOUT}", "timeout = 3")
    slow = "import time\n\n" + dedent(DOUBLE_RIGHT).replace(
        "def solve(x):\n", "def solve(x):\n    time.sleep(1.5)\n"
    )
    make_exercise(solution=slow, toml=toml)
    result = pytester.runpytest("double")
    result.assert_outcomes(passed=5)


@pytest.mark.usefixtures("no_preload")
def test_the_loop_budget_is_per_learner_in_a_batch(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(toml=FIVE_CASES)
    for learner, code in (("ada", LOOP), ("bob", DOUBLE_RIGHT)):
        folder = pytester.path / "subs" / learner / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(dedent(code))
    result = pytester.runpytest(
        "double", "--lesson-submissions=subs", "--lesson-gradebook=g.csv", "--lesson-show-failures"
    )
    book = (pytester.path / "g.csv").read_text().splitlines()
    assert book[1:] == ["ada,double,0,5,", "bob,double,5,5,"]
    assert "ada: double: case 3" in result.stdout.str()


# --- 2. one fault, one message ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("def solve(x)\n    return x\n", "Fix the syntax error in double/solution.py"),
        (None, "Create double/solution.py and write solve(x) in it"),
        ("def solve(x, y):\n    return x\n", "Give solve 1 parameter, in this order"),
        (
            "def solve(x):\n    return {}[x[0]]\n",
            "solve raised KeyError at line 2 of solution.py: 1.",
        ),
    ],
    ids=["syntax", "missing-file", "signature", "same-exception"],
)
@pytest.mark.usefixtures("no_preload")
def test_a_fault_every_case_shares_is_explained_once(
    pytester: pytest.Pytester, make_exercise: Make, code: str | None, words: str
) -> None:
    make_exercise(solution=code, toml=FIVE_CASES)
    result = pytester.runpytest("double")
    result.stdout.fnmatch_lines(["*= 1 failed, 4 failed the same way in *"])
    text = failures(result)
    assert text.count(words) == 1
    assert "cases 2 to 5 failed as case 1 did" in text


def test_a_tensor_returned_is_explained_once_without_the_wire_encoding(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(REFERENCE.replace(".tolist()", ""))
    result = pytester.runpytest("combine_heads")
    text = said(result)
    assert text.count("Return plain Python numbers: add .tolist() to your result.") == 1
    assert "'$'" not in text and "float64le" not in text


def test_a_tensor_in_a_smaller_input_shows_as_values_not_encoding(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    # Wrong values, so the shrinker runs; on the smaller input the code returns a tensor.
    combine_heads(
        REFERENCE.replace(
            "return out.reshape(time, -1).tolist()",
            "wrong = out.reshape(time, -1) * 2\n    return wrong if time <= 2 else wrong.tolist()",
        )
    )
    result = pytester.runpytest("combine_heads", "-k", "generated-5")
    text = said(result)
    assert "A smaller input that fails the same way" in text
    assert "yours torch.Tensor([[" in text
    assert "'$'" not in text and "float64le" not in text


@pytest.mark.usefixtures("no_preload")
def test_printed_output_is_capped_per_case_and_per_exercise(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    flood = "def solve(x):\n    for i in range(200_000):\n        print(i)\n    return x\n"
    make_exercise(
        solution=flood, toml=FIVE_CASES.replace(f"timeout = {CASE_TIMEOUT}", "timeout = 20")
    )
    result = pytester.runpytest("double", "--lesson-report=report.json")
    text = result.stdout.str()
    assert len(result.outlines) < 200
    assert text.count("lines not shown here]") == 3
    assert "what your code printed: not shown, because this exercise's earlier cases" in text
    report = json.loads((pytester.path / "report.json").read_text())
    kept = sum(len(r["output"]) for r in report["results"])
    assert kept < 70_000


# --- 3. shapes and outputs --------------------------------------------------------------------


def kv_lesson(pytester: pytest.Pytester, code: str) -> None:
    shutil.copytree(EXERCISES / "kv_cache_step", pytester.path / "kv_cache_step")
    (pytester.path / "kv_cache_step" / "solution.py").write_text(code)


@pytest.mark.torch
def test_a_forgotten_squeeze_is_named_with_its_position_and_output(
    pytester: pytest.Pytester,
) -> None:
    reference = (EXERCISES / "kv_cache_step" / "reference.py").read_text()
    kv_lesson(pytester, reference.replace(").squeeze(1)", ")"))
    result = pytester.runpytest("kv_cache_step", "-k", "case-3")
    text = said(result)
    assert (
        "In out (value 1 of 3): Remove the extra dimension of size 1 at position 1 with "
        ".squeeze(1): your answer has shape [3, 1, 2], the expected one [3, 2]." in text
    )
    assert "Your values are right, in the right order; only the shape is not." in text
    assert "different order" not in text


@pytest.mark.usefixtures("no_preload")
def test_a_missing_size_one_dimension_asks_for_unsqueeze(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = '[exercise]\ntitle = "Column"\ninputs = ["x"]\n\n[[case]]\nx = [1, 2]\nexpected = [[1], [2]]\n'
    make_exercise(solution="def solve(x):\n    return x\n", toml=toml)
    result = pytester.runpytest("double")
    assert "Add the missing dimension of size 1 at position 1 with .unsqueeze(1)" in said(result)


@pytest.mark.torch
def test_a_watch_out_on_a_later_output_names_that_output(pytester: pytest.Pytester) -> None:
    mistakes = (EXERCISES / "kv_cache_step" / "mistakes.py").read_text()
    kv_lesson(pytester, mistakes.replace("def new_token_first(", "def solve("))
    result = pytester.runpytest("kv_cache_step", "-k", "case-1")
    assert "Watch out, in k_cache (value 2 of 3): append the new token" in said(result)


# --- 5. hints and worked solutions ------------------------------------------------------------


@pytest.mark.usefixtures("no_preload")
def test_the_last_hint_is_announced_then_stuck_is_dropped_and_reset_confirmed(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = FIVE_CASES + '\n[[hint]]\ntitle = "One"\ntext = "Multiply."\n'
    toml += '\n[[hint]]\ntitle = "Two"\ntext = "By two."\n'
    make_exercise(solution="def solve(x):\n    return x\n", toml=toml)
    first = said(pytester.runpytest("double", "--lesson-hints"))
    assert "Hint 1: One" in first and "last hint" not in first
    second = said(pytester.runpytest("double", "--lesson-hints"))
    assert "That was the last hint of double." in second
    assert not re.search(r"\d+ (more )?hints? (left|remain)", second)
    plain = said(pytester.runpytest("double"))
    assert "Stuck?" not in plain
    assert "Every hint is open: `pytest double --lesson-hints` shows them again." in plain
    # A reset is confirmed, also once the exercise passes.
    (pytester.path / "double" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    reset = said(pytester.runpytest("double", "--lesson-hints=reset"))
    assert "Hints for double are closed again." in reset
    (pytester.path / "double" / "solution.py").write_text("def solve(x):\n    return x\n")
    assert "Stuck? `pytest double --lesson-hints` opens a hint." in said(
        pytester.runpytest("double")
    )


def test_worked_solution_steps_are_wrapped_and_match_the_code(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(REFERENCE)
    result = pytester.runpytest("combine_heads", "--lesson-solution")
    shown = result.stdout.str().split("Worked solution of combine_heads")[1]
    steps = shown.split("reference.py:")[0].strip().splitlines()
    assert steps and all(len(line) <= 88 for line in steps)
    assert "2. Put time first with .transpose(0, 1)" in result.stdout.str()


@pytest.mark.parametrize("lesson", sorted(p.parent.name for p in EXERCISES.glob("*/exercise.toml")))
def test_every_method_a_step_names_is_in_the_code_shown(lesson: str) -> None:
    from pytest_lessons.core import model

    exercise = model.load(EXERCISES / lesson / "exercise.toml")
    code = (EXERCISES / lesson / "reference.py").read_text()
    for step in exercise.solution_steps:
        for method in re.findall(r"\.(\w+)\(", step):
            assert f".{method}(" in code or f"{method}(" in code, (lesson, step, method)
        for call in re.findall(r"\.(?:transpose|reshape|squeeze|unsqueeze)\([^)]*\)", step):
            assert call in code, (lesson, call)


# --- 6. the course's order and progress -------------------------------------------------------


def course(pytester: pytest.Pytester) -> list[str]:
    names = [
        "split_heads",
        "causal_attention",
        "combine_heads",
        "kv_cache_step",
        "grouped_query_attention",
    ]
    for name in names:
        shutil.copytree(
            EXERCISES / name, pytester.path / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    # The attention chapter alone, as a course of one list (the course's other chapters are
    # not copied).
    listed = ", ".join(f'"{name}"' for name in names)
    (pytester.path / "course.toml").write_text(f"[course]\nlessons = [{listed}]\n")
    return names


def test_the_course_runs_and_reports_in_its_declared_order(pytester: pytest.Pytester) -> None:
    names = course(pytester)
    collected = pytester.runpytest("--collect-only", "-q", *sorted(names)).stdout.str()
    firsts = [collected.find(f"{name}/exercise.toml") for name in names]
    assert firsts == sorted(firsts) and all(p >= 0 for p in firsts)


@pytest.mark.torch
def test_progress_counts_the_whole_course_whatever_the_selection(
    pytester: pytest.Pytester,
) -> None:
    names = course(pytester)
    for name in ("split_heads", "combine_heads", "kv_cache_step"):
        shutil.copy(pytester.path / name / "reference.py", pytester.path / name / "solution.py")
    full = pytester.runpytest(*names, "-p", "no:randomly")
    full.stdout.fnmatch_lines(["lessons: 3/5 passed [[]######----[]]"])
    lines = said(full).split("= lessons =")[1]
    assert [lines.find(n + " ") for n in names] == sorted(lines.find(n + " ") for n in names)
    for options in (["-x"], ["--lf"], ["-k", "generated", "combine_heads"]):
        result = pytester.runpytest(*(options if "-k" in options else [*names, *options]))
        result.stdout.fnmatch_lines(["lessons: 3/5 passed [[]######----[]]"])


@pytest.mark.torch
def test_the_class_table_lists_lessons_in_the_course_order(pytester: pytest.Pytester) -> None:
    course(pytester)
    for lesson in ("combine_heads", "split_heads"):
        folder = pytester.path / "submissions" / "ada" / lesson
        folder.mkdir(parents=True)
        shutil.copy(pytester.path / lesson / "reference.py", folder / "solution.py")
    (pytester.path / "submissions" / "bo").mkdir()
    result = pytester.runpytest("combine_heads", "split_heads", "--lesson-submissions=submissions")
    # Lesson 1 first, as in the course, not in the alphabet's order.
    result.stdout.fnmatch_lines(
        [
            "*lessons: the class*",
            "2 learners",
            "split_heads: 1 of 2 passed, mean * of 8 points",
            "      1 learner  missing",
            "combine_heads: 1 of 2 passed, mean * of 10 points",
            "      1 learner  missing",
        ]
    )


# --- 7. fitted watch-outs and cross-case consistency ------------------------------------------

MODEL_WIDTH_SCALE = """
import math

import torch


def solve(Q, K, V):
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    heads, time, width = q.shape
    scores = q @ k.transpose(-2, -1) / math.sqrt(heads * width)
    out = torch.softmax(scores, dim=-1) @ v
    return out.transpose(0, 1).reshape(time, -1).tolist()
"""


def test_a_scale_by_the_model_width_is_fitted_and_named(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(MODEL_WIDTH_SCALE)
    result = pytester.runpytest("combine_heads", "-k", "case-3")
    assert (
        "Watch out: divide the scores by √width = 1.41, the square root of one head's width: "
        "yours are divided by 2 = √4, the square root of the model width (heads × width)."
        in said(result)
    )


def test_a_scale_multiplied_in_instead_of_divided_is_named(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    # A real bug: `scores * math.sqrt(width)`, a divisor of 1/√width.
    combine_heads(MODEL_WIDTH_SCALE.replace("/ math.sqrt(heads * width)", "* math.sqrt(width)"))
    result = pytester.runpytest("combine_heads", "-k", "case-3")
    assert (
        "Watch out: divide the scores by √width = 1.41, the square root of one head's width: "
        "yours are divided by 0.707 = 1/√2, that is, multiplied by √width instead of divided "
        "by it." in said(result)
    )


def test_a_scale_no_author_named_is_still_fitted_as_a_number(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(MODEL_WIDTH_SCALE.replace("math.sqrt(heads * width)", "7.0"))
    result = pytester.runpytest("combine_heads", "-k", "case-3")
    assert "yours are divided by 7." in said(result)


FIT_TOML = """
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
fit = [0.1, 100.0]
right = "n"
named = { "sqrt(n)" = "the square root of the length" }
message = "divide by {right}, the length: yours divides by {fitted}."
"""

FIT_REFERENCE = "def solve(x):\n    return [v / len(x) for v in x]\n"
FIT_MISTAKES = "def divided_by(x, d):\n    return [v / d for v in x]\n"


@pytest.mark.usefixtures("no_preload")
def test_lesson_check_proves_a_fitted_watch_out_with_each_named_value(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        "scale",
        solution="def solve(x):\n    raise NotImplementedError\n",
        toml=FIT_TOML,
        reference__py=FIT_REFERENCE,
        mistakes__py=FIT_MISTAKES,
    )
    pytester.runpytest("--lesson-check", "scale").assert_outcomes(passed=1)
    # A named value the mistake cannot be told from is reported with its expression.
    toml = FIT_TOML.replace('"sqrt(n)" = "the square root of the length"', '"n" = "the length"')
    (pytester.path / "scale" / "exercise.toml").write_text(dedent(toml))
    result = pytester.runpytest("--lesson-check", "scale")
    result.stdout.fnmatch_lines(["*watch-out wrong-divisor (mistake divided_by(n)) passes every*"])


CONSISTENT_TOML = """
[exercise]
title = "Double"
inputs = ["x"]

[[case]]
name = "degenerate"
x = [3]
expected = [6]

[[case]]
x = [5]
expected = [10]

[[watch_out]]
id = "squared"
mistake = "squared"
message = "multiply by two, not by the number itself."

[[watch_out]]
id = "plus-six"
mistake = "plus_six"
message = "multiply by two, do not add six."
"""


@pytest.mark.usefixtures("no_preload")
def test_a_watch_out_is_named_only_when_it_explains_every_failing_case(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        solution="def solve(x):\n    return [v + 6 for v in x]\n",
        toml=CONSISTENT_TOML,
        mistakes__py="def squared(x):\n    return [v * v for v in x]\n\n\n"
        "def plus_six(x):\n    return [v + 6 for v in x]\n",
    )
    text = failures(pytester.runpytest("double"))
    # Case 1 alone fits "squared" too (3 * 3 = 3 + 6), case 2 does not.
    assert "Watch out: multiply by two, do not add six." in text
    assert "not by the number itself" not in text


# --- 8. the course's catalogue ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("lesson", "function", "words"),
    [
        (
            "causal_attention",
            "softmax_over_queries",
            "Watch out: take the softmax over the last dimension (dim=-1), the keys.",
        ),
        (
            "causal_attention",
            "masked_with_zero",
            'Watch out: fill the hidden scores with -inf (float("-inf")), not 0.',
        ),
        (
            "kv_cache_step",
            "causal_flag_with_one_query",
            "Watch out, in out (value 1 of 3): leave out is_causal=True for this one new token.",
        ),
    ],
)
@pytest.mark.torch
def test_real_attention_mistakes_are_named(
    pytester: pytest.Pytester, lesson: str, function: str, words: str
) -> None:
    shutil.copytree(EXERCISES / lesson, pytester.path / lesson)
    # Graded code may read only its own file: the mistake's code is copied into it.
    mistakes = (EXERCISES / lesson / "mistakes.py").read_text()
    (pytester.path / lesson / "solution.py").write_text(f"{mistakes}\n\nsolve = {function}\n")
    result = pytester.runpytest(lesson, "-k", "case-1")
    assert words in said(result)


@pytest.mark.torch
def test_a_model_width_scale_in_the_kv_step_is_named(pytester: pytest.Pytester) -> None:
    reference = (EXERCISES / "kv_cache_step" / "reference.py").read_text()
    wrong = reference.replace(
        "F.scaled_dot_product_attention(q_new, keys, values)",
        "F.scaled_dot_product_attention(q_new, keys, values, scale=1 / (q_new.shape[0] * "
        "q_new.shape[-1]) ** 0.5)",
    )
    kv_lesson(pytester, wrong)
    result = pytester.runpytest("kv_cache_step", "-k", "case-3")
    assert (
        "Watch out, in out (value 1 of 3): divide the scores by √width = 1.41, the square root "
        "of one head's width: yours are divided by 2.45 = √6, the square root of the model "
        "width (heads × width)." in said(result)
    )


# --- 9. authoring -----------------------------------------------------------------------------

RANGED_TOML = """
[exercise]
title = "Softmax with a temperature"
inputs = ["x", "temperature", "n"]

[[case]]
x = [1.0, 2.0]
temperature = 1.0
n = 2
expected = [1.0, 2.0]

[generate]
count = 20
values = [-3.0, 3.0]

[generate.axes]
n = [2, 5]

[generate.inputs]
x = ["n"]
temperature = []
n = "n"

[generate.ranges]
temperature = [0.5, 2.0]
"""


@pytest.mark.usefixtures("no_preload")
def test_a_per_input_range_keeps_a_scalar_input_in_bounds(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    checker = (
        "def solve(x, temperature, n):\n"
        "    assert 0.5 <= temperature <= 2.0, temperature\n"
        "    assert n == len(x) and isinstance(n, int)\n"
        "    return x\n"
    )
    make_exercise(solution=checker, toml=RANGED_TOML, reference__py=checker)
    pytester.runpytest("double").assert_outcomes(passed=21)
    bad = RANGED_TOML.replace("temperature = [0.5, 2.0]", "temprature = [0.5, 2.0]")
    (pytester.path / "double" / "exercise.toml").write_text(dedent(bad))
    result = pytester.runpytest("double")
    assert 'generate.ranges: unknown key "temprature" (did you mean "temperature"?)' in said(result)


def test_the_generate_features_are_documented() -> None:
    text = (EXERCISES.parent / "docs" / "ci-grading.md").read_text()
    for feature in ("temperature = []", 'heads = "heads"', "kv_heads*group", "[generate.ranges]"):
        assert feature in text


@pytest.mark.usefixtures("no_preload")
def test_lesson_check_shows_a_wrong_expected_value_and_groups_cases(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = FIVE_CASES.replace("expected = [6, 8]", "expected = [6, 9]").replace(
        f"timeout = {CASE_TIMEOUT}", ""
    )
    toml += '\n[[watch_out]]\nid = "plus"\nmistake = "plus_tow"\nmessage = "double it."\n'
    make_exercise(
        solution="def solve(x):\n    raise NotImplementedError\n",
        toml=toml,
        reference__py=DOUBLE_RIGHT,
        mistakes__py="def plus_two(x):\n    return [v + 2 for v in x]\n",
    )
    result = pytester.runpytest("--lesson-check", "double")
    text = said(result)
    assert (
        "double: the reference fails case 2: the case at line 10 of exercise.toml expects "
        "[6, 9], the reference returns [6, 8]" in text
    )
    assert (
        "on cases 1 to 5 the mistake does not return an answer: mistakes.py defines no "
        'function plus_tow (did you mean "plus_two"?)' in text
    )
    assert text.count("plus_tow") == 2  # the heading and the one grouped problem


@pytest.mark.usefixtures("no_preload")
def test_lesson_check_checks_the_starter_as_committed(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        solution="def solve(x):\n    raise NotImplementedError\n",
        toml=FIVE_CASES,
        reference__py=DOUBLE_RIGHT,
    )
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=pytester.path, check=True)
    subprocess.run(["git", "add", "."], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-qm", "lesson"], cwd=pytester.path, check=True)
    # The author solves the lesson to try it: the shipped starter is still the stub.
    (pytester.path / "double" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    pytester.runpytest("--lesson-check", "double").assert_outcomes(passed=1)
    subprocess.run([*git, "commit", "-qam", "oops"], cwd=pytester.path, check=True)
    result = pytester.runpytest("--lesson-check", "double")
    assert "the starter solution.py passes every case" in said(result)


def test_toml_errors_name_the_line_to_fix_and_how_to_restore(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    folder = combine_heads()
    original = (folder / "exercise.toml").read_text()
    lines = original.splitlines()
    q_line = next(n for n, line in enumerate(lines) if line.startswith("Q = [[[0], [0]]"))
    broken = list(lines)
    broken[q_line] = broken[q_line][:-1]  # the closing ] is missing
    (folder / "exercise.toml").write_text("\n".join(broken) + "\n")
    result = pytester.runpytest("combine_heads")
    text = said(result)
    assert f"exercise.toml, line {q_line + 1}: is not valid TOML" in text
    assert "If you did not mean to change it, take this file again" in text

    expected_line = next(n for n, line in enumerate(lines) if line.startswith("expected = "))
    typo = list(lines)
    typo[expected_line] = typo[expected_line].replace("expected", "expect", 1)
    (folder / "exercise.toml").write_text("\n".join(typo) + "\n")
    text = said(pytester.runpytest("combine_heads"))
    assert (
        f'exercise.toml, line {expected_line + 1}: case 1: unknown key "expect" '
        '(did you mean "expected"?)' in text
    )

    # In a git checkout, the learner is told the command that restores the course's copy.
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgsign=false"]
    (folder / "exercise.toml").write_text(original)
    subprocess.run(["git", "init", "-q"], cwd=pytester.path, check=True)
    subprocess.run(["git", "add", "."], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-qm", "course"], cwd=pytester.path, check=True)
    (folder / "exercise.toml").write_text("\n".join(typo) + "\n")
    text = said(pytester.runpytest("combine_heads"))
    assert "restore the course's copy with `git checkout -- combine_heads/exercise.toml`" in text


def test_one_fault_is_explained_once_under_xdist_too(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads()
    result = pytester.runpytest("combine_heads", "-n", "2")
    result.stdout.fnmatch_lines(["*= 1 failed, 9 failed the same way in *"])
    assert failures(result).count("combine_heads is not implemented yet") == 1


# --- 8. split_heads' mistakes from real code --------------------------------------------------

#: A port of TensorFlow's tf.split(x, heads, axis=-1), the split many attention implementations
#: use: torch.split takes the size of a piece, not the number of pieces.
SPLIT_BY_HEADS = """
import torch


def solve(X, heads):
    x = torch.tensor(X, dtype=torch.float64)
    return torch.stack(torch.split(x, heads, dim=-1)).tolist()
"""

#: nanoGPT's x.view(B, T, nh, hs).transpose(1, 2), on X, which has no batch dimension.
BATCH_TRANSPOSE = """
import torch


def solve(X, heads):
    x = torch.tensor(X, dtype=torch.float64)
    time = x.shape[0]
    return x.view(time, heads, -1).transpose(1, 2).tolist()
"""


@pytest.mark.torch
@pytest.mark.parametrize(
    ("code", "words"),
    [
        (
            SPLIT_BY_HEADS,
            "Watch out: cut each row into heads pieces with x.chunk(heads, dim=-1), or with "
            "x.split(width, dim=-1), before you stack them. torch.split takes the size of each "
            "piece, not how many pieces to make (TensorFlow's tf.split takes the number): "
            "x.split(heads, dim=-1) cuts width pieces of heads numbers each",
        ),
        (
            BATCH_TRANSPOSE,
            "Watch out: swap dimensions 0 and 1 after the reshape: .transpose(0, 1). Code "
            "written for a batch, such as x.view(B, T, heads, width).transpose(1, 2), has time "
            "and heads at positions 1 and 2; X has no batch dimension",
        ),
    ],
    ids=["split-takes-a-size", "batch-transpose-without-a-batch"],
)
def test_split_heads_names_the_mistakes_real_code_makes(
    pytester: pytest.Pytester, code: str, words: str
) -> None:
    shutil.copytree(
        EXERCISES / "split_heads",
        pytester.path / "split_heads",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (pytester.path / "split_heads" / "solution.py").write_text(dedent(code))
    result = pytester.runpytest("split_heads")
    # Every case fails, the first explains, the others point back to it.
    assert result.ret == 1
    assert words in said(result)
    assert said(result).count("(the same mistake as case 1 (two heads of width 4)") == 7
    # The watch-out explains the shape; the generic note on reshape sizes would contradict it.
    assert "check the sizes you reshape to" not in said(result)
