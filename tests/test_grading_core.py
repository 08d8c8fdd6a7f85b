"""The grading core without pytest: :class:`Grader` driven by a fake runner.

The runner is the one part replaced: each (file, function) maps to a Python function of the
job's inputs, so these tests run no process and no learner file, yet go through everything
else a case goes through (the judge, the diagnosis, the words, the loop budget, the caches).
What only a pytest run can show stays in the pytester tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import explain
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import Numbers
from pytest_lessons.core.detectors import DETECTOR, WATCH_OUT, Diagnosis, Evidence
from pytest_lessons.core.explain import DETECTORS, WATCH_OUTS
from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.runs import LOOP_BUDGET
from pytest_lessons.isolation.outcome import Frame, Outcome

from helpers import DOUBLE_TOML, double, grade_all, grader, lesson


def test_a_right_answer_passes_with_its_points_and_no_words(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    grade, runner = grader({("solution.py", "solve"): double})
    for result, text in grade_all(exercise, grade):
        assert result.status == Status.PASSED and result.passed
        assert (result.points, result.max_points, text, result.headline) == (1.0, 1.0, "", "")
        assert result.call.startswith("solve(x=[")
    assert runner.ran("solution.py") == 2


def test_a_wrong_answer_fails_with_the_judges_headline_and_the_evidence(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    grade, _ = grader({("solution.py", "solve"): lambda x: [2, 5]})
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.status == Status.FAILED and graded.result.points == 0.0
    assert graded.result.headline == (
        "Check your calculation: the shape is right, but 1 of 2 values differ from the "
        "expected answer."
    )
    assert "largest gap" in graded.text and "your code  solution.py" in graded.text
    assert graded.answer == [2, 5]


def test_the_front_ends_diagnosis_is_asked_and_its_words_lead(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    grade, _ = grader({("solution.py", "solve"): lambda x: [2, 5]})
    seen: list[tuple[Attempt, Evidence]] = []

    def diagnose(attempt: Attempt, evidence: Evidence) -> Diagnosis:
        seen.append((attempt, evidence))
        return Diagnosis(
            id="off-by-one",
            headline="Watch out: count from zero.",
            rank=WATCH_OUT,
            kind="watch_out",
        )

    graded = grade.grade(Attempt(exercise, exercise.cases[0]), diagnose)
    assert graded.result.headline == "Watch out: count from zero."
    assert (graded.result.diagnosis, graded.result.diagnosis_kind) == ("off-by-one", "watch_out")
    ((attempt, evidence),) = seen
    assert attempt.case.number == 1 and list(evidence.got.flat) == [2, 5]
    assert list(evidence.expected.flat) == [2, 4]


WATCHED = (
    DOUBLE_TOML
    + """
