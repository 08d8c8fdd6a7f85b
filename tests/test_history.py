"""Grade history (--lesson-history) and regrades that never lower a grade (--lesson-never-lower):
records named by their content, kept whole, listed per learner by ``python -m pytest_lessons
history``. Driven through the files a class run writes (outputs.write, which the plugin and the
merge both call) and the commands, with no grading run."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import jsonschema
import pytest

from pytest_lessons import __main__ as commands
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.reports import formats, gradebook, history, outputs
from pytest_lessons.reports.outputs import OptionError, Outputs

from helpers import case_result

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "json.schema.json").read_text())


def graded(passes: dict[str, int], cases: int = 2) -> list[CaseResult]:
    """Each learner passing the first *passes[learner]* of *cases* cases of ``combine``."""
    return [
        case_result(case, case <= passed, learner=learner, cases=cases)
        for learner, passed in passes.items()
        for case in range(1, cases + 1)
    ]


def wide_rows(path: Path) -> dict[str, dict[str, str]]:
    return {row["learner"]: row for row in csv.DictReader(io.StringIO(path.read_text()))}


def test_each_run_is_a_new_record_named_by_its_content_and_a_broken_one_is_set_aside(
    tmp_path: Path,
) -> None:
    asked = Outputs(history="history")
    roll = Roll(("ada", "bo"))
    first = outputs.write(asked, graded({"ada": 2, "bo": 1}), 1.0, tmp_path, roll)
    second = outputs.write(asked, graded({"ada": 2, "bo": 2}), 2.0, tmp_path, roll)
    folder = tmp_path / "history"
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2, names  # no temporary file left behind, nothing rewritten
    for name in names:
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() + ".json" == name
    assert first[-1].startswith("history: recorded as ") and second[-1] != first[-1]
    record = json.loads((folder / names[0]).read_text())
    # The whole class result is kept: the json report of the run, every case in it.
    assert len(record["report"]["results"]) == 4 and record["report"]["class"]["learners"]

    # A record cut short (a copy that broke) is named and never read as a grade.
    cut = folder / names[0]
    cut.write_bytes(cut.read_bytes()[:100])
    lines = outputs.write(asked, graded({"ada": 2, "bo": 2}), 3.0, tmp_path, roll)
    assert f"history: set aside {names[0]}: its content does not match its name" in lines[0]
    found = history.read(folder)
    assert len(found.records) == 2 and [n for n, _ in found.set_aside] == [names[0]]


def test_a_regrade_never_lowers_a_grade_below_its_best_and_every_report_says_it_was_held(
    tmp_path: Path,
) -> None:
    roll = Roll(("ada", "bo"))
    outputs.write(Outputs(history="h"), graded({"ada": 1, "bo": 2}), 1.0, tmp_path, roll)
    regrade = Outputs(
        history="h",
        never_lower=True,
        gradebook="grades.csv",
        gradebook_format="wide",
        report="class.json",
    )
    lines = outputs.write(regrade, graded({"ada": 2, "bo": 1}), 1.0, tmp_path, roll)
    assert "never lower: 1 grade of 1 learner held at the best recorded" in lines[0]
    assert lines[1].startswith("  bo: combine held at 2 (this run 1; best in record ")
    rows = wide_rows(tmp_path / "grades.csv")
    assert (rows["bo"]["combine"], rows["bo"]["total"]) == ("2", "2")
    assert rows["bo"]["note"] == "held at best recorded: combine (this run 1)"
    # A better grade is not held: it is the grade.
    assert (rows["ada"]["combine"], rows["ada"]["note"]) == ("2", "")
    report = json.loads((tmp_path / "class.json").read_text())
    jsonschema.validate(report, SCHEMA)
    [held] = report["class"]["held"]
    assert (held["learner"], held["this_run"], held["held"]) == ("bo", 1.0, 2.0)
    # The record keeps what the run gave (1), so a hold is never carried forward as a grade.
    records = history.read(tmp_path / "h").records
    assert [r.grades["bo"]["combine"] for r in records] == [2.0, 1.0]

    # A long gradebook says it on the exercise's row.
    lines = outputs.write(
        Outputs(history="h", never_lower=True, gradebook="long.csv"),
        graded({"ada": 2, "bo": 0}),
        1.0,
        tmp_path,
        roll,
    )
    long_rows = list(csv.DictReader(io.StringIO((tmp_path / "long.csv").read_text())))
    bo = next(row for row in long_rows if row["learner"] == "bo")
    assert (bo["points"], bo["note"]) == ("2", "held at best recorded (this run 0)")


def test_never_lower_needs_a_history_and_the_merge_keeps_and_holds_as_a_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(OptionError, match="Give --lesson-history=DIR with --lesson-never-lower"):
        outputs.check(Outputs(never_lower=True), tmp_path, batch=True)
    with pytest.raises(OptionError, match="Give --lesson-history with --lesson-submissions"):
        outputs.check(Outputs(history="h"), tmp_path, batch=False)
    roll = Roll(("ada", "bo"))
    outputs.write(Outputs(history="h"), graded({"ada": 2, "bo": 2}), 1.0, tmp_path, roll)
    outputs.write(Outputs(report="shard.json"), graded({"ada": 2, "bo": 0}), 1.0, tmp_path, roll)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        status = commands.main(
            ["merge", "shard.json", "--history", "h", "--never-lower", "--gradebook", "g.csv"]
        )
    out = capsys.readouterr().out
    assert status == 1, out
    assert "never lower: 1 grade of 1 learner held at the best recorded" in out
    assert len(history.read(tmp_path / "h").records) == 2


def test_the_history_command_lists_a_learners_grades_over_runs_and_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = "eve\x1b[2J"  # a folder name that would clear the instructor's terminal
    roll = Roll(("ada", "bo", odd))
    stamps = iter(["2026-03-01T09:00:00Z", "2026-03-08T09:00:00Z", "2026-03-15T09:00:00Z"])
    for passes in ({"ada": 0, "bo": 1, odd: 1}, {"ada": 2, "bo": 1, odd: 1}, {"ada": 1}):
        results = graded(passes)
        book = gradebook.build(results)
        report = formats.full(results, 1.0, (), roll.table())
        history.write(tmp_path / "h", history.record_of(book, report, next(stamps)))
    assert commands.main(["history", str(tmp_path / "h"), "ada", odd]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "ada: graded in 3 records of 3"
    assert out[1].startswith("  2026-03-01 09:00:00  ") and "first record: combine 0" in out[1]
    assert "total 2 of 2  changed: combine 0 → 2" in out[2]
    assert "total 1 of 2  changed: combine 2 → 1" in out[3]
    assert out[4] == "eve\\x1b[2J: graded in 2 records of 3" and "no change" in out[6]
    assert commands.main(["history", str(tmp_path / "h")]) == 0
    overview = capsys.readouterr().out.splitlines()
    assert len(overview) == 3 and "3 learners, mean 0.67 of 2" in overview[0]
    assert commands.main(["history", str(tmp_path / "h"), "zed"]) == 1
    assert capsys.readouterr().out == "zed: in none of the 3 records\n"
    assert commands.main(["history", str(tmp_path / "none")]) == 2
    assert "no such folder" in capsys.readouterr().err
