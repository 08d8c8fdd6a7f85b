"""Gradebooks of a class straight from typed results: the long and wide layouts, the roster
join, Canvas's and Moodle's import files, missing submissions and the regrade diff.

The LMS files are checked against the rules of the importers' own code, restated here (Canvas:
``app/models/gradebook_importer.rb``; Moodle: ``grade/import/csv/classes/load_data.php`` and
``lib/csvlib.class.php``), since neither runs on this machine.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.reports import gradebook, registry
from pytest_lessons.reports.gradebook import Roster, RosterError

from helpers import case_result


def case(learner: str, exercise: str, number: int, passed: bool, **changes: Any) -> CaseResult:
    return case_result(
        number,
        passed,
        learner=learner,
        exercise=exercise,
        title=exercise.title(),
        cases=2,
        **changes,
    )


def missing(learner: str, exercise: str, number: int, **changes: Any) -> CaseResult:
    return case(
        learner, exercise, number, False, status=Status.ERROR, fault=gradebook.MISSING,
        unloadable=True, headline="Create solution.py.", **changes,
    )  # fmt: skip


#: ada passes everything, bo half of "b", cy handed in nothing for "b".
CLASS = [
    case("ada", "a", 1, True),
    case("ada", "a", 2, True),
    case("ada", "b", 1, True),
    case("ada", "b", 2, True, points=2.0, max_points=2.0),
    case("bo", "a", 1, True),
    case("bo", "a", 2, False),
    case("bo", "b", 1, True),
    case("bo", "b", 2, False, max_points=2.0),
    case("cy", "a", 1, False),
    case("cy", "a", 2, True),
    missing("cy", "b", 1),
    missing("cy", "b", 2, max_points=2.0),
]


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_wide_has_a_row_per_learner_a_column_per_exercise_then_total_max_and_note() -> None:
    book = gradebook.build(CLASS)
    assert rows(gradebook.wide(book)) == [
        ["learner", "a", "b", "total", "max", "note"],
        ["ada", "2", "3", "5", "5", ""],
        ["bo", "1", "1", "2", "5", ""],
        ["cy", "1", "0", "1", "5", "not handed in: b"],
    ]


def test_long_keeps_todays_columns_first_and_notes_a_missing_submission() -> None:
    book = gradebook.build(CLASS)
    table = rows(gradebook.long(book))
    assert table[0] == ["learner", "exercise", "points", "max_points", "note"]
    assert ["cy", "b", "0", "3", "not handed in"] in table
    assert ["bo", "b", "1", "3", ""] in table
    assert len(table) == 1 + 3 * 2


def test_points_are_plain_decimals_never_an_exponent() -> None:
    assert [gradebook.number(x) for x in (0, 2.5, 10, 1 / 3, 1234567.0, -0.0)] == [
        "0", "2.5", "10", "0.333333", "1234567", "0",
    ]  # fmt: skip


HOSTILE = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "\tTAB", 'plain, "quoted"']


@pytest.mark.parametrize("layout", ["long", "wide", "canvas", "moodle"])
def test_no_cell_of_any_layout_starts_a_formula(layout: str) -> None:
    results = [case(name, "=ex", 1, True) for name in HOSTILE]
    roster = Roster.parse(
        "learner,Student,ID,SIS User ID,SIS Login ID,Section,email\n"
        + "".join(
            f'"{n.replace(chr(34), chr(34) * 2)}","@name{i}",{i},=sis{i},+login{i},-sec,=e{i}@x\n'
            for i, n in enumerate(HOSTILE)
        )
    )
    text = registry.render_gradebook(layout, gradebook.build(results, roster))
    table = rows(text)
    assert len(table) > len(HOSTILE)
    for row in table:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (layout, cell)
    if layout in ("long", "wide"):
        # Every folder is there, guarded (the roster's copy of "\tTAB" lost its tab to the
        # roster's trimming, so it is also a roster row without a folder).
        assert {row[0] for row in table[1:]} >= {
            "'" + n if n[0] in "=+-@\t" else n for n in HOSTILE
        }


# --- roster ---------------------------------------------------------------------------------


def test_a_roster_without_a_learner_column_says_what_to_add() -> None:
    with pytest.raises(
        RosterError,
        match=r"Add a column named `learner` to roster.csv.*: its columns are email, name",
    ):
        Roster.parse("email,name\na@x,A\n", "roster.csv")


def test_a_roster_naming_a_folder_twice_gives_both_lines() -> None:
    with pytest.raises(RosterError, match=r"`ada` is on lines 2 and 4"):
        Roster.parse("learner,email\nada,a@x\nbo,b@x\nada,c@x\n")


def test_a_roster_from_excel_with_a_byte_order_mark_and_blank_lines_reads() -> None:
    roster = Roster.parse("\ufeffLearner , Email\nada , a@x\n,\n")
    assert roster.key == "Learner"
    assert roster.rows == ({"Learner": "ada", "Email": "a@x"},)


ROSTER_TEXT = (
    "Student,ID,SIS User ID,SIS Login ID,Section,learner,email\n"
    "Ada Lovelace,101,S1,ada@uni,Sec 1,ada,ada@uni.example\n"
    "Bo Li,102,S2,bo@uni,Sec 1,bo,bo@uni.example\n"
    "Di Absent,104,S4,di@uni,Sec 2,di,di@uni.example\n"
)
ROSTER = Roster.parse(ROSTER_TEXT)


def test_the_roster_join_lists_folders_and_rows_that_did_not_match() -> None:
    book = gradebook.build(CLASS, ROSTER)
    assert book.unmatched_folders == ["cy"]
    assert [row["learner"] for row in book.unmatched_rows] == ["di"]
    assert gradebook.unmatched_lines(book) == [
        "1 submission folder(s) not in the roster, left out of the LMS file: cy",
        "1 roster row(s) without a submission folder, graded 0: di",
    ]
    # The learner with no folder at all is in the gradebook with 0 and a note.
    assert rows(gradebook.wide(book))[-1] == [
        "di", "0", "0", "0", "5", "no submission: no folder for this learner",
    ]  # fmt: skip


def test_lms_layouts_without_a_roster_say_to_give_one() -> None:
    book = gradebook.build(CLASS)
    for layout in ("canvas", "moodle"):
        with pytest.raises(RosterError, match=f"Give --lesson-roster=CSV with the {layout} layout"):
            registry.render_gradebook(layout, book)


# --- Canvas ---------------------------------------------------------------------------------


def canvas_reads(text: str, parse: Callable[[str], list[list[str]]] = rows) -> dict[str, Any]:
    """What Canvas's GradebookImporter makes of the file: its header rules, the Points Possible
    row, and the columns it would read as assignments (restated from the importer), on rows
    parsed by *parse*."""
    table = parse(text)
    header = table[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], header
    student_columns = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        student_columns += 1
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        student_columns += 2
    assert "Section" in header[student_columns - 1], "Canvas: Invalid header row"
    non_assignment = re.compile(
        "Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
        "Override Score|Override Grade|Override Status"
    )
    assignments = [h for h in header[student_columns:] if not non_assignment.search(h)]
    points = next(row for row in table[1:] if "Points Possible" in row[0])
    students = [
        row for row in table[1:] if "Points Possible" not in row[0] and any(c.strip() for c in row)
    ]
    for row in table:
        assert len(row) == len(header)
    return {
        "assignments": assignments,
        "points_possible": dict(zip(header[student_columns:], points[student_columns:])),
        "students": {
            (row[1], row[2], row[3]): dict(zip(header[student_columns:], row[student_columns:]))
            for row in students
        },
    }


def test_canvas_import_finds_each_student_by_id_and_each_exercise_as_an_assignment() -> None:
    text = gradebook.canvas(gradebook.build(CLASS, ROSTER))
    assert text.splitlines()[0] == "Student,ID,SIS User ID,SIS Login ID,Section,a,b"
    read = canvas_reads(text)
    assert read["assignments"] == ["a", "b"]
    assert read["points_possible"] == {"a": "2", "b": "3"}
    assert read["students"] == {
        ("101", "S1", "ada@uni"): {"a": "2", "b": "3"},
        ("102", "S2", "bo@uni"): {"a": "1", "b": "1"},
        ("104", "S4", "di@uni"): {"a": "0", "b": "0"},
    }
    # cy has no roster row: Canvas would make an unknown student of it, so it is left out.
    assert "cy" not in text


def test_canvas_needs_an_identity_column_in_the_roster() -> None:
    roster = Roster.parse("learner,Student\nada,Ada\n")
    with pytest.raises(RosterError, match="Add Canvas's `ID`, `SIS User ID` or `SIS Login ID`"):
        gradebook.canvas(gradebook.build(CLASS, roster))


# --- Moodle ---------------------------------------------------------------------------------


def moodle_reads(
    text: str, known: set[str], parse: Callable[[str], list[list[str]]] = rows
) -> dict[str, dict[str, float]]:
    """What Moodle's CSV grade import makes of the file, mapping the first column to a user
    field: equal column counts (csvweirdcolumns), every user found (else the whole import
    stops), grades numeric or empty, and at most 100 (gradevaluetoobig); on rows parsed by
    *parse*."""
    table = [row for row in parse(text.lstrip("\ufeff")) if len(row) > 1]
    header = table[0]
    grades: dict[str, dict[str, float]] = {}
    for row in table[1:]:
        assert len(row) == len(header), "Moodle: csvweirdcolumns"
        user = row[0].strip()
        assert user in known, f"Moodle: usermappingerror {user}"
        marks = {}
        for name, value in zip(header[1:], row[1:]):
            value = value.strip()
            if value in ("", "-"):
                continue
            marks[name] = float(value)
            assert marks[name] <= 100
        grades[user] = marks
    return grades


def test_moodle_import_finds_every_user_by_email_and_reads_every_grade() -> None:
    text = gradebook.moodle(gradebook.build(CLASS, ROSTER))
    assert text.splitlines()[0] == "email,a,b,total"
    users = {"ada@uni.example", "bo@uni.example", "di@uni.example"}
    assert moodle_reads(text, users) == {
        "ada@uni.example": {"a": 2, "b": 3, "total": 5},
        "bo@uni.example": {"a": 1, "b": 1, "total": 2},
        "di@uni.example": {"a": 0, "b": 0, "total": 0},
    }


def test_moodle_takes_the_id_number_of_moodles_own_export() -> None:
    roster = Roster.parse("First name,ID number,learner\nAda,7,ada\n")
    assert gradebook.moodle(gradebook.build(CLASS, roster)).splitlines()[:2] == [
        "ID number,a,b,total",
        "7,2,3,5",
    ]
    with pytest.raises(RosterError, match="Add an `email`, `idnumber` or `username` column"):
        gradebook.moodle(gradebook.build(CLASS, Roster.parse("learner,name\nada,A\n")))


# --- regrading ------------------------------------------------------------------------------


def test_a_regrade_lists_each_learner_whose_points_moved_old_to_new() -> None:
    before = gradebook.build(CLASS)
    fixed = [
        replace(r, status=Status.PASSED, points=r.max_points)
        if r.learner == "bo" and r.exercise == "b"
        else r
        for r in CLASS
    ]
    after = gradebook.build(fixed)
    for layout in ("long", "wide"):
        old = gradebook.points_of(registry.render_gradebook(layout, before))
        moved = gradebook.changes(old, after)
        assert moved == [gradebook.Change("bo", "b", 1.0, 3.0)], layout
    assert gradebook.changes_lines(moved) == [
        "regrade: the points of 1 learner changed",
        "  bo: b 1 → 3 (total +2)",
    ]
    assert rows(gradebook.changes_csv(moved)) == [
        ["learner", "exercise", "old_points", "new_points"],
        ["bo", "b", "1", "3"],
    ]


def test_a_regrade_with_nothing_changed_says_so_and_hostile_names_round_trip() -> None:
    results = [case("=cmd", "a", 1, True), case("ok", "a", 1, False)]
    book = gradebook.build(results)
    assert gradebook.changes(gradebook.points_of(gradebook.long(book)), book) == []
    assert gradebook.changes_lines([]) == ["regrade: no learner's points changed"]
    # Two learners whose names the formula guard once made one: a regrade of one is seen,
    # named as its cell is written.
    before = gradebook.build([case("=x", "a", 1, True), case("'=x", "a", 1, False)])
    after = gradebook.build([case("=x", "a", 1, True), case("'=x", "a", 1, True)])
    for layout in (gradebook.long, gradebook.wide):
        moved = gradebook.changes(gradebook.points_of(layout(before)), after)
        assert [(c.learner, c.old, c.new) for c in moved] == [("''=x", 0.0, 1.0)], layout


def test_a_regrade_names_learners_only_in_one_gradebook() -> None:
    old = {("ada", "a"): 2.0, ("gone", "a"): 1.0}
    moved = gradebook.changes(old, gradebook.build(CLASS))
    assert gradebook.Change("gone", "a", 1.0, None) in moved
    assert gradebook.Change("bo", "a", None, 1.0) in moved
    lines = gradebook.changes_lines(moved)
    assert lines[0] == "regrade: the points of 4 learners changed"
    assert "  gone: a 1 → absent (total -1)" in lines


def test_an_unknown_old_gradebook_says_which_files_are_read() -> None:
    with pytest.raises(ValueError, match="Give a long or wide gradebook written by pytest-lessons"):
        gradebook.points_of("Student,ID\n")


# --- the consumers' own CSV parsers ---------------------------------------------------------

#: Canvas reads the file with Ruby's CSV: comma or semicolon, whichever gives the same number
#: of fields on its first lines, and lines of only separators skipped (csv_stream).
RUBY_CANVAS = r"""
require "csv"
require "json"
text = File.read(ARGV[0])
counts = {}
[";", ","].each do |sep|
  counts[sep] = 0
  sizes = text.lines.first(3).map { |line| (CSV.parse_line(line, col_sep: sep) || []).size }
  counts[sep] = sizes.first if sizes.uniq.size == 1
