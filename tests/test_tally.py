"""A planned shard's tally (``--lesson-tally``): the merge adds the shards' tallies up instead
of reading every case of their json reports, and writes the gradebook, the class report and
the terminal's lines byte for byte as one run of the class writes them; it checks each tally
against the plan as it checks a report, and refuses one it cannot read.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons import __main__ as command
from pytest_lessons.core.plan import Plan
from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.reports import formats, tallyfile
from pytest_lessons.reports.classreport import class_lines
from pytest_lessons.reports.outputs import Outputs, write

from helpers import DOUBLE_RIGHT, case_result
from helpers.recipes import container_class

#: Names a class may hold: accents, a space and its underscore twin, a formula, markup.
LEARNERS = ("ada", "bo", "cy", "dé", "e f", "e_f", "=x", "<b>z", "zed", "ñu")

#: (outcome, what the result holds) of a failing case: every bar the class report draws.
FAILURES: tuple[dict[str, Any], ...] = (
    {"status": "failed", "diagnosis": "missing-transpose", "diagnosis_kind": "watch_out"},
    {"status": "error", "fault": "raised NotImplementedError at solution.py:12"},
    {"status": "error", "fault": "setup missing_file"},
    {"status": "error", "fault": "raised IndexError at solution.py:18"},
    {"status": "error", "fault": "returned a tensor"},
    {"status": "error", "fault": "timeout"},
    {"status": "failed", "diagnosis": "ones", "diagnosis_kind": "detector"},
    {"status": "failed"},
)


def a_class() -> list[CaseResult]:
    """Ten learners' results on three exercises (points 1, 2.5 and 0.25 a case; a hidden
    case each; one learner without one exercise), each learner failing in their own way."""
    results = []
    lessons = (("alpha", 3, 1.0), ("beta", 2, 2.5), ("gamma", 4, 0.25))
    for n, who in enumerate(LEARNERS):
        for m, (exercise, cases, points) in enumerate(lessons):
            if (n, m) == (7, 2):
                continue  # no result at all for this one
            failure = FAILURES[(n + 2 * m) % len(FAILURES)] if (n + m) % 3 else None
            for case in range(1, cases + 1):
                hidden = case == cases
                fails = failure is not None and (case % 2 == 1 or failure.get("fault"))
                changes: dict[str, Any] = {
                    "exercise": exercise,
                    "title": exercise.capitalize(),
                    "learner": who,
                    "cases": cases,
                    "id": f"case-{case}",
                    "hidden": hidden,
                    "max_points": points,
                    "seconds": 0.013 * (n + 1) * case + 0.0007 * m,
                }
                if fails:
                    assert failure is not None
                    changes.update(failure)
                    if hidden and changes["status"] == "error":
                        changes["fault"] = ""  # a hidden case keeps its fault to itself
                results.append(case_result(case, not fails, **changes))
    return results


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def one_run(
    results: list[CaseResult], plan: Plan, where: Path
) -> tuple[list[str], dict[str, bytes]]:
    """What one run of the class prints about it and writes (the gradebook, the class report)."""
    outputs = Outputs(
        gradebook="out/grades.csv", gradebook_format="wide", class_report="out/class.html"
    )
    write(outputs, results, 1.0, where, plan.whole(), ("alpha", "beta", "gamma"))
    lines = [*class_lines(results, ("alpha", "beta", "gamma")), formats.summary_text(results)]
    return lines, files(where / "out")


def shards(results: list[CaseResult], plan: Plan, folder: Path) -> tuple[list[Path], list[Path]]:
    """Each shard's json report and tally, as a planned shard writes them."""
    folder.mkdir()
    reports, tallies = [], []
    for k in range(1, plan.total + 1):
        mine = [r for r in results if r.learner in plan.members(k)]
        table = plan.roll(k).table()
        order = ("alpha", "beta", "gamma")
        report = folder / f"shard-{k - 1}.json"
        report.write_bytes(
            formats.encoded(formats.json_text(formats.full(mine, 1.0, order, table)))
        )
        tally = folder / f"shard-{k - 1}.tally"
        tally.write_bytes(tallyfile.text(tallyfile.shard_tally(mine, 1.0, order, table)))
        reports.append(report)
        tallies.append(tally)
    return reports, tallies


