"""A class graded by pytest: the options that write feedback files, per-learner reports,
gradebooks, the class report and the regrade diff, the quiet terminal, shards and their merge.

What each file holds is tested from typed results in test_gradebook.py,
test_feedback_files.py and test_classreport.py; here, that a run writes them and only them.
"""

from __future__ import annotations

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

from pytest_lessons.core import submissions
from pytest_lessons.core.plan import Plan

from helpers import DOUBLE_RIGHT, DOUBLE_TOML

Make = Callable[..., Path]

pytestmark = pytest.mark.usefixtures("no_preload")

DOUBLE_HIDDEN = (
    DOUBLE_TOML
    + """
[[case]]
hidden = true
x = [7, 70]
expected = [14, 140]
"""
)

STUB = "def solve(x):\n    raise NotImplementedError\n"
HALVED = (
    "def solve(x):\n"
    "    if isinstance(x[0], list):\n"
    "        return [[v / 2 for v in row] for row in x]\n"
    "    return [v / 2 for v in x]\n"
)


def make_class(root: Path, learners: dict[str, str | None]) -> Path:
    """submissions/<learner>/double/solution.py; None: the learner's folder holds nothing."""
    submissions = root / "submissions"
    for learner, code in learners.items():
        folder = submissions / learner
        folder.mkdir(parents=True)
        if code is not None:
            (folder / "double").mkdir()
            (folder / "double" / "solution.py").write_text(code)
    return submissions


CLASS = {"ada": DOUBLE_RIGHT, "bo": HALVED, "cy": STUB, "di": None}


