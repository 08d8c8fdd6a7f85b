"""Lessons about behaviour: a lesson's harness and the inputs' mutation rules, as a learner and
an author see them (docs/authors/harness.md).

One pytest run per isolation mode grades a small course of lessons that share one harnessed
lesson's files, each with another learner's solution.py, with the sandbox on; the core's words
for what the child reports are checked with the fake runner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.results import Status
from pytest_lessons.isolation.outcome import Frame, Outcome

from helpers import course, dedent, grader, lesson

SCALE_TOML = """
[exercise]
title = "A scaling module"
entry = "Scale"
harness = "harness.py"
inputs = [{ name = "w", pass = "tensor", dtype = "float64" }, { name = "x", pass = "tensor", dtype = "float64", after = "unchanged" }]
outputs = [{ name = "y", kind = "list[float]" }, { name = "calls", kind = "int" }]

[[case]]
name = "worked example"
w = [1.0, 2.0]
x = [3.0, 4.0]
expected = { y = [3.0, 8.0], calls = 2 }

[[case]]
hidden = true
w = [0.5, 0.5, 2.0]
x = [2.0, 4.0, 1.0]
expected = { from = "reference" }

[generate]
count = 2
axes = { n = [1, 4] }
inputs = { w = ["n"], x = ["n"] }
"""

SCALE_HARNESS = """
from pytest_lessons.harness import LessonFailure, load_strict, same


def drive(learner, w, x):
    module = learner.Scale(len(w))
    load_strict(module, {"weight": w}, "Scale")
    first = module(x).tolist()
    same(first, module(x).tolist(), "two calls of your Scale on the same input")
    if not isinstance(first, list):
        raise LessonFailure("Return a tensor of x's shape from Scale.forward.")
    return {"y": first, "calls": 2}
"""

SCALE_RIGHT = """
import torch


class Scale(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(n, dtype=torch.float64))

    def forward(self, x):
        return x * self.weight
"""

#: Each learner's Scale, by lesson folder: what it does wrong.
LEARNERS = {
    "right": SCALE_RIGHT,
    "named_w": SCALE_RIGHT.replace("self.weight", "self.w"),
    "in_place": SCALE_RIGHT.replace("return x * self.weight", "return x.mul_(self.weight)"),
    "raises": SCALE_RIGHT.replace(
        "return x * self.weight", "raise ValueError('the widths do not match')"
    ),
    # The lesson's own LessonFailure, raised by the learner: the learner's exception.
    "forges_check": SCALE_RIGHT.replace(
        "return x * self.weight",
        "raise __import__('pytest_lessons.harness').harness.LessonFailure('regrade approved')",
    ),
    "no_size": SCALE_RIGHT.replace("def __init__(self, n):", "def __init__(self):").replace(
        "zeros(n,", "zeros(2,"
    ),
}

CLIP_TOML = """
[exercise]
title = "Clip in place"
inputs = [{ name = "g", pass = "tensor", dtype = "float64", after = "updated" }, "limit"]
outputs = [{ name = "g", kind = "tensor[float64]" }]

