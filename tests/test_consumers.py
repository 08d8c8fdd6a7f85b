"""Each file we write for another program, as that program reads it: no terminal escapes in any
of them, spreadsheets never run a cell, JUnit XML that Jenkins' xUnit and pytest's own schema
accept, and a GitHub Classroom result its reporter can be started with."""

from __future__ import annotations

import base64
import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

import jsonschema
import pytest
import xmlschema

from pytest_lessons.reports import formats, registry

from helpers import DOUBLE_TOML, case_result

Make = Callable[..., Path]
SCHEMAS = Path(__file__).parent / "schemas"

#: Returns its input: the 2 x 2 case of the double exercise gets a mismatch map.
UNCHANGED = "def solve(x):\n    print('\\x1b[35mmy own colour\\x1b[0m')\n    return x\n"


@pytest.mark.usefixtures("no_preload")
def test_no_report_holds_a_colour_escape_whatever_the_colour_settings(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_exercise(solution=UNCHANGED)
    monkeypatch.setenv("PY_COLORS", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    files = [summary]
    for fmt in registry.names(registry.FORMATS):  # every format, a new one too
        result = pytester.runpytest(
            "double",
            "--color=yes",
            f"--lesson-report={fmt}.json",
            f"--lesson-report-format={fmt}",
            f"--junitxml={fmt}.xml",
        )
        result.assert_outcomes(failed=2)
        files += [pytester.path / f"{fmt}.json", pytester.path / f"{fmt}.xml"]
    # The terminal gets the map in colour: a red x where the answer is wrong.
    assert "\x1b[31mx" in result.stdout.str()
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "\x1b" not in text and "\\u001b" not in text, path.name
        assert "[32m" not in text and "[31m" not in text, path.name
    report = json.loads((pytester.path / "json.json").read_text())
    failing = next(r for r in report["results"] if r["case"] == 2)
    assert "where it differs: x is outside tolerance" in failing["message"]
    assert "0  x x" in failing["message"]
    assert "my own colour" in failing["output"]


@pytest.mark.usefixtures("no_preload")
def test_the_gradebook_never_starts_a_cell_with_a_formula(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    make_exercise(toml=DOUBLE_TOML)
    hostile = [
        '=HYPERLINK("example.invalid","open me")',
        "+1+cmd",
        "-2+3",
        "@SUM(A1)",
        "plain",
        "a|b",
    ]
    submissions = pytester.path / "submissions"
    # A tab is a control character: that folder is set aside before any report, named as an escape.
    for learner in [*hostile, "\tTAB"]:
        folder = submissions / learner / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text((pytester.path / "double/solution.py").read_text())
    result = pytester.runpytest(
        "double", f"--lesson-submissions={submissions}", "--lesson-gradebook=grades.csv"
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["skipped in submissions, not learners: \\x09TAB (rename the folder*"]
    )
    with (pytester.path / "grades.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["learner", "exercise", "points", "max_points", "note"]
    learners = {row[0] for row in rows[1:]}
    assert learners == {"'" + name if name[0] in "=+-@" else name for name in hostile}, learners
    for row in rows[1:]:
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r"))
        # Number cells stay plain numbers a spreadsheet sums.
        assert float(row[2]) == 2 and float(row[3]) == 2
    # GitHub's job summary: every learner's row keeps its three cells.
    rows = [line for line in summary.read_text().splitlines() if line.startswith("| ")]
    assert len(rows) == 2 + len(hostile)  # the header, its rule, one row a learner
    assert all(len(re.split(r"(?<!\\)\|", row)) == 5 for row in rows), rows


JUNIT_SCHEMAS = ("junit-10.xsd", "xunit2.xsd")


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_junit_xml_validates_for_jenkins_xunit_and_pytest(
    pytester: pytest.Pytester, make_exercise: Make, family: str
) -> None:
    make_exercise(
        solution="def solve(x):\n    return [v / 2 for v in x] if not isinstance(x[0], list) else x\n",
        toml=DOUBLE_TOML
        + '\n[[watch_out]]\nid = "halved"\nmistake = "halve"\nmessage = "multiply, do not divide"\n',
        mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n",
    )
    make_exercise("broken", toml="[exercise]\ntitle = 'Broken'\ninputs = ['x']\n")
    pytester.makeini(f"[pytest]\njunit_family = {family}\n")
    result = pytester.runpytest("--junitxml=junit.xml")
    result.assert_outcomes(failed=3)
    path = pytester.path / "junit.xml"
    if family == "xunit2":  # xunit1 (legacy) adds file and line attributes: never valid
        for name in JUNIT_SCHEMAS:
            xmlschema.XMLSchema(str(SCHEMAS / name)).validate(str(path))
    root = ET.parse(path).getroot()
    assert all(case.find("properties") is None for case in root.iter("testcase"))
    suite = root.find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert json.loads(properties["lessons:double/exercise.toml::case-1-a-row"]) == {
        "exercise": "double",
        "points": 0.0,
        "max_points": 1.0,
        "watch_out": "halved",
    }
    assert properties["lessons:points"] == "0" and properties["lessons:max_points"] == "2"
    assert json.loads(properties["lessons:broken/exercise.toml::exercise"])["max_points"] == 0
    failure = root.find(".//testcase[@name='case-1-a-row']/failure")
    assert failure is not None and failure.get("message") == "Watch out: multiply, do not divide"


# --- GitHub Classroom ---------------------------------------------------------------------

#: What the reporter (classroom-resources/autograding-grading-reporter, tag v1, dist/main.js)
#: does with the runner's result, re-done here in Python on the same IEEE doubles:
#: src/main.js reads process.env[`${RUNNER.toUpperCase()}_RESULTS`], base64-decodes it and
#: JSON.parse()s it; src/notify-classroom.js sums every test's `score` into totalPoints (when
#: max_score is set) and posts "Points {totalPoints}/{maxPoints}", the grade Classroom records;
#: src/console-results.js and src/helpers/test-helpers.js print, per runner, "Total points for
#: lessons: {(passed / tests) * max_score, toFixed(2)}/{max_score}", counting tests whose status
#: is "pass" and ignoring their scores.
REPORTER = """
import base64, json, os, sys
results = json.loads(base64.b64decode(os.environ["LESSONS_RESULTS"]).decode("utf-8"))
total = 0
for test in results["tests"]:
    total += test["score"]
passed = sum(1 for test in results["tests"] if test["status"] == "pass")
console = passed / len(results["tests"]) * (results["max_score"] or 0)
print(json.dumps({"notice": [total, results["max_score"]], "console": "%.2f" % console,
                  "lines": [t["line_no"] for t in results["tests"]]}))
"""

#: Linux's limit on one environment variable, name and "=" included (MAX_ARG_STRLEN).
MAX_ARG_STRLEN = 131072


def run_reporter(report: Path) -> dict:
    """Hand *report* to the reporter's arithmetic the way the recipe does: base64 in the
    environment variable LESSONS_RESULTS of a new process."""
    encoded = base64.b64encode(report.read_bytes()).decode()
    assert len("LESSONS_RESULTS=") + len(encoded) + 1 <= MAX_ARG_STRLEN
    env = {"PATH": os.environ["PATH"], "LESSONS_RESULTS": encoded}
    run = subprocess.run(
        [sys.executable, "-c", REPORTER], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)


@pytest.mark.skipif(sys.platform != "linux", reason="MAX_ARG_STRLEN is Linux's")
def test_linux_refuses_an_environment_variable_over_128_kib() -> None:
    # The limit run_reporter checks is the one that stopped the reporter: execve fails.
    with pytest.raises(OSError, match="Argument list too long"):
        subprocess.run(
            [sys.executable, "-c", "pass"], env={"LESSONS_RESULTS": "A" * MAX_ARG_STRLEN}
        )


FLOOD_TOML = """
[exercise]
title = "Lesson {n}"
inputs = ["x"]
"""


@pytest.mark.usefixtures("no_preload")
def test_a_classroom_report_of_a_flooding_learner_fits_the_reporters_variable(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # 5 lessons x 10 failing cases; the learner prints 20 kB on every call.
    flood = "def solve(x):\n    print('y' * 20000)\n    return [v + 1 for v in x]\n"
    for n in range(1, 6):
        cases = "".join(
            f'\n[[case]]\nname = "case {c} of lesson {n}"\nx = [{c}, {n}]\nexpected = [{2 * c}, {2 * n}]\n'
            for c in range(1, 11)
        )
        make_exercise(f"lesson_{n}", solution=flood, toml=FLOOD_TOML.format(n=n) + cases)
    result = pytester.runpytest(
        "--lesson-report=classroom.json", "--lesson-report-format=classroom"
    )
    result.assert_outcomes(failed=49, passed=1)  # lesson 1, case 1: x + 1 == 2x
    report = pytester.path / "classroom.json"
    data = json.loads(report.read_text())
    jsonschema.validate(data, json.loads((SCHEMAS / "classroom.schema.json").read_text()))
    assert len(report.read_bytes()) <= formats.CLASSROOM_BUDGET
    assert "yyyy" not in report.read_text()  # no learner output
    assert len(data["tests"]) == 50 and data["max_score"] == 50
    assert data["tests"][1]["message"].startswith("Check")  # the headline, one line
    seen = run_reporter(report)
    assert seen["notice"] == [1, 50]  # the grade Classroom records
    assert seen["console"] == "1.00"  # equal weights: the log's total is ours too
    assert all(line > 0 for line in seen["lines"])  # each written case names its line


@pytest.mark.usefixtures("no_preload")
def test_classroom_totals_with_weighted_and_generated_cases(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    toml = (
        DOUBLE_TOML.replace('inputs = ["x"]', 'inputs = ["x"]\npoints = 10').replace(
            'name = "a row"', 'name = "a row"\npoints = 3'
        )
        + "\n[generate]\ncount = 2\npoints = 0\n[generate.axes]\nn = [3, 4]\n"
        + '[generate.inputs]\nx = ["n"]\n'
    )
    make_exercise(
        # Right on the 2-value row only: case 1 (3 of 4 points) passes.
        solution="def solve(x):\n    return [2 * v for v in x] if len(x) == 2 "
        "and not isinstance(x[0], list) else x\n",
        toml=toml,
        reference__py="def solve(x):\n    return [2 * v for v in x]\n",
    )
    pytester.runpytest("--lesson-report=classroom.json", "--lesson-report-format=classroom")
    data = json.loads((pytester.path / "classroom.json").read_text())
    assert [t["status"] for t in data["tests"]] == ["pass", "fail", "fail", "fail"]
    # Written cases name their [[case]] line; generated ones send 0, the reporter's "no line".
    assert [t["line_no"] for t in data["tests"]][2:] == [0, 0]
    assert all(t["line_no"] > 0 for t in data["tests"][:2])
    seen = run_reporter(pytester.path / "classroom.json")
    # Case 1 (3 points of 4, scaled to 7.5 of 10) passed: Classroom records 7.5 of 10 ...
    assert seen["notice"] == [7.5, 10]
    # ... while the log's per-runner line counts tests alike: 1 of 4 passed x 10 (see
    # docs/ci-grading.md, "What the reporter shows").
    assert seen["console"] == "2.50"


def test_a_huge_course_is_cut_to_the_budget_with_a_notice_and_every_point() -> None:
    results = [
        case_result(
            n % 40 + 1,
            not n % 3,
            exercise=f"lesson_{n // 40}",
            title=f"lesson_{n // 40}",
            path=f"course/lesson_{n // 40}/exercise.toml",
            line=3 + n % 40,
            max_points=0.5,
            headline="Check your scaling: " + "every value is off by a factor. " * 20,
            call="solve(x=" + "[1.0, 2.0, 3.0] " * 30 + ")",
            seconds=0.01,
        )
        for n in range(4000)
    ]
    report = formats.classroom(results)
    text = formats.classroom_text(report)
    assert len(text.encode()) <= formats.CLASSROOM_BUDGET
    assert sum(t["score"] for t in report["tests"]) == pytest.approx(
        formats.totals(results)["points"]
    )
    assert report["max_score"] == 2000
    assert report["tests"][0]["test_code"].startswith("Shortened to fit GitHub Classroom")
    assert report["tests"][0]["name"] == "lesson_0: 14 of 40 cases passed"


# --- Exercism -----------------------------------------------------------------------------


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize(
    ("solution", "words"),
    [
        ("def solve(x)\n    return x\n", "Fix the syntax error in double/solution.py"),
        ("def answer(x):\n    return x\n", "Define a function named solve in double/solution.py"),
    ],
    ids=["syntax-error", "no-function"],
)
def test_an_unloadable_solution_is_a_top_level_exercism_error(
    pytester: pytest.Pytester, make_exercise: Make, solution: str, words: str
) -> None:
    # Exercism's Python runner (test/example-syntax-error/results.json and
    # test/example-lasagna-function-import-error/results.json): status "error", the reason
    # as the top-level message, no tests.
    make_exercise(solution=solution)
    pytester.runpytest("double", "--lesson-report=r.json", "--lesson-report-format=exercism")
    data = json.loads((pytester.path / "r.json").read_text())
    jsonschema.validate(data, json.loads((SCHEMAS / "exercism.schema.json").read_text()))
    assert data["status"] == "error" and data["tests"] == []
    assert data["message"].startswith(words)
    assert "inputs" not in data["message"]  # about the file, not one case


# --- IDEs: VS Code's test explorer, -k, --lf -----------------------------------------------


GENERATED = """
[exercise]
title = "Transpose"
inputs = ["m"]

[[case]]
name = "worked example"
m = [[1, 2, 3], [4, 5, 6]]
expected = [[1, 4], [2, 5], [3, 6]]

[[case]]
m = [[1]]
expected = [[1]]

[generate]
count = 2
[generate.axes]
rows = [2, 3]
cols = [2, 3]
[generate.inputs]
m = ["rows", "cols"]
"""


def test_a_case_name_is_in_its_test_id_and_generated_cases_point_at_generate(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        "transpose",
        toml=GENERATED,
        solution="def solve(m):\n    return m\n",
        reference__py="def solve(m):\n    return [list(c) for c in zip(*m)]\n",
    )
    items, _ = pytester.inline_genitems("transpose")
    # What VS Code's vscode_pytest plugin sends for each test: item.name as the tree's label,
    # item.location[1] + 1 as the line the editor opens.
    seen = [(item.name, item.location[1] + 1) for item in items]
    assert seen == [
        ("case-1-worked-example", 5),
        ("case-2", 10),
        ("generated-3", 14),
        ("generated-4", 14),
    ]
    lines = (pytester.path / "transpose" / "exercise.toml").read_text().splitlines()
    assert lines[5 - 1] == "[[case]]" and lines[14 - 1] == "[generate]"


@pytest.mark.usefixtures("no_preload")
def test_k_selects_a_case_by_its_name_and_lf_reruns_the_failed_ones(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        toml=DOUBLE_TOML, solution="def solve(x):\n    return [2 * v for v in x]\n"
    )  # right on the row, wrong on the 2 x 2 case
    result = pytester.runpytest("double", "-k", "row", "-v")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["double/exercise.toml::case-1-a-row PASSED*"])
    pytester.runpytest("double").assert_outcomes(passed=1, failed=1)
    again = pytester.runpytest("double", "--lf", "-v")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["double/exercise.toml::case-2 FAILED*"])


@pytest.mark.slow
def test_a_plain_pytest_at_the_root_collects_the_lessons_and_not_our_tests() -> None:
    # What a learner (or VS Code's test explorer) gets in this folder: the lessons only, so
    # the developers' test extras (jsonschema, xmlschema) are never imported.
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("exercises/") for line in ids), run.stdout
    assert "exercises/combine_heads/exercise.toml::case-1-worked-example" in ids
    assert "jsonschema" not in run.stdout + run.stderr
