"""Report formats straight from plain results: each field a consumer reads, without a pytest run.

The end-to-end runs (and the consumers' own schemas) are in test_autograde.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core.results import CaseResult
from pytest_lessons.reports import formats, registry, tallies

from helpers import case_result


def result(case: int, passed: bool, **changes: Any) -> CaseResult:
    """Case *case* of the lesson "double"; its line, call and failure name the case."""
    failure = "" if passed else f"Check case {case}. Why."
    mine = {
        "exercise": "double",
        "title": "Double",
        "path": "/course/double/exercise.toml",
        "line": 5 + case,
        "message": failure,
        "headline": failure,
        "call": f"solve(x={case})",
        "seconds": 0.0125,
    }
    return case_result(case, passed, **{**mine, **changes})


RESULTS = [
    result(2, False, diagnosis="halved", diagnosis_kind="watch_out", output="hi\n"),
    result(1, True),
    result(3, False, hidden=True, status="error", label="hidden case 3"),
]


def test_results_are_ordered_by_learner_exercise_and_case() -> None:
    rows = [
        result(2, True, learner="bo"),
        result(10, True, learner="ada"),
        result(9, True, learner="ada"),
        result(1, True, learner="ada", path="/course/a/exercise.toml"),
    ]
    assert [(r.learner, r.path[8], r.case) for r in formats.ordered(rows)] == [
        ("ada", "a", 1),
        ("ada", "d", 9),
        ("ada", "d", 10),
        ("bo", "d", 2),
    ]


def test_totals_keep_public_and_hidden_apart() -> None:
    rows = [*RESULTS, result(4, False, status="broken", exercise="other", points=0)]
    assert formats.totals(rows) == {
        "points": 1.0,
        "max_points": 4.0,
        "public_passed": 1,
        "public": 2,
        "hidden_passed": 0,
        "hidden": 1,
        "broken": ["other"],
    }
    assert formats.totals([result(1, True, points=0.1), result(2, True, points=0.2)])[
        "points"
    ] == pytest.approx(0.3, abs=0)


def test_the_summary_sentence() -> None:
    assert formats.summary_text(RESULTS) == (
        "1 of 3 points; public cases 1 of 2 passed, hidden cases 0 of 1 passed."
    )
    assert formats.summary_text(RESULTS[:2]) == "1 of 2 points; public cases 1 of 2 passed."
    broken = result(1, False, status="broken", exercise="b", max_points=0)
    assert formats.summary_text([result(1, True), broken]) == (
        "1 of 1 points; public cases 1 of 1 passed; not graded, their exercise.toml is broken: b."
    )


@pytest.mark.parametrize("visibility", ["hidden", "after_due_date", "after_published", "visible"])
def test_gradescope_results(visibility: str) -> None:
    data = formats.gradescope(RESULTS, 1.23456, visibility)
    # With a hidden case, the time is the public cases' own (2 x 0.0125 s), not the run's.
    assert data["score"] == 1.0 and data["execution_time"] == 0.025
    later = {
        "hidden": "are never shown here",
        "after_due_date": "are shown after the due date",
        "after_published": "are shown once grades are published",
    }
    if visibility == "visible":
        assert data["output"] == formats.summary_text(RESULTS)
    else:  # a hidden case's result stays out of the summary shown at once, as out of its test
        public = [r for r in RESULTS if not r.hidden]
        assert any(r.hidden for r in RESULTS) and "hidden cases 0" not in data["output"]
        assert data["output"] == (
            f"Public cases {sum(r.passed for r in public)} of {len(public)} passed; "
            f"the hidden cases' results {later[visibility]}."
        )
    assert (data["visibility"], data["stdout_visibility"]) == ("visible", "hidden")
    assert data["tests"] == [
        {
            "name": "double: case 1",
            "number": "1",
            "score": 1.0,
            "max_score": 1.0,
            "status": "passed",
            "output": "passed",
            "visibility": "visible",
            "tags": ["double"],
        },
        {
            "name": "double: case 2",
            "number": "2",
            "score": 0.0,
            "max_score": 1.0,
            "status": "failed",
            "output": "Check case 2. Why.",
            "visibility": "visible",
            "tags": ["double", "halved"],
        },
        {
            "name": "double: hidden case 3",
            "number": "3",
            "score": 0.0,
            "max_score": 1.0,
            "status": "failed",
            "output": "Check case 3. Why.",
            "visibility": visibility,
            "tags": ["double"],
        },
    ]


def test_gradescope_names_the_learner_when_grading_a_class() -> None:
    data = formats.gradescope([result(1, True, learner="ada")], 0)
    assert data["tests"][0]["name"] == "ada: double: case 1"
    assert data["tests"][0]["visibility"] == "visible"


def test_classroom_results() -> None:
    data = formats.classroom(RESULTS)
    assert (data["version"], data["status"], data["max_score"]) == (1, "fail", 3.0)
    assert data["tests"] == [
        {
            "name": "double: case 1",
            "status": "pass",
            "score": 1.0,
            "message": "",
            "test_code": "solve(x=1)",
            "filename": "double/exercise.toml",
            "line_no": 6,
            "duration": 12,
        },
        {
            "name": "double: case 2",
            "status": "fail",
            "score": 0.0,
            "message": "Check case 2. Why.",
            "test_code": "solve(x=2)",
            "filename": "double/exercise.toml",
            "line_no": 7,
            "duration": 12,
        },
        {
            "name": "double: hidden case 3",
            "status": "error",
            "score": 0.0,
            "message": "Check case 3. Why.",
            "test_code": "solve(x=3)",
            "filename": "double/exercise.toml",
            "line_no": 8,
            "duration": 12,
        },
    ]


def test_classroom_status_of_the_whole_run() -> None:
    assert formats.classroom([result(1, True), result(2, True)])["status"] == "pass"
    assert formats.classroom([result(1, True), result(2, False)])["status"] == "fail"
    assert formats.classroom([result(1, True), result(2, False, status="error")])["status"] == (
        "fail"
    )
    internal = [result(1, False, status="internal"), result(2, False, status="broken")]
    assert formats.classroom(internal)["status"] == "error"
    assert formats.classroom([])["status"] == "error"
    bare = formats.classroom([result(1, True, line=None, path="x.toml")])["tests"][0]
    assert (bare["line_no"], bare["filename"]) == (0, "x.toml")
    windows = formats.classroom([result(1, True, path="C:\\course\\d\\exercise.toml")])
    assert windows["tests"][0]["filename"] == "d/exercise.toml"
    no_call = result(1, True, call="", seconds=0.0)
    test = formats.classroom([no_call])["tests"][0]
    assert (test["test_code"], test["duration"]) == ("", 0)


def test_exercism_results() -> None:
    other = result(1, True, path="/course/zeta/exercise.toml", exercise="zeta")
    data = formats.exercism([*RESULTS, other])
    assert (data["version"], data["status"]) == (3, "fail") and "message" not in data
    assert data["tests"] == [
        {"name": "double: case 1", "status": "pass", "test_code": "solve(x=1)", "task_id": 1},
        {
            "name": "double: case 2",
            "status": "fail",
            "test_code": "solve(x=2)",
            "task_id": 1,
            "message": "Check case 2. Why.",
            "output": "hi\n",
        },
        {
            "name": "double: hidden case 3",
            "status": "error",
            "test_code": "solve(x=3)",
            "task_id": 1,
            "message": "Check case 3. Why.",
        },
        {"name": "zeta: case 1", "status": "pass", "test_code": "solve(x=1)", "task_id": 2},
    ]
    assert formats.exercism(RESULTS[1:2])["status"] == "pass"


def test_exercism_cuts_output_at_500_characters_with_a_notice() -> None:
    exactly = formats.exercism([result(1, True, output="x" * 500)])["tests"][0]["output"]
    assert exactly == "x" * 500
    cut = formats.exercism([result(1, True, output="y" * 501)])["tests"][0]["output"]
    assert len(cut) == 500 and cut.endswith("y" + formats.EXERCISM_CUT)
    assert "output" not in formats.exercism([result(1, True)])["tests"][0]
    no_output = result(1, True, output="", call="")
    assert formats.exercism([no_output])["tests"][0] == {
        "name": "double: case 1",
        "status": "pass",
        "test_code": "",
        "task_id": 1,
    }


def test_exercism_says_error_when_nothing_could_be_graded() -> None:
    assert formats.exercism([]) == {
        "version": 3,
        "tests": [],
        "status": "error",
        "message": "No exercise was graded.",
    }
    broken = formats.exercism([result(1, False, status="broken", max_points=0)])
    assert broken["status"] == "error"
    assert broken["message"] == (
        "0 of 0 points; public cases 0 of 0 passed; not graded, their exercise.toml is "
        "broken: double."
    )
    mixed = formats.exercism([result(1, False, status="internal"), result(2, True)])
    assert mixed["status"] == "fail"


def test_our_json_report_has_every_result_and_the_totals() -> None:
    data = formats.full(RESULTS, 2.0004)
    assert data["format"] == "pytest-lessons" and data["version"] == 1
    assert data["seconds"] == 0.025  # a hidden case among them: the public cases' time
    assert formats.full(RESULTS[:2], 2.0004)["seconds"] == 2.0
    assert data["totals"] == formats.totals(RESULTS)
    assert data["summary"] == formats.summary_text(RESULTS)
    assert data["mistakes"] == {"double": {"halved": 1}}
    assert data["results"] == [r.to_dict() for r in formats.ordered(RESULTS)]


def json_data(fmt: str, rows: list[CaseResult], seconds: float) -> dict[str, Any] | None:
    """The data a JSON format's file holds for *rows* (hidden cases "hidden" on Gradescope);
    None for a format that is not JSON, which these tests leave to its consumer's test. A
    new JSON format's data goes here."""
    data: dict[str, Callable[[], dict[str, Any]]] = {
        "gradescope": lambda: formats.gradescope(rows, seconds, "hidden"),
        "classroom": lambda: formats.classroom(rows),
        "exercism": lambda: formats.exercism(rows),
        "json": lambda: formats.full(rows, seconds),
    }
    return data[fmt]() if fmt in data else None