[[watch_out]]
id = "tripled"
mistake = "tripled"
message = "multiply by 2, not 3."
"""
)


def test_the_built_in_diagnosis_is_the_cores_and_a_front_ends_only_adds_to_it(
    tmp_path: Path,
) -> None:
    # Issue 38: the lesson's watch-outs and the detectors need no front end; what a front end
    # adds is ranked with them, a watch-out outranking a detector whoever made either.
    exercise = lesson(tmp_path, WATCHED, **{"mistakes.py": ""})

    def triple(x: Any) -> Any:
        return [triple(v) for v in x] if isinstance(x, list) else 3 * x

    grade, _ = grader({("solution.py", "solve"): triple, ("mistakes.py", "tripled"): triple})
    attempt = Attempt(exercise, exercise.cases[0])

    def detector(attempt: Attempt, evidence: Evidence) -> Diagnosis:
        return Diagnosis(id="front-ends", headline="Looks like the front end's.", rank=DETECTOR)

    assert grade.grade(attempt).result.diagnosis == "tripled"
    assert grade.grade(attempt, detector).result.diagnosis == "tripled"
    assert grade.grade(attempt, detector, built_in={DETECTORS}).result.diagnosis == "front-ends"
    assert grade.grade(attempt, built_in=()).result.diagnosis is None
    assert grade.grade(attempt, built_in={WATCH_OUTS}).result.diagnosis == "tripled"


def test_a_front_ends_diagnosis_comes_first_among_equals_and_detectors_come_last(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, WATCHED, **{"mistakes.py": ""})
    grade, _ = grader({("mistakes.py", "tripled"): lambda x: [0, 0]})
    attempt = Attempt(exercise, exercise.cases[0])
    expected = Numbers((2, 3), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    swapped = Evidence(Numbers((3, 2), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]), expected, 1e-4, 1e-4)
    mine = Diagnosis(id="mine", headline="Looks like mine.", rank=DETECTOR)
    watch_outs = grade.watch_outs
    found = explain.ranked(watch_outs, attempt, swapped)
    assert found is not None and found.rank == DETECTOR and found.id != "mine"
    # The same rank as the built-in detector's: the front end's, asked first, wins.
    assert explain.ranked(watch_outs, attempt, swapped, lambda a, e: mine) == mine
    assert explain.ranked(watch_outs, attempt, swapped, built_in=()) is None


def test_a_watch_out_is_matched_by_the_mistake_functions_answer_and_said_once(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, WATCHED, **{"mistakes.py": ""})

    def triple(x: Any) -> Any:
        return [triple(v) for v in x] if isinstance(x, list) else 3 * x

    grade, runner = grader({("solution.py", "solve"): triple, ("mistakes.py", "tripled"): triple})
    (first, _), (second, second_text) = grade_all(exercise, grade)
    assert first.headline == "Watch out: multiply by 2, not 3."
    assert (first.diagnosis, second.diagnosis) == ("tripled", "tripled")
    assert "the same mistake as case 1" in second_text
    # Reports keep the whole text of every case, whatever ran before in this process.
    assert second.message.startswith("Watch out: multiply by 2, not 3.")
    assert runner.ran("mistakes.py") == 2  # once per case, cached for the consistency look


def test_a_mistake_function_that_fails_is_named_for_the_author_never_the_learner(
    tmp_path: Path,
) -> None:
    # Issue 22: the lesson's own failures name the author's file and line, in the reports.
    exercise = lesson(tmp_path, WATCHED, **{"mistakes.py": ""})
    where = Frame(str(exercise.folder / "mistakes.py"), 6, "tripled", "return x * '3'")
    crash = Outcome(
        "raised", error_type="TypeError", message="bad operand", phase="call", frames=(where,)
    )
    grade, _ = grader(
        {("solution.py", "solve"): lambda x: [9, 9], ("mistakes.py", "tripled"): lambda x: crash}
    )
    result = grade.grade(Attempt(exercise, exercise.cases[0])).result
    assert result.status == Status.FAILED and result.diagnosis is None
    assert result.lesson_error == (
        "The mistake of watch-out tripled could not be matched: tripled raised TypeError at "
        "line 6 of mistakes.py: bad operand.\n"
    )
    assert "mistakes.py" not in result.message and "TypeError" not in result.message


def test_the_loop_budget_stops_running_an_exercise_after_two_limits(tmp_path: Path) -> None:
    toml = DOUBLE_TOML + "".join(
        f"\n[[case]]\nx = [{n}]\nexpected = [{2 * n}]\n" for n in range(3, 6)
    )
    exercise = lesson(tmp_path, toml)
    grade, runner = grader({("solution.py", "solve"): lambda x: Outcome("timeout", seconds=10)})
    results = grade_all(exercise, grade)
    limit = grade.runs.limits(exercise).timeout
    assert runner.ran("solution.py") == int(LOOP_BUDGET)
    assert [r.status for r, _ in results] == [Status.ERROR] * 5
    assert [r.fault for r, _ in results] == ["timeout", "timeout", "not run", "not run", "not run"]
    assert results[2][0].headline == (
        "Make solve finish sooner, then run the lesson again: this case was not run, because "
        "cases 1, 2 of double already ran out of time."
    )
    assert f"Each case may run {limit:g} s." in results[2][1]
    # The terminal counts the rest as failing the same way (by their fault), not the core.
    assert results[4][0].headline == results[2][0].headline


def test_a_stub_is_explained_under_its_first_case_only(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    stub = Outcome(
        "raised",
        error_type="NotImplementedError",
        phase="call",
        frames=(Frame(str(exercise.solution), 2, "solve", "raise NotImplementedError"),),
    )
    grade, _ = grader({("solution.py", "solve"): lambda x: stub})
    (first, _), (second, second_text) = grade_all(exercise, grade)
    assert first.headline.startswith("Write your solution: double is not implemented yet.")
    assert second_text == (
        "Write your solution: double is not implemented yet.\n"
        "  (the same problem as case 1 (a row); its explanation is there)\n"
    )
    assert second.message == first.message.replace("[1, 2]", "[[1.5, 2], [3, 4]]")
    assert first.fault == second.fault == "raised NotImplementedError at solution.py:2"


def test_a_hidden_case_never_shows_its_inputs_answer_or_output(tmp_path: Path) -> None:
    toml = DOUBLE_TOML + "\n[[case]]\nhidden = true\nx = [41, 42]\nexpected = [82, 84]\n"
    exercise = lesson(tmp_path, toml)
    printed = Outcome("returned", answer=[1, 2], output="I saw 41 and 42\n")
    grade, _ = grader({("solution.py", "solve"): lambda x: printed})
    graded = grade.grade(Attempt(exercise, exercise.cases[2]))
    assert graded.result.headline == "Hidden case 3 failed: your answer is wrong."
    assert "Its inputs and expected answer are not shown: it is a hidden case." in graded.text
    # Every field a report shows (the file's path may hold any digits: it is not checked).
    result = graded.result
    shown = json.dumps([result.headline, result.message, result.call, result.output])
    assert "41" not in shown and "82" not in shown and "I saw" not in shown
    assert graded.text == result.message
    assert graded.result.call == "solve(x)  # a hidden case"


GENERATED = (
    DOUBLE_TOML
    + """
