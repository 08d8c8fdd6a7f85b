"""Report formats for other programs, from one result model (``results.CaseResult``).

Each format is one function from results to the file's data, registered by a row of
:data:`pytest_lessons.reports.registry.FORMATS` (docs/contributors/recipes.md, "Add a report
format": the row, its renderer here, a test against the consumer's own code in
tests/test_consumers.py, its row in docs/ci-grading.md). A result's ``status`` is one of
:class:`~pytest_lessons.core.results.Status`; each dialect maps it to its own words. Messages of
hidden cases were made safe before they got here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from pytest_lessons.core.results import CaseResult, FaultKind, Status
from pytest_lessons.core.words import HEADLINE_LIMIT, first_sentence
from pytest_lessons.isolation.text import visible

# Re-exported: the analysis every report shares moved to tallies.
from pytest_lessons.reports.tallies import exercise_order as exercise_order
from pytest_lessons.reports.tallies import mistake_table as mistake_table
from pytest_lessons.reports.tallies import ordered as ordered
from pytest_lessons.reports.tallies import summary_of as summary_of
from pytest_lessons.reports.tallies import summary_text as summary_text
from pytest_lessons.reports.tallies import totals as totals

#: Exercism's limit on a test's output.
EXERCISM_OUTPUT = 500

#: The interface's own words for cut output ("Output was truncated. Please limit to 500
#: chars"), placed as Exercism's Python test runner places them: at the end, within the 500.
EXERCISM_CUT = " [Output was truncated. Please limit to 500 chars]"


def _name(result: CaseResult) -> str:
    who = f"{result.learner}: " if result.learner else ""
    return f"{who}{result.exercise}: {result.label}"


#: The fault of a case whose learner handed in no file for its exercise.
MISSING = FaultKind.MISSING_FILE.value


def not_handed_in(r: CaseResult) -> bool:
    """Whether *r* is a case of an exercise the learner handed in no file for."""
    return r.fault_kind == FaultKind.MISSING_FILE and r.status == Status.ERROR


#: What the learner is told of hidden cases Gradescope shows later (its visibility words).
_SHOWN_LATER = {
    "hidden": "are never shown here",
    "after_due_date": "are shown after the due date",
    "after_published": "are shown once grades are published",
}


def _gradescope_summary(results: Sequence[CaseResult], hidden_visibility: str) -> str:
    """The summary Gradescope shows at once: with hidden cases shown later, their results
    stay out of it as they stay out of their tests (a round-D red team read them here)."""
    later = _SHOWN_LATER.get(hidden_visibility)
    if later is None or not any(r.hidden for r in results):
        return summary_text(results)
    public = [r for r in results if not r.hidden]
    passed = sum(r.passed for r in public)
    return f"Public cases {passed} of {len(public)} passed; the hidden cases' results {later}."


def _gradescope_output(r: CaseResult) -> str:
    if r.passed:
        return "passed"
    if not_handed_in(r):
        # The learner uploads files; the grader's copy of the course is not theirs to open.
        return (
            f"Not handed in: your submission has no file for {r.exercise}, so this case "
            f"scores 0 of {r.max_points:g}. Upload {r.exercise}/solution.py with your other "
            "files and submit again."
        )
    return r.message


def shown_seconds(results: Sequence[CaseResult], seconds: float) -> float:
    """The run's time as a report shows it: *seconds*, or, when a case is hidden, the public
    cases' own times added up, so that no total less the cases shown spells the time of a
    hidden one (code can run for as long as a hidden input says)."""
    if any(r.hidden for r in results):
        return sum(float(r.seconds) for r in results if not r.hidden)
    return seconds


def gradescope(
    results: Sequence[CaseResult],
    seconds: float,
    hidden_visibility: str = "after_published",
    order: Sequence[str] = (),
) -> dict[str, Any]:
    """Gradescope's ``results.json``: tests in course order; an exercise the submission holds
    no file for is said to be not handed in (0 points), never graded as a stub."""
    tests = []
    for number, r in enumerate(ordered(results, order), 1):
        tests.append(
            {
                "name": _name(r),
                "number": str(number),
                "score": r.points,
                "max_score": r.max_points,
                "status": "passed" if r.passed else "failed",
                "output": _gradescope_output(r),
                "visibility": hidden_visibility if r.hidden else "visible",
                "tags": [r.exercise] + ([r.diagnosis] if r.diagnosis else []),
            }
        )
    return {
        "score": totals(results)["points"],
        "execution_time": round(shown_seconds(results, seconds), 3),
        "output": _gradescope_summary(results, hidden_visibility),
        # Plain text everywhere: Gradescope would otherwise read the texts (a learner's
        # exception message, quoted in a headline) as simple_format, with some HTML live.
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


#: Most bytes of JSON a classroom result may have. The workflow hands it, base64, to GitHub's
#: reporter in one environment variable, and Linux refuses a variable over 128 KiB
#: (MAX_ARG_STRLEN, 131072 bytes with its name and ``=``): the reporter then never starts and no
#: points are recorded. 64 KiB is 87,384 bytes of base64, well under that whatever the name.
CLASSROOM_BUDGET = 64 * 1024

#: Longest name and test code kept per test in a classroom result (a message keeps a whole
#: headline, up to :data:`~pytest_lessons.core.words.HEADLINE_LIMIT`).
CLASSROOM_TEXT = 300

CLASSROOM_CUT = (
    "Shortened to fit GitHub Classroom's reporter ({how}): points are complete; each case's "
    "feedback is in the Grade step's log and in pytest's output."
)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _classroom_status(rs: Sequence[CaseResult]) -> str:
    if all(r.passed for r in rs):
        return "pass"
    return "fail" if any(r.status == Status.FAILED for r in rs) else "error"


def _classroom_cases(results: Sequence[CaseResult], text: int) -> list[dict[str, Any]]:
    """One test per case; its message is the headline, never the learner's output."""
    return [
        {
            "name": _cut(_name(r), CLASSROOM_TEXT),
            "status": _classroom_status([r]),
            "score": r.points,
            # *text* is for the code: a message is cut to 100 by the shortened steps themselves.
            "message": "" if r.passed else _cut(r.headline, HEADLINE_LIMIT),
            "test_code": _cut(r.call, text) if text else "",
            "filename": _relative(r.path),
            # The reporter prints " - line N" unless N is 0: generated cases have no line.
            "line_no": 0 if r.generated else int(r.line or 0),
            "duration": round(float(r.seconds) * 1000),
        }
        for r in results
    ]