@pytest.mark.parametrize("fmt", registry.names(registry.FORMATS))
def test_render_writes_indented_json_with_a_final_newline(fmt: str) -> None:
    rows = [result(1, True, message="", label="café")]
    text = registry.render(fmt, rows, 1.0, "hidden")
    assert text.endswith("\n") and "café" in text
    expected = json_data(fmt, rows, 1.0)
    if expected is None:  # not JSON: its consumer's test in tests/test_consumers.py reads it
        return
    assert text.endswith("}\n")
    assert ("\n  " in text) is (fmt != "classroom")  # classroom's travels in one variable
    assert json.loads(text) == expected


def test_the_mistake_table_counts_each_learner_once_most_common_first() -> None:
    rows = [
        result(1, False, learner="a", diagnosis="x", diagnosis_kind="watch_out"),
        result(2, False, learner="a", diagnosis="x", diagnosis_kind="watch_out"),
        result(1, False, learner="a", diagnosis="y", diagnosis_kind="watch_out"),
        result(1, False, learner="b", diagnosis="y", diagnosis_kind="watch_out"),
        result(1, False, learner="c", diagnosis="rows", diagnosis_kind="detector"),
        result(1, False, learner="c", exercise="a", diagnosis="z", diagnosis_kind="watch_out"),
    ]
    table = formats.mistake_table(rows)
    assert table == {"a": {"z": 1}, "double": {"y": 2, "x": 1}}
    assert list(table) == ["a", "double"] and list(table["double"]) == ["y", "x"]