def grade(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("double", "--lesson-submissions=submissions", *args)


def test_no_file_is_written_unless_asked(pytester: pytest.Pytester, make_exercise: Make) -> None:
    make_exercise()
    make_class(pytester.path, CLASS)
    before = set(pytester.path.iterdir())
    result = grade(pytester, "-p", "no:cacheprovider")
    assert result.ret == 1
    assert set(pytester.path.iterdir()) == before


def test_feedback_files_one_per_learner_hidden_cases_without_their_inputs(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(toml=DOUBLE_HIDDEN)
    make_class(pytester.path, CLASS)
    result = grade(pytester, "--lesson-feedback=feedback")
    assert result.ret == 1
    folder = pytester.path / "feedback"
    assert sorted(p.name for p in folder.iterdir()) == ["ada.md", "bo.md", "cy.md", "di.md"]
    assert "**3 of 3 points** in all." in (folder / "ada.md").read_text()
    bo = (folder / "bo.md").read_text()
    assert "**0 of 3 points** in all." in bo
    assert "- hidden case 3 (0 of 1 point)" in bo
    assert "140" not in bo and "[7, 70]" not in bo
    di = (folder / "di.md").read_text()
    assert "nothing was handed in" in di
    # The learner's own files, as they handed them in: never the instructor's submissions/.
    assert "Create double/solution.py and write solve(x) in it" in di and "submissions" not in di
    cy = (folder / "cy.md").read_text()
    assert "Open double/solution.py" in cy and "submissions" not in cy
    result.stdout.fnmatch_lines([f"feedback: 4 files in {folder}"])


def test_platform_reports_one_per_learner_and_never_one_merged_file(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, CLASS)
    merged = grade(pytester, "--lesson-report=results.json", "--lesson-report-format=gradescope")
    assert merged.ret == pytest.ExitCode.USAGE_ERROR
    merged.stderr.fnmatch_lines(["*Put {learner} in --lesson-report when grading a class*"])
    assert not (pytester.path / "results.json").exists()
    result = grade(
        pytester,
        "--lesson-report=reports/{learner}/results.json",
        "--lesson-report-format=gradescope",
    )
    assert result.ret == 1
    scores = {
        learner: json.loads((pytester.path / f"reports/{learner}/results.json").read_text())[
            "score"
        ]
        for learner in CLASS
    }
    assert scores == {"ada": 2.0, "bo": 0.0, "cy": 0.0, "di": 0.0}


def test_the_json_report_holds_the_whole_class(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, CLASS)
    grade(pytester, "--lesson-report=class.json")
    report = json.loads((pytester.path / "class.json").read_text())
    assert {r["learner"] for r in report["results"]} == set(CLASS)


def test_wide_gradebook_with_a_missing_submission_noted(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, CLASS)
    grade(pytester, "--lesson-gradebook=grades.csv", "--lesson-gradebook-format=wide")
    with (pytester.path / "grades.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["learner", "double", "total", "max", "note"],
        ["ada", "2", "2", "2", ""],
        ["bo", "0", "0", "2", ""],
        ["cy", "0", "0", "2", ""],
        ["di", "0", "0", "2", "no submission: no exercise handed in"],
    ]


def test_a_canvas_gradebook_joins_the_roster_and_lists_what_did_not_match(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, CLASS)
    (pytester.path / "roster.csv").write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,learner\n"
        "Ada,1,S1,ada@x,A,ada\nBo,2,S2,bo@x,A,bo\nCy,3,S3,cy@x,A,cy\nEve,5,S5,eve@x,A,eve\n"
    )
    no_roster = grade(pytester, "--lesson-gradebook=canvas.csv", "--lesson-gradebook-format=canvas")
    assert no_roster.ret == pytest.ExitCode.USAGE_ERROR
    no_roster.stderr.fnmatch_lines(
        ["*Give --lesson-roster=CSV with --lesson-gradebook-format=canvas*"]
    )
    result = grade(
        pytester,
        "--lesson-gradebook=canvas.csv",
        "--lesson-gradebook-format=canvas",
        "--lesson-roster=roster.csv",
    )
    assert (pytester.path / "canvas.csv").read_text().splitlines() == [
        "Student,ID,SIS User ID,SIS Login ID,Section,double",
        "    Points Possible,,,,,2",
        "Ada,1,S1,ada@x,A,2",
        "Bo,2,S2,bo@x,A,0",
        "Cy,3,S3,cy@x,A,0",
        "Eve,5,S5,eve@x,A,0",
    ]
    result.stdout.fnmatch_lines(
        [
            "1 submission folder(s) not in the roster, left out of the LMS file: di",
            "1 roster row(s) without a submission folder, graded 0: eve",
        ]
    )


def test_hostile_learner_names_stay_text_in_every_file(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    hostile = ["=cmd|' -C calc'!A0", "<img src=x onerror=alert(1)>", "a b"]
    make_class(pytester.path, dict.fromkeys(hostile, DOUBLE_RIGHT))
    result = grade(
        pytester,
        "--lesson-gradebook=grades.csv",
        "--lesson-feedback=feedback",
        "--lesson-class-report=class.html",
        "--lesson-report=reports/{learner}.json",
        "--lesson-report-format=exercism",
    )
    assert result.ret == 0
    rows = list(csv.reader((pytester.path / "grades.csv").open(newline="")))
    assert {row[0] for row in rows[1:]} == {"'=cmd|' -C calc'!A0", hostile[1], "a b"}
    page = (pytester.path / "class.html").read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    feedback = sorted(p.name for p in (pytester.path / "feedback").iterdir())
    reports = sorted(p.name for p in (pytester.path / "reports").iterdir())
    assert feedback == [
        f"=cmd___-C_calc__A0-{submissions.digest(hostile[0])}.md",
        f"_img_src=x_onerror=alert_1__-{submissions.digest(hostile[1])}.md",
        f"a_b-{submissions.digest('a b')}.md",
    ]
    assert [name[:-5] for name in reports] == [name[:-3] for name in feedback]


def test_a_regrade_shows_and_writes_whose_points_moved(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    submissions = make_class(pytester.path, CLASS)
    grade(pytester, "--lesson-gradebook=before.csv")
    (submissions / "bo" / "double" / "solution.py").write_text(DOUBLE_RIGHT)
    result = grade(pytester, "--lesson-gradebook=after.csv", "--lesson-gradebook-diff=before.csv")
    result.stdout.fnmatch_lines(
        [
            "regrade: the points of 1 learner changed",
            "  bo: double 0 → 2 (total +2)",
            f"regrade changes: {pytester.path / 'after.changes.csv'}",
        ]
    )
    assert (pytester.path / "after.changes.csv").read_text().splitlines() == [
        "learner,exercise,old_points,new_points",
        "bo,double,0,2",
    ]


def test_the_class_terminal_stays_short_and_the_flag_brings_failures_back(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    kinds = [DOUBLE_RIGHT, HALVED, STUB, None]
    make_class(pytester.path, {f"learner{n:02d}": kinds[n % 4] for n in range(40)})
    result = grade(pytester, "--lesson-gradebook=grades.csv")
    lines = result.stdout.lines
    assert len(lines) < 50, "\n".join(lines)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "learners 40/40 done, cases 80/80, * elapsed",
            "*lessons: the class*",
            "40 learners",
            "double: 10 of 40 passed, mean 0.5 of 2 points",
            "     10 learners  finding: scaled",
            "     10 learners  missing",
            "     10 learners  not implemented",
            "*40 failed, 20 passed, 20 failed the same way*",
        ]
    )
    assert "NotImplementedError" not in result.stdout.str()
    full = grade(pytester, "--lesson-show-failures")
    assert "learner02: double: case 1 (a row)" in full.stdout.str()
    assert len(full.stdout.lines) > 100


def test_the_progress_line_reads_no_clock_between_two_hidden_cases(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """Hidden cases run last; a line at each tenth of them would time each (code can sleep
    for as long as its inputs say): one line as they start, then the last (red team, E19)."""
    make_exercise(toml=DOUBLE_HIDDEN)
    make_class(pytester.path, {f"learner{n:02d}": DOUBLE_RIGHT for n in range(20)})
    result = grade(pytester)
    progress = [line for line in result.stdout.lines if line.startswith("learners ")]
    counts = [int(re.search(r"cases (\d+)/60", line).group(1)) for line in progress]  # type: ignore[union-attr]
    assert counts[-1] == 60 and counts == sorted(counts), progress
    after = [line for line, done in zip(progress, counts) if done > 40]
    assert len(after) == 2, progress
    assert after[0].endswith("; hidden cases now, shown once all are done"), progress
    assert after[1].startswith("learners 20/20 done, cases 60/60, "), progress


def test_listing_a_class_starts_no_worker_and_grading_it_does(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--collect-only lists the cases without the worker and its import of torch (seconds),
    and writes no file; a grading run starts the worker. The preloaded module marks a
    worker's start."""
    make_exercise()
    make_class(pytester.path, CLASS)
    marker = pytester.path / "worker-started"
    pytester.makepyfile(started=f"open({str(marker)!r}, 'a').close()\n")
    monkeypatch.setenv("PYTEST_LESSONS_PRELOAD", "started")
    (pytester.path / "grades.csv").write_text("the last grading's gradebook\n")
    options = ("-p", "no:cacheprovider", "--lesson-gradebook=grades.csv")
    listed = grade(pytester, "--collect-only", "-q", *options)
    assert listed.ret == 0
    listed.stdout.fnmatch_lines(["*::ada/case-1-a-row", "*::di/case-2"])
    assert not marker.exists()
    # A listing grades nothing: the gradebook of the last grading stays as it was.
    assert (pytester.path / "grades.csv").read_text() == "the last grading's gradebook\n"
    graded = grade(pytester, *options)
    assert graded.ret == 1
    assert marker.exists()
    assert "ada" in (pytester.path / "grades.csv").read_text()


def test_a_class_run_that_collects_nothing_does_not_wait_for_the_workers_import(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker starts at configure; with nothing to grade (a mistyped path) pytest ends it
    at once instead of waiting for its import. The preloaded module marks an import that was
    allowed to finish."""
    make_exercise()
    make_class(pytester.path, CLASS)
    marker = pytester.path / "import-finished"
    pytester.makepyfile(slow=f"import time\ntime.sleep(3)\nopen({str(marker)!r}, 'a').close()\n")
    monkeypatch.setenv("PYTEST_LESSONS_PRELOAD", "slow")
    result = pytester.runpytest("doubel", "--lesson-submissions=submissions")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*not found: *doubel*"])
    assert not marker.exists()


def test_shards_split_the_class_stably_and_their_merge_equals_one_run(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(toml=DOUBLE_HIDDEN)
    kinds = [DOUBLE_RIGHT, HALVED, STUB, None]
    learners = {f"l{n}": kinds[n % 4] for n in range(12)}
    make_class(pytester.path, learners)
    outputs = ["--lesson-gradebook-format=wide"]
    grade(
        pytester,
        "--lesson-report=one/class.json",
        "--lesson-gradebook=one/grades.csv",
        "--lesson-feedback=one/feedback",
        *outputs,
    )
    shards: list[set[str]] = []
    for k in (1, 2, 3):
        grade(pytester, f"--lesson-shard={k}/3", f"--lesson-report=shard{k}.json")
        report = json.loads((pytester.path / f"shard{k}.json").read_text())
        shards.append({r["learner"] for r in report["results"]})
    assert set.union(*shards) == set(learners) and sum(map(len, shards)) == len(learners)
    # Stable: the same learner lands in the same shard, whoever else is in the class.
    for k, members in enumerate(shards, 1):
        assert all(submissions.shard_of(name, 3) == k for name in members)
    merge = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_lessons",
            "merge",
            "shard1.json",
            "shard2.json",
            "shard3.json",
            "--report=merged/class.json",
            "--gradebook=merged/grades.csv",
            "--gradebook-format=wide",
            "--feedback=merged/feedback",
        ],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert merge.returncode == 1, merge.stderr
    assert "12 learners" in merge.stdout
    one, merged = pytester.path / "one", pytester.path / "merged"
    assert (merged / "grades.csv").read_bytes() == (one / "grades.csv").read_bytes()
    for path in (one / "feedback").iterdir():
        assert (merged / "feedback" / path.name).read_bytes() == path.read_bytes()

    def cases(path: Path) -> list[dict[str, object]]:
        report = json.loads(path.read_text())
        return [{k: v for k, v in r.items() if k != "seconds"} for r in report["results"]]

    assert cases(merged / "class.json") == cases(one / "class.json")


def test_a_merge_refuses_overlapping_shards(pytester: pytest.Pytester, make_exercise: Make) -> None:
    make_exercise()
    make_class(pytester.path, CLASS)
    grade(pytester, "--lesson-report=all.json")
    merge = subprocess.run(
        [sys.executable, "-m", "pytest_lessons", "merge", "all.json", "all.json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert merge.returncode == 2
    assert "all.json and all.json are both shard 1/1: give each shard once" in merge.stderr


def merge(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_lessons", "merge", *args],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_merge_refuses_a_missing_or_foreign_shard_and_allow_missing_keeps_its_learners(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    # By the hash: l5 in shard 1; l0, l2, l8 in shard 2; l1, l3, l4, l6, l7 in shard 3.
    make_class(pytester.path, {f"l{n}": DOUBLE_RIGHT for n in range(9)})
    for k in (1, 2, 3):
        grade(pytester, f"--lesson-shard={k}/3", f"--lesson-report=shard-{k}.json")
    schema = json.loads((Path(__file__).parent / "schemas" / "json.schema.json").read_text())
    jsonschema.validate(json.loads((pytester.path / "shard-2.json").read_text()), schema)
    table = json.loads((pytester.path / "shard-2.json").read_text())["class"]
    assert table["shard"] == "2/3" and table["learners"] == [f"l{n}" for n in range(9)]
    assert merge(pytester.path, "shard-1.json", "shard-2.json", "shard-3.json").returncode == 0
    # One matrix job failed to upload: refused, the shard and its learners named, no file.
    missing = merge(pytester.path, "shard-1.json", "shard-2.json", "--gradebook=grades.csv")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == (
        "merge: shard 3/3 is missing (its 5 of 9 learners: l1, l3, l4, l6, l7): give every "
        "shard's report (3 in all), or --allow-missing to write its learners as not graded\n"
    )
    assert not (pytester.path / "grades.csv").exists()
    # Allowed: the absent learners are in the gradebook, as not graded, and the exit is 1.
    allowed = merge(
        pytester.path,
        "shard-1.json",
        "shard-2.json",
        "--allow-missing",
        "--gradebook=grades.csv",
        "--gradebook-format=wide",
    )
    assert allowed.returncode == 1, allowed.stderr
    assert allowed.stdout.startswith("4 learners graded of 9\n")
    assert (
        "NOT GRADED: 5 learners, not graded: shard 3/3 is missing from the merge: "
        "l1, l3, l4, l6, l7" in allowed.stdout
    )
    done = merge(
        pytester.path, "shard-1.json", "shard-2.json", "--allow-missing", "--report=m.json"
    )
    assert done.returncode == 1
    report = json.loads((pytester.path / "m.json").read_text())
    jsonschema.validate(report, schema)
    assert report["class"]["shard"] == "1/1" and len(report["class"]["absent"]) == 5
    rows = list(csv.DictReader((pytester.path / "grades.csv").open()))
    assert [r["learner"] for r in rows] == [f"l{n}" for n in range(9)]
    assert rows[1] == {
        "learner": "l1",
        "double": "0",
        "total": "0",
        "max": "2",
        "note": "not graded: shard 3/3 is missing from the merge",
    }
    assert rows[0]["total"] == "2" and rows[0]["note"] == ""
    # Given twice, of another split, of another class: each refused, saying which.
    twice = merge(pytester.path, "shard-1.json", "shard-1.json", "shard-2.json", "shard-3.json")
    assert twice.returncode == 2 and "are both shard 1/3: give each shard once" in twice.stderr
    grade(pytester, "--lesson-shard=1/2", "--lesson-report=half-1.json")
    split = merge(pytester.path, "shard-1.json", "half-1.json", "shard-2.json", "shard-3.json")
    assert split.returncode == 2 and "all with the same N" in split.stderr
    (pytester.path / "submissions" / "zz").mkdir()
    grade(pytester, "--lesson-shard=3/3", "--lesson-report=other-3.json")
    other = merge(pytester.path, "shard-1.json", "shard-2.json", "other-3.json")
    assert other.returncode == 2
    assert "other-3.json grades another class than shard-1.json" in other.stderr
    assert "(10 learners against 9; in one only: zz)" in other.stderr


@pytest.mark.slow
def test_merge_help_describes_every_option_and_the_exit_status(tmp_path: Path) -> None:
    shown = merge(tmp_path, "--help")
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    described = {}
    for n, line in enumerate(lines):
        found = re.match(r"^  (-[-a-z]+)(?: \S+)?(?:  +(\S.*))?$", line)
        if found:
            described[found[1]] = found[2] or lines[n + 1].strip()
    assert {"--allow-missing", "--gradebook", "--roster", "--report", "--feedback"} <= set(
        described
    )
    assert all(words and not words.startswith("-") for words in described.values()), described
    assert "exit status:" in shown.stdout
    assert "  1  some learner failed a case" in shown.stdout
    assert "  2  the merge was refused: a shard is missing" in shown.stdout


def test_every_learner_folder_is_graded_whatever_its_name_and_the_run_lists_what_it_skipped(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    submissions = make_class(pytester.path, {"_jane": DOUBLE_RIGHT, ".x": STUB, "ada": None})
    (submissions / ".git").mkdir()
    (submissions / "__pycache__").mkdir()
    (submissions / "notes.txt").write_text("not a learner")
    result = grade(pytester, "--lesson-gradebook=grades.csv")
    assert result.ret == 1
    rows = list(csv.DictReader((pytester.path / "grades.csv").open()))
    assert [(r["learner"], r["points"]) for r in rows] == [
        (".x", "0"),
        ("_jane", "2"),
        ("ada", "0"),
    ]
    result.stdout.fnmatch_lines(
        [
            "3 learners",
            "skipped in submissions, not learners: .git (version control), "
            "__pycache__ (Python's cache), notes.txt (a file)",
        ]
    )


def test_every_class_file_and_the_merge_follow_the_course_order(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    for name in ("zeta", "alpha"):
        make_exercise(name)
    (pytester.path / "course.toml").write_text('[course]\nlessons = ["zeta", "alpha"]\n')
    for learner in ("ada", "bo"):
        for name in ("zeta", "alpha"):
            (pytester.path / "submissions" / learner / name).mkdir(parents=True)
            (pytester.path / "submissions" / learner / name / "solution.py").write_text(STUB)
    course = ["zeta", "alpha"]
    result = pytester.runpytest(
        "alpha",
        "zeta",
        "--lesson-submissions=submissions",
        "--lesson-gradebook=long.csv",
        "--lesson-feedback=feedback",
        "--lesson-class-report=class.html",
        "--lesson-report=class.json",
        "--junitxml=junit.xml",
    )
    assert result.ret == 1
    rows = list(csv.DictReader((pytester.path / "long.csv").open()))
    assert [r["exercise"] for r in rows if r["learner"] == "ada"] == course
    ada = (pytester.path / "feedback" / "ada.md").read_text()
    assert ada.index("| zeta |") < ada.index("| alpha |")
    assert ada.index("## Double every number (zeta)") < ada.index("(alpha)\n")
    page = (pytester.path / "class.html").read_text()
    assert re.findall(r'<section class="exercise" id="(\w+)">', page) == course
    report = json.loads((pytester.path / "class.json").read_text())
    assert report["exercises"] == course
    assert [r["exercise"] for r in report["results"] if r["learner"] == "ada"] == [
        "zeta",
        "zeta",
        "alpha",
        "alpha",
    ]
    junit = ET.parse(pytester.path / "junit.xml").getroot()
    lessons = [case.get("classname", "").split(".")[0] for case in junit.iter("testcase")]
    assert list(dict.fromkeys(lessons)) == course
    pytester.runpytest(
        "alpha",
        "zeta",
        "--lesson-submissions=submissions",
        "--lesson-gradebook=wide.csv",
        "--lesson-gradebook-format=wide",
        "--lesson-report=reports/{learner}.json",
        "--lesson-report-format=gradescope",
    )
    header = (pytester.path / "wide.csv").read_text().splitlines()[0]
    assert header == "learner,zeta,alpha,total,max,note"
    tests = json.loads((pytester.path / "reports" / "ada.json").read_text())["tests"]
    assert [t["name"].split(": ")[1] for t in tests] == ["zeta", "zeta", "alpha", "alpha"]
    # The merge keeps the order the shard recorded, also where the course is not.
    (pytester.path / "course.toml").unlink()
    merged = merge(pytester.path, "class.json", "--gradebook=merged.csv", "--gradebook-format=wide")
    assert merged.returncode == 1, merged.stderr
    assert (pytester.path / "merged.csv").read_text().splitlines()[0] == header
    assert merged.stdout.index("zeta:") < merged.stdout.index("alpha:")


WORKFLOW = Path(__file__).resolve().parent.parent / "docs/recipes/github-actions/grade-class.yml"


def test_the_shard_workflow_commands_give_what_one_run_gives(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """The grading and merge steps of docs/recipes/github-actions/grade-class.yml, run as
    written by bash (3 shards, then the merge), equal one run of the whole class."""
    text = WORKFLOW.read_text()
    grade_step = re.search(r"run: (python -m pytest exercises .*)", text)
    merge_step = re.search(r"run: (python -m pytest_lessons merge .*)", text)
    assert grade_step and merge_step
    assert "shard: [1, 2, 3]" in text and "/3 " in grade_step[1]
    (pytester.path / "exercises").mkdir()
    make_exercise(name="exercises/double", toml=DOUBLE_HIDDEN)
    kinds = [DOUBLE_RIGHT, HALVED, STUB, None]
    make_class(pytester.path, {f"l{n}": kinds[n % 4] for n in range(9)})
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for k in (1, 2, 3):
        command = grade_step[1].replace("${{ matrix.shard }}", str(k))
        done = subprocess.run(["bash", "-c", command], cwd=pytester.path, env=env, timeout=300)
        assert done.returncode == 0, command
    done = subprocess.run(
        ["bash", "-c", merge_step[1]], cwd=pytester.path, env=env, timeout=120, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    one = pytester.path / "one"
    pytester.runpytest(
        "exercises",
        "--lesson-submissions=submissions",
        "--lesson-report=one/class.json",
        "--lesson-gradebook=one/grades.csv",
        "--lesson-gradebook-format=wide",
        "--lesson-feedback=one/feedback",
    )
    assert (pytester.path / "grades.csv").read_bytes() == (one / "grades.csv").read_bytes()
    assert sorted(p.name for p in (pytester.path / "feedback").iterdir()) == sorted(
        p.name for p in (one / "feedback").iterdir()
    )
    assert (pytester.path / "class.html").read_text().count("<section") == 1


def test_learners_whose_names_clash_as_file_names_keep_a_report_each(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, {"a*b": STUB, "a?b": DOUBLE_RIGHT})
    grade(pytester, "--lesson-report=reports/{learner}.json", "--lesson-report-format=gradescope")
    scores = {
        path.name: json.loads(path.read_text())["score"]
        for path in (pytester.path / "reports").iterdir()
    }
    assert scores == {
        f"a_b-{submissions.digest('a*b')}.json": 0.0,
        f"a_b-{submissions.digest('a?b')}.json": 2.0,
    }


#: Folder names a learner may choose whose files' names clash or are too long: by the hash
#: of 3 shards, "jo e" and "jo_e" land in shards 2 and 1, "jo" and "Jo" in 2 and 1.
CLASHING = {"ada": DOUBLE_RIGHT, "L" * 254: HALVED, "jo e": STUB, "jo_e": DOUBLE_RIGHT}
CLASHING |= {"Jo": HALVED, "jo": DOUBLE_RIGHT}


def test_every_learner_gets_a_bounded_file_name_of_their_own_in_one_run_shards_and_the_merge(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, CLASHING)
    assert [submissions.shard_of(name, 3) for name in ("jo e", "jo_e", "jo", "Jo")] == [2, 1, 2, 1]
    one = grade(
        pytester,
        "--lesson-feedback=one/feedback",
        "--lesson-report=one/reports/{learner}.json",
        "--lesson-report-format=gradescope",
    )
    assert one.ret == 1, one.stdout.str()  # failed cases, and every file written
    feedback = sorted((pytester.path / "one" / "feedback").iterdir())
    names = [path.name for path in feedback]
    assert len(names) == len(CLASHING) and len({n.casefold() for n in names}) == len(CLASHING)
    assert all(len(name.encode()) <= 110 for name in names), names
    assert {"ada.md", "jo_e.md", "Jo.md"} <= set(names)
    long = next(name for name in names if name.startswith("L"))
    assert re.fullmatch(r"L{83}-[0-9a-f]{12}\.md", long), long
    # Each file is its own learner's: its title names them, its points are theirs.
    owners = {
        path.read_text().splitlines()[0].removeprefix("# Feedback for "): path.name
        for path in feedback
    }
    assert set(owners) == set(CLASHING)
    assert owners["jo e"].startswith("jo_e-") and owners["jo"].startswith("jo-")
    scores = {
        path.name[: -len(".json")]: json.loads(path.read_text())["score"]
        for path in (pytester.path / "one" / "reports").iterdir()
    }
    assert scores == {
        owners[name][: -len(".md")]: 2.0 if code == DOUBLE_RIGHT else 0.0
        for name, code in CLASHING.items()
    }
    # Shards name each learner's files as one run does, into one folder without clashing.
    for k in (1, 2, 3):
        shard = grade(
            pytester,
            f"--lesson-shard={k}/3",
            f"--lesson-report=shard-{k}.json",
            "--lesson-feedback=sharded/feedback",
        )
        assert shard.ret in (0, 1), shard.stdout.str()
    merged = merge(
        pytester.path,
        "shard-1.json",
        "shard-2.json",
        "shard-3.json",
        "--feedback=merged/feedback",
        "--report=merged/reports/{learner}.json",
        "--report-format=gradescope",
    )
    assert merged.returncode == 1 and "Traceback" not in merged.stderr, merged.stderr
    for folder in ("sharded/feedback", "merged/feedback"):
        got = sorted((pytester.path / folder).iterdir())
        assert [p.name for p in got] == names, folder
        assert [p.read_bytes() for p in got] == [p.read_bytes() for p in feedback], folder
    reports = pytester.path / "merged" / "reports"
    assert {
        p.name[: -len(".json")]: json.loads(p.read_text())["score"] for p in reports.iterdir()
    } == scores


#: Folder names a learner may choose that would rewrite the instructor's terminal or hide
#: what they are: erase its own line and print a grade for another learner, read backwards
#: (a right-to-left override), read as a classmate's name (a zero-width space), ring and
#: retitle the window.
SPOOFING = {
    "eve\x1b[2K\rada: 10 of 10": "eve\\x1b[2K\\x0dada: 10 of 10",
    "\u202e01 fo 01 :yzal": "\\u202e01 fo 01 :yzal",
    "bo\u200b": "bo\\u200b",
    "cy\x1b]0;owned\x07\x85": "cy\\x1b]0;owned\\x07\\x85",
    # Names that read as a classmate's: a space at the end, a no-break space, the blank
    # Braille pattern, a Hangul filler (a red team's round H).
    "ada ": "ada\\x20",
    "ada\u00a0": "ada\\xa0",
    "ada\u2800": "ada\\u2800",
    "ada\u3164": "ada\\u3164",
}
#: The characters none of the run's output may hold raw.
RAW = ("\x1b", "\r", "\x07", "\u202e", "\u200b", "\x85", "\u00a0", "\u2800", "\u3164")


def run_class(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """pytest on *root*'s class in a process of its own: its output as the bytes a terminal
    gets (pytester's lines would split a carriage return away)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "double", "--lesson-submissions=submissions", *args],
        cwd=root,
        capture_output=True,
        timeout=600,
    )


def test_a_folder_name_not_utf8_or_with_control_characters_is_set_aside_and_named_escaped(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    odd = os.fsdecode(b"bad\xff\xfe")  # Linux allows it; no report can hold it
    make_class(
        pytester.path,
        {"ada": DOUBLE_RIGHT, "bo": HALVED, odd: DOUBLE_RIGHT}
        | dict.fromkeys(SPOOFING, DOUBLE_RIGHT),
    )
    (pytester.path / "submissions" / "notes\x1b[2J.txt").write_text("")
    result = run_class(
        pytester.path,
        "-p",
        "no:cacheprovider",
        "-v",
        "--lesson-show-failures",
        "--junitxml=junit.xml",
        "--lesson-report=class.json",
        "--lesson-feedback=feedback",
        "--lesson-class-report=class.html",
        "--lesson-gradebook=grades.csv",
    )
    output = result.stdout + result.stderr
    shown = output.decode("utf-8")
    assert result.returncode == 1, shown  # bo's failed cases: every file written
    assert not [raw for raw in RAW if raw.encode("utf-8") in output], shown
    # Each folder set aside is named as escapes, with what to do: the others are graded.
    line = next(line for line in shown.splitlines() if line.startswith("skipped in "))
    for name in SPOOFING.values():
        assert f"{name} ({submissions.NOT_PLAIN})" in line, line
    assert line.count("rename the folder (its files are kept), then grade again") == 9
    assert f"bad\\xff\\xfe ({submissions.NOT_UTF8})" in line
    assert "notes\\x1b[2J.txt (a file)" in line
    assert "::ada/case-2 PASSED" in shown and "::bo/case-2 FAILED" in shown
    # bo's failures are shown (--lesson-show-failures); no set-aside name is but in its line.
    assert "bo/double/solution.py" in shown and shown.count("eve\\x1b") == 1
    report = json.loads((pytester.path / "class.json").read_text())
    assert report["class"]["learners"] == ["ada", "bo"]
    rows = list(csv.DictReader((pytester.path / "grades.csv").open()))
    assert sorted((r["learner"], r["points"]) for r in rows) == [("ada", "2"), ("bo", "0")]
    assert len(list((pytester.path / "feedback").iterdir())) == 2
    assert (pytester.path / "class.html").exists()
    xmlschema.XMLSchema(str(Path(__file__).parent / "schemas" / "xunit2.xsd")).validate(
        str(pytester.path / "junit.xml")
    )
    names = [case.get("name") or "" for case in ET.parse("junit.xml").getroot().iter("testcase")]
    assert len(names) == 4 and all(name.split("/")[0] in ("ada", "bo") for name in names)
    # The merge of that report: the class's files, no traceback.
    merged = merge(pytester.path, "class.json", "--feedback=merged", "--gradebook=merged.csv")
    assert merged.returncode == 1 and "Traceback" not in merged.stderr, merged.stderr
    assert "2 learners" in merged.stdout
    assert len(list((pytester.path / "merged").iterdir())) == 2


def test_a_plan_sets_aside_a_folder_with_control_characters_and_a_shard_refuses_an_old_plan(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise()
    make_class(pytester.path, {"ada": DOUBLE_RIGHT, "bo": HALVED} | dict.fromkeys(SPOOFING))

    def plan(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_lessons", "plan", *args],
            cwd=pytester.path,
            capture_output=True,
            timeout=120,
        )

    done = plan("submissions", "--shards=2")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert not [raw for raw in RAW if raw.encode("utf-8") in output], output
    out = done.stdout.decode("utf-8").splitlines()
    for name in SPOOFING.values():
        assert f"{name} ({submissions.NOT_PLAIN})" in out[0], out[0]
    assert out[1].startswith("plan: 2 learners in 2 shards")
    written = json.loads((pytester.path / "plan.json").read_text())
    assert written["shards"] == [["ada"], ["bo"]]
    # A class of such folders only: refused, each named, and what to do said first.
    make_class(pytester.path / "only", dict.fromkeys(SPOOFING))
    done = plan("only/submissions", "--shards=1", "--output=only.json")
    output = done.stdout + done.stderr
    assert done.returncode == 2 and not (pytester.path / "only.json").exists()
    assert not [raw for raw in RAW if raw.encode("utf-8") in output], output
    assert done.stderr.decode("utf-8") == (
        "plan: put one folder per learner in only/submissions, then plan again: it holds no "
        "learner's folder\n"
    )
    assert "eve\\x1b[2K\\x0dada: 10 of 10 (rename the folder" in done.stdout.decode("utf-8")
    # A plan that names such a folder (an older version's): every shard refuses it, named.
    old = Plan((("ada", "eve\x1b[2K\rada: 10 of 10"), ("bo",)), "submissions")
    (pytester.path / "old.json").write_text(old.text(), encoding="utf-8")
    done = run_class(pytester.path, "--lesson-plan=old.json", "--lesson-shard-index=0", "-q")
    output = done.stdout + done.stderr
    assert done.returncode == 4, output  # a usage error: nothing graded
    assert not [raw for raw in RAW if raw.encode("utf-8") in output], output
    assert (
        "old.json names eve\\x1b[2K\\x0dada: 10 of 10 in shard 1, a folder whose name holds "
        "control or invisible characters or is not UTF-8, which is no learner: write the plan "
        "again with python -m pytest_lessons plan" in output.decode("utf-8")
    )


def test_a_folder_or_fifo_named_solution_py_is_no_file_for_its_learner_only(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """A learner's ``solution.py`` that is a folder, or a FIFO no one writes (a read of it
    would wait for ever): that learner is told to make it a file, each report is written
    (Gradescope's valid), and the others are graded as before. run_class's timeout guards
    against a wait."""
    make_exercise()
    submissions_folder = make_class(pytester.path, {"ada": DOUBLE_RIGHT, "bo": HALVED})
    (submissions_folder / "cy" / "double" / "solution.py").mkdir(parents=True)
    (submissions_folder / "cy" / "double" / "solution.py" / "main.py").write_text(DOUBLE_RIGHT)
    (submissions_folder / "di" / "double").mkdir(parents=True)
    os.mkfifo(submissions_folder / "di" / "double" / "solution.py")
    result = run_class(
        pytester.path,
        "-p",
        "no:cacheprovider",
        "--lesson-report=reports/{learner}.json",
        "--lesson-report-format=gradescope",
        "--lesson-gradebook=grades.csv",
    )
    shown = (result.stdout + result.stderr).decode("utf-8")
    assert result.returncode == 1 and "Traceback" not in shown, shown
    schemas = Path(__file__).parent / "schemas"
    gradescope = json.loads((schemas / "gradescope.schema.json").read_text())
    for learner in ("ada", "bo", "cy", "di"):
        report = json.loads((pytester.path / "reports" / f"{learner}.json").read_text())
        jsonschema.validate(report, gradescope)
        if learner in ("cy", "di"):
            said = [" ".join(test["output"].split()) for test in report["tests"]]
            assert all(
                text.startswith(
                    "Make double/solution.py a plain file with solve(x) in it: there it is a "
                    "folder or a device."
                )
                for text in said
            ), said
    rows = list(csv.DictReader((pytester.path / "grades.csv").open()))
    assert sorted((r["learner"], r["points"]) for r in rows) == [
        ("ada", "2"),
        ("bo", "0"),
        ("cy", "0"),
        ("di", "0"),
    ]


def test_a_folder_named_as_another_folder_is_shown_keeps_a_node_and_a_row_of_its_own(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """A folder literally named ``a\\ue000`` is shown apart from the folder ``a`` + a private
    use character (a learner, shown with that escape, since no font draws it): the one
    cannot take the other's node id, JUnit test case or verdict."""
    make_exercise()
    make_class(pytester.path, {"a\ue000": STUB, "a\\ue000": DOUBLE_RIGHT})
    collected = grade(pytester, "--collect-only", "-q")
    assert [line for line in collected.outlines if "::" in line] == [
        # The literal backslash sorts first, and is doubled, so the two stay apart.
        r"double/exercise.toml::a\\ue000/case-1-a-row",
        r"double/exercise.toml::a\\ue000/case-2",
        r"double/exercise.toml::a\ue000/case-1-a-row",
        r"double/exercise.toml::a\ue000/case-2",
    ]
    result = grade(pytester, "--junitxml=junit.xml", "--lesson-gradebook=grades.csv")
    assert result.ret == 1
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    names = [case.get("name") for case in cases]
    assert len(names) == len(set(names)) == 4, names
    rows = list(csv.DictReader((pytester.path / "grades.csv").open()))
    assert sorted((r["learner"], r["points"]) for r in rows) == [
        ("a\\ue000", "2"),
        ("a\ue000", "0"),
    ]
