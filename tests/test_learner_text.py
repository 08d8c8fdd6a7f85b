"""Learner text, from the child to every report (issue 35, points 5 and 6): a hidden case shows
no text the learner chose; every string the child sends passes one boundary (plain, bounded);
each writer escapes for its medium and is read back by its consumer's own parser; a writer
that fails stops no other, and the run ends with exit status 10.

One class run per isolation mode holds every attacker beside a right solution that passes;
the rest goes through the core with the fake runner, or straight to the writers."""

from __future__ import annotations

import csv
import html.parser
import json
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import cmarkgfm
import jsonschema
import pytest
import xmlschema
from cmarkgfm.cmark import Options as CmarkOptions
from markdown_it import MarkdownIt

from pytest_lessons import __main__ as command
from pytest_lessons.core import texts
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.core.summary import render as lessons_section
from pytest_lessons.isolation.outcome import Frame, Outcome, from_untrusted
from pytest_lessons.isolation.text import learner_text, visible
from pytest_lessons.reports import classreport, feedback_files, formats, outputs
from pytest_lessons.terminal import junit_property

from helpers import DOUBLE_RIGHT, DOUBLE_TOML, case_result, grader, lesson

Make = Callable[..., Path]
SCHEMAS = Path(__file__).parent / "schemas"

#: The double exercise with a hidden case (case 3): its inputs must reach no output.
HIDDEN_TOML = (
    DOUBLE_TOML
    + """
[[case]]
name = "secret"
hidden = true
x = [[7.25], [8.5625]]
expected = [[14.5], [17.125]]
"""
)
#: The hidden case's inputs, as the attackers spell them into names.
SECRETS = ("7p25", "8p5625", "7.25", "8.5625")

#: What the escape sequences in an error's name do to a terminal: set the window's title,
#: clear the screen, print a line in colour.
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[31mFAKE"
#: HTML, a Markdown link and image, an autolink and a lone surrogate, in a message.
MARKUP = "<img src=x onerror=alert(1)> [click](https://evil.example) ![i](y) www.evil.example"

#: Finds, from inside learner code, the request its child runs (and so its result file), and
#: writes a result of the learner's own into it.
FORGE = """
import json, os, sys

def forge(data):
    frame = sys._getframe()
    while frame is not None:
        found = frame.f_locals.get("request")
        if isinstance(found, dict) and "result" in found:
            path = found["result"]
            break
        frame = frame.f_back
    else:
        raise SystemExit("no request found")
    data = json.dumps(data).encode()
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError:
        pass
    for name in os.listdir("/proc/self/fd"):  # a tmpfs-covered folder: through its fd
        try:
            link = os.readlink(f"/proc/self/fd/{name}")
            if link == path:
                os.pwrite(int(name), data, 0)
            elif link.startswith("/memfd:"):  # the result channel, with its end mark
                os.pwrite(int(name), data + b"\\0", 0)
        except OSError:
            pass
    os._exit(0)
"""

#: Each attacker of the class; "ada" is right. Cases: 1 ([1, 2]), 2 (2-D), 3 (hidden).
LEARNERS: dict[str, str] = {
    "ada": DOUBLE_RIGHT,
    # An exception class whose name is escape sequences, a message of markup: every case.
    "esc": f"""
Evil = type({"Evil" + ESCAPES!r}, (Exception,), {{}})

def solve(x):
    raise Evil({MARKUP!r} + "\\ud800")
""",
    # A lone surrogate in a built-in exception's message: the writers died of it.
    "sur": 'def solve(x):\n    raise ValueError("lone \\ud800 surrogate")\n',
    # Names its exception class and the file it raises from after the case's inputs.
    "leak": """
import os

def solve(x):
    flat = [v for row in x for v in (row if isinstance(row, list) else [row])]
    tag = "_".join(str(v).replace(".", "p").replace("-", "m") for v in flat)
    Leak = type("Leak_" + tag, (Exception,), {})
    where = os.path.join(os.path.dirname(__file__), "in_" + tag + ".py")
    exec(compile("raise Leak()", where, "exec"), {"Leak": Leak})
""",
    # Forges its results: fields of escapes and surrogates; on the hidden case, a setup
    # problem and names that carry its inputs.
    "forge": FORGE
    + f"""
def solve(x):
    tag = str(x)
    if len(x) == 2 and isinstance(x[0], list) and len(x[0]) == 1:
        forge({{"kind": "setup", "error_type": "not_callable", "message": "list " + tag,
               "names": ["n_" + tag]}})
    forge({{"kind": "raised", "phase": "call", "error_type": "E" + {ESCAPES!r},
           "message": "m\\ud800" + {ESCAPES!r},
           "frames": [{{"file": "/x\\x1b[2J.py", "line": 1, "function": "f\\x07",
                       "code": "c\\x00" + {ESCAPES!r}}}],
           "details": {{"module": "m\\x1b[2J"}}}})
""",
}
#: A word of each learner's case 1, 2 and 3 (None: passed).
EXPECTED: dict[str, list[str | None]] = {
    "ada": [None, None, None],
    "esc": ["raised EvilFAKE", "raised EvilFAKE", "raised an exception in"],
    "sur": ["lone \ufffd surrogate", "lone \ufffd surrogate", "raised ValueError in"],
    "leak": ["raised Leak_1_2", "raised Leak_1p5_2_3_4", "raised an exception in"],
    "forge": ["raised EFAKE", "raised EFAKE", "Make solve a function"],
}


class Tags(html.parser.HTMLParser):
    """Every element and attribute an HTML page (or rendered Markdown) holds."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}


def github(markdown: str) -> str:
    """*markdown* as GitHub renders it (its cmark-gfm, autolinks and tables on), raw HTML
    kept: what reaches GitHub's sanitizer, which keeps an <img> and a link."""
    return cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=CmarkOptions.CMARK_OPT_UNSAFE
    )