def test_the_step_summary_table() -> None:
    long = "Make it " + "much " * 30 + "shorter. Then more."
    rows = [
        result(1, True, learner="ada"),
        result(2, True, learner="ada"),
        result(1, False, learner="bo", headline="Fix a|b. Because."),
        result(2, False, learner="bo", headline=long),
        result(3, False, learner="bo", headline="No full stop"),
        result(4, False, learner="bo", headline="Not shown."),
        result(1, True),
    ]
    text = formats.step_summary(rows)
    lines = text.splitlines()
    assert lines[:6] == [
        "## pytest-lessons",
        "",
        formats.summary_text(rows),
        "",
        "| exercise | points | result |",
        "| --- | --- | --- |",
    ]
    assert lines[6] == "| double | 1 / 1 | passed |"
    assert lines[7] == "| ada: double | 2 / 2 | passed |"
    bo = lines[8]
    assert bo.startswith("| bo: double | 0 / 4 | case 1: Fix a\\|b.; case 2: Make it much ")
    assert "much … ; case 3: No full stop |" in bo.replace("…;", "… ;")
    assert "Not shown" not in bo
    cell = bo.split("case 2: ")[1].split(" …")[0]
    assert len(cell + " …") <= 120 and cell.endswith("much")
    assert text.endswith("|\n")


