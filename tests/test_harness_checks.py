"""A lesson harness's checks as a class's instructor and a lesson's author see them: each check
that fails a case is its diagnosis (an id the class report counts learners by), a watch-out may
name a check so the lesson check proves a mistake the harness stops, and the shared helpers
word what they find once, all of it at once (issue 37, items 1, 9 and 14; "left open": a
mistake stopped by a harness, an init within a stated range).

Graded through the core with the fake runner: the child's side of a check is one dict, and the
helpers run in this process on real torch modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_lessons import schema
from pytest_lessons.core import model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.authoring import LessonCheck
from pytest_lessons.core.results import Status
from pytest_lessons.isolation import drive
from pytest_lessons.isolation.outcome import Outcome, from_untrusted
from pytest_lessons.reports import classreport

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest Pythons
    import tomli as tomllib

from helpers import case_result, grader, lesson, said

NORM_TOML = """
[exercise]
title = "A norm"
entry = "Norm"
harness = "harness.py"
inputs = ["x"]

[[case]]
x = [1, 2]
expected = [0, 0]

[[case]]
x = [3, 4, 5]
expected = [0, 0, 0]
"""


def failure(message: str, check: str = "") -> Outcome:
    """What the child reports when the harness's check fails a case (isolation/drive.py)."""
    details: dict[str, Any] = {"harness": "failure", "module": "pytest_lessons.isolation.drive"}
    if check:
        details["check"] = check
    return Outcome(
        "raised", error_type="LessonFailure", message=message, phase="call", details=details
    )


def norm_lesson(tmp_path: Path, toml: str = NORM_TOML) -> model.Exercise:
    return lesson(tmp_path, toml, **{"harness.py": "def drive(learner, x):\n    return x\n"})


def test_a_failed_check_is_the_cases_diagnosis_and_the_class_counts_learners_by_it(
    tmp_path: Path,
) -> None:
    exercise = norm_lesson(tmp_path)
    said = {
        "ann": lambda x: failure(
            f"Give your Norm a parameter named `bias` of shape [{len(x)}]: it has none.",
            "parameter-missing",
        ),
        # No id given: one is made from the words before the colon, the same for every size.
        "bob": lambda x: failure(f"Wrap `weight` in torch.nn.Parameter (of {len(x)}): it is not."),
    }
    results = []
    for learner, code in said.items():
        grade, _ = grader({("solution.py", "Norm"): code})
        for case in exercise.cases:
            results.append(grade.grade(Attempt(exercise, case, learner=learner)).result)
    first = results[0]
    # The learner's code ran and the lesson's check found it wrong: failed, diagnosed.
    assert (first.status, first.diagnosis, first.diagnosis_kind) == (
        Status.FAILED,
        "parameter-missing",
        "check",
    )
    assert first.headline.startswith("Give your Norm a parameter named `bias` of shape [2]")
    # Cases failing one check fold into one, whatever sizes their words hold.
    assert {r.fault for r in results[:2]} == {"check parameter-missing"}
    assert {r.diagnosis for r in results[2:]} == {"wrap-in-torch-nn-parameter"}
    lines = classreport.class_lines(results)
    assert "      1 learner  check: parameter-missing" in lines
    assert "      1 learner  check: wrap-in-torch-nn-parameter" in lines
    assert not any("LessonFailure" in line for line in lines)


def test_the_class_report_tells_the_lessons_own_failure_from_the_graders() -> None:
    lesson_failed = case_result(
        1, False, status="internal", lesson_error="reference.py raised ValueError ..."
    )
    harness_bug = case_result(
        2,
        False,
        status="error",
        fault="raised KeyError at harness.py:3 in the harness",
        lesson_error="The lesson's harness failed (harness.py, line 3): KeyError: 'y'",
    )
    grader_failed = case_result(3, False, status="internal", fault="internal")
    labels = [classreport.outcome_of(r).label for r in (lesson_failed, harness_bug, grader_failed)]
    assert labels == [
        "lesson error: the lesson itself failed",
        "lesson error: the lesson's harness failed",
        "grader error: the grader itself failed",
    ]