def _classroom_groups(results: Sequence[CaseResult], per_exercise: bool) -> list[dict[str, Any]]:
    """One test per learner and exercise (or one for everything): points stay whole."""
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for r in results:
        key = (str(r.learner), str(r.exercise)) if per_exercise else ("", "")
        groups.setdefault(key, []).append(r)
    tests = []
    for (learner, exercise), rs in groups.items():
        passed = sum(r.passed for r in rs)
        what = f"{learner}: {exercise}" if learner else exercise
        name = (
            f"{what}: {passed} of {len(rs)} cases passed"
            if per_exercise
            else (f"all exercises: {passed} of {len(rs)} cases passed")
        )
        failing = [r for r in rs if not r.passed]
        tests.append(
            {
                "name": _cut(name, CLASSROOM_TEXT),
                "status": _classroom_status(rs),
                "score": round(sum(r.points for r in rs), 6),
                "message": _cut(failing[0].headline, 100) if failing else "",
                "test_code": "",
                "filename": _relative(rs[0].path) if per_exercise else "",
                "line_no": 0,
                "duration": round(sum(float(r.seconds) for r in rs) * 1000),
            }
        )
    return tests


def classroom(
    results: Sequence[CaseResult], budget: int = CLASSROOM_BUDGET, order: Sequence[str] = ()
) -> dict[str, Any]:
    """The GitHub Classroom runner result, which the classroom reporter reads (base64).

    It stays within *budget* bytes of JSON: one test per case with its headline (never the
    learner's output) and its call; if that does not fit, shorter messages and no code; then
    one test per exercise; then one test for the whole run. Each step keeps every point, and a
    shortened result says so in its first test's code, which the reporter prints."""
    ordered_results = ordered(results, order)
    attempts: list[tuple[str, Callable[[], list[dict[str, Any]]]]] = [
        ("", lambda: _classroom_cases(ordered_results, CLASSROOM_TEXT)),
        ("short messages", lambda: _classroom_cases(ordered_results, 0)),
        ("one test per exercise", lambda: _classroom_groups(ordered_results, True)),
        ("one test for the run", lambda: _classroom_groups(ordered_results, False)),
    ]
    if not results or all(r.status in (Status.BROKEN, Status.INTERNAL) for r in results):
        status = "error"
    else:
        status = "pass" if all(r.passed for r in results) else "fail"
    report: dict[str, Any] = {}
    for how, make in attempts:
        tests = make()
        if how:
            for test in tests:
                test["message"] = _cut(test["message"], 100)
            if tests:
                tests[0]["test_code"] = CLASSROOM_CUT.format(how=how)
        report = {
            "version": 1,
            "status": status,
            "max_score": totals(results)["max_points"],
            "tests": tests,
        }
        if len(classroom_text(report).encode()) <= budget:
            break
    return report


