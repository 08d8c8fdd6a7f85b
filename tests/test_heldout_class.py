"""A class graded by pytest end to end, as issue 37's instructor graded one: the class summary
counts learners by the check of a lesson's harness that stopped them (item 1), a solution
handed in as ``Solution.py`` is graded, and one of another near name is named, not taken for
nothing handed in (item 5). One run; the words themselves are tested through the core in
tests/test_learner_words.py and tests/test_harness_checks.py."""

from __future__ import annotations

import json

import pytest

from helpers import DOUBLE_RIGHT, DOUBLE_TOML

pytestmark = pytest.mark.usefixtures("no_preload")

STACK_TOML = """
[exercise]
title = "A stack"
entry = "Stack"
harness = "harness.py"
inputs = ["pushes"]
format = 2
outputs = [{ kind = "list[int]" }]

[[case]]
pushes = [1, 2, 3]
expected = [3, 2, 1]

[[case]]
pushes = [5, 6]
expected = [6, 5]
"""

STACK_HARNESS = """
from pytest_lessons.harness import LessonFailure


def drive(learner, pushes):
    stack = learner.Stack()
    if not hasattr(stack, "size"):
        raise LessonFailure(f"Give your Stack a size method: the lesson pushes {len(pushes)} items.")
    for value in pushes:
        stack.push(value)
    if stack.size() != len(pushes):
        raise LessonFailure("Count every push in size().", check="size-counts-pushes")
    return [stack.pop() for _ in pushes]
"""

STACK = """
class Stack:
    def __init__(self):
        self.items = []

    def push(self, value):
        self.items.append(value)

    def size(self):
        return len(self.items)

    def pop(self):
        return self.items.pop()
"""


def test_a_class_is_counted_by_its_checks_and_a_misnamed_file_is_graded_or_named(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "course.toml").write_text(
        '[course]\ntitle = "c"\nlessons = ["double", "stack"]\n'
    )
    for name, toml, files in (
        ("double", DOUBLE_TOML, {}),
        ("stack", STACK_TOML, {"harness.py": STACK_HARNESS}),
    ):
        folder = pytester.path / name
        folder.mkdir()
        (folder / "exercise.toml").write_text(toml)
        (folder / "solution.py").write_text("")
        (folder / "reference.py").write_text(DOUBLE_RIGHT if name == "double" else STACK)
        for file, text in files.items():
            (folder / file).write_text(text)
    handed = {
        "ann/Double/Solution.py": DOUBLE_RIGHT,
        "ann/stack/solution.py": STACK.replace("    def size(self):", "    def length(self):"),
        "bo/double/solutions.py": DOUBLE_RIGHT,
        "bo/stack/solution.py": STACK.replace("return len(self.items)", "return 0"),
    }
    for path, text in handed.items():
        file = pytester.path / "submissions" / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
    result = pytester.runpytest(
        "double",
        "stack",
        "--lesson-submissions=submissions",
        "--lesson-feedback=feedback",
        "--lesson-report=class.json",
        "-p",
        "no:cacheprovider",
    )
    result.stdout.fnmatch_lines(
        [
            "double: 1 of 2 passed, mean 1 of 2 points",
            "      1 learner  cannot load: misnamed",
            "stack: 0 of 2 passed, mean 0 of 2 points",
            "      1 learner  check: give-your-stack-a-size-method",
            "      1 learner  check: size-counts-pushes",
        ]
    )
    assert "LessonFailure" not in result.stdout.str()
    report = json.loads((pytester.path / "class.json").read_text())
    ann = [r for r in report["results"] if r["learner"] == "ann" and r["exercise"] == "double"]
    assert [r["status"] for r in ann] == ["passed", "passed"]
    stack = [r for r in report["results"] if r["exercise"] == "stack"]
    assert {(r["status"], r["diagnosis_kind"]) for r in stack} == {("failed", "check")}
    bo = (pytester.path / "feedback" / "bo.md").read_text()
    assert "nothing was handed in" not in bo
    assert "Rename solutions.py to solution.py: the exercise reads your code from" in bo
