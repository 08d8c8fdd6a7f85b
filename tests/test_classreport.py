"""The class report: its outcomes, tables and escaping from typed results, and the page as a
real browser (headless Chromium from the system's packages) draws it."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.reports import classreport
from pytest_lessons.reports.gradebook import MISSING

from helpers import case_result


def case(learner: str, number: int, passed: bool, **changes: Any) -> CaseResult:
    return case_result(
        number, passed, **{"cases": 3, "learner": learner, "seconds": 0.1, **changes}
    )


def fails(learner: str, **changes: Any) -> list[CaseResult]:
    """A learner whose three cases all fail as *changes* say."""
    return [case(learner, n, False, **changes) for n in (1, 2, 3)]


ERROR = Status.ERROR
CLASS = [
    *(case("ada", n, True) for n in (1, 2, 3)),
    *(case("bo", n, True) for n in (1, 2, 3)),
    *fails("cy", diagnosis="missing-transpose", diagnosis_kind="watch_out"),
    *fails("di", diagnosis="rows", diagnosis_kind="detector"),
    *fails("ed", status=ERROR, fault="timeout", seconds=10.0),
    *fails("flo", status=ERROR, fault="died 9"),
    *fails("gus", status=ERROR, fault="raised NotImplementedError at solution.py:16"),
    *fails("hal", status=ERROR, fault="raised IndexError at solution.py:3"),
    *fails("ivy", fault="returned tensor"),
    *fails("jo", status=ERROR, fault=MISSING),
    case("kim", 1, True),
    case("kim", 2, False),
    case("kim", 3, False, diagnosis="missing-transpose", diagnosis_kind="watch_out"),
]


def test_every_kind_of_fault_has_its_own_bar_not_only_watch_outs() -> None:
    bars = {b.outcome.label: b.learners for b in classreport.exercise_bars(CLASS)}
    assert bars == {
        "passed": ["ada", "bo"],
        "watch out: missing-transpose": ["cy", "kim"],
        "finding: rows": ["di"],
        "timeout": ["ed"],
        "crash": ["flo"],
        "not implemented": ["gus"],
        "raised IndexError": ["hal"],
        "returned tensor": ["ivy"],
        "missing": ["jo"],
        "wrong answer": ["kim"],
    }
    assert classreport.exercise_bars(CLASS)[0].outcome.label == "passed"


def test_the_case_that_fails_most_comes_first() -> None:
    page = classreport.render(CLASS)
    table = page[page.index("Pass rate per case") :]
    table = table[: table.index("</table>")]
    rows = [line for line in table.splitlines() if line.startswith("<tr><td>")]
    # case 1 passed 3 of 11 (ada, bo, kim); cases 2 and 3 passed 2 of 11.
    assert rows[0].startswith('<tr><td>case 2</td><td class="n">2 of 11</td>')
    assert rows[-1].startswith('<tr><td>case 1</td><td class="n">3 of 11</td>')


def test_the_histogram_bins_whole_points_and_gives_full_marks_a_bar_of_their_own() -> None:
    ten = classreport.histogram([0, 0.5, 3, 9.5, 10, 10], 10)
    assert [b.label for b in ten] == [str(n) for n in range(11)]
    assert [b.count for b in ten] == [2, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2]
    assert ten[-1].title == "full marks (10 points)" and ten[9].title == "9 to under 10 points"
    # 42 points: bars of 5 whole points (0, 5, ... 40), then full marks alone.
    big = classreport.histogram([41.5, 42, 5], 42)
    assert [b.label for b in big] == ["0", "5", "10", "15", "20", "25", "30", "35", "40", "42"]
    assert [b.count for b in big][-2:] == [1, 1] and big[1].count == 1
    assert [b.count for b in classreport.histogram([0], 0)] == [1]
    # On the page: whole-point labels, never 0.3 or 2.7 (the class has 3 points at most).
    page = classreport.render(CLASS)
    svg = page[page.index('<svg class="histogram"') :]
    svg = svg[: svg.index("</svg>")]
    assert re.findall(r'y="186" text-anchor="middle">([^<]+)</text>', svg) == ["0", "1", "2", "3"]
    assert "<title>full marks (3 points): 2</title>" in svg


def test_the_slowest_submissions_are_listed_slowest_first() -> None:
    page = classreport.render(CLASS)
    slow = page[page.index("Slowest submissions") :]
    assert slow.index('<td>ed</td><td>combine</td><td class="n">30.0</td>') < slow.index(
        "<td>ada</td>"
    )


#: Folders that a page would show as "good": invisible, spacing and edge characters.
LOOK_ALIKES = [
    "good\u200b",
    "good\u2060",
    "good\ufeff",
    "good\u00a0",
    "good\u00ad",
    "good ",
    # Printable, yet blank: a Hangul filler, the blank Braille pattern, the combining
    # grapheme joiner, a variation selector (a red team's round G).
    "good\u3164",
    "good\u2800",
    "good\u034f",
    "good\ufe0f",
]


def test_names_that_would_look_alike_are_told_apart_on_the_page() -> None:
    """A red team handed in folders that read as ``good`` beside the real one: every one of
    them is shown with its invisible character as an escape, in every list of the page."""
    page = classreport.render(
        [
            *(case("good", n, True, seconds=9.0) for n in (1, 2, 3)),
            *(r for name in LOOK_ALIKES for r in fails(name, seconds=5.0)),
        ]
    )
    shown = ["good\\u200b", "good\\u2060", "good\\ufeff", "good\\xa0", "good\\xad", "good\\x20"]
    shown += ["good\\u3164", "good\\u2800", "good\\u034f", "good\\ufe0f"]
    who = re.findall(r'<p class="who">([^<]*)</p>', page)
    assert any(all(name in line for name in shown) for line in who), who
    slowest = re.findall(r"<tr><td>([^<]*)</td><td>combine</td>", page)
    # The slowest table's rows (ten at most): each name as shown, none twice.
    assert set(slowest) <= {"good", *shown} and len(set(slowest)) == len(slowest) == 10, slowest
    assert not any(char in page for name in LOOK_ALIKES for char in name[4:] if char != " ")


HOSTILE = '<img src=x onerror="document.title=1">'


def hostile_class() -> list[CaseResult]:
    return [
        *CLASS,
        *fails(HOSTILE, status=ERROR, fault="raised ValueError at solution.py:1"),
        case("zed", 1, False, diagnosis="</svg><script>x()</script>", diagnosis_kind="watch_out"),
    ]


def test_everything_a_learner_made_is_escaped_and_nothing_loads_from_anywhere() -> None:
    page = classreport.render(hostile_class(), title="Week 3 <b>")
    assert "<img" not in page and "<script" not in page and "</svg><" not in page
    assert "&lt;img src=x onerror=&quot;document.title=1&quot;&gt;" in page
    assert "<title>Week 3 &lt;b&gt;</title>" in page
    assert "default-src 'none'" in page
    # The only URL is SVG's namespace, which is never fetched.
    assert page.count("//") == page.count('xmlns="http://www.w3.org/2000/svg"')


# --- in a real browser ----------------------------------------------------------------------


def chromium() -> str | None:
    return next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))),
        None,
    )


needs_chromium = pytest.mark.skipif(
    chromium() is None,
    reason="needs headless Chromium (Debian: apt-get install chromium; .ci/run installs it)",
)


def browse(page: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    profile = page.parent / "chromium-profile"  # a new one: nothing of an earlier run's
    command = [
        str(chromium()),
        "--headless",
        "--no-sandbox",  # runs as root in CI containers, where the browser's sandbox cannot
        "--disable-gpu",
        "--hide-scrollbars",
        # No network here: the browser's own background connections only fail, many a time.
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, timeout=120)
    if done.returncode != 0:  # what the browser said is the only clue to why it ended
        raise AssertionError(f"chromium ended with {done.returncode}: {done.stderr[-3000:]!r}")
    return done


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of 8-bit RGB(A) pixels of a PNG, as Chromium writes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                near = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + near) & 0xFF
        rows.append(
            bytes(line if channels == 3 else bytes(b for j, b in enumerate(line) if j % 4 != 3))
        )
        previous = line
    return width, height, rows


def colour_count(rows: list[bytes], colour: str) -> int:
    rgb = bytes.fromhex(colour.lstrip("#"))
    return sum(1 for row in rows for x in range(0, len(row), 3) if row[x : x + 3] == rgb)


@pytest.mark.slow
@needs_chromium
def test_chromium_draws_the_charts_and_runs_nothing_a_learner_wrote(tmp_path: Path) -> None:
    page = tmp_path / "class.html"
    page.write_text(classreport.render(hostile_class()), encoding="utf-8")
    shot = tmp_path / "shot.png"
    browse(page, "--window-size=900,1100", f"--screenshot={shot}")
    width, height, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (900, 1100)
    # Bars are drawn in their colours: passed (2 learners of 13), the watch-out (3), and the
    # histogram. A bar of one learner of 13 is about 27 x 18 pixels.
    assert colour_count(rows, classreport.COLOURS["passed"]) > 500
    assert colour_count(rows, classreport.COLOURS["watch_out"]) > 500
    assert colour_count(rows, classreport.COLOURS["timeout"]) > 200
    assert colour_count(rows, "#2166ac") > 2000
    # The DOM after the page loaded: the learner's <img> and <script> are text, not elements,
    # and the title was not changed by an onerror handler.
    dom = browse(page, "--dump-dom").stdout.decode()
    assert "<img" not in dom and "<script" not in dom
    assert "<title>Class report</title>" in dom
    assert dom.count("<rect") >= 12


def test_the_class_tells_the_graders_errors_from_each_kind_of_the_lessons_own_failure() -> None:
    # Issue 37: every internal result was "grader error", a lesson's own failure included,
    # and a harness's check that a hidden case failed was no bar of its own.
    harness_bug = {
        "status": ERROR,
        "fault": "raised KeyError at harness.py:3 in the harness",
        "lesson_error": "The lesson's harness failed (harness.py, line 3): KeyError: 'y'",
    }
    results = [
        *fails("ann", status=Status.INTERNAL, fault="internal"),
        *fails("bo", status=Status.INTERNAL, lesson_error="reference.py raised ValueError"),
        *fails("cy", **harness_bug),
        *fails("di", status=ERROR, fault="timeout"),
        *fails("ed", status=ERROR, fault="not run"),
        *fails("flo", fault="check parameter-missing", hidden=True),
        *fails("gus", status=ERROR, fault="raised IndexError at solution.py:3"),
        *fails("hal"),
    ]
    lines = classreport.class_lines(results)
    assert lines[2:] == [
        "      1 learner  check: parameter-missing",
        "      1 learner  grader error: the grader itself failed",
        "      1 learner  lesson error: the lesson itself failed",
        "      1 learner  lesson error: the lesson's harness failed",
        "      1 learner  not run (too many timeouts)",
        "      1 learner  raised IndexError",
        "      1 learner  timeout",
        "      1 learner  wrong answer",
    ]
    page = classreport.render(results)

    def colour(label: str) -> str:
        found = re.search(rf'fill="(#[0-9a-f]+)"><title>{re.escape(label)}: 1</title>', page)
        assert found, label
        return found.group(1)

    colours = {
        label: colour(label)
        for label in (
            "grader error: the grader itself failed",
            "lesson error: the lesson itself failed",
            "lesson error: the lesson&#x27;s harness failed",
            "check: parameter-missing",
            "raised IndexError",
        )
    }
    # The grader's own errors have a colour no failure of the lesson or the learner shares.
    grader = colours.pop("grader error: the grader itself failed")
    assert grader not in colours.values()
    assert colours["check: parameter-missing"] != colours["raised IndexError"]
