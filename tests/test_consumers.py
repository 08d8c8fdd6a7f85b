"""Each file we write for another program, as that program reads it: no terminal escapes in any
of them, spreadsheets never run a cell, JUnit XML that Jenkins' xUnit and pytest's own schema
accept, and a GitHub Classroom result its reporter can be started with."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Callable

import pytest

from conftest import DOUBLE_TOML

Make = Callable[..., Path]

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