def test_a_result_file_carries_a_checks_id_only_in_its_own_spelling() -> None:
    def read(check: str) -> Any:
        data = failure("Do this.", check).to_dict()
        return from_untrusted(__import__("json").dumps(data).encode(), 1 << 20).details

    assert read("not-a-parameter")["check"] == "not-a-parameter"
    assert "check" not in read("<b>bold</b>")
    assert "check" not in read("x" * 80)


def test_a_watch_out_names_a_check_so_the_lesson_check_proves_a_mistake_the_harness_stops(
    tmp_path: Path,
) -> None:
    toml = NORM_TOML + (
        '\n[[watch_out]]\nid = "plain-tensors"\nmistake = "PlainTensors"\n'
        'check = "not-a-parameter"\n\n[[watch_out]]\nid = "wrong-shape"\nmistake = "Transposed"\n'
        'check = "parameter-shape"\nmessage = "store weight as [out, in]."\n'
    )
    exercise = lesson(
        tmp_path,
        toml,
        **{
            "harness.py": "def drive(learner, x):\n    return x\n",
            "mistakes.py": "",
            "reference.py": "",
        },
    )
    plain = failure("Wrap `weight` in torch.nn.Parameter: it is a tensor.", "not-a-parameter")
    shape = failure("Make `weight` of shape [2, 3]: it is [3, 2].", "parameter-shape")
    code = {
        ("reference.py", "Norm"): lambda x: [0] * len(x),
        ("solution.py", "Norm"): lambda x: plain,
        ("mistakes.py", "PlainTensors"): lambda x: plain,
        ("mistakes.py", "Transposed"): lambda x: shape,
    }
    grade, _ = grader(code)
    assert LessonCheck(grade, exercise).problems() == []
    learner = grade.grade(Attempt(exercise, exercise.cases[0], learner="ann"))
    # Without words of its own, the watch-out's headline is the harness's.
    assert (learner.result.diagnosis, learner.result.diagnosis_kind) == (
        "plain-tensors",
        "watch_out",
    )
    assert learner.result.headline == "Wrap `weight` in torch.nn.Parameter: it is a tensor."
    code[("solution.py", "Norm")] = lambda x: shape
    grade, _ = grader(code)
    text = grade.grade(Attempt(exercise, exercise.cases[0], learner="bo")).text
    # With words: the watch-out first, the harness's words under it.
    assert text.startswith("Watch out: store weight as [out, in].\n\n  Make `weight` of shape")
    # A mistake the harness stops with another check than the one named is a problem.
    code[("mistakes.py", "Transposed")] = lambda x: plain
    grade, _ = grader(code)
    problems = LessonCheck(grade, exercise).problems()
    assert (
        "double: watch-out wrong-shape (mistake Transposed): on cases 1, 2 watch-out "
        "plain-tensors fires instead"
    ) in problems


def test_a_check_watch_out_needs_a_harness_and_words_only_without_one(tmp_path: Path) -> None:
    watch = '\n[[watch_out]]\nid = "plain"\ncheck = "not-a-parameter"\n'
    with pytest.raises(model.ExerciseError, match="check names a check of the lesson's harness"):
        lesson(tmp_path, NORM_TOML.replace('harness = "harness.py"\n', "") + watch)
    with pytest.raises(model.ExerciseError, match='watch_out 1: missing "message"'):
        norm_lesson(tmp_path, NORM_TOML + '\n[[watch_out]]\nid = "plain"\nmistake = "M"\n')


torch = pytest.importorskip("torch")


class Plain(torch.nn.Module):
    def __init__(self, weight: Any, bias: Any) -> None:
        super().__init__()
        self.weight = weight
        self.bias = bias


def _failure(call: Any) -> drive.LessonFailure:
    with pytest.raises(drive.LessonFailure) as caught:
        call()
    return caught.value


