"""The course: every lesson is sound (lesson check), its stub fails kindly and its reference
passes; the authoring check catches broken lessons; the editor schema agrees with the plugin."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

from pytest_lessons import schema
from pytest_lessons.core import course, model
from pytest_lessons.core.words import case_list

from helpers import copy, said

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
LESSONS = sorted(p.parent.name for p in EXERCISES.glob("*/exercise.toml"))


def test_the_course_has_its_tensor_tokenization_embedding_and_attention_lessons() -> None:
    assert {
        "causal_mask",
        "pairwise_scores",
        "token_embeddings",
        "utf8_bytes",
        "pair_counts",
        "merge_pair",
        "top_pair",
        "train_bpe",
        "build_vocab",
        "decode",
        "combine_heads",
        "split_heads",
        "causal_attention",
        "kv_cache_step",
        "grouped_query_attention",
    } <= set(LESSONS)


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_is_well_made(lesson: str) -> None:
    exercise = model.load(EXERCISES / lesson / "exercise.toml")
    assert exercise.task.strip()
    assert 2 <= len(exercise.hints) <= 4
    assert len([w for w in exercise.watch_outs if w.mistake]) >= 2
    assert exercise.solution_steps
    assert exercise.reference is not None and exercise.reference.is_file()
    assert "raise NotImplementedError" in exercise.solution.read_text()
    for case in exercise.cases:
        if case.generated:
            assert case.sizes is not None and len(set(case.sizes.values())) == len(case.sizes)


@pytest.mark.torch
@pytest.mark.course
def test_every_lesson_passes_the_authoring_check(pytester: pytest.Pytester) -> None:
    # The whole course's lesson check, as an author runs it in a copy of the course. It runs
    # with `-m course` only: CI runs the same check as a command over exercises/, spread
    # over the cores (.ci/run), and the suite's own run would repeat it on one core.
    copy(pytester, *LESSONS)
    result = pytester.runpytest("--lesson-check", *LESSONS)
    result.assert_outcomes(passed=len(LESSONS))


@pytest.mark.torch
def test_a_broken_lesson_fails_the_check_naming_exercise_watch_out_and_case(
    pytester: pytest.Pytester,
) -> None:
    copy(pytester, "combine_heads")
    folder = pytester.path / "combine_heads"
    with (folder / "mistakes.py").open("a") as handle:
        handle.write("\n\ndef copy_of_causal(Q, K, V):\n    return with_causal_mask(Q, K, V)\n")
    text = (folder / "exercise.toml").read_text()
    # A mistake that triggers the wrong watch-out, two identical mistakes, a wrong reference.
    text = text.replace('mistake = "scores_not_scaled"', 'mistake = "reshape_without_transpose"')
    text = text.replace("expected = [[5]]", "expected = [[6]]")
    text = text.replace(
        "[[hint]]",
        '[[watch_out]]\nid = "causal-again"\nmistake = "copy_of_causal"\nmessage = "x."\n\n[[hint]]',
        1,
    )
    (folder / "exercise.toml").write_text(text)
    result = pytester.runpytest("--lesson-check", "combine_heads")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*combine_heads: lesson check*",
            "*- combine_heads: the reference fails case 2: the case at line * of exercise.toml "
            "expects [[][[]6[]][]], the reference returns [[][[]5[]][]]",
            "*- combine_heads: watch-out missing-scale (mistake reshape_without_transpose): on cases 1 to 3, 5 to 10 watch-out missing-transpose fires instead",
            "*- combine_heads: watch-outs missing-transpose and missing-scale: their mistakes give the same answer on every case, so the cases cannot tell them apart.*",
            "*- combine_heads: watch-outs causal-mask and causal-again: *",
        ]
    )


@pytest.mark.torch
def test_a_mistake_that_passes_every_case_is_reported(pytester: pytest.Pytester) -> None:
    copy(pytester, "split_heads")
    folder = pytester.path / "split_heads"
    with (folder / "mistakes.py").open("a") as handle:
        handle.write(
            "\n\ndef right_after_all(X, heads):\n"
            "    x = torch.tensor(X, dtype=torch.float64)\n"
            "    return x.reshape(len(X), heads, -1).transpose(0, 1).tolist()\n"
        )
    text = (
        (folder / "exercise.toml")
        .read_text()
        .replace(
            "[[hint]]",
            '[[watch_out]]\nid = "not-a-mistake"\nmistake = "right_after_all"\nmessage = "x."\n\n[[hint]]',
            1,
        )
    )
    (folder / "exercise.toml").write_text(text)
    result = pytester.runpytest("--lesson-check", "split_heads")
    result.stdout.fnmatch_lines(
        [
            "*split_heads: watch-out not-a-mistake (mistake right_after_all) passes every case, so no case can catch it"
        ]
    )


def stub_failures(text: str, lesson: str, all_cases: list[model.Case]) -> None:
    """The stub of *lesson* failed kindly in a run that printed *text*: its NotImplementedError
    is explained under case 1 only, the other public cases are said to fail as case 1 did,
    and a hidden case, whose inputs are never shown, is told on its own."""
    failures, _, lessons = text.partition("= lessons =")
    assert failures.count(f"Write your solution: {lesson} is not implemented yet.") == 1, lesson
    public = [case.number for case in all_cases if not case.hidden]
    # A hidden case among the typed ones (generated cases come after them all) is left out.
    if len(public) > 1:
        row = rf"\n{lesson} +0 of {len(all_cases)} cases +{case_list(public[1:])} failed as case 1 did"
        assert re.search(row, lessons), lesson
    told = [
        section
        for section in re.split(r"\n_{3,} ", failures)
        if section.startswith(f"{lesson}: hidden case")
    ]
    assert len(told) == len(all_cases) - len(public), lesson
    assert all("failed: your code raised NotImplementedError" in t for t in told), lesson


@pytest.mark.torch
def test_every_stub_fails_kindly_and_the_whole_course_ends_with_the_progress_line(
    pytester: pytest.Pytester,
) -> None:
    # One run of the whole course (it replaced a run per lesson): each stub fails kindly and
    # says it once, and the last line tallies the course and each chapter.
    copy(pytester, *LESSONS)
    cases = {
        lesson: model.load(pytester.path / lesson / "exercise.toml").cases for lesson in LESSONS
    }
    solved = ("utf8_bytes", "split_heads")
    # The two lessons solved below fail kindly on their own first (the rest in the course run).
    alone = pytester.runpytest(*solved)
    for lesson in solved:
        stub_failures(alone.stdout.str(), lesson, cases[lesson])
    # One lesson of each chapter solved: a format-2 lesson counts as a format-1 one does.
    for lesson in solved:
        shutil.copy(pytester.path / lesson / "reference.py", pytester.path / lesson / "solution.py")
    result = pytester.runpytest(*LESSONS)
    assert result.ret == 1
    text = result.stdout.str()
    for lesson in LESSONS:
        if lesson not in solved:
            stub_failures(text, lesson, cases[lesson])
    unsolved = [cases[lesson] for lesson in LESSONS if lesson not in solved]
    first = sum(1 + sum(case.hidden for case in c) for c in unsolved)
    same = sum(len(c) for c in unsolved) - first
    last = result.stdout.lines[-1]
    assert re.search(rf"\b{first} failed\b", last) and f"{same} failed the same way" in last, last
    # With the course's course.toml above them, the line tallies each chapter too.
    found = course.load(EXERCISES / "course.toml")
    tallies = ", ".join(
        f"chapter {c.number}: {int(c.number in (2, 7))}/{len(c.lessons)}" for c in found.chapters
    )
    result.stdout.fnmatch_lines([f"lessons: 2/{len(LESSONS)} passed [[]*[]]   {tallies}"])


def test_the_course_readme_lists_every_lesson_in_order() -> None:
    readme = (EXERCISES / "README.md").read_text()
    positions = [readme.find(f"`{lesson}`") for lesson in LESSONS]
    assert all(p >= 0 for p in positions)
    # The order course.toml gives, which runs and reports follow: its chapters in the
    # workshop's order, tensors first.
    chapters = tomllib.loads((EXERCISES / "course.toml").read_text())["chapter"]
    numbers = [chapter["number"] for chapter in chapters]
    assert numbers == sorted(numbers) and numbers[:3] == [1, 2, 3]
    order = [lesson for chapter in chapters for lesson in chapter["lessons"]]
    assert sorted(LESSONS) == sorted(order)
    tokenization = ["utf8_bytes", "pair_counts", "merge_pair", "top_pair", "train_bpe"]
    assert chapters[0]["lessons"][0] == "causal_mask"
    assert chapters[1]["lessons"][:5] == tokenization
    assert sorted(order, key=lambda name: readme.find(f"`{name}`")) == order


# --- the editor schema ----------------------------------------------------------------------


def test_the_shipped_schema_is_built_from_the_model() -> None:
    assert schema.SHIPPED.read_text() == schema.text()


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_file_validates_against_the_schema(lesson: str) -> None:
    data = tomllib.loads((EXERCISES / lesson / "exercise.toml").read_text())
    jsonschema.validate(data, json.loads(schema.SHIPPED.read_text()))


GOOD = (EXERCISES / "combine_heads" / "exercise.toml").read_text()
BAD = {
    "unknown top-level": GOOD + "\n[hnt]\ntitle = 'x'\n",
    "unknown exercise key": GOOD.replace('title = "Combine', 'titel = "x"\ntitle = "Combine'),
    "missing title": GOOD.replace('title = "Combine attention heads"', ""),
    "inputs not a list": GOOD.replace('inputs = ["Q", "K", "V"]', 'inputs = "QKV"'),
    "negative atol": GOOD.replace(
        'inputs = ["Q", "K", "V"]', 'inputs = ["Q", "K", "V"]\natol = -1'
    ),
    "rtol text": GOOD.replace(
        'inputs = ["Q", "K", "V"]', 'inputs = ["Q", "K", "V"]\nrtol = "tight"'
    ),
    "hidden not boolean": GOOD.replace(
        'name = "worked example"', 'name = "worked example"\nhidden = "yes"'
    ),
    "watch-out id": GOOD.replace('id = "missing-transpose"', 'id = "Missing Transpose"'),
    "unknown detector": GOOD.replace('mistake = "with_causal_mask"', 'detector = "sideways"'),
    "hint without text": GOOD.replace(
        'title = "The idea"\ntext = """', 'title = "The idea"\nnote = """'
    ),
    "generate count": GOOD.replace("count = 6", "count = 0"),
    "generate axis": GOOD.replace("heads = [2, 4]", "heads = [2, 100]"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_the_schema_and_the_plugin_reject_the_same_broken_files(kind: str, tmp_path: Path) -> None:
    text = BAD[kind]
    assert text != GOOD
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(tomllib.loads(text), json.loads(schema.SHIPPED.read_text()))
    folder = tmp_path / "combine_heads"
    shutil.copytree(EXERCISES / "combine_heads", folder)
    (folder / "exercise.toml").write_text(text)
    with pytest.raises(model.ExerciseError):
        model.load(folder / "exercise.toml")


@pytest.mark.torch
def test_a_watch_out_that_tells_of_a_call_fires_only_for_code_that_makes_it(
    pytester: pytest.Pytester,
) -> None:
    # Issue 22: a reshape giving the answer of the catalogued torch.split mistake was told
    # "torch.split takes the size of each piece". A watch-out's `code` must match the code.
    copy(pytester, "split_heads")
    solution = pytester.path / "split_heads" / "solution.py"
    same_answer = (
        "import torch\n\n\ndef solve(X, heads):\n    x = torch.tensor(X, dtype=torch.float64)\n"
        "    return x.reshape(x.shape[0], -1, heads).permute(1, 0, 2).tolist()\n"
    )
    split = same_answer.replace(
        "x.reshape(x.shape[0], -1, heads).permute(1, 0, 2)",
        "torch.stack(torch.split(x, heads, dim=-1))",
    )
    seen = {}
    for name, code in (("reshape", same_answer), ("split", split)):
        solution.write_text(code)
        result = pytester.runpytest("split_heads", "--lesson-report=r.json")
        report = json.loads((pytester.path / "r.json").read_text())["results"]
        seen[name] = (said(result), {r["diagnosis"] for r in report if not r["passed"]})
    text, diagnoses = seen["reshape"]
    assert "torch.split" not in text and "split-takes-a-size" not in diagnoses
    text, diagnoses = seen["split"]
    assert "torch.split takes the size of each piece" in text
    assert diagnoses == {"split-takes-a-size"}
    # The lesson check proves each pattern is in its own mistake function's source.
    toml = pytester.path / "split_heads" / "exercise.toml"
    text = toml.read_text().replace("code = '\\bsplit\\('", "code = 'chunk'")
    # ... and that every watch-out's headline is whole in every report.
    text = text.replace("finish with .transpose(0, 1)", "finish with .transpose(0, 1) " * 20)
    toml.write_text(text)
    check = said(pytester.runpytest("--lesson-check", "split_heads"))
    assert (
        "split_heads: watch-out time-still-first: its message makes a headline of 721 "
        "characters; shorten it to 500, the most every report shows whole"
    ) in check
    assert (
        "split_heads: watch-out split-takes-a-size (mistake split_by_heads): its code pattern "
        "'chunk' is not in split_by_heads's source, so the watch-out would not fire for the "
        "code it tells of"
    ) in check