rescue CSV::MalformedCSVError
  nil
end
sep = counts[";"] > counts[","] ? ";" : ","
rows = CSV.parse(text, col_sep: sep, skip_lines: /^[;, ]+$/)
puts JSON.generate({"sep" => sep, "rows" => rows.map { |r| r.map { |c| c || "" } }})
"""

#: Moodle's csv_import_reader: its newline clean-up and trim, then PHP's fgetcsv with a comma
#: and a double quote, as load_csv_content calls it.
PHP_MOODLE = r"""<?php
$content = file_get_contents($argv[1]);
$content = preg_replace('!\r\n?!', "\n", $content);
$content = trim($content);
$fp = fopen('php://temp', 'w+b');
fwrite($fp, $content);
fseek($fp, 0);
$rows = [];
while ($data = fgetcsv($fp, 0, ',', '"', '\\')) {
    if (count($data) == 1 && $data[0] === null) { continue; }
    $rows[] = array_map(function ($c) { return $c === null ? '' : $c; }, $data);
}
echo json_encode($rows);
"""


def external(program: str, script: str, text: str, tmp: Path) -> Any:
    (tmp / "book.csv").write_text(text, encoding="utf-8")
    (tmp / "read").write_text(script)
    done = subprocess.run(
        [program, str(tmp / "read"), str(tmp / "book.csv")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(
    shutil.which("ruby") is None, reason="needs ruby (Debian: apt-get install ruby)"
)
def test_canvas_file_read_by_rubys_csv_as_canvas_reads_it(tmp_path: Path) -> None:
    roster = Roster.parse(
        ROSTER_TEXT.replace("Ada Lovelace", '"Lovelace, Ada ""=1+1"""').replace("Sec 1", "=S")
    )
    text = gradebook.canvas(gradebook.build(CLASS, roster))
    parsed = external("ruby", RUBY_CANVAS, text, tmp_path)
    assert parsed["sep"] == ","
    read = canvas_reads(text, lambda _: parsed["rows"])
    assert read == canvas_reads(text)
    assert read["students"][("101", "S1", "ada@uni")] == {"a": "2", "b": "3"}
    assert parsed["rows"][2][0] == 'Lovelace, Ada "=1+1"'
    assert parsed["rows"][2][4] == "'=S"


@pytest.mark.skipif(
    shutil.which("php") is None, reason="needs php (Debian: apt-get install php-cli)"
)
def test_moodle_file_read_by_phps_fgetcsv_as_moodle_reads_it(tmp_path: Path) -> None:
    text = gradebook.moodle(gradebook.build(CLASS, ROSTER))
    parsed = external("php", PHP_MOODLE, text, tmp_path)
    users = {"ada@uni.example", "bo@uni.example", "di@uni.example"}
    assert moodle_reads(text, users, lambda _: parsed) == moodle_reads(text, users)