#: What the Markdown we write may render to, and nothing else (no a, img, code, em, script).
MARKDOWN_TAGS = {"h1", "h2", "h3", "p", "strong", "ul", "li", "table", "thead", "tbody", "tr"}
MARKDOWN_TAGS |= {"th", "td"}


def assert_plain_markdown(text: str) -> None:
    """Rendered by GitHub's parser and by CommonMark's (markdown-it, as LMS plugins use),
    with raw HTML allowed: only our own structure, no element or link a learner made."""
    for page in (
        github(text),
        MarkdownIt("commonmark", {"html": True}).enable("table").render(text),
    ):
        found = Tags(page)
        assert found.tags <= MARKDOWN_TAGS, (found.tags - MARKDOWN_TAGS, page[:3000])
        assert found.attributes <= {"align"}, (found.attributes, page[:3000])


#: The class report's own elements: a learner's text adds none.
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "small"}
PAGE_TAGS |= {"strong", "svg", "text", "rect", "line", "section", "details", "summary"}
PAGE_TAGS |= {"table", "tr", "th", "td"}


def assert_no_control(text: str, where: str) -> None:
    """No escape, control character (but newline and tab), bidi override or lone surrogate."""
    bad = [c for c in text if c not in "\n\t" and not c.isprintable() and c != " "]
    bad = [c for c in bad if not c.isspace()]  # a no-break space is plain text
    assert not bad, (where, sorted(set(bad)))


