"""Work budgets (``[budget]``): what a learner and an author see.

Real torch in real children (fork and spawn, the sandbox on) for what only a run can show: the
figures are counted in the child, the learner's beside the reference's, in the terminal and in
the report. The core's verdict on given figures runs on the fake runner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core import settings
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.grader import Grader
from pytest_lessons.core.results import Status
from pytest_lessons.isolation import sandbox
from pytest_lessons.isolation.outcome import DIED, UNREADABLE, Outcome, from_untrusted

from helpers import HAS_TORCH, NO_TORCH, FakeRunner, grader, lesson, said

Make = Callable[..., Path]

#: The sandbox must be on where this machine has one: the counter goes up before it closes.
SANDBOX = "require" if sandbox.probe().abi else "auto"

#: A sum over a tensor, with a budget case at n = 64 and a growth case from n = 16 to 256.
SUM_TOML = """
[exercise]
title = "Sum"
inputs = [{ name = "x", pass = "tensor", dtype = "float64" }]
format = 2
outputs = [{ kind = "float" }]

[[case]]
x = [1.0, 2.0]
expected = 3.0

[generate]
count = 1
[generate.axes]
n = [2, 4]
[generate.inputs]
x = ["n"]

[budget]
sizes = { n = 64 }
elements = "2x reference"
advice = "Add the values up in one pass"
watch_outs = ["square"]

[budget.growth]
axis = "n"
sizes = [16, 256]
elements = "32x"

[[watch_out]]
id = "square"
mistake = "square"
message = "sum x itself: x[:, None] * torch.ones(n) holds n² values for n numbers."
"""
SUM_REFERENCE = "def solve(x):\n    return float(x.sum())\n"
#: Right values, n² work: an [n, n] intermediate.
SQUARE = """
import torch


def solve(x):
    n = len(x)
    return float((x[:, None] * torch.ones(n, dtype=x.dtype)[None, :]).sum() / n)
"""


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_learner_over_budget_reads_what_to_do_and_both_figures(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    mistakes = SQUARE.replace("def solve", "def square")
    make_exercise(
        "sum", solution=SQUARE, toml=SUM_TOML, reference__py=SUM_REFERENCE, mistakes__py=mistakes
    )
    result = pytester.runpytest(
        "sum",
        f"--lesson-isolation={isolation}",
        f"--lesson-sandbox={SANDBOX}",
        "--lesson-report=r.json",
        "-p",
        "no:cacheprovider",
    )
    text = said(result)
    assert result.ret == 1
    result.assert_outcomes(passed=2, failed=2)  # the values pass; both budget cases fail
    # The budget case: the watch-out leads, then the learner's figure and the reference's,
    # counted in their own children ([64, 1] * [1, 64] alone touches 4,224 elements).
    assert "sum: case 3 (work budget)" in text
    assert "Watch out: sum x itself: x[:, None] * torch.ones(n) holds n² values" in text
    assert "Your solve did 8,388 element operations, the reference 66 (budget 2x the" in text
    assert "element operations 8,388 66 2x reference" in text
    # The growth case: how the work grew from the smaller size, the reference's beside it.
    assert "As n grows from 16 to 256, your solve's element operations grew 234x" in text
    assert "the reference's 14x (budget 32x)" in text
    assert "element operations 564 -> 131.8k 18 -> 258 grows 32x" in text
    assert "Work is counted, not timed" in text and "Traceback" not in text
    data = json.loads((pytester.path / "r.json").read_text())
    work = next(r for r in data["results"] if r["label"].startswith("case 3"))
    assert work["status"] == "failed" and work["diagnosis"] == "square"
    assert "8,388 element operations, the reference 66" in work["message"]


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
def test_the_lesson_check_proves_the_reference_keeps_the_budget_and_the_slow_mistake_breaks_it(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    mistakes = SQUARE.replace("def solve", "def square")
    make_exercise(
        "sum", solution=None, toml=SUM_TOML, reference__py=SUM_REFERENCE, mistakes__py=mistakes
    )
    (pytester.path / "sum" / "solution.py").write_text(
        "def solve(x):\n    raise NotImplementedError\n"
    )
    result = pytester.runpytest("--lesson-check", "sum", "-p", "no:cacheprovider")
    assert result.ret == 0, said(result)
    assert "mistake square - caught by the work budget on case 3 (work budget)" in said(result)
    # The same slow code left out of budget.watch_outs: no watch-out fires where it fails.
    toml = SUM_TOML.replace('watch_outs = ["square"]\n', "")
    make_exercise(
        "sum", solution=None, toml=toml, reference__py=SUM_REFERENCE, mistakes__py=mistakes
    )
    (pytester.path / "sum" / "solution.py").write_text(
        "def solve(x):\n    raise NotImplementedError\n"
    )
    result = pytester.runpytest("--lesson-check", "sum", "-p", "no:cacheprovider")
    assert result.ret == 1
    assert "watch-out square (mistake square): on cases 3, 4 no watch-out fires" in said(result)


HARNESS = """
def drive(learner, x):
    return learner.solve(x)