def classroom_text(report: dict[str, Any]) -> str:
    """A classroom result as its file holds it: compact JSON, as the budget counts it."""
    return json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n"


def exercism(results: Sequence[CaseResult], order: Sequence[str] = ()) -> dict[str, Any]:
    """Exercism's test runner ``results.json``, version 3, tests in course and case order."""
    tests = []
    tasks: dict[str, int] = {}
    for r in ordered(results, order):
        task = tasks.setdefault(str(r.path), len(tasks) + 1)
        status = "pass" if r.passed else ("fail" if r.status == Status.FAILED else "error")
        test: dict[str, Any] = {
            "name": _name(r),
            "status": status,
            "test_code": r.call,
            "task_id": task,
        }
        if not r.passed:
            test["message"] = r.message
        output = r.output
        if output:
            if len(output) > EXERCISM_OUTPUT:
                output = output[: EXERCISM_OUTPUT - len(EXERCISM_CUT)] + EXERCISM_CUT
            test["output"] = output
        tests.append(test)
    report: dict[str, Any] = {"version": 3, "tests": tests}
    unusable = [r for r in ordered(results, order) if r.unloadable]
    ungraded = (Status.BROKEN, Status.INTERNAL)
    unusable_run = all(r.unloadable or r.status in ungraded for r in results)
    if unusable and unusable_run:
        # As Exercism's runners do when the solution cannot be imported (a syntax error, a
        # missing function): no tests ran, and the message says why.
        # The case's own evidence (its inputs) is left out: the message is about the file.
        message = re.split(r"\n\n  (?:inputs |your code )", unusable[0].message)[0]
        report.update(status="error", message=message.rstrip("\n"), tests=[])
    elif not results or all(r.status in (Status.BROKEN, Status.INTERNAL) for r in results):
        report["status"] = "error"
        report["message"] = summary_text(results) if results else "No exercise was graded."
    else:
        report["status"] = "pass" if all(r.passed for r in results) else "fail"
    return report


def full(
    results: Sequence[CaseResult],
    seconds: float,
    order: Sequence[str] = (),
    roll: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Our own report: every field of every result, with totals, the exercises in course
    order, and for a class the class it grades (*roll*: its learners, its id, the shard)."""
    report: dict[str, Any] = {
        "format": "pytest-lessons",
        "version": 1,
        "seconds": round(shown_seconds(results, seconds), 3),
        "totals": totals(results),
        "summary": summary_text(results),
        "mistakes": mistake_table(results),
        "exercises": exercise_order(results, order),
    }
    if roll is not None:
        report["class"] = dict(roll)
    report["results"] = [r.to_dict() for r in ordered(results, order)]
    return report


def _relative(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 else path


@dataclass(frozen=True)
class Options:
    """What a run says about its report, besides the results."""

    seconds: float = 0.0
    """The run's wall time."""
    hidden_visibility: str = "after_published"
    """Gradescope's visibility of hidden cases."""
    order: tuple[str, ...] = ()
    """The exercises in course order, as a shard recorded it (empty: from ``course.toml``)."""
    roll: Mapping[str, Any] | None = None
    """A class run's ``class`` table for the json report (who is in the class, the shard)."""


def json_text(report: dict[str, Any]) -> str:
    """A report as its file holds it: indented JSON, non-ASCII kept."""
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


# --- a class --------------------------------------------------------------------------------


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(text: str) -> str:
    """*text* made safe for a CSV cell that a spreadsheet opens: one that would start a formula
    gets a leading ``'`` (OWASP's rule), so it shows as text and never runs.

    Only text cells go through here: learner and exercise names come from folder names, which a
    learner chooses. Number cells are written by us from numbers and stay numbers (points are
    never negative, so none starts with ``-``; a negative number would still be a number, not a
    formula).

    A text that starts with ``'`` gets one more, so that no two texts share a cell: ``=x``
    is written ``'=x`` and ``'=x`` is written ``''=x``, and a gradebook read back (a regrade's
    diff) tells the two learners apart."""
    return "'" + text if text.startswith((*FORMULA_STARTS, "'")) else text


def _first_sentence(headline: str, limit: int = 120) -> str:
    """What to do, for a table cell: the headline's first sentence, cut at a word if long."""
    text = first_sentence(headline)
    if len(text) > limit:
        cut = text.rfind(" ", 0, limit - 1)
        text = text[: cut if cut > 0 else limit - 2].rstrip(",;:") + " …"
    return text


# --- what every file is written as --------------------------------------------------------

_SURROGATES = re.compile(r"[\ud800-\udfff]")


def encoded(text: str) -> bytes:
    """*text* as a report file holds it, UTF-8: a lone surrogate (which UTF-8 cannot hold,
    and a learner's folder name read from bytes that are no UTF-8 has) becomes U+FFFD, so
    no learner's name stops a file from being written."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text).encode("utf-8")


def why(error: BaseException) -> str:
    """Why a file could not be written, in a few words: the system's reason (``Permission
    denied``), or the error's kind and message."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return visible(f"{type(error).__name__}: {error}")[:300]