def make_class(pytester: pytest.Pytester, make_exercise: Make) -> Path:
    make_exercise(solution=DOUBLE_RIGHT, toml=HIDDEN_TOML, reference__py=DOUBLE_RIGHT)
    submissions = pytester.path / "submissions"
    for learner, code in LEARNERS.items():
        folder = submissions / learner / "double"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(code)
    return submissions


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_learner_text_reaches_every_output_plain_and_no_hidden_case_shows_its_inputs(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    submissions = make_class(pytester, make_exercise)
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest(
        "double",
        "-p",
        "no:cacheprovider",
        f"--lesson-submissions={submissions}",
        f"--lesson-isolation={mode}",
        "--lesson-workers=1",
        "--lesson-report=class.json",
        "--lesson-feedback=feedback",
        "--lesson-class-report=class.html",
        "--lesson-gradebook=grades.csv",
        "--junitxml=junit.xml",
    )
    # Some learners failed, nothing else went wrong: every writer wrote its file.
    assert result.ret == 1, result.stdout.str()[-3000:]
    terminal = result.stdout.str() + result.stderr.str()
    assert "UnicodeEncodeError" not in terminal
    assert "\x1b" not in terminal and "\x07" not in terminal
    assert "Evil\\x1b" not in terminal  # the boundary removed it: nothing left to show

    # The json report, read back by the merge's own reader and Python's json.
    raw = (pytester.path / "class.json").read_bytes()
    raw.decode("utf-8")  # strict: no surrogate reached the file
    report = json.loads(raw)
    jsonschema.validate(report, json.loads((SCHEMAS / "json.schema.json").read_text()))
    by: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(report["results"], key=lambda r: r["case"]):
        by.setdefault(r["learner"], []).append(r)
    wrong = []
    for learner, words in EXPECTED.items():
        for r, word in zip(by[learner], words):
            message = " ".join(r["message"].split())
            if (r["status"] != "passed") if word is None else (word not in message):
                wrong.append((learner, r["case"], r["status"], message[:300]))
            assert r["max_points"] == 1
            for field in ("message", "headline", "fault", "output", "lesson_error", "call"):
                assert_no_control(r[field], f"{learner} case {r['case']} {field}")
    assert wrong == [], "\n".join(map(str, wrong))
    hidden = {who: rs[2] for who, rs in by.items()}
    assert hidden["leak"]["headline"] == (
        "Hidden case 3 failed: your code raised an exception in "
        "submissions/leak/double/solution.py."
    )
    assert hidden["esc"]["headline"].startswith(
        "Hidden case 3 failed: your code raised an exception in "
    )
    assert "n_" not in hidden["forge"]["message"] and "list" not in hidden["forge"]["message"]

    # Gradescope's results.json for each learner, written by the merge from the shard's report.
    monkeypatch.chdir(pytester.path)
    merged = command.main(
        ["merge", "class.json", "--report-format=gradescope", "--report=gs/{learner}.json"]
    )
    assert merged == 1
    gradescope = json.loads((SCHEMAS / "gradescope.schema.json").read_text())
    for learner in LEARNERS:
        data = json.loads((pytester.path / "gs" / f"{learner}.json").read_bytes().decode())
        jsonschema.validate(data, gradescope)
        assert data["output_format"] == data["test_output_format"] == "text"

    # Feedback files and GitHub's job summary, rendered as GitHub and CommonMark do.
    feedback = {
        p.stem: p.read_bytes().decode("utf-8") for p in (pytester.path / "feedback").iterdir()
    }
    assert sorted(feedback) == sorted(LEARNERS)
    for text in [*feedback.values(), summary.read_bytes().decode("utf-8")]:
        assert_plain_markdown(text)
        assert_no_control(text, "markdown")
    assert "\\<img src=x onerror=alert(1)\\> \\[click\\](https\\://evil.example)" in feedback["esc"]

    # The class report, read by an HTML parser: our elements only.
    page = (pytester.path / "class.html").read_bytes().decode("utf-8")
    tags = Tags(page)
    assert tags.tags <= PAGE_TAGS, tags.tags - PAGE_TAGS
    assert_no_control(page, "class report")

    # JUnit XML, read by an XML 1.0 parser; the gradebook by the csv module.
    for name in ("junit-10.xsd", "xunit2.xsd"):  # Jenkins' xUnit and pytest's own schema
        xmlschema.XMLSchema(str(SCHEMAS / name)).validate(str(pytester.path / "junit.xml"))
    root = ET.parse(pytester.path / "junit.xml").getroot()
    names = {p.get("name") for p in root.iter("property")}
    assert "lessons:double/exercise.toml::ada/case-1-a-row" in names
    with open(pytester.path / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["learner"]: row for row in csv.DictReader(handle)}
    assert rows["ada"]["points"] == "3" and all(r["max_points"] == "3" for r in rows.values())

    # Nothing of the hidden case's inputs reached any output.
    everything = [terminal, raw.decode(), page, *feedback.values(), summary.read_text()]
    everything += [p.read_text() for p in (pytester.path / "gs").iterdir()]
    everything.append((pytester.path / "junit.xml").read_text())
    for text in everything:
        for secret in SECRETS:
            assert secret not in text, (
                secret,
                text[text.find(secret) - 300 : text.find(secret) + 100],
            )


# --- the boundary --------------------------------------------------------------------------


def test_learner_text_is_plain_bounded_and_the_same_when_cleaned_again() -> None:
    dirty = "a\ud800b\r\nc\x1b]0;title\x07d\x1b[2Je\x9b31mf\u202eg\x00h\x7fi\u2028j\tk"
    clean = learner_text(dirty)
    assert clean == "a\ufffdb\ncdefg" + "hi\nj\tk"
    assert learner_text(clean) == clean
    assert learner_text(dirty, lines=False) == "a\ufffdb cdefghi j k"
    assert learner_text("x" * 300, 200) == "x" * 199 + "…"
    assert learner_text(learner_text("x" * 300, 200), 200) == "x" * 199 + "…"
    assert learner_text(None) == "" and learner_text(12) == ""  # type: ignore[arg-type]
    assert learner_text("plain words, naïve café ✓") == "plain words, naïve café ✓"
    assert visible("a\x1b]0;t\x07\nb\ud800") == "a\\x1b]0;t\\x07\\x0ab\\ud800"
    assert visible("tab\there", tabs=True) == "tab\there"


def test_every_format_character_is_removed_from_learner_text() -> None:
    # A zero-width space, a joiner, a soft hyphen or a tag character hides text in a line
    # that reads as another in class.json, JUnit and the terminal (round G, finding 4).
    hidden = "".join(
        chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"
    )
    assert hidden  # the walk found Unicode's format characters
    assert learner_text(f"raised Value{hidden}Error") == "raised ValueError"
    assert learner_text(f"a{hidden}b", lines=False) == "ab"
    assert learner_text("\u0915\u094d\u0937 ہے ✓") == "\u0915\u094d\u0937 ہے ✓"  # marks stay


def test_every_text_field_of_an_outcome_is_plain_however_it_was_made() -> None:
    made = Outcome(
        "raised",
        error_type="Evil" + ESCAPES,
        message="m\ud800" + ESCAPES,
        phase="call\x1b[2J",
        frames=(Frame("/f\x1b[2J.py", 3, "fn\x07", "code\x00" + ESCAPES),),
        names=("n\x1b[2J",),
        signal="SIG\x07",
        output="printed\x1b[2J\ud800",
        details={"module": "m\x1b[2J", "changed": {"input": "x\x07", "at": [1, "k\x1b[2J"]}},
    )
    read = from_untrusted(
        json.dumps(made.to_dict() | {"kind": "raised", "phase": "call"}).encode(), 1 << 20
    )
    for outcome in (made, Outcome.from_dict(made.to_dict()), read, replace(made, seconds=1.0)):
        data = outcome.to_dict()
        texts = [data["error_type"], data["message"], data["phase"], data["signal"], data["output"]]
        texts += [v for f in data["frames"] for v in (f["file"], f["function"], f["code"])]
        texts += [*data["names"], json.dumps(data["details"], ensure_ascii=False)]
        for text in texts:
            assert_no_control(text, "outcome")
            assert "\x1b" not in text and "[2J" not in text and "0;pwned" not in text
    assert made.error_type == "EvilFAKE" and made.message == "m\ufffdFAKE"
    # An answer's type names (quoted by the words) are made plain as the answer is read.
    answer = {"$": "object", "type": "Foo\x1b[2J\ud800"}
    got = from_untrusted(json.dumps({"kind": "returned", "answer": [answer]}).encode(), 1 << 20)
    assert got.answer == [{"$": "object", "type": "Foo\ufffd"}]


# --- a hidden case (the fake runner) --------------------------------------------------------


def graded_hidden(tmp_path: Path, outcome: Outcome) -> tuple[CaseResult, CaseResult]:
    """The public case 1 and the hidden case 3 of a solution whose every call gives *outcome*."""
    exercise = lesson(tmp_path, HIDDEN_TOML)
    grader_, _ = grader({("solution.py", "solve"): lambda x: outcome})
    solution = exercise.folder / "solution.py"
    one, _, three = (
        grader_.grade(Attempt(exercise, case, solution=solution)).result for case in exercise.cases
    )
    return one, three


def frames_at(tmp_path: Path, *files: str) -> tuple[Frame, ...]:
    return tuple(
        Frame(str(tmp_path / "double" / f), n, "solve", "x") for n, f in enumerate(files, 3)
    )


def test_a_hidden_case_names_only_builtin_exceptions_and_the_solutions_own_file(
    tmp_path: Path,
) -> None:
    own = frames_at(tmp_path, "solution.py", "in_7p25.py")
    mine = Outcome(
        "raised", error_type="Leak_7p25", phase="call", frames=own, details={"module": "solution"}
    )
    public, hidden = graded_hidden(tmp_path, mine)
    assert "raised Leak_7p25 at line 4 of in_7p25.py" in public.headline  # public: all of it
    assert hidden.headline == "Hidden case 3 failed: your code raised an exception in solution.py."
    assert "7p25" not in hidden.message and "Leak" not in hidden.message
    # A class that only takes a built-in's name is the learner's too.
    fake = replace(mine, error_type="ValueError")
    assert "raised an exception" in graded_hidden(tmp_path, fake)[1].headline
    builtin = replace(mine, error_type="KeyError", details={"module": "builtins"})
    assert "raised KeyError in solution.py" in graded_hidden(tmp_path, builtin)[1].headline
    # No frame in the solution's own file: no place at all.
    elsewhere = replace(builtin, frames=frames_at(tmp_path, "x_7p25.py"))
    assert (
        graded_hidden(tmp_path, elsewhere)[1].headline
        == "Hidden case 3 failed: your code raised KeyError."
    )


def test_a_hidden_case_words_a_setup_problem_without_the_childs_text(tmp_path: Path) -> None:
    for problem, words in (
        ("not_callable", "Make solve a function (def solve(x):) in solution.py."),
        ("no_entry", "Define a function named solve in solution.py: the grader calls solve(x)."),
        ("signature", "Give solve 1 parameter, in this order: def solve(x)."),
    ):
        forged = Outcome("setup", error_type=problem, message="list [7.25]", names=("n_7p25",))
        public, hidden = graded_hidden(tmp_path, forged)
        assert hidden.headline == words, problem
        assert "7.25" not in hidden.message and "7p25" not in hidden.message
        assert public.headline != words  # a public case says what the child said
    missing = Outcome("setup", error_type="missing_file")
    assert graded_hidden(tmp_path, missing)[1].headline.startswith("Create solution.py")


def test_a_hidden_cases_harness_failure_keeps_the_childs_words_out_of_every_field(
    tmp_path: Path,
) -> None:
    forged = Outcome(
        "raised",
        error_type="Leak_7p25",
        message="x = [[7.25], [8.5625]]",
        phase="call",
        frames=frames_at(tmp_path, "in_7p25.py"),
        details={"harness": "bug", "file": "/course/double/x_7p25.py"},
    )
    public, hidden = graded_hidden(tmp_path, forged)
    assert "7.25" in public.lesson_error  # a public case's account is whole
    assert hidden.lesson_error == (
        "The lesson's harness failed on a hidden case (it raised an exception): run pytest "
        "--lesson-check on double to see where.\n"
    )
    for field in ("headline", "message", "lesson_error", "fault", "call", "output"):
        for secret in SECRETS:
            assert secret not in getattr(hidden, field), field


# --- the writers ----------------------------------------------------------------------------

#: Folder names a learner may choose: escapes, markup, a link, a lone surrogate (a name of
#: bytes that are no UTF-8), a bidi override, a table's |, a newline.
HOSTILE = [
    "esc" + ESCAPES,
    "<img src=x onerror=alert(1)>",
    "[click](https://evil.example)",
    "bad\udcff",
    "rtl\u202eexe.txt",
    "a|b",
    "two\nlines",
    "www.evil.example",
]


def hostile_results() -> list[CaseResult]:
    results = []
    for name in [*HOSTILE, "ada"]:
        results += [
            case_result(1, True, learner=name, exercise="double", cases=2),
            case_result(
                2,
                name == "ada",
                learner=name,
                exercise="double",
                cases=2,
                fault="raised Evil at solution.py:3",
                headline=f"solve raised Evil at line 3 of solution.py: {MARKUP}",
                message=f"solve raised Evil: {MARKUP}",
            ),
        ]
    return results


def test_each_writer_escapes_a_learners_names_for_its_medium(tmp_path: Path) -> None:
    results = hostile_results()
    assert_plain_markdown(formats.step_summary(results))
    for learner in HOSTILE:
        text = feedback_files.feedback(learner, results, {})
        assert_plain_markdown(text)
        assert_no_control(text, learner)
    # The terminal: the class summary and the lessons section show escapes, never run them.
    lines = classreport.class_lines(results, absent={"late\x1b[2J": "no shard"})
    lines += lessons_section(results, str, None, None, None, [])
    for line in lines:
        assert_no_control(line, "terminal")
    assert any("late\\x1b[2J" in line for line in lines)
    # The class report: our elements only, the names as text.
    page = classreport.render(results)
    assert Tags(page).tags <= PAGE_TAGS
    assert_no_control(page, "class report")
    assert "esc\\x1b]0;pwned\\x07" in page
    # JUnit: the property's name and value are XML 1.0 text whatever the learner's name.
    properties = "".join(
        f'<property name="{html.escape(n, quote=True)}" value="{html.escape(v, quote=True)}"/>'
        for n, v in (
            junit_property(f"double/exercise.toml::{r.learner}/case-1", r) for r in results
        )
    )
    root = ET.fromstring(f"<properties>{properties}</properties>".encode())
    learners = {json.loads(p.get("value", ""))["learner"] for p in root}
    assert "bad\ufffd" in learners and "esc" + ESCAPES in learners
    # Every file, a gradebook and the json report too, is UTF-8 whatever a name holds.
    done = outputs.write(
        outputs.Outputs(
            gradebook="grades.csv",
            feedback="feedback",
            class_report="class.html",
            report="class.json",
        ),
        results,
        1.0,
        tmp_path,
    )
    assert "class report: " + str(tmp_path / "class.html") in done
    for path in [
        tmp_path / "grades.csv",
        tmp_path / "class.json",
        *(tmp_path / "feedback").iterdir(),
    ]:
        path.read_bytes().decode("utf-8")
    data = json.loads((tmp_path / "class.json").read_text())
    assert {r["learner"] for r in data["results"]} >= {"bad\ufffd", "two\nlines"}


def test_a_file_that_cannot_be_written_stops_no_other_and_the_merge_says_which(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = [
        replace(r, path=str(tmp_path / "course" / "double" / "exercise.toml"))
        for r in hostile_results()
    ]
    (tmp_path / "blocked").write_text("a file where a folder should be")
    asked = outputs.Outputs(
        gradebook="grades.csv",
        feedback="blocked/feedback",
        class_report="blocked/class.html",
        report="class.json",
    )
    with pytest.raises(outputs.WriteFailed) as failed:
        outputs.write(asked, results, 1.0, tmp_path)
    assert [Path(p).name for p, _ in failed.value.failed] == ["feedback", "class.html"]
    assert (tmp_path / "grades.csv").exists() and (tmp_path / "class.json").exists()
    assert failed.value.error_lines()[0] == (
        f"lessons: ERROR: fix the output path, then grade again: {tmp_path}/blocked/feedback "
        "could not be written (Not a directory); every other file was written (exit status 10)."
    )

    # One learner's feedback file that cannot be written: the others still are.
    (tmp_path / "feedback").mkdir()
    stem = feedback_files.stems(r.learner for r in results)["ada"]
    (tmp_path / "feedback" / f"{stem}.md").mkdir()  # a folder where ada's file goes
    lost: list[tuple[Path, str]] = []
    written = feedback_files.write_all(tmp_path / "feedback", results, {}, failed=lost)
    assert [p.name for p, _ in lost] == [f"{stem}.md"]
    assert len(written) == len(HOSTILE)

    # The merge of a shard's report: exit status 10, and it says which file and why.
    mine = [r for r in results if "\udcff" not in r.learner]  # the class's id hashes names
    roll = Roll(tuple(sorted({r.learner for r in mine})))
    outputs.write(outputs.Outputs(report="shard.json"), mine, 1.0, tmp_path, roll)
    shard = tmp_path / "shard.json"
    monkeypatch.chdir(tmp_path)
    status = command.main(
        ["merge", str(shard), "--class-report=blocked/page.html", "--gradebook=merged.csv"]
    )
    assert status == outputs.WRITE_FAILED == 10
    err = capsys.readouterr().err
    assert "blocked/page.html could not be written" in err
    assert (tmp_path / "merged.csv").exists()


def test_the_exit_status_of_a_failed_write_is_documented() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "ci-grading.md").read_text()
    assert "| 10 | a file the run was asked for could not be written" in docs
    assert "| 10 | a file could not be written (the message names it" in docs
    assert "10 a file could not be written" in command.EXIT_STATUS
    assert outputs.WRITE_FAILED not in {int(code) for code in pytest.ExitCode}


# --- the words and writers, one function at a time --------------------------------------------


def test_markdown_escapes_autolinks_and_block_starts_and_each_line_of_a_text() -> None:
    assert (
        formats.markdown("see https://x.example and www.y") == "see https\\://x.example and www\\.y"
    )
    assert formats.markdown("# not a heading") == "\\# not a heading"
    assert formats.markdown("2. not a list") == "2\\. not a list"
    # An author's hint: each line escaped on its own, the lines kept.
    assert formats.markdown("one\n# two\n- three", lines=True) == "one\n\\# two\n\\- three"


def test_why_a_file_was_not_written_is_the_systems_reason_or_the_errors_kind() -> None:
    assert formats.why(PermissionError(13, "Permission denied")) == "Permission denied"
    assert formats.why(OSError("no reason given")) == "OSError: no reason given"
    assert formats.why(ValueError("bad\x1b[2J")) == "ValueError: bad\\x1b[2J"
    assert formats.why(ValueError("x" * 400)) == "ValueError: " + "x" * 288


def test_gradescope_results_declare_plain_text_and_follow_the_course_order() -> None:
    results = [case_result(1, True, exercise="b"), case_result(1, False, exercise="a")]
    data = formats.gradescope(results, 1.0, order=("b", "a"))
    assert {k: data[k] for k in ("output_format", "test_output_format", "test_name_format")} == {
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
    }
    assert [t["tags"][0] for t in data["tests"]] == ["b", "a"]
    assert [t["tags"][0] for t in formats.gradescope(results, 1.0)["tests"]] == ["a", "b"]


def hidden_context(tmp_path: Path, entry: str = "solve", **extra: Any) -> texts.Context:
    solution = tmp_path / "double" / "solution.py"
    return texts.Context(
        "double",
        entry,
        solution,
        {"x": 1, "y": 2},
        10.0,
        2048.0,
        show=lambda p: Path(p).name,
        **extra,
    )


def test_the_hidden_words_of_each_kind_of_outcome(tmp_path: Path) -> None:
    ctx = hidden_context(tmp_path)
    builtin = Outcome("raised", error_type="KeyError", phase="call", details={"module": ""})
    assert texts.hidden_exception(builtin) == "KeyError"
    assert texts.hidden_lesson_error(None, ctx) == ""
    assert texts.hidden_lesson_error(builtin, ctx) == ""
    returned = Outcome("returned", answer=1, details={"harness": "bug"})
    assert texts.hidden_lesson_error(returned, ctx) == ""
    bug = replace(builtin, details={"harness": "bug"})
    assert texts.hidden_lesson_error(bug, ctx).startswith(
        "The lesson's harness failed on a hidden case (it raised KeyError)"
    )
    klass = hidden_context(tmp_path, "Tokenizer")
    missing = Outcome("setup", error_type="no_entry")
    assert texts.describe_hidden(missing, None, klass, "hidden case 3").headline == (
        "Define a class named Tokenizer in solution.py: the grader calls Tokenizer(x, y)."
    )
    disk = Outcome("died", details={"limit": "disk"})
    assert (
        "more than the 0 MiB a case may write"
        in texts.describe_hidden(disk, None, ctx, "hidden case 3").headline
    )
    limited = hidden_context(tmp_path, sandbox_limits={"disk_mb": 32})
    assert (
        "more than the 32 MiB a case may write"
        in texts.describe_hidden(disk, None, limited, "hidden case 3").headline
    )