def test_a_long_word_is_cut_without_a_space_to_cut_at() -> None:
    rows = [result(1, False, headline="x" * 200)]
    cell = formats.step_summary(rows).splitlines()[-1]
    assert "case 1: " + "x" * 118 + " … |" in cell


@pytest.mark.parametrize(
    ("headline", "cell"),
    [
        ("Do A. Then B. Then C.", "Do A."),
        (". Odd start.", "."),
        ("x" * 119 + ".", "x" * 119 + "."),  # 120 characters: shown whole
        ("w" * 117 + " tail" + "z" * 10, "w" * 117 + " …"),  # a space at 117: cut there
        ("w" * 118 + " tail" + "z" * 10, "w" * 118 + " …"),  # a space at 118: still cut there
        ("word, " * 30, "word, " * 18 + "word …"),  # the cut drops a trailing comma
        ("fooX " * 30, "fooX " * 22 + "fooX …"),
        ("a " + "y" * 200, "a …"),
    ],
)
def test_a_step_summary_cell_is_the_first_sentence_cut_at_a_word(headline: str, cell: str) -> None:
    line = formats.step_summary([result(1, False, headline=headline)]).splitlines()[-1]
    assert line == f"| double | 0 / 1 | case 1: {cell} |"


def test_render_is_exactly_the_format_as_indented_json() -> None:
    rows = [result(1, True, label="café"), result(2, False, hidden=True)]
    for fmt in registry.names(registry.FORMATS):
        text = registry.render(fmt, rows, 1.23456, "hidden")
        data = json_data(fmt, rows, 1.23456)
        if data is None:
            continue
        if fmt == "classroom":
            assert text == formats.classroom_text(data)
        else:
            assert text == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    public = [r for r in rows if not r.hidden]
    assert json.loads(registry.render("json", public, 1.23456, "x"))["seconds"] == 1.235
    gradescope = json.loads(registry.render("gradescope", rows, 0, "after_due_date"))
    assert [t["visibility"] for t in gradescope["tests"]] == ["visible", "after_due_date"]


