"""The ``lessons`` section, straight from plain results: progress, hints and worked solutions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import summary
from pytest_lessons.core.course import Course
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.words import case_list

from helpers import case_result


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
    slug = path.parent.name
    return case_result(
        case, passed, **{"path": str(path), "exercise": slug, "title": slug, "cases": 2, **extra}
    )


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


# --- faults, courses, the cache and the notices about hints ------------------------------------


def test_cases_are_named_one_by_one_or_as_a_range() -> None:
    # One wording for every list of cases: the summary, the feedback files, the lesson check.
    assert case_list([3]) == "case 3"
    assert case_list([4, 1]) == "cases 1, 4"
    assert case_list([2, 1]) == "cases 1, 2"  # two in a row: no range
    assert case_list([3, 2, 4]) == "cases 2 to 4"
    assert case_list([1, 2, 4]) == "cases 1, 2, 4"
    assert case_list([1, 3, 5, 6, 7, 10, 9, 8]) == "cases 1, 3, 5 to 10"
    assert case_list([], [4]) == "hidden case 4"
    assert case_list([1], [4, 5, 6]) == "case 1; hidden cases 4 to 6"
    assert case_list([]) == ""


def test_progress_says_which_cases_failed_as_another_did_or_were_not_run(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    failing = [
        result(path, 3, False, fault="raised ValueError at solution.py:2", cases=6),
        result(path, 1, False, fault="raised ValueError at solution.py:2", cases=6),
        result(path, 2, False, fault="raised ValueError at solution.py:2", cases=6),
        result(path, 4, False, fault="timeout", cases=6),
        result(path, 5, False, fault="not run", cases=6),
        result(path, 6, False, fault="not run", cases=6),
    ]
    (state,) = summary.collect(failing)
    assert state.faults == {
        "raised ValueError at solution.py:2": [3, 1, 2],
        "timeout": [4],
        "not run": [5, 6],
    }
    assert summary.progress_lines([state])[0] == (
        "double   0 of 6 cases   cases 2, 3 failed as case 1 did   "
        "cases 5, 6 not run (too many timeouts)"
    )
    # A passed case or a watch-out's finding is no fault.
    (state,) = summary.collect(
        [
            result(path, 1, True, fault="x"),
            result(path, 2, False, fault="y", diagnosis="w", diagnosis_kind="watch_out"),
        ]
    )
    assert (state.faults, state.mistakes) == ({}, {"w": [2]})


def test_a_broken_result_without_a_headline_still_marks_the_exercise_broken(
    tmp_path: Path,
) -> None:
    (state,) = summary.collect([result(lesson(tmp_path), 0, False, status="broken")])
    assert state.broken == "broken"
    assert summary.progress_lines([state])[0] == "double   exercise.toml is broken"


def course_of(tmp_path: Path, *slugs: str) -> Course:
    return Course(
        tmp_path / "course.toml",
        "A course",
        tuple((tmp_path / s / "exercise.toml").resolve() for s in slugs),
    )


def test_lessons_are_listed_in_their_courses_order_then_by_path(tmp_path: Path) -> None:
    a, b, c, d = (lesson(tmp_path, s) for s in "abcd")
    first, second = course_of(tmp_path, "c", "a"), course_of(tmp_path, "b")
    key = summary.course_order([first, second])
    assert [key(p) for p in (a, b, c, d)] == [(0, 1, ""), (1, 0, ""), (0, 0, ""), (2, 0, str(d))]
    results = [result(p, 1, False) for p in (d, b, a, c)]
    lines = summary.render(results, show, None, None, None, [], [first, second])
    assert [line.split()[0] for line in lines[:4]] == ["c", "a", "b", "d"]
    assert [s.slug for s in summary.collect(results)] == ["a", "b", "c", "d"]


def test_a_course_counts_its_lessons_the_run_did_not_select(tmp_path: Path) -> None:
    a, b, c = (lesson(tmp_path, s) for s in "abc")
    course = course_of(tmp_path, "a", "b", "c")
    cache = Cache()
    everything = [result(p, n, True) for p in (a, b) for n in (1, 2)] + [result(c, 1, False)]
    assert summary.progress_lines(summary.collect(everything), [course], cache)[-1] == (
        "lessons: 2/3 passed [#######---]"
    )
    # Only c runs now and still fails: a and b passed in the last run and count.
    only_c = summary.collect([result(c, 1, False)])
    assert summary.progress_lines(only_c, [course], cache)[-1] == (
        "lessons: 2/3 passed [#######---]"
    )
    # Without what the cache remembers, lessons not run count as not passed.
    assert summary.progress_lines(only_c, [course], None)[-1] == "lessons: 0/3 passed [----------]"
    assert summary.progress_lines(only_c, [course], Cache())[-1] == (
        "lessons: 0/3 passed [----------]"
    )


def test_a_run_of_passing_cases_keeps_what_the_last_full_run_said(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    cache = Cache()
    summary.progress_lines(summary.collect([result(path, 1, False)]), [], cache)
    (key,) = cache.data
    assert key.startswith("lessons/state/double-") and cache.data[key] == "failing"
    one_passing = summary.collect([result(path, 2, True)])
    assert summary.progress_lines(one_passing, [], cache)[-1] == "lessons: 0/1 passed [----------]"
    assert cache.data[key] == "failing"  # a selection of passing cases says nothing new
    both = summary.collect([result(path, 1, True), result(path, 2, True)])
    assert summary.progress_lines(both, [], cache)[-1] == "lessons: 1/1 passed [##########]"
    assert cache.data[key] == "passed"
    assert summary.progress_lines(one_passing, [], cache)[-1] == (
        "lessons: 1/1 passed [##########]"
    )


def test_when_every_hint_is_open_no_other_is_offered(tmp_path: Path) -> None:
    states = summary.collect([result(lesson(tmp_path), 1, False)])
    cache = Cache()
    summary.hint_lines(states, "next", cache, [])
    assert summary.hint_lines(states, None, cache, ["double"]) == [
        "",
        "Stuck? `pytest double --lesson-hints` opens a hint.",
    ]
    summary.hint_lines(states, "next", cache, [])
    assert summary.hint_lines(states, None, cache, ["double"]) == [
        "",
        "Every hint is open: `pytest double --lesson-hints` shows them again.",
    ]


def test_opening_the_next_hint_never_closes_one_opened_with_all(tmp_path: Path) -> None:
    states = summary.collect([result(lesson(tmp_path), 1, False)])
    cache = Cache()
    summary.hint_lines(states, "all", cache, [])
    (key,) = cache.data
    cache.data[key] = 5  # more than the lesson has now: an author removed hints
    lines = summary.hint_lines(states, "next", cache, [])
    assert lines[-1].startswith("That was the last hint of double.")
    assert cache.data[key] == 5


def test_a_reset_with_nothing_to_close_says_so(tmp_path: Path) -> None:
    bare = lesson(tmp_path, "bare", LESSON.split("[[hint]]")[0])
    broken = lesson(tmp_path, "broken", "[exercise\n")
    states = summary.collect([result(bare, 1, False), result(broken, 1, False)])
    cache = Cache()
    assert summary.hint_lines(states, "reset", cache, []) == [
        "",
        "No hints to close: the exercises of this run have none.",
    ]
    assert cache.data == {}
    # A passed exercise's hints are closed too, and each reset is confirmed.
    path = lesson(tmp_path)
    passed = summary.collect([result(path, 1, True), result(path, 2, True), result(bare, 1, True)])
    assert summary.hint_lines(passed, "reset", cache, []) == [
        "",
        "Hints for double are closed again.",
    ]
    assert list(cache.data.values()) == [0]


def test_a_long_solution_step_is_wrapped_under_its_number(tmp_path: Path) -> None:
    step = "Multiply every value of x by two, keeping its shape, " * 3
    text = LESSON.replace('steps = ["Take x.", "Double it."]', f'steps = ["{step.strip()}"]')
    path = lesson(tmp_path, "long", text)
    passed = summary.collect([result(path, 1, True), result(path, 2, True)])
    lines = summary.solution_lines(passed, "passed", None, show, [])
    first, second = lines[2], lines[3]
    assert first.startswith("1. Multiply every value") and len(first) <= 84
    assert second.startswith("   ") and not second.startswith("    ")


def test_results_after_a_broken_exercise_are_still_collected(tmp_path: Path) -> None:
    a, b = lesson(tmp_path, "a"), lesson(tmp_path, "b")
    states = summary.collect([result(a, 0, False, status="broken"), result(b, 1, True)])
    assert [(s.slug, s.seen) for s in states] == [("a", set()), ("b", {1})]


def test_cache_keys_name_the_lesson_and_a_digest_of_its_path(tmp_path: Path) -> None:
    import hashlib

    path = lesson(tmp_path)
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    cache = Cache()
    states = summary.collect([result(path, 1, False)])
    summary.progress_lines(states, [], cache)
    summary.hint_lines(states, "next", cache, [])
    assert sorted(cache.data) == [
        f"lessons/hints/double-{digest}",
        f"lessons/state/double-{digest}",
    ]
    # Two lessons of the same name in different folders keep their own state.
    (tmp_path / "other").mkdir()
    other = lesson(tmp_path / "other")
    summary.progress_lines(
        summary.collect([result(other, 1, True), result(other, 2, True)]), [], cache
    )
    assert sorted(v for k, v in cache.data.items() if k.startswith("lessons/state/")) == [
        "failing",
        "passed",
    ]


def test_two_watch_outs_and_a_fault_of_two_cases_are_all_named(tmp_path: Path) -> None:
    path = lesson(tmp_path)
    states = summary.collect(
        [
            result(path, 1, False, diagnosis="halved", diagnosis_kind="watch_out", cases=4),
            result(path, 2, False, diagnosis="swapped", diagnosis_kind="watch_out", cases=4),
            result(path, 3, False, fault="raised KeyError at solution.py:3", cases=4),
            result(path, 4, False, fault="raised KeyError at solution.py:3", cases=4),
        ]
    )
    assert summary.progress_lines(states)[0] == (
        "double   0 of 4 cases   watch out: halved (case 1); swapped (case 2)   "
        "case 4 failed as case 3 did"
    )


def test_a_course_lesson_that_passed_in_this_run_counts_without_a_cache(tmp_path: Path) -> None:
    lesson(tmp_path, "a"), lesson(tmp_path, "b")
    c = lesson(tmp_path, "c")
    course = course_of(tmp_path, "a", "b", "c")
    states = summary.collect([result(c, 1, True), result(c, 2, True)])
    assert summary.progress_lines(states, [course], None)[-1] == "lessons: 1/3 passed [###-------]"


def test_reset_and_hints_cover_every_exercise_of_the_run(tmp_path: Path) -> None:
    a, b = lesson(tmp_path, "a"), lesson(tmp_path, "b")
    states = summary.collect([result(a, 1, False), result(b, 1, False)])
    cache = Cache()
    lines = summary.hint_lines(states, "next", cache, [])
    assert [line for line in lines if line.startswith("Hints for")] == [
        "Hints for a:",
        "Hints for b:",
    ]
    assert summary.hint_lines(states, "reset", cache, []) == [
        "",
        "Hints for a are closed again.",
        "",
        "Hints for b are closed again.",
    ]


def test_solutions_cover_every_exercise_of_the_run(tmp_path: Path) -> None:
    a, b, c = lesson(tmp_path, "a"), lesson(tmp_path, "b"), lesson(tmp_path, "c")
    broken = lesson(tmp_path, "0-broken", "[exercise\n")
    runs = [result(p, n, p != b) for p in (broken, a, b, c) for n in (1, 2)]
    cache = Cache()
    assert summary.solution_lines(summary.collect(runs), None, cache, show, []) == []
    assert sum(1 for k in cache.data if k.startswith("lessons/passed/")) == 3  # 0-broken, a, c
    lines = summary.solution_lines(summary.collect(runs), "passed", cache, show, [])
    assert [line for line in lines if line.startswith(("Worked", "The worked"))] == [
        "Worked solution of a",
        "The worked solution of b opens once all its cases pass. To see it before that: "
        "`pytest --lesson-solution=show-anyway`",
        "Worked solution of c",
    ]


def test_a_solution_step_wraps_at_84_characters_and_the_reference_loses_its_trailing_blanks(
    tmp_path: Path,
) -> None:
    step = "a" * 79 + " bc"  # "1. " and this: 85 characters
    text = LESSON.replace('steps = ["Take x.", "Double it."]', f'steps = ["{step}"]')
    path = lesson(tmp_path, "long", text)
    (path.parent / "reference.py").write_text("\n\ndef solve(x):\n    return 2 * x\n\n\n")
    passed = summary.collect([result(path, 1, True), result(path, 2, True)])
    assert summary.solution_lines(passed, "passed", None, show, []) == [
        "",
        "Worked solution of long",
        "1. " + "a" * 79,
        "   bc",
        "",
        "<reference.py>:",
        "",
        "    ",
        "    ",
        "    def solve(x):",
        "        return 2 * x",
    ]


def test_render_remembers_and_counts_through_the_cache(tmp_path: Path) -> None:
    a, b = lesson(tmp_path, "a"), lesson(tmp_path, "b")
    course = course_of(tmp_path, "a", "b")
    cache = Cache()
    summary.render([result(a, 1, True), result(a, 2, True)], show, cache, None, None, [], [course])
    lines = summary.render([result(b, 1, False)], show, cache, None, None, [], [course])
    assert "lessons: 1/2 passed [#####-----]" in lines


def test_a_reference_saved_by_a_windows_editor_shows_without_its_byte_order_mark(
    tmp_path: Path,
) -> None:
    path = lesson(tmp_path)
    (path.parent / "reference.py").write_bytes(b"\xef\xbb\xbfdef solve(x):\r\n    return 2 * x\r\n")
    passed = summary.collect([result(path, 1, True), result(path, 2, True)])
    lines = summary.solution_lines(passed, "passed", None, show, [])
    assert lines[-3:] == ["", "    def solve(x):", "        return 2 * x"]


def test_a_tab_in_the_worked_solution_stays_a_tab_and_an_escape_shows(tmp_path: Path) -> None:
    # Tabs are code's indentation on a terminal; an escape sequence (a folder's name) shows.
    path = lesson(tmp_path, "a")
    (path.parent / "reference.py").write_text("def solve(x):\n\treturn 2 * x  # \x1b[2J\n")
    lines = summary.render(
        [result(path, 1, True), result(path, 2, True)], show, Cache(), None, "passed", []
    )
    code = [line for line in lines if "return 2 * x" in line]
    assert code and all("\t" in line and "\\x1b[2J" in line and "\x1b" not in line for line in code)