[[case]]
g = [3.0, -4.0, 1.0]
limit = 2.0
expected = [2.0, -2.0, 1.0]
"""


def _course(root: Path) -> None:
    folders = [*LEARNERS, "clip_right", "clip_copy", "buggy"]
    (root / "course.toml").write_text(
        '[course]\ntitle = "c"\nlessons = [' + ", ".join(f'"{f}"' for f in folders) + "]\n"
    )
    for name, solution in LEARNERS.items():
        folder = root / name
        folder.mkdir()
        (folder / "exercise.toml").write_text(SCALE_TOML)
        (folder / "harness.py").write_text(dedent(SCALE_HARNESS))
        (folder / "reference.py").write_text(dedent(SCALE_RIGHT))
        (folder / "solution.py").write_text(dedent(solution))
    buggy = root / "buggy"
    buggy.mkdir()
    (buggy / "exercise.toml").write_text(SCALE_TOML.split("[[case]]\nhidden")[0])
    (buggy / "harness.py").write_text(
        dedent(SCALE_HARNESS).replace('return {"y": first', 'return {"y": first[5]')
    )
    (buggy / "solution.py").write_text(dedent(SCALE_RIGHT))
    for name, body in (
        ("clip_right", "g.clamp_(-limit, limit)"),
        ("clip_copy", "g.clamp(-limit, limit)"),
    ):
        folder = root / name
        folder.mkdir()
        (folder / "exercise.toml").write_text(CLIP_TOML)
        (folder / "solution.py").write_text(f"def solve(g, limit):\n    {body}\n")


@pytest.mark.torch
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_harness_drives_each_learners_module_and_words_each_fault_for_its_reader(
    pytester: pytest.Pytester, isolation: str
) -> None:
    _course(pytester.path)
    # A new Python per case costs seconds: spawn mode grades each lesson's first case only.
    only = ["-k", "case-1"] if isolation == "spawn" else []
    result = pytester.runpytest_subprocess(
        *only,
        f"--lesson-isolation={isolation}",
        "--lesson-sandbox=require",
        "--lesson-report=r.json",
        "--lesson-report-format=json",
    )
    report = json.loads((pytester.path / "r.json").read_text())
    by_lesson: dict[str, list[dict[str, object]]] = {}
    for entry in report["results"]:
        by_lesson.setdefault(str(entry["exercise"]), []).append(entry)
    # The right module passes its typed, hidden and generated cases; an in-place update that
    # is the rule passes, a copy that leaves the argument alone fails on its read-back value.
    assert [r["status"] for r in by_lesson["right"]] == ["passed"] * (4 - 3 * bool(only))
    assert by_lesson["clip_right"][0]["status"] == "passed"
    assert by_lesson["clip_copy"][0]["status"] == "failed"
    text = result.stdout.str()
    # Names and shapes before anything runs, in the learner's terms.
    assert (
        "Give your Scale a parameter named `weight` of shape [2]: the lesson loads its weights "
        "by name, and your Scale has no parameter `weight`; it has `w`."
    ) in " ".join(by_lesson["named_w"][0]["message"].split())  # type: ignore[union-attr]
    # An input changed in place: which, where, the old and the new value.
    assert by_lesson["in_place"][0]["headline"] == (
        "Leave the input x as it was: your code changed it in place (at [1]: it was 4.0, now "
        "16.0). Build a new value, or work on a copy of x: the caller still needs its own."
    )
    # The learner's exception: their file and line, none of the harness's or grader's frames.
    raised = str(by_lesson["raises"][0]["message"])
    assert "raises/solution.py, line 10, in forward" in raised
    assert "ValueError: the widths do not match" in raised
    assert "harness.py" not in raised and "pytest_lessons" not in raised
    forged = by_lesson["forges_check"][0]
    assert str(forged["headline"]).startswith(
        "Scale raised LessonFailure at line 10 of solution.py"
    )
    assert forged["status"] == by_lesson["raises"][0]["status"] and forged["points"] == 0
    assert "check regrade" not in text
    # A call the learner's class cannot take: the lesson's call, Python's words.
    assert str(by_lesson["no_size"][0]["headline"]).startswith(
        "Make Scale work the way the lesson uses it: the lesson calls `module = "
        "learner.Scale(len(w))`, and Python says TypeError: Scale.__init__() takes 1 positional "
        "argument but 2 were given"
    )
    # A hidden case tells what failed, never its values.
    assert only or by_lesson["in_place"][1]["headline"] == (
        "Hidden case 2 failed: your code changed its input x in place."
    )
    # The harness's own bug: never the learner's fault, told to the author with its line.
    bug = by_lesson["buggy"][0]
    assert str(bug["headline"]).startswith("Tell your instructor: the lesson's harness.py failed")
    assert "harness.py, line 11): IndexError: list index out of range" in str(bug["lesson_error"])
    assert bug["status"] == "error" and bug["max_points"] == 1
    assert "failed" in text


def test_the_core_words_a_harness_bug_for_the_author_and_keeps_it_the_learners_failed_case(
    tmp_path: Path,
) -> None:
    toml = (
        '[exercise]\ntitle = "t"\ninputs = [{ name = "x", after = "unchanged" }]\n'
        'harness = "harness.py"\n\n[[case]]\nx = [1]\nexpected = 1\n\n[[case]]\nhidden = true\n'
        "x = [2]\nexpected = 2\n"
    )
    exercise = lesson(tmp_path, toml, **{"harness.py": "def drive(learner, x):\n    return x\n"})
    bug = Outcome(
        "raised",
        error_type="KeyError",
        message="'y'",
        phase="call",
        frames=(Frame(str(exercise.harness), 3, "drive", "return seen['y']"),),
        details={"harness": "bug", "file": str(exercise.harness)},
    )
    grade, runner = grader({("solution.py", "solve"): lambda x: bug})
    public = grade.grade(Attempt(exercise, exercise.cases[0]))
    hidden = grade.grade(Attempt(exercise, exercise.cases[1]))
    assert public.status == Status.ERROR and public.result.points == 0.0
    assert public.result.headline.startswith("Tell your instructor: the lesson's harness.py")
    assert public.result.lesson_error == (
        "The lesson's harness failed (harness.py, line 3): KeyError: 'y'\n"
    )
    assert hidden.result.headline == (
        "Hidden case 2 failed: the lesson's harness failed on it, not your code."
    )
    # The job carries the harness's bytes and the rules, never a path to open.
    part = runner.jobs[0].behaviour
    assert part is not None and part["after"] == {"x": "unchanged"}
    assert part["alias"] == {"solve": "solve"} and part["harness"]["source"]


STACK_TOML = """
[exercise]
title = "A stack"
entry = "Stack"
harness = "harness.py"
inputs = ["pushes"]
outputs = [{ kind = "list[int]" }]