def test_exercism_says_error_when_the_grader_failed_every_case() -> None:
    internal = formats.exercism([result(1, False, status="internal")])
    assert internal["status"] == "error"
    assert internal["message"] == "0 of 1 points; public cases 0 of 1 passed."


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/srv/class/ada/course/double/exercise.toml", "double/exercise.toml"),
        ("double\\exercise.toml", "double/exercise.toml"),
        ("double/exercise.toml", "double/exercise.toml"),
        ("exercise.toml", "exercise.toml"),
    ],
)
def test_classroom_names_the_exercise_file_by_its_last_two_parts(path: str, shown: str) -> None:
    assert formats.classroom([result(1, True, path=path)])["tests"][0]["filename"] == shown


def test_a_cell_is_cut_at_the_last_space_before_the_limit() -> None:
    headline = "ab " + "w" * 115 + " tail" + "z" * 10
    line = formats.step_summary([result(1, False, headline=headline)]).splitlines()[-1]
    assert line == "| double | 0 / 1 | case 1: ab " + "w" * 115 + " … |"


def test_classroom_groups_one_test_per_learner_and_exercise() -> None:
    zeta = "/course/zeta/exercise.toml"
    rows = [
        result(2, False, learner="ada", headline="H" * 150, seconds=0.5, points=0.0),
        result(1, True, learner="ada", points=0.1, seconds=0.25),
        result(3, True, learner="ada", points=0.2, seconds=0.0),
        result(1, False, learner="ada", exercise="zeta", path=zeta, status="error", line=40),
        result(1, True, learner="bo", generated=True, seconds=1.0),
    ]
    tests = formats._classroom_groups(formats.ordered(rows), True)
    assert tests == [
        {
            "name": "ada: double: 2 of 3 cases passed",
            "status": "fail",
            "score": 0.3,
            "message": "H" * 99 + "…",
            "test_code": "",
            "filename": "double/exercise.toml",
            "line_no": 0,
            "duration": 750,
        },
        {
            "name": "ada: zeta: 0 of 1 cases passed",
            "status": "error",
            "score": 0.0,
            "message": "Check case 1. Why.",
            "test_code": "",
            "filename": "zeta/exercise.toml",
            "line_no": 0,
            "duration": 12,
        },
        {
            "name": "bo: double: 1 of 1 cases passed",
            "status": "pass",
            "score": 1.0,
            "message": "",
            "test_code": "",
            "filename": "double/exercise.toml",
            "line_no": 0,
            "duration": 1000,
        },
    ]
    assert formats._classroom_groups(formats.ordered(rows), False) == [
        {
            "name": "all exercises: 3 of 5 cases passed",
            "status": "fail",
            "score": 1.3,
            "message": "H" * 99 + "…",
            "test_code": "",
            "filename": "",
            "line_no": 0,
            "duration": 1762,
        }
    ]


def test_classroom_groups_of_ones_own_solution_name_the_exercise_alone() -> None:
    rows = [result(1, True), result(2, False, status="error", headline="Run it.")]
    (test,) = formats._classroom_groups(rows, True)
    assert (test["name"], test["status"], test["message"]) == (
        "double: 1 of 2 cases passed",
        "error",
        "Run it.",
    )
    (run,) = formats._classroom_groups([result(1, True), result(2, True)], False)
    assert (run["name"], run["status"], run["score"]) == (
        "all exercises: 2 of 2 cases passed",
        "pass",
        2.0,
    )
    (long,) = formats._classroom_groups([result(1, True, exercise="e" * 400)], True)
    assert long["name"] == "e" * 299 + "…"


def classroom_bytes(report: dict[str, Any]) -> int:
    return len(formats.classroom_text(report).encode())