@pytest.mark.torch
def test_check_parameters_names_every_tensor_that_is_no_parameter_at_once() -> None:
    from pytest_lessons.harness import check_parameters

    shapes = {"weight": [3], "bias": [3]}
    both = _failure(
        lambda: check_parameters(
            Plain(torch.ones(3), torch.zeros(3)), shapes, "LayerNorm", parameters=True
        )
    )
    assert str(both) == (
        "Wrap `weight` and `bias` in torch.nn.Parameter (self.weight = torch.nn.Parameter(...)): "
        "in your LayerNorm they are plain tensor attributes, which are in neither parameters() "
        "nor state_dict(): an optimizer never updates them and load_state_dict never fills them."
    )
    assert both.check == "not-a-parameter"
    mixed = Plain(torch.ones(3), None)
    del mixed.bias
    mixed.register_buffer("bias", torch.zeros(3))
    said = str(_failure(lambda: check_parameters(mixed, shapes, "LayerNorm", parameters=True)))
    assert "in your LayerNorm `weight` is a plain tensor attribute, which is in neither" in said
    assert "; `bias` is a buffer (register_buffer), which an optimizer never trains." in said
    # Two names missing: both said, one run.
    renamed = Plain(torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(3)))
    missing = _failure(lambda: check_parameters(renamed, {"w": [3], "b": [3]}, "LayerNorm"))
    assert str(missing).startswith(
        "Give your LayerNorm parameters named `w` of shape [3] and `b` of shape [3]: "
    )
    assert missing.check == "parameter-missing"


@pytest.mark.torch
def test_check_initial_accepts_any_start_within_the_stated_range() -> None:
    from pytest_lessons.harness import check_initial

    def start(weight: Any) -> Any:
        return Plain(torch.nn.Parameter(weight), None)

    fan_in = 9
    rule = {
        "within": 6.0,
        "spread": (0.2, 2.0),
        "scale": 3.0,
        "scale_words": "sqrt(in_features)",
        "random": True,
    }
    torch.manual_seed(0)
    for right in (
        torch.empty(12, fan_in).uniform_(-1 / 3, 1 / 3),  # nn.Linear's
        torch.nn.init.xavier_uniform_(torch.empty(12, fan_in)),
        torch.randn(12, fan_in) / 3,
    ):
        check_initial(start(right), "weight", "Linear", **rule)
    wide = _failure(
        lambda: check_initial(start(torch.randn(12, fan_in) * 1.5), "weight", "Linear", **rule)
    )
    assert wide.check == "init-spread"
    assert str(wide).startswith(
        "Draw the initial `weight` with a standard deviation between 0.2/sqrt(in_features) and "
        "2/sqrt(in_features) (here 0.06667 to 0.6667), the scale the lesson states for a new "
        "Linear: yours is 1."
    )
    same = _failure(
        lambda: check_initial(
            start(torch.full((12, fan_in), 0.1)),
            "weight",
            "Linear",
            within=6.0,
            scale=3.0,
            random=True,
        )
    )
    assert same.check == "init-constant"


# --- a mistake or a variant standing in for several names -----------------------------------

TWO_NAMES_TOML = """
[exercise]
title = "Scale, then shift"
entry = "scale"
harness = "harness.py"
inputs = ["x"]

[[case]]
x = [1, 2]
expected = [3, 5]

[[case]]
x = [0, -1, 4]
expected = [1, -1, 9]

[[watch_out]]
id = "no-shift"
mistake = "scale"
stands_in = { shift = "no_shift" }
message = "add 1 in shift, after scale doubles each value."

[[watch_out]]
id = "nothing-done"
mistake = "unscaled"
stands_in = { shift = "no_shift" }
message = "double each value in scale and add 1 in shift."

[variants]
scale_float = { shift = "_shift_float" }
"""