# --- Markdown (GitHub's job summary, the feedback files) ------------------------------------

# What starts HTML, a link, an image, code, emphasis, an entity or a table's cell anywhere in a
# line; CommonMark shows each as itself after a backslash.
_MARKDOWN = re.compile(r"([\\`*<>\[\]|&])")
# GitHub's autolinks without brackets (cmark-gfm's extension): a scheme's colon and www.'s
# dot, escaped, make them text.
_AUTOLINKS = re.compile(r"(?i)\b(https?|ftp|www)([:.])")
# What starts a block at a line's start: a heading, a list item, a setext underline.
_BLOCK = re.compile(r"^(\s*|\s*\d+(?=[.)]))([#+=-]|(?<=\d)[.)])")


def markdown(text: str, lines: bool = False) -> str:
    """*text* shown as itself in Markdown, as GitHub (cmark-gfm) and CommonMark renderers read
    it: no HTML tag, link, image, autolink, code span, emphasis, entity, table cell or block
    starts in it, and nothing invisible (controls, escapes, bidirectional overrides) is in it
    (:func:`~pytest_lessons.isolation.text.visible` shows them as ``\\x1b``). On one line;
    with *lines* each line is escaped so (an author's hint). An e-mail address stays one:
    GitHub links any address, escaped or not.

    Headlines can quote a learner's exception message, and folder names are the learner's
    choice: a forge, an LMS or GitHub's job summary that renders the text must not run or
    link what they wrote."""
    if lines:
        return "\n".join(markdown(line) for line in text.split("\n"))
    text = visible(text)
    text = _MARKDOWN.sub(r"\\\1", text)
    text = _AUTOLINKS.sub(r"\1\\\2", text)
    return _BLOCK.sub(r"\1\\\2", text)


def step_summary(results: Sequence[CaseResult]) -> str:
    """Markdown for GitHub's job summary: exercises, points and headlines, each text escaped
    for Markdown and HTML (:func:`markdown`)."""
    lines = [
        "## pytest-lessons",
        "",
        markdown(summary_text(results)),
        "",
        "| exercise | points | result |",
        "| --- | --- | --- |",
    ]
    by_exercise: dict[tuple[str, str], list[CaseResult]] = {}
    for r in ordered(results):
        by_exercise.setdefault((str(r.learner), str(r.exercise)), []).append(r)
    for (learner, exercise), rs in by_exercise.items():
        points = sum(r.points for r in rs)
        most = sum(r.max_points for r in rs)
        failing = [r for r in rs if not r.passed]
        if not failing:
            result = "passed"
        else:
            result = "; ".join(
                markdown(f"{r.label}: {_first_sentence(r.headline)}") for r in failing[:3]
            )
        # Folder names are the learner's choice: a | would end the table's cell, a < start HTML.
        name = markdown(f"{learner}: {exercise}" if learner else exercise)
        lines.append(f"| {name} | {points:g} / {most:g} | {result} |")
    return "\n".join(lines) + "\n"