def test_classroom_steps_down_until_it_fits_its_budget_and_keeps_every_point() -> None:
    zeta = "/course/zeta/exercise.toml"
    rows = [
        result(n, n == 1, headline=f"{n} {'é' * 150}", call="solve(" + "x" * 200 + ")")
        for n in (3, 1, 2)
    ] + [
        result(n, False, exercise="zeta", path=zeta, headline=f"Zeta {n}.", call="z" * 200)
        for n in (1, 2, 3)
    ]
    whole = formats.classroom(rows)
    assert [t["name"] for t in whole["tests"]] == [
        *(f"double: case {n}" for n in (1, 2, 3)),
        *(f"zeta: case {n}" for n in (1, 2, 3)),
    ]
    assert [t["message"] for t in whole["tests"][:2]] == ["", "2 " + "é" * 150]
    assert whole["tests"][0]["test_code"] == "solve(" + "x" * 200 + ")"
    assert formats.classroom(rows, classroom_bytes(whole)) == whole

    short = formats.classroom(rows, classroom_bytes(whole) - 1)
    assert [t["test_code"] for t in short["tests"]] == [
        formats.CLASSROOM_CUT.format(how="short messages"),
        *[""] * 5,
    ]
    assert short["tests"][1]["message"] == "2 " + "é" * 97 + "…"
    assert [t["score"] for t in short["tests"]] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert formats.classroom(rows, classroom_bytes(short)) == short

    grouped = formats.classroom(rows, classroom_bytes(short) - 1)
    assert grouped == {
        "version": 1,
        "status": "fail",
        "max_score": 6.0,
        "tests": [
            {
                "name": "double: 1 of 3 cases passed",
                "status": "fail",
                "score": 1.0,
                "message": "2 " + "é" * 97 + "…",
                "test_code": formats.CLASSROOM_CUT.format(how="one test per exercise"),
                "filename": "double/exercise.toml",
                "line_no": 0,
                "duration": 38,
            },
            {
                "name": "zeta: 0 of 3 cases passed",
                "status": "fail",
                "score": 0.0,
                "message": "Zeta 1.",
                "test_code": "",
                "filename": "zeta/exercise.toml",
                "line_no": 0,
                "duration": 38,
            },
        ],
    }
    assert formats.classroom(rows, classroom_bytes(grouped)) == grouped

    one = formats.classroom(rows, classroom_bytes(grouped) - 1)
    assert one["tests"] == [
        {
            "name": "all exercises: 1 of 6 cases passed",
            "status": "fail",
            "score": 1.0,
            "message": "2 " + "é" * 97 + "…",
            "test_code": formats.CLASSROOM_CUT.format(how="one test for the run"),
            "filename": "",
            "line_no": 0,
            "duration": 75,
        }
    ]
    assert (one["version"], one["status"], one["max_score"]) == (1, "fail", 6.0)
    # Nothing smaller exists: the last step is what the file holds, whatever the budget.
    assert formats.classroom(rows, 0) == one


def test_the_classroom_budget_is_counted_in_bytes_of_compact_json() -> None:
    assert formats.classroom_text({"a": ["é", 1]}) == '{"a":["é",1]}\n'
    assert formats.CLASSROOM_BUDGET == 65536
    assert formats.classroom([]) == {"version": 1, "status": "error", "max_score": 0, "tests": []}


def test_an_empty_classroom_result_fits_any_budget_as_it_is() -> None:
    empty = {"version": 1, "status": "error", "max_score": 0, "tests": []}
    assert formats.classroom([], 0) == empty


def test_exercism_reports_an_unusable_solution_as_one_error_about_the_file() -> None:
    def unusable(case: int, message: str, **changes: Any) -> CaseResult:
        return result(case, False, status="error", unloadable=True, message=message, **changes)

    rows = [
        unusable(2, "Fix solution.py, line 2.\n\n  inputs x = 2\n"),
        unusable(1, "Fix solution.py, line 3.\n\n  your code printed: hi\n"),
        result(3, False, status="broken", exercise="other", path="/course/o/exercise.toml"),
    ]
    assert formats.exercism(rows) == {
        "version": 3,
        "tests": [],
        "status": "error",
        "message": "Fix solution.py, line 3.",
    }
    assert formats.exercism([unusable(1, "Add solve to solution.py.\n\n")])["message"] == (
        "Add solve to solution.py."
    )
    kept = "Add solve.\n\n  inputs: a\n\n inputs x"
    assert (
        formats.exercism([unusable(1, kept)])["message"] == "Add solve.\n\n  inputs: a\n\n inputs x"
    )
    internal = formats.exercism([unusable(1, "Fix it."), result(2, False, status="internal")])
    assert (internal["status"], internal["message"], internal["tests"]) == ("error", "Fix it.", [])
    graded = formats.exercism([unusable(1, "Fix it."), result(2, True)])
    assert graded["status"] == "fail" and "message" not in graded
    assert [t["status"] for t in graded["tests"]] == ["error", "pass"]


