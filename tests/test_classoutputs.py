"""A class run's options, progress line and shards, without a pytest run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import __main__ as merging
from pytest_lessons.core import submissions
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.submissions import ShardError
from pytest_lessons.reports import classreport, formats, outputs, registry
from pytest_lessons.reports.outputs import OptionError, Outputs

from helpers import case_result


def test_a_platform_report_of_a_class_needs_the_learner_placeholder(tmp_path: Path) -> None:
    one_learner = [row.name for row in registry.FORMATS if row.holds == "learner"]
    assert one_learner == ["gradescope", "classroom", "exercism"]
    for fmt in one_learner:
        with pytest.raises(OptionError, match=r"Put \{learner\} in --lesson-report"):
            outputs.check(Outputs(report="r.json", report_format=fmt), tmp_path, batch=True)
        outputs.check(Outputs(report="r/{learner}.json", report_format=fmt), tmp_path, True)
        # One learner's own run keeps writing one file.
        outputs.check(Outputs(report="r.json", report_format=fmt), tmp_path, batch=False)
    outputs.check(Outputs(report="class.json", report_format="json"), tmp_path, True)


def test_class_options_outside_a_class_run_say_what_they_need(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="Give --lesson-feedback with --lesson-submissions"):
        outputs.check(Outputs(feedback="fb"), tmp_path, batch=False)
    with pytest.raises(OptionError, match="Give --lesson-gradebook=PATH with --lesson-gradebook"):
        outputs.check(Outputs(gradebook_diff="old.csv"), tmp_path, batch=True)
    with pytest.raises(OptionError, match=r"old\.csv: No such file"):
        outputs.check(Outputs(gradebook="g.csv", gradebook_diff="old.csv"), tmp_path, True)
    (tmp_path / "roster.csv").write_text("email\na@x\n")
    with pytest.raises(OptionError, match="Add a column named `learner`"):
        outputs.check(Outputs(roster="roster.csv"), tmp_path, batch=True)


def test_the_progress_line_gives_learners_cases_and_a_rough_time_left() -> None:
    assert (
        classreport.progress_line(100, 400, 9, 40, 30.0)
        == "learners 9/40 done, cases 100/400, 0:30 elapsed, about 1:30 left"
    )
    assert classreport.progress_line(400, 400, 40, 40, 125.4) == (
        "learners 40/40 done, cases 400/400, 2:05 elapsed"
    )


def test_a_shard_is_k_of_n() -> None:
    assert submissions.parse_shard("2/3") == (2, 3)
    for wrong in ("0/3", "4/3", "a/b", "3"):
        with pytest.raises(ShardError, match="--lesson-shard="):
            submissions.parse_shard(wrong)


def test_a_new_learner_moves_no_one_else_and_shards_are_about_even() -> None:
    names = [f"learner{n:03d}" for n in range(300)]
    before = {name: submissions.shard_of(name, 4) for name in names}
    after = {name: submissions.shard_of(name, 4) for name in [*names, "newcomer"]}
    assert all(after[name] == shard for name, shard in before.items())
    sizes = [list(before.values()).count(k) for k in (1, 2, 3, 4)]
    assert min(sizes) > 50, sizes


def test_the_class_table_lists_exercises_in_the_course_order(tmp_path: Path) -> None:
    lessons = ["split_heads", "causal_attention", "combine_heads"]
    for name in lessons:
        (tmp_path / name).mkdir()
        (tmp_path / name / "exercise.toml").write_text("")
    (tmp_path / "course.toml").write_text(f"[course]\nlessons = {lessons!r}\n")

    def result(lesson: str, learner: str, passed: bool) -> CaseResult:
        return CaseResult(
            exercise=lesson,
            title=lesson,
            path=str(tmp_path / lesson / "exercise.toml"),
            status=Status.PASSED if passed else Status.FAILED,
            points=1.0 if passed else 0.0,
            max_points=1.0,
            case=1,
            cases=1,
            learner=learner,
            fault="" if passed else "not implemented",
        )

    results = [
        result(lesson, learner, learner == "ada")
        for lesson in sorted(lessons)
        for learner in ("ada", "bo")
    ]
    assert classreport.class_lines(results) == [
        "2 learners",
        "split_heads: 1 of 2 passed, mean 0.5 of 1 points",
        "      1 learner  not implemented",
        "causal_attention: 1 of 2 passed, mean 0.5 of 1 points",
        "      1 learner  not implemented",
        "combine_heads: 1 of 2 passed, mean 0.5 of 1 points",
        "      1 learner  not implemented",
    ]
    # Merged where the course is not (or is broken): by name, as before.
    (tmp_path / "course.toml").write_text("[course]\nlessons = 1\n")
    names = [line.split(":")[0] for line in classreport.class_lines(results)[1::2]]
    assert names == sorted(lessons)


def test_the_class_table_counts_learners_passes_and_means() -> None:
    def result(learner: str, case: int, passed: bool, **changes: Any) -> CaseResult:
        return case_result(case, passed, **{"learner": learner, "exercise": "double", **changes})

    rows = [
        result("ada", 1, True),
        result("ada", 2, True),
        result("bo", 1, True),
        result("bo", 2, False, diagnosis="x", diagnosis_kind="watch_out"),
        result("cy", 1, False, diagnosis="x", diagnosis_kind="watch_out"),
        result("cy", 2, False, diagnosis="y", diagnosis_kind="watch_out"),
    ]
    lines = classreport.class_lines(rows)
    assert lines[:2] == ["3 learners", "double: 1 of 3 passed, mean 1 of 2 points"]
    assert [line.split("watch out")[0] for line in lines[2:]] == [
        "      2 learners  ",
        "      1 learner  ",
    ]
    # A learner with no result for an exercise has not passed it and counts in its mean.
    rows = [result("ada", 1, True), result("bo", 1, True, exercise="other")]
    assert classreport.class_lines(rows)[1:] == [
        "double: 1 of 2 passed, mean 0.5 of 0.5 points",
        "other: 1 of 2 passed, mean 0.5 of 0.5 points",
    ]
    # Outside a class (no learner names) it is one learner.
    alone = [case_result(1, True, exercise="double"), case_result(2, True, exercise="double")]
    assert classreport.class_lines(alone) == [
        "1 learner",
        "double: 1 of 1 passed, mean 2 of 2 points",
    ]


def test_a_merge_refuses_a_report_that_does_not_say_its_shard_unless_allowed(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old.json"
    report = formats.full([case_result(1, True, learner="ada")], 1.0)
    del report["exercises"]
    old.write_text(json.dumps(report))
    with pytest.raises(merging.MergeError, match="does not say which shard of which class"):
        merging.read_shards([old])
    merged = merging.read_shards([old], allow_missing=True)
    assert [r.learner for r in merged.results] == ["ada"] and merged.absent == {}
