"""Per-learner feedback files straight from typed results: what a learner reads when the
instructor hands the file back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.core.submissions import STEM_BYTES, digest, file_stem
from pytest_lessons.reports import feedback_files
from pytest_lessons.reports.gradebook import MISSING

from helpers import case_result

WATCH = (
    "Watch out: each row of your answer mixes different tokens. Swap the first two dimensions "
    "with .transpose(0, 1) before you reshape. Reshape reads values in memory order."
)


def case(number: int, passed: bool, **changes: Any) -> CaseResult:
    """Case *number* of ada's six; its call, output and message carry the number (and the
    message a secret), so a test can tell whose text reached the file."""
    mine = {
        "cases": 6,
        "learner": "ada",
        "call": f"solve(X=[[{number}, 2]])",
        "output": f"printed in case {number}",
        "message": f"Fix it.\n\n  inputs X = [[{number}, 2]]\n  SECRET-{number}",
    }
    return case_result(number, passed, **{**mine, **changes})


def watch(number: int, **changes: Any) -> CaseResult:
    return case(
        number, False, headline=WATCH, diagnosis="missing-transpose", diagnosis_kind="watch_out",
        **changes,
    )  # fmt: skip


ADA = [
    case(1, True),
    watch(2),
    watch(3),
    case(4, False, status=Status.ERROR, fault="timeout", headline="Make solve finish sooner."),
    case(
        5,
        False,
        hidden=True,
        label="hidden case 5",
        points=0.0,
        max_points=2.0,
        headline="Hidden case 5 failed: your code raised ValueError in solution.py.",
        message="Hidden case 5 failed: your code raised ValueError in solution.py.",
        call="solve(...)",
        output="",
    ),
    case(6, True, hidden=True, label="hidden case 6"),
    case(
        1,
        False,
        exercise="split",
        title="Split heads",
        path="/course/split/exercise.toml",
        status=Status.ERROR,
        fault=MISSING,
        unloadable=True,
        headline="Create subs/ada/split/solution.py and write solve(X) in it.",
    ),
]

HINTS = {
    "/course/combine/exercise.toml": [
        ("The idea", "PyTorch computes attention for you."),
        ("Nearly there", "Call transpose(0, 1) then reshape."),
    ],
    "/course/split/exercise.toml": [("Start", "Reshape first.")],
}


def test_the_file_gives_points_per_exercise_and_in_total() -> None:
    text = feedback_files.feedback("ada", ADA, HINTS)
    assert text.startswith("# Feedback for ada\n\n**2 of 8 points** in all.\n")
    assert "| combine | 2 of 7 |" in text
    assert "| split | 0 of 1 |" in text
    assert "**2 of 7 points**: 2 of 6 cases passed." in text


def test_a_watch_out_is_explained_once_under_the_cases_it_names() -> None:
    text = feedback_files.feedback("ada", ADA, HINTS)
    assert "- cases 2, 3 (0 of 2 points): watch out: missing-transpose (explained below)" in text
    assert text.count("mixes different tokens") == 1
    assert (
        "### Watch out: missing-transpose\n\nEach row of your answer mixes different tokens."
        in text
    )


def test_each_failing_case_has_its_headline() -> None:
    text = feedback_files.feedback("ada", ADA, HINTS)
    assert "- case 4 (0 of 1 point): Make solve finish sooner." in text
    assert "nothing was handed in for this exercise." in text
    assert "Create subs/ada/split/solution.py and write solve(X) in it." in text


def test_hidden_cases_show_points_and_headline_never_inputs_output_or_message() -> None:
    text = feedback_files.feedback("ada", ADA, HINTS)
    assert (
        "- hidden case 5 (0 of 2 points): Hidden case 5 failed: your code raised ValueError "
        "in solution.py." in text
    )
    # Neither the public nor the hidden cases' evidence: the file is a summary, and the hidden
    # case's call is never shown.
    for secret in ("SECRET-", "solve(...)", "printed in case", "inputs X"):
        assert secret not in text


def test_only_the_first_hint_of_an_exercise_not_passed_is_given() -> None:
    text = feedback_files.feedback("ada", ADA, HINTS)
    assert "### Hint: The idea\n\nPyTorch computes attention for you." in text
    assert "Nearly there" not in text and "transpose(0, 1) then reshape" not in text
    assert "hints left" not in text.lower() and "more hint" not in text.lower()
    passed = [case(1, True), case(2, True)]
    assert "Hint" not in feedback_files.feedback("ada", passed, HINTS)


def test_learner_text_cannot_make_html_or_links_in_the_markdown() -> None:
    """Rendered by a CommonMark renderer (markdown-it-py, as forges and LMS plugins use), with
    raw HTML allowed: nothing the learner wrote becomes a tag, a link or code."""
    from markdown_it import MarkdownIt

    results = [
        case(
            1,
            False,
            learner="<img src=x onerror=alert(1)>",
            headline="raised `<script>` [x](y) *b*",
        )
    ]
    text = feedback_files.feedback(results[0].learner, results, {})
    page = MarkdownIt("commonmark", {"html": True}).render(text)
    for made in ("<img", "<script", "<a ", "<code>", "<em>"):
        assert made not in page
    assert "Feedback for &lt;img src=x onerror=alert(1)&gt;</h1>" in page
    assert "raised `&lt;script&gt;` [x](y) *b*" in page


def test_write_all_gives_every_learner_a_file_even_with_clashing_names(tmp_path: Path) -> None:
    results = [case(1, True, learner=name) for name in ("ada", "Ada", "a/b", "a?b", ".hidden")]
    written = feedback_files.write_all(tmp_path / "feedback", results, {})
    names = {p.name[: -len(".md")]: p for p in written}
    # A plain name is its file's; any other ends in its name's digest, as does each name
    # that differs from another only in case but the first.
    digested = [f"ada-{digest('ada')}", f"a_b-{digest('a/b')}", f"a_b-{digest('a?b')}"]
    assert sorted(names) == sorted(["Ada", *digested, f"hidden-{digest('.hidden')}"])
    assert all(p.parent == tmp_path / "feedback" for p in written)
    hidden = names[f"hidden-{digest('.hidden')}"]
    assert hidden.read_text().startswith("# Feedback for .hidden")


def test_a_file_name_is_bounded_the_same_for_the_same_class_and_never_a_classmates() -> None:
    long = "é" * 200  # 400 bytes of UTF-8
    assert len(file_stem(long).encode()) <= STEM_BYTES
    # At the bound and differing in case only: one file where case is ignored.
    cased = feedback_files.stems(["a" * STEM_BYTES, "A" * STEM_BYTES])
    assert len({s.casefold() for s in cased.values()}) == 2
    assert all(len(s.encode()) <= STEM_BYTES for s in cased.values())
    assert file_stem(long) == file_stem(long) and file_stem(long) != file_stem(long + "x")
    # What looks like a digest, a device name of Windows: given a digest of their own.
    for odd in (f"jo-{digest('jo e')}", "con", "NUL.txt"):
        assert file_stem(odd) == f"{odd}-{digest(odd)}"
    # The class's names, whatever order the learners come in; each shard's learners (a case
    # group whole) named as in the class.
    names = ["jo e", "jo_e", "Jo", "jo", "JO", "ab", "ab-2"]
    whole = feedback_files.stems(names)
    assert whole == feedback_files.stems(reversed(names))
    assert len({stem.casefold() for stem in whole.values()}) == len(names)
    assert feedback_files.stems(["jo e", "ab"]) == {"jo e": whole["jo e"], "ab": whole["ab"]}
    assert whole["JO"] == "JO" and whole["jo_e"] == "jo_e" and whole["ab-2"] == "ab-2"


def test_hints_come_from_the_lesson_and_none_where_it_cannot_be_read(tmp_path: Path) -> None:
    lesson = tmp_path / "double"
    lesson.mkdir()
    (lesson / "exercise.toml").write_text(
        '[exercise]\ntitle = "Double"\ninputs = ["x"]\n\n[[case]]\nx = 1\nexpected = 2\n\n'
        '[[hint]]\ntitle = "Think"\ntext = """\nMultiply by two.\n"""\n'
    )
    results = [case(1, False, path=str(lesson / "exercise.toml")), case(1, False)]
    assert feedback_files.hints_of(results) == {
        str(lesson / "exercise.toml"): [("Think", "Multiply by two.")],
        "/course/combine/exercise.toml": [],
    }