def test_points_are_rounded_to_six_places_in_totals_and_classroom_groups() -> None:
    third = result(1, True, points=1 / 3, max_points=1 / 3)
    assert formats.totals([third])["points"] == 0.333333
    assert formats.totals([third])["max_points"] == 0.333333
    assert formats.totals([result(1, False, max_points=0.4)])["max_points"] == 0.4
    assert formats._classroom_groups([third], True)[0]["score"] == 0.333333


def test_the_summary_lists_every_broken_exercise() -> None:
    broken = [result(1, False, status="broken", exercise=e, max_points=0) for e in ("a", "b")]
    assert formats.summary_text(broken).endswith("exercise.toml is broken: a, b.")


def test_default_visibility_of_hidden_cases_and_default_time() -> None:
    hidden = [result(1, False, hidden=True)]
    assert formats.gradescope(hidden, 0)["tests"][0]["visibility"] == "after_published"
    rendered = json.loads(registry.render("gradescope", hidden))
    assert rendered["tests"][0]["visibility"] == "after_published"
    assert rendered["execution_time"] == 0
    assert json.loads(registry.render("json", hidden))["seconds"] == 0


def test_classroom_cuts_a_name_over_300_characters_at_a_word() -> None:
    exactly = formats.classroom([result(1, True, label="l" * 292)])["tests"][0]["name"]
    assert exactly == "double: " + "l" * 292
    cut = formats.classroom([result(1, True, label="l" * 290 + " tail")])["tests"][0]["name"]
    assert cut == "double: " + "l" * 290 + "…"


def test_a_generated_case_has_no_line_in_classroom() -> None:
    test = formats.classroom([result(1, True, generated=True, line=7)])["tests"][0]
    assert test["line_no"] == 0


def test_an_unusable_solution_message_keeps_its_own_trailing_characters() -> None:
    message = "Define X in solution.py: X\t\n\n"
    unusable = result(1, False, status="error", unloadable=True, message=message)
    assert formats.exercism([unusable])["message"] == "Define X in solution.py: X\t"
    ending = result(1, False, status="error", unloadable=True, message="Define X\n")
    assert formats.exercism([ending])["message"] == "Define X"


@pytest.mark.parametrize("start", formats.FORMULA_STARTS)
def test_a_csv_cell_that_would_start_a_formula_is_kept_as_text(start: str) -> None:
    assert formats.FORMULA_STARTS == ("=", "+", "-", "@", "\t", "\r")
    assert formats.text_cell(start + "SUM(A1)") == "'" + start + "SUM(A1)"
    assert formats.text_cell("ada" + start) == "ada" + start


def test_two_names_never_share_a_csv_cell() -> None:
    """A red team's learners ``=x`` and ``'=x`` both became ``'=x``: a gradebook's two rows
    could not be told apart, and a regrade that moved one said nothing changed."""
    names = ["=x", "'=x", "''=x", "x", "'x", "+1", "'+1"]
    assert len({formats.text_cell(name) for name in names}) == len(names)
    assert formats.text_cell("'=x") == "''=x" and formats.text_cell("'x") == "''x"


