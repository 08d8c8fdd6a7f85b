"""The ``lessons`` section, straight from plain results: progress, hints and worked solutions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_lessons import summary
from pytest_lessons.results import CaseResult


class Cache:
    """pytest's cache as summary.py uses it: get with a default, and set."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    def get(self, key: str, default: Any) -> Any:
        return self.data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value


LESSON = """
[exercise]
title = "Double"
inputs = ["x"]

[[case]]
x = 1
expected = 2

[[case]]
x = 2
expected = 4

[[hint]]
title = "First"
text = "Multiply.\\n\\nBy two."

[[hint]]
title = "Second"
text = "x * 2"

[solution]
steps = ["Take x.", "Double it."]
"""


def lesson(tmp_path: Path, slug: str = "double", text: str = LESSON) -> Path:
    folder = tmp_path / slug
    folder.mkdir()
    (folder / "exercise.toml").write_text(text)
    (folder / "reference.py").write_text("def solve(x):\n    return 2 * x\n")
    return folder / "exercise.toml"


def result(path: Path, case: int, passed: bool, **extra: Any) -> CaseResult:
    data = {
        "path": str(path),
        "exercise": path.parent.name,
        "title": path.parent.name,
        "cases": 2,
        "case": case,
        "status": "passed" if passed else "failed",
        **extra,
    }
    return CaseResult.from_dict(data)


def show(path: Path | str) -> str:
    return f"<{Path(path).name}>"


def test_collect_groups_cases_by_exercise_in_path_order(tmp_path: Path) -> None:
    b, a = lesson(tmp_path, "b"), lesson(tmp_path, "a")
    states = summary.collect(
        [
            result(b, 1, True),
            result(a, 2, False, diagnosis="halved", diagnosis_kind="watch_out"),
            result(a, 1, False, diagnosis="rows", diagnosis_kind="detector"),
            result(a, 3, False, diagnosis="halved", diagnosis_kind="watch_out"),
        ]
    )
    assert [s.slug for s in states] == ["a", "b"]
    first, second = states
    assert (first.total, first.seen, first.passed) == (2, {1, 2, 3}, set())
    assert first.mistakes == {"halved": [2, 3]}
    assert (second.seen, second.passed, second.mistakes) == ({1}, {1}, {})
    assert first.path == a and not first.broken


