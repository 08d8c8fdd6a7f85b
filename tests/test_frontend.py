"""What both front ends show alike (core/frontend.py), tested directly: why a case failed as
the groupings read it, one message per reason, and the grader's apology."""

from __future__ import annotations

from pytest_lessons.core import settings
from pytest_lessons.core.frontend import SAME_WAY, FaultGroups, choose_sandbox, grader_failed
from pytest_lessons.core.results import DETECTOR, FAULT, WATCH_OUT

from helpers import case_result


def test_a_case_fails_for_a_watch_out_a_fault_a_detector_or_its_own_answer() -> None:
    watch = case_result(1, False, diagnosis="missing-scale", diagnosis_kind="watch_out")
    assert watch.reason == (WATCH_OUT, "missing-scale")
    assert case_result(2, False, fault="setup NotImplementedError").reason == (
        FAULT,
        "setup NotImplementedError",
    )
    found = case_result(3, False, diagnosis="transposed", diagnosis_kind="detector")
    assert found.reason == (DETECTOR, "transposed")
    assert case_result(4, False).reason is None  # a wrong answer of its own
    assert case_result(5, True, fault="timeout").reason is None  # a pass has no reason
    # A watch-out is the reason a learner reads, before any fault key.
    both = case_result(6, False, fault="x", diagnosis="d", diagnosis_kind="watch_out")
    assert both.reason == (WATCH_OUT, "d")
    assert case_result(7, False, diagnosis_kind="watch_out", fault="x").reason == (FAULT, "x")


def test_one_reason_one_message_per_exercise_and_learner() -> None:
    terminal: FaultGroups[str] = FaultGroups()
    stub = case_result(1, False, fault="setup NotImplementedError")
    assert terminal.first(stub, "case 1") == "case 1"
    assert terminal.first(stub, "case 1") == "case 1"  # asked again: still the first
    assert terminal.first(case_result(2, False, fault=stub.fault), "case 2") == "case 1"
    other_learner = case_result(2, False, fault=stub.fault, learner="bo")
    assert terminal.first(other_learner, "bo 2") == "bo 2"
    other_lesson = case_result(2, False, fault=stub.fault, exercise="split")
    assert terminal.first(other_lesson, "split 2") == "split 2"
    # The terminal folds faults only: each watch-out case shows its own numbers.
    watch = case_result(3, False, diagnosis="missing-scale", diagnosis_kind="watch_out")
    assert terminal.first(watch, "case 3") is None
    assert terminal.first(case_result(4, False), "case 4") is None
    cell: FaultGroups[str] = FaultGroups((WATCH_OUT, FAULT, DETECTOR))
    assert cell.first(watch, "case 3") == "case 3"
    again = case_result(5, False, diagnosis="missing-scale", diagnosis_kind="watch_out")
    assert cell.first(again, "case 5") == "case 3"
    assert SAME_WAY == "failed the same way"


def test_the_grader_failing_is_said_as_its_own_fault_with_what_to_do() -> None:
    said = grader_failed("this cell", KeyError("x"), "Run the cell again.")
    assert said == [
        "The grader itself failed on this cell, not your code (KeyError: 'x').",
        "Run the cell again.",
    ]


def test_both_front_ends_choose_the_sandbox_from_the_same_settings() -> None:
    given = {
        "sandbox": "off",
        "pass_env": "LESSON_TOKEN",
        "sandbox_user": "nobody",
        "disk": "64",
        "open_files": "100",
        "processes": "8",
    }
    resolved = settings.resolve(option=given.get, ini=lambda name: None, environ={})
    environ = {"LESSON_TOKEN": "kept", "SECRET": "dropped", "PATH": "/bin"}
    support, policy = choose_sandbox(resolved, environ, "--lesson-sandbox=off was given")
    assert support.abi == 0 and support.reason == "--lesson-sandbox=off was given"
    assert policy.env.get("LESSON_TOKEN") == "kept" and "SECRET" not in policy.env
    assert policy.uid is None  # off: learner code stays the user it is
    # The limits reach the policy only with seccomp (tests/test_run_settings.py shows them).