def merge(where: Path, *args: str | Path) -> tuple[int, str, str]:
    """The merge command in this process, in *where*: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    before = Path.cwd()
    os.chdir(where)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = command.main(["merge", *map(str, args)])
    finally:
        os.chdir(before)
    return status, out.getvalue(), err.getvalue()


def test_a_merge_of_the_shards_tallies_writes_one_runs_files_byte_for_byte(tmp_path: Path) -> None:
    results = a_class()
    plan = Plan.split(Roll(LEARNERS), 3)
    (tmp_path / "plan.json").write_text(plan.text())
    lines, expected = one_run(results, plan, tmp_path / "one")
    reports, tallies = shards(results, plan, tmp_path / "shards")
    outputs = (
        "--gradebook=out/grades.csv",
        "--gradebook-format=wide",
        "--class-report=out/class.html",
    )
    # The tallies, the reports (each made a tally as it is read), and one of each mixed.
    for name, given in (
        ("tallies", tallies),
        ("reports", reports),
        ("mixed", [tallies[2], reports[0], tallies[1]]),
    ):
        where = tmp_path / name
        where.mkdir()
        status, out, err = merge(where, "--plan=../plan.json", *given, *outputs)
        assert (status, err) == (1, ""), name
        assert out.splitlines()[: len(lines)] == lines, name
        assert files(where / "out") == expected, name
    # Each shard's tally is a small part of its report.
    assert sum(p.stat().st_size for p in tallies) < sum(p.stat().st_size for p in reports) / 3


def test_the_merge_checks_each_tally_against_the_plan_as_it_checks_a_report(tmp_path: Path) -> None:
    results = a_class()
    plan = Plan.split(Roll(LEARNERS), 3)
    (tmp_path / "plan.json").write_text(plan.text())
    _, (one, two, three) = shards(results, plan, tmp_path / "shards")
    book = "--gradebook=out/grades.csv"
    missing = merge(tmp_path, "--plan=plan.json", one, three, book)
    assert missing[0] == 2 and not (tmp_path / "out").exists()
    assert missing[2].startswith("merge: shard 2/3 is missing (its ")
    allowed = merge(tmp_path, "--plan=plan.json", one, three, "--allow-missing", book)
    assert allowed[0] == 1 and "NOT GRADED: " in allowed[1]
    assert (
        "not graded: shard 2/3 is missing from the merge"
        in (tmp_path / "out/grades.csv").read_text()
    )
    twice = merge(tmp_path, "--plan=plan.json", one, one, two, three)
    assert twice[0] == 2 and f"{one} and {one} are both shard 1/3: give each shard once" in twice[2]
    other = Plan.split(Roll((*LEARNERS, "zz")), 3)
    (tmp_path / "other.json").write_text(other.text())
    foreign = merge(tmp_path, "--plan=other.json", one, two, three)
    assert foreign[0] == 2 and f"{one} was graded from another plan ({plan.id})" in foreign[2]
    assert "give the plan its shards were graded from" in merge(tmp_path, one, two, three)[2]

    def altered(change: Any) -> tuple[int, str, str]:
        data = json.loads(one.read_text(encoding="utf-8"))
        change(data)
        fake = tmp_path / "fake.tally"
        fake.write_text(json.dumps(data), encoding="utf-8")
        return merge(tmp_path, "--plan=plan.json", fake, two, three, book)

    relabelled = altered(lambda d: d["class"].update(shard="2/3"))
    assert relabelled[0] == 2
    assert "fake.tally (shard 2/3) graded " in relabelled[2]
    assert "whom the plan does not put in shard 2: give the shards of this plan" in relabelled[2]
    lost = altered(lambda d: d.update(rows=d["rows"][3:]))
    assert lost[0] == 2 and "has no result for 1 of its" in lost[2]
    # A tally that is not one a shard writes: refused, naming it, whatever field is wrong.
    for change in (
        lambda d: d["rows"][0].__setitem__(4, -1.0),  # negative points
        lambda d: d["rows"][0].__setitem__(4, 0.1),  # points finer than its grain
        lambda d: d["rows"][0].__setitem__(4, "1"),
        lambda d: d["rows"][0].__setitem__(8, [99]),  # an outcome it does not hold
        lambda d: d["rows"][0].pop(),
        lambda d: d["rows"].append(d["rows"][0]),  # a learner's exercise twice
        lambda d: d["counts"].__setitem__("cases", -3),
        lambda d: d["cases"][0].__setitem__(0, "/elsewhere/exercise.toml"),
        lambda d: d.update(version=2),
        lambda d: d.update(rows={}),
    ):
        status, out, err = altered(change)
        assert status == 2 and out == "", err
        assert "fake.tally is not a tally pytest-lessons can read (" in err
        assert "grade the shard again, or merge the shard's json report instead" in err
    # A tally holds no case's texts: the files that show them need the reports.
    texts = merge(tmp_path, "--plan=plan.json", one, two, three, "--feedback=out/feedback")
    assert texts[0] == 2 and "is a shard's tally: give the shards' json reports instead" in texts[2]


def test_points_no_tally_adds_up_exactly_are_merged_from_the_reports(tmp_path: Path) -> None:
    results = [
        case_result(case, case != 2, learner=who, max_points=0.1, id=f"case-{case}")
        for who in LEARNERS
        for case in (1, 2, 3)
    ]
    with pytest.raises(tallyfile.TallyError, match=r"not a multiple of 2\*\*-20"):
        tallyfile.shard_tally(results, 1.0, (), {})
    plan = Plan.split(Roll(LEARNERS), 3)
    (tmp_path / "plan.json").write_text(plan.text())
    _, expected = one_run(results, plan, tmp_path / "one")
    folder = tmp_path / "shards"
    folder.mkdir()
    reports = []
    for k in range(1, 4):
        mine = [r for r in results if r.learner in plan.members(k)]
        report = formats.full(mine, 1.0, ("combine",), plan.roll(k).table())
        reports.append(folder / f"shard-{k}.json")
        reports[-1].write_text(formats.json_text(report), encoding="utf-8")
    status, _, err = merge(
        tmp_path,
        "--plan=plan.json",
        *reports,
        "--gradebook=out/grades.csv",
        "--gradebook-format=wide",
        "--class-report=out/class.html",
    )
    assert (status, err) == (1, "")
    assert files(tmp_path / "out") == expected


STUB = "def solve(x):\n    raise NotImplementedError\n"


def test_planned_shards_write_their_tallies_and_their_merge_is_the_reports_merge(
    pytester: pytest.Pytester, make_exercise: Callable[..., Path]
) -> None:
    make_exercise()
    for n, code in enumerate(
        [DOUBLE_RIGHT, STUB, None, DOUBLE_RIGHT, "def solve(x):\n    return x\n"]
    ):
        folder = pytester.path / "submissions" / f"l{n}"
        folder.mkdir(parents=True)
        if code is not None:
            (folder / "double").mkdir()
            (folder / "double" / "solution.py").write_text(code)
    assert (
        command.main(
            [
                "plan",
                str(pytester.path / "submissions"),
                "--shards=2",
                f"--output={pytester.path / 'plan.json'}",
            ]
        )
        == 0
    )
    grade = ("double", "--lesson-submissions=submissions", "--lesson-plan=plan.json")
    for index in (0, 1):
        done = pytester.runpytest(
            *grade,
            f"--lesson-shard-index={index}",
            f"--lesson-report=shards/shard-{index}.json",
            f"--lesson-tally=tallies/shard-{index}.tally",
        )
        assert done.ret == 1
        done.stdout.fnmatch_lines([f"tally: *tallies/shard-{index}.tally"])
    outputs = ("--gradebook-format=wide", "--class-report=class.html", "--gradebook=grades.csv")
    printed: dict[str, str] = {}
    for name, given in (("tallies", "tallies/shard-{}.tally"), ("reports", "shards/shard-{}.json")):
        (pytester.path / f"from-{name}").mkdir()
        status, printed[name], err = merge(
            pytester.path / f"from-{name}",
            "--plan=../plan.json",
            *(f"../{given.format(i)}" for i in (0, 1)),
            *outputs,
        )
        assert (status, err) == (1, ""), name
    assert files(pytester.path / "from-tallies") == files(pytester.path / "from-reports")
    assert printed["tallies"].startswith("5 learners\n")
    assert printed["tallies"].replace("tallies/", "reports/") == printed["reports"]
    one = pytester.runpytest(
        *grade[:2], "--lesson-gradebook=one.csv", "--lesson-gradebook-format=wide"
    )
    assert one.ret == 1
    assert (pytester.path / "one.csv").read_bytes() == (
        pytester.path / "from-tallies" / "grades.csv"
    ).read_bytes()
    # A tally without its plan, or without the json report it is made from, is refused.
    wrong = pytester.runpytest(*grade[:2], "--lesson-tally=t.tally")
    wrong.stderr.fnmatch_lines(
        ["*Give --lesson-tally with --lesson-plan and --lesson-shard-index*"]
    )
    wrong = pytester.runpytest(*grade, "--lesson-shard-index=0", "--lesson-tally=t.tally")
    wrong.stderr.fnmatch_lines(["*Give --lesson-report=PATH (the json format*"])


CONTAINER = Path(__file__).resolve().parent.parent / "docs" / "recipes" / "container"


@pytest.mark.slow
@pytest.mark.usefixtures("no_preload")
def test_the_recipes_merge_adds_up_the_shards_tallies_unless_it_needs_every_case(
    tmp_path: Path,
) -> None:
    _, work, env = container_class(tmp_path, [DOUBLE_RIGHT, STUB, None, DOUBLE_RIGHT])

    def run(*argv: str, **more: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["sh", *argv],
            cwd=work,
            env={**env, **more},
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
        return done

    run(str(CONTAINER / "lessons-plan"), "2")
    for index in ("0", "1"):
        run(str(CONTAINER / "lessons-shard"), index)
    assert sorted(p.name for p in (work / "tallies").iterdir()) == [
        "shard-0.tally",
        "shard-1.tally",
    ]
    # The merge reads no report it has a tally for: a report left unreadable is not noticed.
    report = work / "shards" / "shard-1.json"
    kept = report.read_bytes()
    report.write_text("not json")
    tallied = run(str(CONTAINER / "lessons-merge"))
    report.write_bytes(kept)
    assert "4 learners" in tallied.stdout
    from_tallies = files(work / "out")
    # With --report the merge needs every case: it reads the reports, and writes the same.
    reported = run(
        str(CONTAINER / "lessons-merge"), LESSONS_MERGE_OPTIONS="--report=out/class.json"
    )
    assert reported.stdout.startswith(tallied.stdout.split("gradebook:")[0])
    assert {k: v for k, v in files(work / "out").items() if k != "class.json"} == from_tallies