def test_a_broken_exercise_is_recorded_with_its_headline(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    broken = result(path, 0, False, status="broken", headline="no cases", cases=0)
    (state,) = summary.collect([broken])
    assert state.broken == "no cases" and state.total == 0 and not state.seen
    assert state.failing and not state.complete


def test_complete_means_every_case_ran_and_passed(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    (state,) = summary.collect([result(path, 1, True), result(path, 2, True)])
    assert state.complete and not state.failing
    (state,) = summary.collect([result(path, 1, True)])
    assert not state.complete and not state.failing  # the cases that ran passed
    empty = summary.ExerciseState("x", path, 0)
    assert not empty.complete


def test_progress_lines_say_each_exercise_state_and_the_course_bar(tmp_path: Path) -> None:
    one, two, three = lesson(tmp_path, "one"), lesson(tmp_path, "three"), lesson(tmp_path, "t")
    states = summary.collect(
        [
            result(one, 1, True),
            result(one, 2, True),
            result(two, 1, False, diagnosis="halved", diagnosis_kind="watch_out"),
            result(two, 2, False, diagnosis="halved", diagnosis_kind="watch_out"),
            result(three, 2, False, diagnosis="x", diagnosis_kind="watch_out"),
            result(tmp_path / "z" / "exercise.toml", 0, False, status="broken", cases=0),
        ]
    )
    assert summary.progress_lines(states) == [
        "one     passed",
        "t       0 of 2 cases (1 run)   watch out: x (case 2)",
        "three   0 of 2 cases   watch out: halved (cases 1, 2)",
        "z       exercise.toml is broken",
        "lessons: 1/4 passed [##--------]",
    ]


@pytest.mark.parametrize(("done", "bar"), [(0, "----------"), (2, "#######---"), (3, "##########")])
def test_the_bar_is_rounded_to_tenths(tmp_path: Path, done: int, bar: str) -> None:
    paths = [lesson(tmp_path, name) for name in "abc"]
    results = [result(p, n, i < done) for i, p in enumerate(paths) for n in (1, 2)]
    assert summary.progress_lines(summary.collect(results))[-1] == (
        f"lessons: {done}/3 passed [{bar}]"
    )


def test_without_the_option_one_line_says_hints_exist(tmp_path: Path) -> None:
    states = summary.collect([result(lesson(tmp_path), 1, False)])
    assert summary.hint_lines(states, None, Cache(), ["double"]) == [
        "",
        "Stuck? `pytest double --lesson-hints` opens a hint.",
    ]


def test_no_hint_line_for_passed_exercises_or_lessons_without_hints(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    passed = summary.collect([result(path, 1, True), result(path, 2, True)])
    assert summary.hint_lines(passed, None, Cache(), []) == []
    assert summary.hint_lines(passed, "next", Cache(), []) == []
    bare = lesson(tmp_path, "bare", LESSON.split("[[hint]]")[0])
    failing = summary.collect([result(bare, 1, False)])
    assert summary.hint_lines(failing, "all", Cache(), []) == []
    broken = lesson(tmp_path, "broken", "[exercise\n")
    assert summary.hint_lines(summary.collect([result(broken, 1, False)]), "all", None, []) == []


def test_hints_open_one_at_a_time_and_are_remembered(tmp_path: Path) -> None:
    states = summary.collect([result(lesson(tmp_path), 1, False)])
    cache = Cache()
    first = summary.hint_lines(states, "next", cache, [])
    assert first == ["", "Hints for double:", "Hint 1: First", "    Multiply.", "", "    By two."]
    (key,) = cache.data
    assert key.startswith("lessons/hints/double-") and cache.data[key] == 1
    second = summary.hint_lines(states, "next", cache, [])
    assert second == [
        *first,
        "Hint 2: Second",
        "    x * 2",
        "That was the last hint of double. The worked solution opens once every case passes.",
    ]
    assert summary.hint_lines(states, "next", cache, []) == second  # no third hint to open
    assert cache.data[key] == 2


def test_all_shows_every_hint_and_reset_closes_them(tmp_path: Path) -> None:
    states = summary.collect([result(lesson(tmp_path), 1, False)])
    cache = Cache()
    shown = summary.hint_lines(states, "all", cache, [])
    assert shown[-3:] == [
        "Hint 2: Second",
        "    x * 2",
        "That was the last hint of double. The worked solution opens once every case passes.",
    ]
    assert list(cache.data.values()) == [2]
    assert summary.hint_lines(states, "reset", cache, []) == [
        "",
        "Hints for double are closed again.",
    ]
    assert list(cache.data.values()) == [0]
    assert summary.hint_lines(states, "next", cache, [])[2:3] == ["Hint 1: First"]
    # Without a cache (-p no:cacheprovider) the first hint still opens.
    assert summary.hint_lines(states, "next", None, [])[2:] == [
        "Hint 1: First",
        "    Multiply.",
        "",
        "    By two.",
    ]
    assert summary.hint_lines(states, "reset", None, []) == [
        "",
        "Hints for double are closed again.",
    ]


def test_the_cache_key_differs_for_two_lessons_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = summary.collect([result(lesson(tmp_path / "a"), 1, False)])
    two = summary.collect([result(lesson(tmp_path / "b"), 1, False)])
    cache = Cache()
    summary.hint_lines(one, "next", cache, [])
    summary.hint_lines(two, "next", cache, [])
    assert len(cache.data) == 2


def test_a_passed_exercise_shows_its_worked_solution_and_is_remembered(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    cache = Cache()
    passed = summary.collect([result(path, 1, True), result(path, 2, True)])
    assert summary.solution_lines(passed, None, cache, show, []) == []
    (key,) = cache.data
    assert key.startswith("lessons/passed/double-") and cache.data[key] is True
    expected = [
        "",
        "Worked solution of double",
        "1. Take x.",
        "2. Double it.",
        "",
        "<reference.py>:",
        "",
        "    def solve(x):",
        "        return 2 * x",
    ]
    assert summary.solution_lines(passed, "passed", cache, show, []) == expected
    # Failing later, the pass is remembered, so the solution stays open.
    failing = summary.collect([result(path, 1, False)])
    assert summary.solution_lines(failing, "passed", cache, show, []) == expected


def test_an_unearned_solution_says_how_to_see_it_anyway(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    failing = summary.collect([result(path, 1, False)])
    assert summary.solution_lines(failing, "passed", Cache(), show, ["double"]) == [
        "",
        "The worked solution of double opens once all its cases pass. To see it before that: "
        "`pytest double --lesson-solution=show-anyway`",
    ]
    anyway = summary.solution_lines(failing, "show-anyway", None, show, [])
    assert anyway[:3] == [
        "",
        "Worked solution of double",
        "(You have not passed double yet; it is shown because you asked with "
        "--lesson-solution=show-anyway.)",
    ]
    assert anyway[3] == "1. Take x."


def test_a_solution_without_a_reference_file_shows_only_the_steps(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    (path.parent / "reference.py").unlink()
    passed = summary.collect([result(path, 1, True), result(path, 2, True)])
    assert summary.solution_lines(passed, "passed", None, show, []) == [
        "",
        "Worked solution of double",
        "1. Take x.",
        "2. Double it.",
    ]
    broken = lesson(tmp_path, "broken", "[exercise\n")
    states = summary.collect([result(broken, 1, True), result(broken, 2, True)])
    assert summary.solution_lines(states, "passed", None, show, []) == []


def test_render_puts_progress_then_solutions_then_hints(tmp_path: Path) -> None:
    a, b = lesson(tmp_path, "a"), lesson(tmp_path, "b")
    lines = summary.render(
        [result(a, 1, True), result(a, 2, True), result(b, 1, False)],
        show,
        Cache(),
        "next",
        "passed",
        [],
    )
    assert lines[:3] == [
        "a   passed",
        "b   0 of 2 cases (1 run)",
        "lessons: 1/2 passed [#####-----]",
    ]
    assert lines.index("Worked solution of a") < lines.index("Hints for b:")
    assert "Worked solution of b" not in lines


def test_render_reads_hints_and_passes_from_the_cache(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    cache = Cache()
    failing = [result(path, 1, False)]
    summary.solution_lines(
        summary.collect([*failing, result(path, 2, True)]), None, cache, show, []
    )
    summary.solution_lines(
        summary.collect([result(path, 1, True), result(path, 2, True)]), None, cache, show, []
    )
    summary.hint_lines(summary.collect(failing), "next", cache, [])
    lines = summary.render(failing, show, cache, "next", "passed", [])
    assert "Worked solution of double" in lines  # passed in an earlier run
    assert "Hint 2: Second" in lines  # the second hint opens now