[generate]
count = 2
seed = 1
[generate.inputs]
x = ["n"]
[generate.axes]
n = [1, 3]
"""
)


def test_a_generated_case_is_graded_against_the_references_answer(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, GENERATED)
    generated = [case for case in exercise.cases if case.generated]
    assert generated
    grade, runner = grader({("solution.py", "solve"): double, ("reference.py", "solve"): double})
    assert all(result.passed for result, _ in grade_all(exercise, grade))
    assert runner.ran("reference.py") == len(generated)


def test_a_reference_failing_on_a_generated_case_is_internal_never_free_points(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, GENERATED)
    crash = Outcome("raised", error_type="ZeroDivisionError", phase="call")
    grade, _ = grader(
        {("solution.py", "solve"): double, ("reference.py", "solve"): lambda x: crash}
    )
    case = next(case for case in exercise.cases if case.generated)
    graded = grade.grade(Attempt(exercise, case))
    assert graded.status == Status.INTERNAL and graded.result.points == 0.0
    assert graded.result.headline.startswith(
        "Tell your instructor that this case cannot be graded: the lesson itself failed on it"
    )
    assert graded.result.lesson_error.startswith("solve raised ZeroDivisionError.\n")
    assert "reference.py" in graded.result.lesson_error
    assert "inputs     x = [" in graded.result.lesson_error
    # A report may reach learners: a hidden case's inputs stay out of it.
    hidden = lesson(tmp_path, GENERATED.replace("seed = 1", "seed = 1\nhidden = true"))
    case = next(case for case in hidden.cases if case.generated)
    error = grade.grade(Attempt(hidden, case)).result.lesson_error
    assert error.startswith("solve raised ZeroDivisionError.\n")
    assert "inputs" not in error.replace("Its inputs are not shown", "")


def test_a_smaller_failing_input_is_found_for_a_generated_case(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, GENERATED)
    grade, _ = grader({("solution.py", "solve"): lambda x: x, ("reference.py", "solve"): double})
    case = next(case for case in exercise.cases if case.generated and case.sizes["n"] > 1)
    graded = grade.grade(Attempt(exercise, case))
    assert "A smaller input that fails the same way (n 1):" in graded.text
    # Reports keep the case's own words; the smaller input is for the learner at the desk.
    assert "smaller input" not in graded.result.message
    batch = grade.grade(Attempt(exercise, case, learner="ada"))
    assert "smaller input" not in batch.text


def test_printed_output_is_capped_per_exercise_in_the_results(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    flood = Outcome("returned", answer=[0], output="x" * 60_000)
    grade, _ = grader({("solution.py", "solve"): lambda x: flood})
    cap = grade.runs.limits(exercise).output_cap
    (first, _), (second, _) = grade_all(exercise, grade)
    assert len(first.output) <= cap + 60
    assert len(first.output) + len(second.output) <= cap + 200


def test_the_learners_outcome_is_run_once_per_case_and_learner(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    grade, runner = grader({("solution.py", "solve"): double})
    attempt = Attempt(exercise, exercise.cases[0])
    grade.grade(attempt)
    grade.grade(attempt)
    assert runner.ran("solution.py") == 1
    other = tmp_path / "ada" / "double" / "solution.py"
    grade.grade(Attempt(exercise, exercise.cases[0], other, "ada"))
    assert runner.ran("solution.py") == 2


def test_a_missing_file_is_an_error_that_makes_the_solution_unloadable(tmp_path: Path) -> None:
    exercise = lesson(tmp_path)
    grade, _ = grader({})
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.status == Status.ERROR and graded.result.unloadable


@pytest.mark.parametrize("status", list(Status))
def test_a_result_travels_as_plain_data_and_back(status: Status) -> None:
    result = CaseResult("double", "Double", "/c/double/exercise.toml", status, case=1)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["status"] == status.value and data["passed"] == (status == Status.PASSED)
    assert CaseResult.from_dict({**data, "added_later": 1}) == result