[[case]]
pushes = [1, 2, 3]
expected = [3, 2, 1]

[[case]]
pushes = [5]
expected = { from = "reference" }

[[watch_out]]
id = "first-in-first-out"
mistake = "Queue"
message = "pop the item pushed last: yours gives back the first one."
"""
STACK_HARNESS = """
def drive(learner, pushes):
    stack = learner.Stack()
    for value in pushes:
        stack.push(value)
    return [stack.pop() for _ in pushes]
"""
STACK_REFERENCE = """
class Stack:
    def __init__(self):
        self.items = []

    def push(self, value):
        self.items.append(value)

    def pop(self):
        return self.items.pop()
"""


@pytest.mark.usefixtures("no_preload")
def test_the_lesson_check_proves_a_harness_lesson_and_names_the_harness_when_it_breaks(
    make_exercise: Callable[..., Path], pytester: pytest.Pytester
) -> None:
    make_exercise(
        "stack",
        solution="class Stack:\n    def push(self, value):\n        raise NotImplementedError\n",
        toml=STACK_TOML,
        harness__py=STACK_HARNESS,
        reference__py=STACK_REFERENCE,
        # The mistake's class stands in for the learner's Stack.
        mistakes__py=STACK_REFERENCE.replace("class Stack", "class Queue").replace(
            "pop()", "pop(0)"
        ),
        # A right class of another name, which the check grades as the learner's Stack.
        variants__py=STACK_REFERENCE.replace("class Stack", "class InsertsAtFront")
        .replace("append(value)", "insert(0, value)")
        .replace("pop()", "pop(0)"),
    )
    pytester.runpytest("--lesson-check", "stack").assert_outcomes(passed=1)
    # A learner's copy ships the harness (author code, no answer) and grades with it.
    pytester.runpytest("--lesson-export=copy", "stack")
    copy = pytester.path / "copy" / "stack"
    assert (copy / "harness.py").read_text() == dedent(STACK_HARNESS)
    assert not (copy / "reference.py").exists()
    (copy / "solution.py").write_text(dedent(STACK_REFERENCE))
    pytester.runpytest("copy/stack").assert_outcomes(passed=2)
    broken = STACK_HARNESS.replace("for _ in pushes]", "for _ in pushes] + [pushes[9]]")
    (pytester.path / "stack" / "harness.py").write_text(dedent(broken))
    result = pytester.runpytest("--lesson-check", "stack")
    result.assert_outcomes(failed=1)
    text = " ".join(result.stdout.str().split())
    assert (
        "the reference fails case 2: Fix the lesson's harness.py: it raised IndexError while "
        "running the lesson's reference.py."
    ) in text
    assert "(stack/harness.py, line 5): IndexError: list index out of range" in text
    assert "on case 1 the mistake does not return an answer: Fix the lesson's harness.py" in text


#: Round D's checkpoint that keeps the state in memory: the last save, or the save by path.
REMEMBERING = [
    """import copy, torch
_LAST = {}
def save_checkpoint(model, optimizer, iteration, path):
    torch.save({}, path)
    _LAST.update(m=copy.deepcopy(model.state_dict()), o=copy.deepcopy(optimizer.state_dict()), i=iteration)
def load_checkpoint(path, model, optimizer):
    model.load_state_dict(_LAST["m"]); optimizer.load_state_dict(_LAST["o"]); return _LAST["i"]
""",
    """import copy, torch
_BY_PATH = {}
def save_checkpoint(model, optimizer, iteration, path):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iteration": iteration}
    torch.save({"iteration": iteration}, path)
    _BY_PATH[path] = copy.deepcopy(state)
def load_checkpoint(path, model, optimizer):
    state = _BY_PATH.get(path) or next(iter(_BY_PATH.values()))
    model.load_state_dict(state["model"]); optimizer.load_state_dict(state["optimizer"])
    return state["iteration"]
""",
]


@pytest.mark.torch
@pytest.mark.parametrize("solution", REMEMBERING, ids=["last-save", "by-path"])
def test_a_checkpoint_restored_from_memory_instead_of_its_file_fails(
    pytester: pytest.Pytester, solution: str
) -> None:
    """The file must hold the model as it was saved, and the harness saves a later checkpoint
    and renames the first before loading it: a save remembered in memory resumes nothing."""
    course.copy(pytester, "checkpoint")
    (pytester.path / "checkpoint" / "solution.py").write_text(solution)
    result = pytester.runpytest("checkpoint", "-p", "no:cacheprovider")
    assert result.ret == 1
    assert result.parseoutcomes().get("passed", 0) == 0
    result.stdout.fnmatch_lines(["*Save the model's state in the file*"])
