"""``python -m pytest_lessons similarity``: pairs of submissions per lesson ranked with
copydetect, the starter left out, read through no link, and shown as evidence (never a grade)
in the terminal and in a section of the class report. No grading run: the class report is
made from a json report written from results."""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_lessons import __main__ as commands
from pytest_lessons import similarity
from pytest_lessons.core import submissions as submissions_module
from pytest_lessons.core.submissions import Roll
from pytest_lessons.reports import outputs
from pytest_lessons.reports.outputs import Outputs

from helpers import case_result

copydetect = pytest.importorskip("copydetect")

TOML = """
[exercise]
title = "Mean of rows"
inputs = ["rows"]

[[case]]
rows = [[1, 2], [3, 4]]
expected = [1.5, 3.5]
"""

STARTER = '''"""Mean of rows: your solution goes here. Return the mean of each row, in order."""


def solve(rows):
    """rows: a list of rows of numbers. Return a list: the mean of each row, in order."""
    raise NotImplementedError
'''

OWN = {
    "ada": """def solve(rows):
    means = []
    for row in rows:
        total = 0
        for value in row:
            total += value
        means.append(total / len(row))
    return means
""",
    "bo": """def solve(rows):
    import statistics
    return [statistics.fmean(r) for r in rows if len(r) > 0] or [0.0 for _ in range(len(rows))]
""",
    "cy": """def solve(rows):
    out = {}
    index = 0
    while index < len(rows):
        out[index] = sum(rows[index]) * 1.0 / max(1, len(rows[index]))
        index = index + 1
    return [out[i] for i in sorted(out)]
""",
}


def make(top: Path) -> tuple[Path, Path]:
    lesson = top / "course" / "row_means"
    lesson.mkdir(parents=True)
    (lesson / "exercise.toml").write_text(TOML)
    (lesson / "reference.py").write_text(OWN["ada"])
    (lesson / "solution.py").write_text(STARTER)
    submissions = top / "submissions"
    for who, code in OWN.items():
        (submissions / who / "row_means").mkdir(parents=True)
        (submissions / who / "row_means" / "solution.py").write_text(code)
    # di copied ada's file, renaming every variable and adding a comment: tokens still match.
    copied = OWN["ada"].replace("means", "acc").replace("total", "s").replace("value", "v")
    (submissions / "di" / "row_means").mkdir(parents=True)
    (submissions / "di" / "row_means" / "solution.py").write_text("# mine\n" + copied)
    # ed and fay hand in the starter untouched: the starter is never evidence.
    for who in ("ed", "fay"):
        (submissions / who / "row_means").mkdir(parents=True)
        (submissions / who / "row_means" / "solution.py").write_text(STARTER)
    # gus's file is a link to ada's: never followed, so never compared.
    (submissions / "gus" / "row_means").mkdir(parents=True)
    os.symlink(
        submissions / "ada" / "row_means" / "solution.py",
        submissions / "gus" / "row_means" / "solution.py",
    )
    return top / "course", submissions