def test_a_step_summary_row_escapes_a_bar_in_the_learners_name() -> None:
    rows = [result(1, True, learner="a|b", exercise="c|d")]
    assert formats.step_summary(rows).splitlines()[-1] == "| a\\|b: c\\|d | 1 / 1 | passed |"


def test_a_step_summary_cell_without_a_space_after_the_first_character_is_cut_at_the_limit() -> (
    None
):
    headline = " " + "w" * 200
    line = formats.step_summary([result(1, False, headline=headline)]).splitlines()[-1]
    assert line == "| double | 0 / 1 | case 1:  " + "w" * 117 + " … |"


def test_a_short_message_stays_whole_when_classroom_drops_the_code_to_fit() -> None:
    long_call = "solve(x=" + "1, " * 3000 + ")"
    results = [result(n, False, call=long_call) for n in range(1, 30)]
    report = formats.classroom(results, budget=8_000)
    assert report["tests"][0]["test_code"].startswith("Shortened to fit GitHub Classroom")
    assert "short messages" in report["tests"][0]["test_code"]
    assert [t["message"] for t in report["tests"][:2]] == [
        "Check case 1. Why.",
        "Check case 2. Why.",
    ]


def test_every_format_lists_exercises_in_the_course_order_and_says_not_handed_in(
    tmp_path: Path,
) -> None:
    for name in ("zeta", "alpha"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "exercise.toml").write_text("[exercise]\ninputs = ['x']\n")
    (tmp_path / "course.toml").write_text('[course]\nlessons = ["zeta", "alpha"]\n')
    rows = [
        result(1, True, exercise="alpha", path=str(tmp_path / "alpha" / "exercise.toml")),
        result(
            1,
            False,
            exercise="zeta",
            path=str(tmp_path / "zeta" / "exercise.toml"),
            status="error",
            fault="setup missing_file",
        ),
    ]
    scope = formats.gradescope(rows, 0)
    assert [t["tags"][0] for t in scope["tests"]] == ["zeta", "alpha"]
    assert scope["tests"][0]["output"].startswith(
        "Not handed in: your submission has no file for zeta, so this case scores 0 of 1."
    )
    assert [t["name"] for t in formats.classroom(rows)["tests"]] == [
        "zeta: case 1",
        "alpha: case 1",
    ]
    tests = formats.exercism(rows)["tests"]
    assert [(t["name"], t["task_id"]) for t in tests] == [("zeta: case 1", 1), ("alpha: case 1", 2)]
    full = formats.full(rows, 0)
    assert full["exercises"] == ["zeta", "alpha"]
    assert [r["exercise"] for r in full["results"]] == ["zeta", "alpha"]
    # A merge without the course keeps the order its shard recorded.
    (tmp_path / "course.toml").unlink()
    assert formats.exercise_order(rows) == ["alpha", "zeta"]
    assert formats.exercise_order(rows, ["zeta", "alpha"]) == ["zeta", "alpha"]


def test_results_are_grouped_by_exercise_file_in_course_order_each_by_learner_then_case() -> None:
    rows = [
        case_result(2, True, exercise="b", path="/c/b/exercise.toml", learner="zed", title="B"),
        case_result(1, False, exercise="a", path="/c/a/exercise.toml", learner="zed", title=""),
        case_result(1, True, exercise="b", path="/c/b/exercise.toml", learner="amy", title="B"),
        case_result(2, True, exercise="b", path="/c/b/exercise.toml", learner="amy", title="B"),
    ]
    groups = tallies.by_exercise(rows, order=("b", "a"))
    assert [(g.slug, g.path, g.title) for g in groups] == [
        ("b", "/c/b/exercise.toml", "B"),
        ("a", "/c/a/exercise.toml", "a"),
    ]
    assert [(r.learner, r.case) for r in groups[0].results] == [("amy", 1), ("amy", 2), ("zed", 2)]
    # Without a recorded order (and no course.toml): by path.
    assert [g.slug for g in tallies.by_exercise(rows)] == ["a", "b"]
