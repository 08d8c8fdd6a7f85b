"""A course of chapters (issue 26): how ``course.toml`` declares them, what an author is told
when the file cannot be used, and how the ``lessons`` summary and a learner's copy show them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_lessons.core import course, export, model, parts, summary

from helpers import case_result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old Pythons only
    import tomli as tomllib

LESSON = '[exercise]\ntitle = "{slug}"\ninputs = ["x"]\n\n[[case]]\nx = 1\nexpected = 2\n'

CHAPTERS = """
[course]
title = "A workshop"

[[chapter]]
title = "Tensors"
lessons = ["a", "b"]

[[chapter]]
number = 7
title = "Attention"
lessons = ["c"]
"""


def lessons(tmp_path: Path, *slugs: str) -> dict[str, Path]:
    files = {}
    for slug in slugs:
        (tmp_path / slug).mkdir()
        files[slug] = tmp_path / slug / "exercise.toml"
        files[slug].write_text(LESSON.format(slug=slug))
    return files


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.toml"
    path.write_text(text)
    return path


def test_chapters_give_the_course_its_order_and_each_lesson_its_chapter(tmp_path: Path) -> None:
    files = lessons(tmp_path, "a", "b", "c")
    found = course.load(write(tmp_path, CHAPTERS))
    assert found.lessons == tuple(files[s].resolve() for s in "abc")
    assert [(c.number, c.title, len(c.lessons)) for c in found.chapters] == [
        (1, "Tensors", 2),
        (7, "Attention", 1),
    ]
    chapter = found.chapter(files["c"])
    assert chapter is not None and chapter.title == "Attention"
    assert course.find(files["b"]) == found
    # A course of one list has no chapters, as before.
    flat = course.load(write(tmp_path, '[course]\nlessons = ["c", "a"]\n'))
    assert flat.chapters == () and flat.chapter(files["a"]) is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (CHAPTERS.replace('title = "A workshop"', 'lessons = ["a"]'), "not both"),
        (CHAPTERS.replace("number = 7", "number = 1"), "chapter numbers must increase"),
        (CHAPTERS.replace('lessons = ["c"]', 'lessons = ["c", "a"]'), "already lists"),
        (CHAPTERS.replace('title = "Tensors"', "name = 'x'"), "unknown key name"),
        (CHAPTERS.replace('title = "Attention"', ""), "needs a title"),
        (CHAPTERS + "\n[chapters]\n", "unknown table [chapters]"),
        (CHAPTERS.replace('lessons = ["c"]', 'lessons = ["d"]'), "'d', which has no"),
        (
            CHAPTERS.replace("[course]", '[course]\npreload = "torch._dynamo"'),
            'course.preload must be a list of module names, such as ["torch._dynamo"]',
        ),
        (
            CHAPTERS.replace("[course]", "[course]\npreloads = []"),
            "unknown key course.preloads (known: title, lessons, preload)",
        ),
    ],
)
def test_a_chapter_table_that_cannot_be_used_is_named_with_the_problem(
    tmp_path: Path, text: str, words: str
) -> None:
    lessons(tmp_path, "a", "b", "c")
    with pytest.raises(course.CourseError, match=r"course\.toml: ") as error:
        course.load(write(tmp_path, text))
    assert words in str(error.value)


def test_the_summary_puts_lessons_under_their_chapter_and_counts_each_it_touched(
    tmp_path: Path,
) -> None:
    files = lessons(tmp_path, "a", "b", "c")
    found = course.load(write(tmp_path, CHAPTERS))
    results = [
        case_result(1, passed, path=str(files[s]), exercise=s, title=s, cases=1)
        for s, passed in (("a", True), ("b", False))
    ]
    lines = summary.progress_lines(summary.collect(results), [found])
    assert lines == [
        "chapter 1: Tensors",
        "a   passed",
        "b   0 of 1 cases",
        "lessons: 1/3 passed [###-------]   chapter 1: 1/2",
    ]
    everything = [
        *results,
        case_result(1, True, path=str(files["c"]), exercise="c", title="c", cases=1),
    ]
    lines = summary.progress_lines(
        summary.collect(everything, summary.course_order([found])), [found]
    )
    assert lines[3:] == [
        "chapter 7: Attention",
        "c   passed",
        "lessons: 2/3 passed [#######---]   chapter 1: 1/2, chapter 7: 1/1",
    ]


def test_a_learners_copy_keeps_the_chapters_of_the_lessons_it_holds(tmp_path: Path) -> None:
    source = tmp_path / "course"
    source.mkdir()
    files = lessons(source, "a", "b", "c")
    write(source, CHAPTERS)
    target = tmp_path / "learners"
    for slug in ("a", "c"):
        (target / slug).mkdir(parents=True)
        (target / slug / "exercise.toml").write_text(LESSON.format(slug=slug))
    written = export.write_course(target, model.load(files["c"]))
    assert written is not None
    data = tomllib.loads(written.read_text())
    assert data["chapter"] == [
        {"number": 1, "title": "Tensors", "lessons": ["a"]},
        {"number": 7, "title": "Attention", "lessons": ["c"]},
    ]
    assert [c.title for c in course.load(written).chapters] == ["Tensors", "Attention"]
    # A stray lesson is told where it goes: a chapter's lessons, not course.lessons.
    lessons(source, "stray")
    (stray,) = course.unlisted([source / "stray" / "exercise.toml"])
    assert stray.advice("course.toml").startswith(
        "add 'stray' to a chapter's lessons in course.toml"
    )


def test_a_lessons_preload_adds_to_its_courses_and_a_learners_copy_keeps_the_courses(
    tmp_path: Path,
) -> None:
    """[course] preload comes first, then the lesson's own, each module once; a lesson
    outside any course has its own only. The learners' course.toml keeps the course's."""
    (tmp_path / "course").mkdir()
    files = lessons(tmp_path / "course", "a", "b")
    text = '[course]\npreload = ["torch._dynamo", "sympy"]\nlessons = ["a", "b"]\n'
    write(tmp_path / "course", text)
    mine = LESSON.format(slug="a").replace(
        "[[case]]", 'preload = ["colorsys", "sympy"]\n\n[[case]]'
    )
    files["a"].write_text(mine)
    assert parts.preload(model.load(files["a"])) == ("torch._dynamo", "sympy", "colorsys")
    assert parts.preload(model.load(files["b"])) == ("torch._dynamo", "sympy")
    alone = lessons(tmp_path, "alone")["alone"]
    alone.write_text(mine)
    assert parts.preload(model.load(alone)) == ("colorsys", "sympy")
    (tmp_path / "copy" / "a").mkdir(parents=True)
    (tmp_path / "copy" / "a" / "exercise.toml").write_text(mine)
    written = export.write_course(tmp_path / "copy", model.load(files["a"]))
    assert written is not None
    assert tomllib.loads(written.read_text())["course"]["preload"] == ["torch._dynamo", "sympy"]