def test_similar_pairs_are_ranked_per_lesson_as_evidence_and_the_class_report_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course, submissions = make(tmp_path)
    learners = ("ada", "bo", "cy", "di", "ed", "fay", "gus")
    results = [case_result(1, True, learner=who, exercise="row_means") for who in learners]
    outputs.write(Outputs(report="class.json"), results, 1.0, tmp_path, Roll(learners))
    status = commands.main(
        [
            "similarity", str(submissions), str(course), "--threshold", "0.3",
            "--report", str(tmp_path / "class.json"), "--class-report", str(tmp_path / "class.html"),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    assert (
        out[0].startswith("Pairs of submissions whose code overlaps") and "never a grade" in out[0]
    )
    assert out[1] == "row_means: 6 files compared; not compared: 1 learner (a link, not followed)"
    # The copy ranks first, whole; the starter handed in twice is no pair at all.
    assert out[2].startswith("  100%  ada and di: 100% of ada's code is in di's")
    assert not any("ed and fay" in line for line in out)
    assert not any("gus" in line for line in out)
    page = (tmp_path / "class.html").read_text()
    assert '<section class="similarity" id="similar-submissions">' in page
    assert "evidence to look at, never a grade" in page
    section = page.split('id="similar-submissions">')[1].split("</section>")[0]
    assert "<td>ada</td>" in section and "<td>di</td>" in section and "gus" not in section


def test_the_fast_comparison_gives_copydetects_own_numbers_and_names_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fingerprints = {
        who: copydetect.CodeFingerprint(
            "solution.py", similarity.NOISE, similarity.WINDOW, language="python",
            fp=io.StringIO(code),
        )
        for who, code in {**OWN, "di": OWN["ada"].replace("total", "t") + "x = 1\n"}.items()
    }  # fmt: skip
    for one in fingerprints:
        for two in fingerprints:
            tokens, (share_1, share_2), _ = copydetect.compare_files(
                fingerprints[one], fingerprints[two]
            )
            mine = similarity.overlap(
                similarity.Print.of(fingerprints[one]), similarity.Print.of(fingerprints[two])
            )
            assert mine == pytest.approx((tokens, share_1, share_2)), (one, two)
    # A folder whose name holds control characters is set aside as a class run sets it
    # aside: named as escapes, with what to do, and compared with no one.
    course, submissions = make(tmp_path)
    (submissions / "di").rename(submissions / "di\x1b[2J")
    assert commands.main(["similarity", str(submissions), str(course)]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "ada and di" not in shown
    assert shown.splitlines()[-1] == (
        f"skipped in {submissions}, not learners: di\\x1b[2J ({submissions_module.NOT_PLAIN})"
    )
    assert "5 files compared" in shown
    assert commands.main(["similarity", str(tmp_path / "none"), str(course)]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_a_folder_or_a_fifo_named_solution_py_is_no_file_and_the_others_are_compared(
    tmp_path: Path,
) -> None:
    """A ``solution.py`` that is a folder, or a FIFO (which no one writes: a read of it would
    wait for ever), is left out as not a file: the command ends, exits 0 and writes its class
    report, and every other learner is compared as before."""
    course, submissions = make(tmp_path)
    folder = submissions / "ed" / "row_means" / "solution.py"
    folder.unlink()
    folder.mkdir()
    (folder / "main.py").write_text(OWN["ada"])
    fifo = submissions / "fay" / "row_means" / "solution.py"
    fifo.unlink()
    os.mkfifo(fifo)
    learners = ("ada", "bo", "cy", "di", "ed", "fay", "gus")
    results = [case_result(1, True, learner=who, exercise="row_means") for who in learners]
    outputs.write(Outputs(report="class.json"), results, 1.0, tmp_path, Roll(learners))
    # A process of its own: were the FIFO read, the command would wait, and the guard end it.
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest_lessons", "similarity", str(submissions), str(course),
            "--threshold", "0.3", "--report", "class.json", "--class-report", "class.html",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    out = done.stdout.splitlines()
    assert out[1] == (
        "row_means: 4 files compared; not compared: 1 learner (a folder, not a file); "
        "1 learner (a FIFO, not a file); 1 learner (a link, not followed)"
    )
    assert out[2].startswith("  100%  ada and di: 100% of ada's code is in di's")
    assert not [line for line in out[2:] if re.search(r"\b(ed|fay)\b", line)]
    page = (tmp_path / "class.html").read_text()
    assert "a folder, not a file" in page and "ada" in page


def test_a_copy_written_in_another_encoding_is_compared_as_python_reads_it(
    tmp_path: Path,
) -> None:
    """A red team's round J: ``# coding: utf-7`` and ada's code as one base64 run graded
    as ada's code and was listed with no one, since its bytes were compared, not its text."""
    course, submissions = make(tmp_path)
    body = base64.b64encode(OWN["ada"].encode("utf-16-be")).decode("ascii").rstrip("=")
    hidden = "# coding: utf-7\n+" + body + "-"
    assert hidden.encode("ascii").decode("utf-7") == "# coding: utf-7\n" + OWN["ada"]
    (submissions / "hu" / "row_means").mkdir(parents=True)
    (submissions / "hu" / "row_means" / "solution.py").write_bytes(hidden.encode("ascii"))
    found = similarity.compare_lesson(
        course / "row_means" / "exercise.toml", submissions, ("ada", "bo", "hu"), 0.5
    )
    pairs = {(p.first, p.second) for p in found.pairs}
    assert ("ada", "hu") in pairs or ("hu", "ada") in pairs, found