"""


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
def test_a_harness_lesson_counts_the_whole_drive_at_both_sizes(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # A lesson driven through harness.py (cached generation is one) is counted as a whole:
    # drive() at the larger size, then drive() again at the smaller, in the same child.
    toml = SUM_TOML.replace('title = "Sum"', 'title = "Sum"\nharness = "harness.py"')
    mistakes = SQUARE.replace("def solve", "def square")
    make_exercise(
        "sum",
        solution=SQUARE,
        toml=toml,
        reference__py=SUM_REFERENCE,
        mistakes__py=mistakes,
        harness__py=HARNESS,
    )
    result = pytester.runpytest(
        "sum", "--lesson-isolation=fork", f"--lesson-sandbox={SANDBOX}", "-p", "no:cacheprovider"
    )
    text = said(result)
    result.assert_outcomes(passed=2, failed=2)
    assert "Your solve did 8,388 element operations, the reference 66 (budget 2x the" in text
    assert "As n grows from 16 to 256, your solve's element operations grew 234x" in text
    assert "the reference's 14x (budget 32x)" in text


# --- the core's verdict, on the fake runner -----------------------------------------------


def figures(elements: int, smaller: int | None = None) -> dict[str, Any]:
    report: dict[str, Any] = {"at": {"flops": 0, "elements": elements, "operations": 3}}
    if smaller is not None:
        report["smaller"] = {"flops": 0, "elements": smaller, "operations": 3}
    return report


def counted(answer: float, at: int, smaller: int) -> Callable[..., Outcome]:
    """Code that answers *answer* with the given figures when its job asks for them."""

    def run(*inputs: Any) -> Outcome:
        return Outcome("returned", answer=answer, details={"work": figures(at, smaller)})

    return run


def test_the_verdict_compares_the_figures_it_received_and_leaves_failures_to_the_runner(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, SUM_TOML, **{"mistakes.py": ""})
    budget, growth = exercise.cases[-2:]
    assert (budget.label, growth.label) == ("case 3 (work budget)", "case 4 (work growth)")
    assert budget.work is not None and budget.work.sizes == {"n": 64}
    assert growth.work is not None and growth.work.smaller is not None
    assert len(growth.inputs["x"]) == 256 and len(growth.work.smaller["x"]) == 16

    def grade(learner: Callable[..., Any], reference: Callable[..., Any]) -> list[Any]:
        grade_, runner = grader(
            {
                ("solution.py", "solve"): learner,
                ("reference.py", "solve"): reference,
                ("mistakes.py", "square"): counted(1.0, 9999, 99),
            }
        )
        graded = [grade_.grade(Attempt(exercise, case)) for case in (budget, growth)]
        # Every budget job asked the child to count; the growth's with its smaller inputs.
        asked = [job.work for job in runner.jobs if job.entry == "solve"]
        assert {} in asked and any(w and "also" in w for w in asked)
        return graded

    reference = counted(1.0, 100, 10)
    within, grew = grade(counted(1.0, 200, 10), reference)  # 2x the reference, 20x growth
    assert within.passed and grew.passed
    over, too_fast = grade(counted(1.0, 201, 1), reference)
    assert over.status == too_fast.status == Status.FAILED
    assert over.result.headline == (
        "Add the values up in one pass: your solve did 201 element operations, the reference "
        "100 (budget 2x the reference)."
    )
    # Growing 201x, near the slow mistake's 101x (within 4x): its watch-out leads.
    assert too_fast.result.diagnosis == "square"
    assert too_fast.result.headline.startswith("Watch out: sum x itself")
    assert (
        "As n grows from 16 to 256, your solve's element operations grew 201x (1 to 201), the "
        "reference's 10x (budget 32x)."
    ) in " ".join(too_fast.result.message.split())
    assert over.result.diagnosis is None  # 201 is not near the slow mistake's 9,999
    # The reference gave no figures: the lesson's failure, for its author, never the learner's.
    bare = grade(counted(1.0, 200, 10), lambda *inputs: 1.0)
    assert all(g.status == Status.INTERNAL and "reference" in g.result.lesson_error for g in bare)
    # The learner's result came back without figures (its own code wrote the result): its own
    # failure, worded as what to do.
    missing = grade(lambda *inputs: 1.0, reference)
    assert missing[0].status == Status.FAILED and missing[0].result.headline.startswith(
        "Leave the grader's work counter in place: solve's result came back without"
    )


def test_figures_a_child_could_not_have_written_make_the_result_unreadable() -> None:
    def read(work: Any) -> Outcome:
        data = {"kind": "returned", "answer": 1.0, "details": {"work": work}}
        return from_untrusted(json.dumps(data).encode(), 1 << 20)

    assert read(figures(5, 2)).details["work"] == figures(5, 2)
    for forged in (
        figures(-1),
        {"at": {"flops": 0.5, "elements": 1, "operations": 1}},
        {"at": {**figures(1)["at"], "seconds": 1}},
        {"at": figures(1)["at"], "smaller": "fast"},
        "12",
    ):
        outcome = read(forged)
        assert (outcome.kind, outcome.message) == (DIED, UNREADABLE)


# --- a budget is no wall: --lesson-work-budgets=feedback ------------------------------------
# The figures are counted in the child, where learner code runs and can take the counter off
# torch's stack: code over its budget then passes it. A run that must hold against that counts
# budget cases as feedback: graded and shown, in every report, worth 0 points.

#: Right values at n² work, run with the counter popped off torch's stack when there is one:
#: nothing is counted.
FORGED = """
import contextlib

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack, _pop_mode_temporarily


