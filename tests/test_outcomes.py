"""What each kind of case result shows in a class's reports (``tallies.outcome_of``): its
key, its words and its colour, the same bar in the class report, the terminal's class lines and
a tally. Plain results, no pytest run: these are the unit tests mutation testing runs against
``reports/tallies.py`` (the page itself is tested in test_classreport.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_lessons.core import texts
from pytest_lessons.core.compare import compare
from pytest_lessons.core.results import CaseResult, FaultKind, Status
from pytest_lessons.isolation.outcome import Frame, Outcome
from pytest_lessons.reports import classreport
from pytest_lessons.reports.gradebook import MISSING

from helpers import case_result

ERROR = Status.ERROR


def case(learner: str, number: int, passed: bool, **changes: Any) -> CaseResult:
    return case_result(
        number, passed, **{"cases": 3, "learner": learner, "seconds": 0.1, **changes}
    )


def test_each_fault_key_the_core_writes_has_its_kind_and_its_bar() -> None:
    at = (Frame("/course/ex/solution.py", 3, "solve"),)
    tensor = {"$": "tensor", "type": "torch.Tensor", "shape": [2], "values": [1.0, 2.0]}
    written = {
        texts.fault_key(Outcome("setup", error_type="missing_file"), None): FaultKind.MISSING_FILE,
        texts.fault_key(Outcome("setup", error_type="syntax_error"), None): FaultKind.SETUP,
        texts.fault_key(Outcome("timeout", seconds=1.0), None): FaultKind.TIMEOUT,
        "not run": FaultKind.NOT_RUN,
        texts.fault_key(Outcome("died", signal="SIGKILL"), None): FaultKind.DIED,
        texts.fault_key(
            Outcome("raised", error_type="NotImplementedError", frames=at), None
        ): FaultKind.NOT_IMPLEMENTED,
        texts.fault_key(Outcome("raised", error_type="KeyError", frames=at), None): (
            FaultKind.RAISED
        ),
        texts.fault_key(Outcome("returned"), compare([1.0, 2.0], tensor, 1e-4, 1e-4)): (
            FaultKind.RETURNED
        ),
        texts.fault_key(Outcome("returned"), compare([1.0, 2.0], [1.0, 3.0], 1e-4, 1e-4)): (
            FaultKind.NONE
        ),
        "a key of a newer grader": FaultKind.OTHER,
    }
    assert len(written) == 10
    labels = []
    for fault, kind in written.items():
        result = case("ada", 1, False, status=ERROR, fault=fault)
        assert result.fault_kind == kind, fault
        # The kind is read from the key: a report's fields are what they were.
        assert result.to_dict()["fault"] == fault and "fault_kind" not in result.to_dict()
        labels.append(classreport.outcome_of(result).label)
    assert labels == [
        "missing",
        "cannot load: syntax error",
        "timeout",
        "not run (too many timeouts)",
        "crash",
        "not implemented",
        "raised KeyError",
        "returned tensor",
        "no answer (hidden case)",
        "a key of a newer grader",
    ]


#: (what a failing case holds, its bar as (key, label, colour)): every branch of the chart's
#: outcomes, in the order the report decides them (a pass before a broken file, the lesson's
#: own failure before a grader error, a diagnosis before the fault key).
BARS: tuple[tuple[dict[str, Any], tuple[str, str, str]], ...] = (
    ({"status": Status.PASSED}, ("passed", "passed", "passed")),
    ({"status": Status.BROKEN}, ("broken", "exercise.toml broken", "grader")),
    (
        {"status": Status.INTERNAL, "lesson_error": "reference.py:3 ValueError"},
        ("lesson", "lesson error: the lesson itself failed", "lesson"),
    ),
    (
        {"status": ERROR, "fault": "raised ValueError in the harness", "lesson_error": "x"},
        ("lesson:harness", "lesson error: the lesson's harness failed", "lesson"),
    ),
    (
        {"status": ERROR, "fault": "raised ValueError in the harness"},
        ("raised:ValueError", "raised ValueError", "raised"),
    ),
    ({"status": Status.INTERNAL}, ("internal", "grader error: the grader itself failed", "grader")),
    (
        {"diagnosis": "missing-transpose", "diagnosis_kind": "watch_out", "fault": "timeout"},
        ("watch_out:missing-transpose", "watch out: missing-transpose", "watch_out"),
    ),
    (
        {"diagnosis": "rows", "diagnosis_kind": "detector", "fault": "timeout"},
        ("detector:rows", "finding: rows", "detector"),
    ),
    (
        {"status": ERROR, "diagnosis": "no-cumsum", "diagnosis_kind": "rule", "fault": "timeout"},
        ("rule:no-cumsum", "rule: no-cumsum", "raised"),
    ),
    (
        {"status": ERROR, "diagnosis": "finite", "diagnosis_kind": "check", "fault": "timeout"},
        ("check:finite", "check: finite", "check"),
    ),
    ({"diagnosis_kind": "watch_out", "fault": "timeout"}, ("timeout", "timeout", "timeout")),
    ({"diagnosis_kind": "detector", "diagnosis": ""}, ("wrong", "wrong answer", "wrong")),
    ({"diagnosis_kind": "rule"}, ("wrong", "wrong answer", "wrong")),
    ({"diagnosis_kind": "check"}, ("wrong", "wrong answer", "wrong")),
    ({"status": ERROR, "fault": MISSING}, ("missing", "missing", "missing")),
    ({"status": ERROR, "fault": "timeout"}, ("timeout", "timeout", "timeout")),
    ({"status": ERROR, "fault": "not run"}, ("not-run", "not run (too many timeouts)", "timeout")),
    ({"status": ERROR, "fault": "check finite"}, ("check:finite", "check: finite", "check")),
    ({"status": ERROR, "fault": "died 9"}, ("crash", "crash", "crash")),
    (
        {"status": ERROR, "fault": "raised NotImplementedError at solution.py:12"},
        ("not-implemented", "not implemented", "unloadable"),
    ),
    (
        {"status": ERROR, "fault": "raised IndexError at solution.py:18"},
        ("raised:IndexError", "raised IndexError", "raised"),
    ),
    (
        {"status": ERROR, "fault": "setup no_function"},
        ("setup:no function", "cannot load: no function", "unloadable"),
    ),
    (
        {"fault": "returned a tensor"},
        ("returned:returned a tensor", "returned a tensor", "returned"),
    ),
    (
        {"status": ERROR, "fault": "from a newer grader"},
        ("fault:from a newer grader", "from a newer grader", "raised"),
    ),
    ({"status": ERROR}, ("error", "no answer (hidden case)", "raised")),
    ({"status": Status.FAILED}, ("wrong", "wrong answer", "wrong")),
)


@pytest.mark.parametrize(("changes", "bar"), BARS, ids=[b[1][0] for b in BARS])
def test_each_kind_of_result_is_one_bar_with_its_words_and_colour(
    changes: dict[str, Any], bar: tuple[str, str, str]
) -> None:
    result = case("ada", 1, changes.get("status") == Status.PASSED, **changes)
    outcome = classreport.outcome_of(result)
    assert (outcome.key, outcome.label, outcome.kind) == bar
    assert outcome.kind in classreport.COLOURS
