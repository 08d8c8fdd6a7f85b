"""Each file we write for another program, as that program reads it: no terminal escapes in any
of them, spreadsheets never run a cell, JUnit XML that Jenkins' xUnit and pytest's own schema
accept, and a GitHub Classroom result its reporter can be started with."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

import pytest
import xmlschema

from conftest import DOUBLE_TOML

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
    for fmt in ("gradescope", "classroom", "exercism", "json"):
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
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(toml=DOUBLE_TOML)
    hostile = [
        '=HYPERLINK("example.invalid","open me")',
        "+1+cmd",
        "-2+3",
        "@SUM(A1)",
        "\tTAB",
        "plain",
    ]
    submissions = pytester.path / "submissions"
    for learner in hostile:
        folder = submissions / learner / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text((pytester.path / "double/solution.py").read_text())
    result = pytester.runpytest(
        "double", f"--lesson-submissions={submissions}", "--lesson-gradebook=grades.csv"
    )
    assert result.ret == 0
    with (pytester.path / "grades.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["learner", "exercise", "points", "max_points"]
    learners = {row[0] for row in rows[1:]}
    assert learners == {"'" + name if name[0] in "=+-@\t" else name for name in hostile}, learners
    for row in rows[1:]:
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r"))
        # Number cells stay plain numbers a spreadsheet sums.
        assert float(row[2]) == 2 and float(row[3]) == 2


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
    assert json.loads(properties["lessons:double/exercise.toml::case-1"]) == {
        "exercise": "double",
        "points": 0.0,
        "max_points": 1.0,
        "watch_out": "halved",
    }
    assert properties["lessons:points"] == "0" and properties["lessons:max_points"] == "2"
    assert json.loads(properties["lessons:broken/exercise.toml::exercise"])["max_points"] == 0
    failure = root.find(".//testcase[@name='case-1']/failure")
    assert failure is not None and failure.get("message") == "Watch out: multiply, do not divide"