TWO_NAMES = {
    "harness.py": "def drive(learner, x):\n    return learner.shift(learner.scale(x))\n",
    "reference.py": "def scale(x):\n    return [2 * v for v in x]\n\n\n"
    "def shift(x):\n    return [v + 1 for v in x]\n",
    "mistakes.py": "def scale(x):\n    return [2 * v for v in x]\n\n\n"
    "def unscaled(x):\n    return x\n\n\ndef no_shift(x):\n    return x\n",
    "variants.py": "def scale_float(x):\n    return [2.0 * v for v in x]\n\n\n"
    "def _shift_float(x):\n    return [v + 1.0 for v in x]\n",
}


@pytest.mark.usefixtures("no_preload")
def test_a_mistake_and_a_variant_stand_in_for_several_names_the_harness_asks_for(
    pytester: pytest.Pytester, make_exercise: Any
) -> None:
    make_exercise(
        "two",
        toml=TWO_NAMES_TOML,
        solution="def scale(x):\n    raise NotImplementedError\n\n\n"
        "def shift(x):\n    raise NotImplementedError\n",
        **{name.replace(".", "__"): text for name, text in TWO_NAMES.items()},
    )
    check = pytester.runpytest("two", "--lesson-check")
    assert check.ret == pytest.ExitCode.OK, said(check)
    # A learner's shift that forgets the 1 gets the watch-out whose mistake stands in for it.
    (pytester.path / "two" / "solution.py").write_text(
        "def scale(x):\n    return [2 * v for v in x]\n\n\ndef shift(x):\n    return x\n"
    )
    learner = pytester.runpytest("two")
    assert learner.ret == pytest.ExitCode.TESTS_FAILED
    assert "Watch out: add 1 in shift, after scale doubles each value." in said(learner)
    # A variant whose stand-in is wrong fails the check, named as the variant.
    (pytester.path / "two" / "variants.py").write_text(
        TWO_NAMES["variants.py"].replace("v + 1.0", "v + 2.0")
    )
    broken = pytester.runpytest("two", "--lesson-check")
    assert broken.ret == pytest.ExitCode.TESTS_FAILED
    assert "variant scale_float of variants.py is a right answer but fails" in said(broken)
    # A stand-in its file lacks is named as the file spells it, for the author.
    (pytester.path / "two" / "exercise.toml").write_text(
        TWO_NAMES_TOML.replace('"no_shift" }', '"no_shif" }', 1)
    )
    (pytester.path / "two" / "variants.py").write_text(TWO_NAMES["variants.py"])
    misspelt = pytester.runpytest("two", "--lesson-check")
    assert misspelt.ret == pytest.ExitCode.TESTS_FAILED
    assert (
        "two: watch-out no-shift (mistake scale): on cases 1, 2 watch-out undefined-no-shif "
        "fires instead" in said(misspelt)
    )


def test_stands_in_needs_a_harness_and_leaves_the_entry_to_mistake(tmp_path: Path) -> None:
    no_harness = TWO_NAMES_TOML.replace('harness = "harness.py"\n', "").split("[variants]")[0]
    with pytest.raises(model.ExerciseError, match="stands_in names what the lesson's harness"):
        lesson(tmp_path, no_harness, **TWO_NAMES)
    entry = TWO_NAMES_TOML.replace('{ shift = "no_shift" }', '{ scale = "unscaled" }', 1)
    with pytest.raises(model.ExerciseError, match="leave out scale: mistake stands in for"):
        lesson(tmp_path, entry, **TWO_NAMES)
    bad = TWO_NAMES_TOML.replace('{ shift = "_shift_float" }', '{ shift = "not a name" }')
    with pytest.raises(model.ExerciseError, match=r"variants\.scale_float must map Python names"):
        lesson(tmp_path, bad, **TWO_NAMES)


def test_the_editor_schema_takes_stands_in_and_a_variants_table() -> None:
    shipped = json.loads(schema.SHIPPED.read_text())
    jsonschema.validate(tomllib.loads(TWO_NAMES_TOML), shipped)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(tomllib.loads(TWO_NAMES_TOML + "\n[variants.other]\n"), shipped)
