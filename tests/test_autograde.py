"""CI autograding: points, hidden and generated cases, report dialects, batch grading."""

from __future__ import annotations

import ast
import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest

from helpers import (
    COMBINE_HEADS,
    DOUBLE_RIGHT,
    DOUBLE_TOML,
    NO_TRANSPOSE,
    REFERENCE,
    TRANSPOSE_REFERENCE,
    TRANSPOSE_TOML,
    dedent,
    said,
)

Make = Callable[..., Path]
SCHEMAS = Path(__file__).parent / "schemas"


def validate(report: Path, fmt: str) -> dict[str, Any]:
    data = json.loads(report.read_text())
    schema = json.loads((SCHEMAS / f"{fmt}.schema.json").read_text())
    jsonschema.validate(data, schema)
    return data


POINTS_TOML = DOUBLE_TOML.replace('inputs = ["x"]', 'inputs = ["x"]\npoints = 10').replace(
    'name = "a row"', 'name = "a row"\npoints = 3'
)


@pytest.mark.usefixtures("no_preload")
def test_points_give_partial_credit_scaled_to_the_exercise(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # Case 1 (3 points of 4) fails, case 2 (1 of 4) passes: the exercise is worth 10.
    make_exercise(
        solution=DOUBLE_RIGHT.replace("return [2 * v for v in x]", "return x"), toml=POINTS_TOML
    )
    pytester.runpytest("double", "--lesson-report=out/report.json")
    data = validate(pytester.path / "out/report.json", "json")
    assert data["totals"]["points"] == 2.5 and data["totals"]["max_points"] == 10
    assert [r["max_points"] for r in data["results"]] == [7.5, 2.5]
    assert data["summary"] == "2.5 of 10 points; public cases 1 of 2 passed."


ALL_FORMATS = ("gradescope", "classroom", "exercism", "json")


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_each_report_dialect_matches_its_schema(
    pytester: pytest.Pytester, make_exercise: Make, fmt: str
) -> None:
    make_exercise(
        solution=DOUBLE_RIGHT.replace("return [2 * v for v in x]", "return print('hi') or x")
    )
    make_exercise("broken", toml="[exercise]\ntitle='t'\n")
    result = pytester.runpytest(
        f"--lesson-report=report-{fmt}.json", f"--lesson-report-format={fmt}"
    )
    assert result.ret == 1
    data = validate(pytester.path / f"report-{fmt}.json", fmt)
    if fmt == "gradescope":
        assert data["score"] == 1 and [t["status"] for t in data["tests"]] == [
            "failed",
            "failed",
            "passed",
        ]
        assert data["tests"][0]["name"] == "broken: exercise.toml"
    if fmt == "classroom":
        assert data["status"] == "fail" and data["max_score"] == 2
        assert [t["status"] for t in data["tests"]] == ["error", "fail", "pass"]
        assert (
            data["tests"][1]["line_no"] == 5
            and data["tests"][1]["filename"] == "double/exercise.toml"
        )
    if fmt == "exercism":
        assert data["status"] == "fail"
        assert (
            data["tests"][1]["output"] == "hi\n"
            and "Check your scaling" in data["tests"][1]["message"]
        )
        assert [t["task_id"] for t in data["tests"]] == [1, 2, 2]


@pytest.mark.usefixtures("no_preload")
def test_exercism_output_is_cut_at_500_characters_with_a_notice(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(solution="def solve(x):\n    print('z' * 2000)\n    return x\n")
    pytester.runpytest("double", "--lesson-report=r.json", "--lesson-report-format=exercism")
    data = validate(pytester.path / "r.json", "exercism")
    output = data["tests"][0]["output"]
    assert len(output) == 500
    assert output.endswith("zzz [Output was truncated. Please limit to 500 chars]")


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_the_report_is_written_when_every_case_crashes_or_the_file_is_broken(
    pytester: pytest.Pytester, make_exercise: Make, fmt: str
) -> None:
    make_exercise("broken", toml="[exercise\n")
    result = pytester.runpytest("broken", "--lesson-report=r.json", f"--lesson-report-format={fmt}")
    assert result.ret == 1
    data = validate(pytester.path / "r.json", fmt)
    if fmt in ("classroom", "exercism"):
        assert data["status"] == "error"
    make_exercise("crash", solution="import os\ndef solve(x):\n    os._exit(3)\n")
    result = pytester.runpytest("crash", "--lesson-report=r.json", f"--lesson-report-format={fmt}")
    assert result.ret == 1
    data = validate(pytester.path / "r.json", fmt)
    # Both cases crashed: no points, each case an error of the learner's code, never a pass.
    if fmt == "gradescope":
        assert data["score"] == 0 and [(t["status"], t["score"]) for t in data["tests"]] == [
            ("failed", 0),
            ("failed", 0),
        ]
    if fmt == "classroom":
        assert data["status"] == "fail" and data["max_score"] == 2
        assert [(t["status"], t["score"]) for t in data["tests"]] == [("error", 0), ("error", 0)]
    if fmt == "exercism":
        assert data["status"] == "fail"
        assert [t["status"] for t in data["tests"]] == ["error", "error"]
    if fmt == "json":
        assert (data["totals"]["points"], data["totals"]["max_points"]) == (0, 2)
        assert [r["status"] for r in data["results"]] == ["error", "error"]
        assert data["summary"] == "0 of 2 points; public cases 0 of 2 passed."


@pytest.mark.usefixtures("no_preload")
def test_a_grading_run_that_grades_nothing_does_not_exit_0(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = pytester.runpytest("--lesson-report=r.json")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert json.loads((pytester.path / "r.json").read_text())["totals"]["max_points"] == 0
    assert pytester.runpytest().ret == 0  # without grading, a plain run is as usual


SECRET = ("7777.125", "-3131.5")
HIDDEN_TOML = (
    DOUBLE_TOML
    + f"""
[[case]]
hidden = true
name = "the secret one"
x = [{SECRET[0]}, {SECRET[1]}]
expected = [{float(SECRET[0]) * 2}, {float(SECRET[1]) * 2}]

[[watch_out]]
id = "halved"
mistake = "halve"
message = "multiply by two, do not divide."
"""
)

LEAKY = f"""
import sys

def solve(x):
    print("inputs are", x)
    print("to stderr", x, file=sys.stderr)
    flat = x if not isinstance(x[0], list) else [v for row in x for v in row]
    if {SECRET[0]} in flat:
        raise ValueError(f"leaking {{x}}")
    if isinstance(x[0], list):
        return [[v / 2 for v in row] for row in x]
    return [v / 2 for v in x]
"""


@pytest.mark.usefixtures("no_preload")
def test_hidden_cases_never_show_their_values_anywhere(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_exercise(
        solution=LEAKY,
        toml=HIDDEN_TOML,
        mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n",
    )
    step_summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    outputs = [step_summary]
    texts = []
    for fmt in ALL_FORMATS:
        report = pytester.path / f"{fmt}.json"
        result = pytester.runpytest(
            "double",
            "-rA",
            "-vv",
            f"--lesson-report={report}",
            f"--lesson-report-format={fmt}",
            f"--junitxml={pytester.path / fmt}.xml",
        )
        result.assert_outcomes(failed=3)
        texts += [result.stdout.str(), result.stderr.str()]
        outputs += [report, pytester.path / f"{fmt}.xml"]
    texts += [path.read_text() for path in outputs]
    texts.append(str(sorted(p.name for p in pytester.path.rglob("*"))))
    everything = "\n".join(texts)
    for secret in (*SECRET, "7777", "3131", "15554", "6263"):
        assert secret not in everything
    assert "Hidden case 3 failed: your code raised ValueError in double/solution.py." in everything
    assert "hidden cases 0 of 1 passed" in everything
    assert "Watch out: multiply by two" in everything  # public cases still get their words
    gradescope = json.loads((pytester.path / "gradescope.json").read_text())
    assert gradescope["tests"][2]["visibility"] == "after_published"
    # The hidden case says why it shows so little: in the terminal and in every report.
    notice = "Its inputs and expected answer are not shown: it is a hidden case."
    for text in texts[: 2 * len(ALL_FORMATS) : 2]:
        assert notice in " ".join(text.split())
    for fmt in ("gradescope", "exercism", "json"):  # classroom's message is the headline only
        assert notice in (pytester.path / f"{fmt}.json").read_text()
    assert (folder / "solution.py").read_text() == dedent(LEAKY)


SLEEPY = """
import time

def solve(x):
    flat = x if not isinstance(x[0], list) else [v for row in x for v in row]
    if 7777.125 in flat:  # the hidden case: its time would spell the input's value
        time.sleep(0.7)
    else:
        time.sleep(0.3)
    return [v * 2 for v in x] if not isinstance(x[0], list) else [[v * 2 for v in r] for r in x]
"""


@pytest.mark.usefixtures("no_preload")
def test_a_hidden_case_takes_no_time_in_any_report(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """A red team spelled a hidden input in its case's time (code sleeping for as long as the
    input said): JUnit's time, --durations, the json and Gradescope's totals showed it."""
    make_exercise(
        solution=SLEEPY,
        toml=HIDDEN_TOML,
        mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n",
    )
    result = pytester.runpytest(
        "double", "--durations=0", "--durations-min=0", "--junitxml=junit.xml",
        "--lesson-report=r.json", "--lesson-report-format=json", "--lesson-timeout=30",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "r.json").read_text())
    times = {r["case"]: r["seconds"] for r in report["results"]}
    assert times[3] == 0 and times[1] >= 0.3 and times[2] >= 0.3
    assert report["seconds"] == pytest.approx(times[1] + times[2], abs=0.002)
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    junit = [float(case.get("time", "")) for case in cases]
    assert sorted(junit)[0] == 0 and sorted(junit)[1] >= 0.3
    durations = [line for line in result.outlines if "hidden" in line or "case 3" in line]
    assert not any(re.search(r"0\.[3-9]\d*s", line) for line in durations)
    pytester.runpytest(
        "double", "--lesson-report=g.json", "--lesson-report-format=gradescope",
        "--lesson-timeout=30",
    )  # fmt: skip
    gradescope = json.loads((pytester.path / "g.json").read_text())
    assert gradescope["execution_time"] < 0.6 + 0.3  # the public cases', never the hidden's


#: A hidden case between two public ones, as an author may order them.
HIDDEN_BETWEEN_TOML = """
[exercise]
title = "Double every number"
inputs = ["x"]

[[case]]
x = [1, 2]
expected = [2, 4]

[[case]]
hidden = true
x = [7777.125, 3]
expected = [15554.25, 6]

[[case]]
x = [3, 4]
expected = [6, 8]
"""

CLOCK_READER = """
import time

def solve(x):
    print("clock", time.time())
    if 7777.125 in x:
        time.sleep(1.0)  # the hidden case: the public cases' clocks would show the gap
    print("clock", time.time())
    return [v * 2 for v in x] if not isinstance(x[0], list) else [[v * 2 for v in r] for r in x]
"""


def _printed_clocks(report: Path) -> list[float]:
    """The clocks CLOCK_READER printed in every case of a json report, in the report's order."""
    results = json.loads(report.read_text())["results"]
    return [
        float(line.split()[1])
        for case in results
        for line in (case.get("output") or "").splitlines()
        if line.startswith("clock")
    ]


@pytest.mark.usefixtures("no_preload")
def test_no_learner_code_runs_after_a_hidden_case_to_time_it(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """A red team read a hidden input from the gap between the clocks its public cases
    printed (and from the process ids the hidden case used up): hidden cases now run after
    every other case of the run, of every lesson."""
    make_exercise(solution=CLOCK_READER, toml=HIDDEN_BETWEEN_TOML)
    make_exercise("later", solution=CLOCK_READER, toml=DOUBLE_TOML)
    result = pytester.runpytest(
        "double", "later", "-v", "--lesson-report=r.json", "--lesson-report-format=json"
    )
    result.assert_outcomes(passed=5)
    ran = [line.split()[0] for line in result.outlines if " PASSED" in line]
    assert ran[-1] == "double/exercise.toml::case-2" and len(ran) == 5, ran
    clocks = _printed_clocks(pytester.path / "r.json")
    assert len(clocks) == 8 and max(clocks) - min(clocks) < 1.0, clocks


HALVING_CLOCK_READER = CLOCK_READER.replace("v * 2", "v / 2")


@pytest.mark.usefixtures("no_preload")
def test_a_watch_out_on_a_public_case_never_runs_a_hidden_cases_code_early(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    """Round D: a watch-out's check that the mistake explains the learner's other cases ran
    the hidden case while grading case 1, before case 3, whose clock showed the gap."""
    watch_out = '\n[[watch_out]]\nid = "halved"\nmistake = "halve"\nmessage = "multiply by two."\n'
    make_exercise(
        solution=HALVING_CLOCK_READER,
        toml=HIDDEN_BETWEEN_TOML + watch_out,
        mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n",
    )
    result = pytester.runpytest("double", "--lesson-report=r.json", "--lesson-report-format=json")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*Watch out: multiply by two.*"])
    clocks = _printed_clocks(pytester.path / "r.json")
    assert len(clocks) == 4 and max(clocks) - min(clocks) < 1.0, clocks


@pytest.mark.usefixtures("no_preload")
def test_a_hidden_case_shows_a_watch_out_that_carries_no_values(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        solution="def solve(x):\n    return [v / 2 for v in x] if not isinstance(x[0], list) else x\n",
        toml=HIDDEN_TOML,
        mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n",
    )
    result = pytester.runpytest("double")
    text = said(result)
    assert (
        "Hidden case 3 failed: your answer is wrong. Watch out: multiply by two, do not divide."
        in text
    )
    assert "Its inputs and expected answer are not shown: it is a hidden case." in text
    assert SECRET[0] not in text


GENERATED_TOML = (
    TRANSPOSE_TOML
    + """
[generate]
count = 5
seed = 11
values = [-9, 9]
decimals = 0

[generate.axes]
rows = [2, 5]
cols = [2, 5]

[generate.inputs]
m = ["rows", "cols"]
"""
)


@pytest.mark.usefixtures("no_preload")
def test_generated_cases_are_the_same_for_the_same_seed(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(
        "t", solution=TRANSPOSE_REFERENCE, toml=GENERATED_TOML, reference__py=TRANSPOSE_REFERENCE
    )
    calls = []
    for _ in range(2):
        pytester.runpytest("t", "--lesson-report=r.json").assert_outcomes(passed=6)
        calls.append(
            [r["call"] for r in json.loads((pytester.path / "r.json").read_text())["results"]]
        )
    assert calls[0] == calls[1] and len(set(calls[0])) == 6
    from pytest_lessons.core import model

    for case in model.load(pytester.path / "t" / "exercise.toml").cases[1:]:
        assert case.sizes is not None and case.sizes["rows"] != case.sizes["cols"]
    other = GENERATED_TOML.replace("seed = 11", "seed = 12")
    make_exercise("t", solution=TRANSPOSE_REFERENCE, toml=other, reference__py=TRANSPOSE_REFERENCE)
    pytester.runpytest("t", "--lesson-report=r.json")
    assert [
        r["call"] for r in json.loads((pytester.path / "r.json").read_text())["results"]
    ] != calls[0]


@pytest.mark.usefixtures("no_preload")
def test_a_solution_that_hard_codes_the_visible_answers_fails_the_generated_cases(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    folder = make_exercise(
        "t", solution=TRANSPOSE_REFERENCE, toml=GENERATED_TOML, reference__py=TRANSPOSE_REFERENCE
    )
    from pytest_lessons.core import model

    # The visible cases' answers, copied into the code by hand (reading exercise.toml while
    # graded is refused by the sandbox).
    table = {
        json.dumps(c.inputs["m"]): c.expected
        for c in model.load(folder / "exercise.toml").cases
        if not c.generated
    }
    cheat = f"import json\nTABLE = {table!r}\n\ndef solve(m):\n    return TABLE.get(json.dumps(m), [[0]])\n"
    (folder / "solution.py").write_text(cheat)
    result = pytester.runpytest("t")
    result.assert_outcomes(passed=1, failed=5)


@pytest.mark.usefixtures("no_preload")
def test_a_failing_generated_case_is_shrunk_to_a_small_input(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # Wrong only on inputs with a value above 5: the smallest failing input keeps one.
    buggy = "def solve(m):\n    return [[min(v, 5) for v in col] for col in zip(*m)]\n"
    make_exercise("t", solution=buggy, toml=GENERATED_TOML, reference__py=TRANSPOSE_REFERENCE)
    result = pytester.runpytest("t")
    text = result.stdout.str()
    assert text.count("A smaller input that fails the same way (rows 2, cols ") == 1
    shown = [line for line in text.splitlines() if line.startswith("    m = ")]
    assert shown and all(len(line) < 60 for line in shown)
    smaller = ast.literal_eval(shown[-1].split(" = ", 1)[1])
    # Still fails the same way: two rows, and a value above 5 for the bug to clip.
    assert len(smaller) == 2 and max(abs(v) for row in smaller for v in row) > 5
    assert "A smaller input that fails is shown under case" in said(result)


@pytest.mark.usefixtures("no_preload")
def test_hidden_generated_cases_show_no_smaller_input(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    buggy = "def solve(m):\n    return [[min(v, 5) for v in col] for col in zip(*m)]\n"
    toml = GENERATED_TOML.replace("decimals = 0", "decimals = 0\nhidden = true")
    make_exercise("t", solution=buggy, toml=toml, reference__py=TRANSPOSE_REFERENCE)
    result = pytester.runpytest("t", "--lesson-report=r.json")
    text = result.stdout.str() + (pytester.path / "r.json").read_text()
    assert "Hidden case 2 failed" in text or "Hidden case 3 failed" in text
    assert "A smaller input" not in text
    from pytest_lessons.core import model

    for case in model.load(pytester.path / "t" / "exercise.toml").cases[1:]:
        assert str(case.inputs["m"][0]) not in text


def test_combine_heads_generated_cases_catch_a_memorised_solution(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    from pytest_lessons.core import model

    seed = model.load(COMBINE_HEADS / "exercise.toml")
    table = {
        json.dumps([c.inputs[n] for n in "QKV"]): c.expected for c in seed.cases if not c.generated
    }
    combine_heads(
        f"import json\nTABLE = {table!r}\n\ndef solve(Q, K, V):\n    return TABLE.get(json.dumps([Q, K, V]), [[0]])\n"
    )
    result = pytester.runpytest("combine_heads")
    result.assert_outcomes(passed=4, failed=6)
    for case in seed.cases:
        if case.generated:
            assert case.sizes is not None and len(set(case.sizes.values())) == 3


# --- a class --------------------------------------------------------------------------------

CLASS = {
    "ada": REFERENCE,
    "bo": REFERENCE,
    "cy": REFERENCE,
    "di": NO_TRANSPOSE,
    "ed": NO_TRANSPOSE,
    "flo": NO_TRANSPOSE,
    "gus": (COMBINE_HEADS / "mistakes.py").read_text() + "\nsolve = with_causal_mask\n",
    "hal": (COMBINE_HEADS / "mistakes.py").read_text() + "\nsolve = with_causal_mask\n",
    "ivy": "def solve(Q, K, V):\n    raise NotImplementedError\n",
    "jo": "import sys\ndef solve(Q, K, V):\n    sys.exit(1)\n",
    "kim": None,  # handed in nothing for this exercise
}


def make_class(root: Path) -> Path:
    submissions = root / "class"
    for learner, code in CLASS.items():
        folder = submissions / learner
        folder.mkdir(parents=True)
        # Files that must never be loaded from a submission.
        (folder / "conftest.py").write_text(
            f"open({str(root / f'LOADED-{learner}')!r}, 'w').close()\n"
        )
        (folder / "pytest.ini").write_text("[pytest]\naddopts = --this-option-does-not-exist\n")
        if code is None:
            continue
        (folder / "combine_heads").mkdir()
        (folder / "combine_heads" / "solution.py").write_text(dedent(code))
        (folder / "combine_heads" / "conftest.py").write_text("raise SystemExit('never loaded')\n")
    return submissions


def gradebook(path: Path) -> dict[str, tuple[str, str]]:
    with path.open() as handle:
        return {
            row["learner"]: (row["points"], row["max_points"]) for row in csv.DictReader(handle)
        }


def test_batch_grading_a_class(pytester: pytest.Pytester, combine_heads: Make) -> None:
    combine_heads()
    submissions = make_class(pytester.path)
    result = pytester.runpytest(
        "combine_heads",
        f"--lesson-submissions={submissions}",
        "--lesson-gradebook=out/grades.csv",
        "--lesson-report=out/report.json",
        "--lesson-show-failures",
    )
    assert result.ret == 1
    assert not list(pytester.path.glob("LOADED-*"))
    book = gradebook(pytester.path / "out/grades.csv")
    assert set(book) == set(CLASS)
    for learner in ("ada", "bo", "cy"):
        assert book[learner] == ("10", "10")
    for learner in ("di", "ed", "flo"):
        assert book[learner] == ("2", "10")
    for learner in ("ivy", "jo", "kim"):
        assert book[learner] == ("0", "10")
    report = json.loads((pytester.path / "out/report.json").read_text())
    assert report["mistakes"]["combine_heads"]["missing-transpose"] == 3
    assert report["mistakes"]["combine_heads"]["causal-mask"] == 2
    result.stdout.fnmatch_lines(
        [
            "*lessons: the class*",
            "11 learners",
            "combine_heads: 3 of 11 passed, mean * of 10 points",
            "      3 learners  watch out: missing-transpose",
            "      2 learners  watch out: causal-mask",
        ]
    )
    text = said(result)
    assert "kim: combine_heads: case 1 (worked example)" in text and "Create " in text


def test_batch_grading_under_xdist_equals_serial(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads()
    submissions = make_class(pytester.path)
    runs = {}
    for name, extra in (("serial", []), ("parallel", ["-n", "2"])):
        pytester.runpytest(
            "combine_heads",
            f"--lesson-submissions={submissions}",
            f"--lesson-gradebook={name}.csv",
            f"--lesson-report={name}.json",
            *extra,
        )
        report = json.loads((pytester.path / f"{name}.json").read_text())
        for r in report["results"]:
            r.pop("seconds")
        runs[name] = (
            (pytester.path / f"{name}.csv").read_text(),
            report["results"],
            report["mistakes"],
        )
    assert runs["serial"] == runs["parallel"]


@pytest.mark.usefixtures("no_preload")
def test_junitxml_properties_and_the_github_step_summary(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_exercise(
        solution="def solve(x):\n    return [v / 2 for v in x] if not isinstance(x[0], list) else x\n",
        toml=HIDDEN_TOML,
        mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n",
    )
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.runpytest("double", "--junitxml=junit.xml")
    root = ET.parse(pytester.path / "junit.xml").getroot()
    assert all(case.find("properties") is None for case in root.iter("testcase"))
    suite = {p.get("name"): p.get("value") for p in root.iter("property")}
    first = json.loads(suite["lessons:double/exercise.toml::case-1-a-row"])
    assert first == {"exercise": "double", "max_points": 1.0, "points": 0.0, "watch_out": "halved"}
    assert "watch_out" not in json.loads(suite["lessons:double/exercise.toml::case-2"])
    text = summary.read_text()
    assert "| double | 0 / 3 |" in text and "Watch out: multiply by two" in text


# --- the lesson's own code failing -----------------------------------------------------------

TALL_FAILS = (
    "def solve(m):\n"
    "    if len(m) > 3:\n"
    "        raise ValueError('the reference only handles short inputs')\n"
    "    return [list(col) for col in zip(*m)]\n"
)


@pytest.mark.usefixtures("no_preload")
def test_a_reference_that_fails_on_a_generated_case_makes_it_internal_not_passed(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    from pytest_lessons.core import model

    make_exercise("t", solution=TRANSPOSE_REFERENCE, toml=GENERATED_TOML, reference__py=TALL_FAILS)
    tall = [
        c.number
        for c in model.load(pytester.path / "t" / "exercise.toml").cases
        if c.generated and len(c.inputs["m"]) > 3
    ]
    assert tall and len(tall) < 5  # the seed draws both kinds of generated case
    result = pytester.runpytest("t", "--lesson-report=r.json")
    result.assert_outcomes(passed=6 - len(tall), failed=len(tall))
    assert result.ret == 1
    results = json.loads((pytester.path / "r.json").read_text())["results"]
    statuses = {r["call"]: r["status"] for r in results}
    assert [r["status"] for r in results if r["status"] != "passed"] == ["internal"] * len(tall)
    assert sum(r["points"] for r in results) == 6 - len(tall)
    assert len(statuses) == 6
    # The learner is told what to do, neutrally, without the lesson's traceback (issue 22) ...
    neutral = (
        "Tell your instructor that this case cannot be graded: the lesson itself failed on "
        "it, not your code."
    )
    assert neutral in said(result)
    assert "ValueError" not in result.stdout.str()
    failing = [r for r in results if r["status"] == "internal"]
    assert all(r["headline"].startswith(neutral) for r in failing)
    assert not any("reference" in r["message"] for r in failing)
    # ... the author gets the exception, the file and line and the inputs: in the json
    # report and with -vv.
    why = (
        "solve raised ValueError at line 3 of reference.py: the reference only handles "
        "short inputs."
    )
    assert all(r["lesson_error"].startswith(why) for r in failing)
    assert all("  inputs     m = [[" in r["lesson_error"] for r in failing)
    verbose = said(pytester.runpytest("t", "-vv"))
    assert f"For the lesson's author (-vv): {why}" in verbose
    assert "t/reference.py, line 3, in solve raise ValueError(" in verbose


@pytest.mark.usefixtures("no_preload")
def test_the_lesson_check_names_each_generated_case_the_reference_fails(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    from pytest_lessons.core import model

    make_exercise(
        "t",
        solution="def solve(m):\n    raise NotImplementedError\n",
        toml=GENERATED_TOML,
        reference__py=TALL_FAILS,
    )
    tall = [
        c.number
        for c in model.load(pytester.path / "t" / "exercise.toml").cases
        if c.generated and len(c.inputs["m"]) > 3
    ]
    result = pytester.runpytest("--lesson-check", "t")
    result.assert_outcomes(failed=1)
    text = said(result)
    assert f"Fix the lesson t: {len(tall)} problem" in text
    # The author's file and line, the exception and the inputs, never "your code" (issue 22).
    assert "your code" not in text
    assert text.count("the reference fails case") == len(tall)
    assert (
        f"t: the reference fails case {tall[0]}: solve raised ValueError at line 3 of "
        "reference.py: the reference only handles short inputs. Inputs: m = [[" in text
    )
    make_exercise(
        "t",
        solution="def solve(m):\n    raise NotImplementedError\n",
        toml=GENERATED_TOML,
        reference__py=TRANSPOSE_REFERENCE,
    )
    pytester.runpytest("--lesson-check", "t").assert_outcomes(passed=1)


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("visibility", ["hidden", "after_due_date", "after_published", "visible"])
def test_gradescope_gives_hidden_cases_the_visibility_asked_for(
    pytester: pytest.Pytester, make_exercise: Make, visibility: str
) -> None:
    make_exercise(toml=HIDDEN_TOML, mistakes__py="def halve(x):\n    return [v / 2 for v in x]\n")
    pytester.runpytest(
        "double",
        "--lesson-report=g.json",
        "--lesson-report-format=gradescope",
        f"--lesson-hidden-visibility={visibility}",
    ).assert_outcomes(passed=3)
    data = validate(pytester.path / "g.json", "gradescope")
    assert [t["visibility"] for t in data["tests"]] == ["visible", "visible", visibility]
    assert data["visibility"] == "visible"


@pytest.mark.usefixtures("no_preload")
def test_a_report_that_cannot_be_written_ends_the_run_as_an_error_not_a_failed_case(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    make_exercise(solution="def solve(x):\n    return x\n")
    (pytester.path / "out").write_text("a file where the report's folder should be")
    result = pytester.runpytest("--lesson-report=out/report.json", "double")
    # Exit 1 would read as "graded, a case failed" to the recipes, which then post no score;
    # 10 is none of pytest's own statuses (docs/ci-grading.md).
    assert result.ret == 10
    result.stdout.fnmatch_lines(
        [
            "*lessons: ERROR: fix the output path, then grade again: *out/report.json could not "
            "be written (*); every other file was written (exit status 10)."
        ]
    )