def solve(x):
    counted = bool(_get_current_dispatch_mode_stack())
    with _pop_mode_temporarily() if counted else contextlib.nullcontext():
        n = len(x)
        return float((x[:, None] * torch.ones(n, dtype=x.dtype)[None, :]).sum() / n)
"""


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason=NO_TORCH)
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_budget_cases_counted_as_feedback_carry_no_points_and_stay_in_every_report(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    mistakes = SQUARE.replace("def solve", "def square")
    make_exercise(
        "sum", solution=None, toml=SUM_TOML, reference__py=SUM_REFERENCE, mistakes__py=mistakes
    )
    learners = {"ada": SUM_REFERENCE, "bo": SQUARE, "eve": FORGED}
    for name, code in learners.items():
        folder = pytester.path / "submissions" / name / "sum"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(code)
    result = pytester.runpytest(
        "sum",
        "--lesson-submissions=submissions",
        "--lesson-work-budgets=feedback",
        f"--lesson-isolation={isolation}",
        f"--lesson-sandbox={SANDBOX}",
        "--lesson-report=r.json",
        "--lesson-gradebook=g.csv",
        "--lesson-gradebook-format=wide",
        "--lesson-workers=1",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 1, said(result)
    # The gradebook counts what the report says: 2 of 2 for each, the forger's too.
    rows = (pytester.path / "g.csv").read_text().splitlines()
    assert rows == ["learner,sum,total,max,note", "ada,2,2,2,", "bo,2,2,2,", "eve,2,2,2,"]
    data = json.loads((pytester.path / "r.json").read_text())
    by = {(r["learner"], r["case"]): r for r in data["results"]}
    assert len(by) == 3 * 4  # every case of every learner, recorded
    for name in learners:
        # The value cases keep their points; the budget cases are worth none.
        assert [by[name, n]["max_points"] for n in (1, 2, 3, 4)] == [1, 1, 0, 0]
        assert by[name, 1]["passed"] and by[name, 2]["passed"]
    # ada keeps her budget; bo's honest n² work fails it and says it is feedback.
    assert by["ada", 3]["passed"] and by["ada", 4]["passed"]
    assert by["bo", 3]["status"] == by["bo", 4]["status"] == "failed"
    assert "counts work budgets as feedback: this case scores no points" in by["bo", 3]["message"]
    # eve's forged count passes the budget in the child, and earns nothing by it.
    assert by["eve", 3]["passed"] and by["eve", 3]["points"] == 0
    totals = {n: sum(by[n, c]["points"] for c in (1, 2, 3, 4)) for n in learners}
    assert totals == {"ada": 2, "bo": 2, "eve": 2}


def summing(at: int, smaller: int, off: float = 0.0) -> Callable[..., Outcome]:
    """Code that answers the sum of its input (plus *off*) with the given figures."""

    def run(x: Any) -> Outcome:
        answer = float(sum(x["value"])) + off
        return Outcome("returned", answer=answer, details={"work": figures(at, smaller)})

    return run


def test_the_work_budgets_setting_makes_budget_cases_worth_nothing_and_nothing_else(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, SUM_TOML, **{"mistakes.py": ""})
    code = {
        ("reference.py", "solve"): summing(100, 10),
        ("mistakes.py", "square"): summing(9999, 99),
        ("right.py", "solve"): summing(150, 10),
        ("slow.py", "solve"): summing(9999, 1),
        ("wrong.py", "solve"): summing(150, 10, off=1.0),
    }

    def grade(mode: str | None) -> dict[tuple[str, int], Any]:
        resolved = settings.resolve(
            option=lambda name: mode if name == "work_budgets" else None,
            ini=lambda name: None,
            environ={},
        )
        grade_ = Grader(FakeRunner(code), resolved, show=lambda path: Path(path).name)
        return {
            (who, case.number): grade_.grade(
                Attempt(exercise, case, solution=tmp_path / f"{who}.py", learner=who)
            ).result
            for who in ("right", "slow", "wrong")
            for case in exercise.cases
        }

    feedback = grade("feedback")
    assert [feedback["right", n].max_points for n in (1, 2, 3, 4)] == [1, 1, 0, 0]
    assert all(feedback["right", n].passed for n in (1, 2, 3, 4))
    # Over budget: failed, worth nothing, and told so; the right code beside it is unchanged.
    slow = feedback["slow", 3]
    assert slow.status == Status.FAILED and (slow.points, slow.max_points) == (0, 0)
    assert "This run counts work budgets as feedback" in slow.message
    assert feedback["slow", 1].points == 1
    # A wrong value on a budget case fails as it does on any other case, for no points.
    assert feedback["wrong", 3].status == Status.FAILED and feedback["wrong", 3].max_points == 0
    assert feedback["wrong", 1].max_points == 1 and not feedback["wrong", 1].passed
    # By default (points) a budget case is worth its points, and says nothing of feedback.
    points = grade(None)
    assert [points["right", n].points for n in (1, 2, 3, 4)] == [1, 1, 1, 1]
    assert points["slow", 3].max_points == 1 and "feedback" not in points["slow", 3].message
    with pytest.raises(settings.SettingError, match="must be one of points, feedback"):
        settings.resolve(lambda name: "free" if name == "work_budgets" else None, lambda n: None)
