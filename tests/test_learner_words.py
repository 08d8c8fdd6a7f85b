"""What a new learner and an instructor read, item by item of issue 37 ("Tried as a new learner
and instructor would"): each test names its item and fails without its fix.

Through the core with the fake runner, the child's own functions in this process, and the
reports' renderers on typed results; no process is started here."""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import detectors, generate, kinds, randomness, settings, summary, texts
from pytest_lessons.core import model as lesson_model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.compare import compare_outputs, read_numbers
from pytest_lessons.core.fit import axis_sizes
from pytest_lessons.core.grader import Grader
from pytest_lessons.core.results import Status
from pytest_lessons.core.submissions import handed_in
from pytest_lessons.core.words import first_sentence, float_text, fmt_number
from pytest_lessons.isolation.child import run_case
from pytest_lessons.isolation.outcome import Frame, Outcome
from pytest_lessons.isolation.runner import Job, Runner, read_source
from pytest_lessons.notebook.kernel import Lessons
from pytest_lessons.notebook.pytest_files import cache_of
from pytest_lessons.reports import classreport, feedback_files

from helpers import case_result, grader, lesson

CLASS_TOML = """
[exercise]
title = "A norm"
entry = "LayerNorm"
harness = "harness.py"
inputs = ["x", "weight", "bias", "eps"]

[[case]]
x = [1, 2]
weight = [1, 1]
bias = [0, 0]
eps = 0.1
expected = [0, 0]
"""


def context(**changes: Any) -> texts.Context:
    fields: dict[str, Any] = {
        "slug": "norm",
        "entry": "LayerNorm",
        "solution": Path("/course/norm/solution.py"),
        "inputs": {"x": [1, 2], "weight": [1, 1], "bias": [0, 0], "eps": 0.1},
        "timeout": 10.0,
        "memory_mb": 2048.0,
        "show": lambda path: str(path).replace("/course/", ""),
    }
    fields.update(changes)
    return texts.Context(**fields)


def test_2_a_class_lesson_asks_for_its_class_never_a_call_of_the_inputs(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, CLASS_TOML, **{"harness.py": "def drive(learner, *a):\n    0\n"})
    grade, _ = grader({})  # no code: the file is missing
    headline = grade.grade(Attempt(exercise, exercise.cases[0])).result.headline
    assert headline == (
        "Create solution.py and write a class LayerNorm (as the task describes) in it: the "
        "exercise looks for your code in that file."
    )
    no_entry = Outcome("setup", error_type="no_entry", names=("Norm",))
    said = texts.describe_error(no_entry, context(harness=True)).headline
    assert said == (
        "Define a class named LayerNorm in norm/solution.py: the lesson builds and drives it, "
        "and the file defines Norm."
    )


LIBRARY = '''
def gpt_forward(idx, weights, config):
    """idx: ids [B, T], a list of rows."""
    T = len(idx[0])
    return T
'''


def test_3_an_error_inside_the_course_library_shows_its_line_and_the_learners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run_case runs here, in the test's process: a course_lib another test of this worker
    # imported (the docs' examples import the course's) would be found instead of this one.
    for name in [m for m in sys.modules if m.split(".")[0] == "course_lib"]:
        monkeypatch.delitem(sys.modules, name)
    solution = str(tmp_path / "greedy" / "solution.py")
    source = (
        "from course_lib import gpt_forward\n\n\ndef solve(ids):\n"
        "    return gpt_forward(ids, 0, 0)\n"
    )
    library = {
        "package": "course_lib",
        "modules": [["course_lib", "/course/course_lib/__init__.py", LIBRARY]],
        "own": [],
    }
    request = {
        "solution": solution,
        "folder": str(tmp_path / "greedy"),
        "entry": "solve",
        "inputs": [[1, 2, 3]],  # one row where rows are asked for
        "source": base64.b64encode(source.encode()).decode(),
        "library": library,
    }
    try:
        outcome = Outcome.from_dict(run_case(request))
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "course_lib"]:
            del sys.modules[name]
    assert [(Path(f.file).name, f.line, f.library) for f in outcome.frames] == [
        ("solution.py", 5, False),
        ("__init__.py", 4, True),
    ]
    failure = texts.describe_error(outcome, context(entry="solve", solution=Path(solution)))
    assert failure.headline == (
        "solve raised TypeError in the course library's gpt_forward, called at line 5 of "
        "solution.py: object of type 'int' has no len()."
    )
    text = failure.render()
    assert "course_lib/__init__.py, line 4, in gpt_forward\n      T = len(idx[0])" in text
    assert "check what line 5 passes to it (each argument's type and shape)" in " ".join(
        text.split()
    )


def test_5_a_solution_handed_in_as_Solution_py_is_graded_and_other_names_are_named(
    tmp_path: Path,
) -> None:
    learner = tmp_path / "ann"
    (learner / "Split_Heads").mkdir(parents=True)
    (learner / "Split_Heads" / "Solution.py").write_text("def solve(x):\n    return x\n")
    # As on macOS and Windows: the one name that differs only in case is the learner's file.
    found = handed_in(learner, Path("split_heads") / "solution.py")
    assert found == learner / "Split_Heads" / "Solution.py"
    other = tmp_path / "bo" / "split_heads"
    other.mkdir(parents=True)
    (other / "solutions.py").write_text("def solve(x):\n    return x\n")
    (other / "notes.txt").write_text("")
    job = Job(other / "solution.py", "solve", [], 10.0, 100.0, 1000, 1, beneath=tmp_path / "bo")
    outcome = read_source(job)
    assert isinstance(outcome, Outcome)
    assert (outcome.error_type, outcome.details) == ("misnamed", {"found": ["solutions.py"]})
    said = texts.describe_error(
        outcome, context(entry="solve", solution=other / "solution.py", show=lambda p: "x")
    ).headline
    assert said == (
        "Rename solutions.py to solution.py: the exercise reads your code from x only, and "
        "that folder holds solutions.py instead."
    )


DOUBLE = """
[exercise]
title = "Double"
inputs = ["x"]

[[case]]
x = [1, 2]
expected = [2, 4]

[[case]]
x = [3]
expected = [6]
"""


def _feedback(tmp_path: Path, code: Any, learner: str = "ann", toml: str = DOUBLE) -> str:
    exercise = lesson(tmp_path, toml)
    grade, _ = grader({("solution.py", "solve"): code})
    results = [
        grade.grade(Attempt(exercise, case, learner=learner)).result for case in exercise.cases
    ]
    return feedback_files.feedback(learner, results, {str(exercise.path): []})


def test_4_a_feedback_file_gives_a_syntax_errors_line_and_pythons_words(tmp_path: Path) -> None:
    syntax = Outcome(
        "raised",
        error_type="SyntaxError",
        message="'(' was never closed",
        phase="import",
        frames=(Frame("/x/solution.py", 7, "", "    return (x"),),
    )
    text = _feedback(tmp_path, lambda x: syntax)
    assert (
        "- cases 1, 2 (0 of 2 points): Fix the syntax error in solution.py: Python cannot read "
        "line 7 (SyntaxError: '(' was never closed)."
    ) in text


def test_11_a_feedback_file_says_one_words_once_and_float32_values_as_float32_writes_them(
    tmp_path: Path,
) -> None:
    # The same headline on both cases, which no fault or watch-out groups: listed once.
    same = Outcome("returned", answer=None)
    text = _feedback(tmp_path, lambda x: same)
    (line,) = [line for line in text.splitlines() if line.startswith("- ")]
    assert line.startswith("- cases 1, 2 (0 of 2 points): ")
    assert float_text(0.20000000298023224) == "0.2"
    assert float_text(0.2) == "0.2" and float_text(1 / 3) == repr(1 / 3)
    assert fmt_number(0.20000000298023224, 0.2) == "0.20000000298023224"  # they differ


FIFTHS = """
[exercise]
title = "Fifths"
inputs = ["n"]
format = 2
outputs = [{ kind = "list[float]" }]

[[case]]
n = 2
expected = [0.3, 0.5]
"""

#: A wrong answer from a float32 tensor, one item too many: its tolist() gives
#: 0.20000000298023224 for 0.2, and the failure shows the items where the lists part.
FLOAT32_FIFTHS = """import torch


def solve(n):
    return (torch.arange(1, n + 2, dtype=torch.float32) * 0.2).tolist()
"""


class ChildRunner(Runner):
    """Runs each job through the child's own function in this process (no process started):
    the answer is encoded as the child encodes it."""

    def run(self, job: Job) -> Outcome:
        source = base64.b64encode(job.solution.read_bytes()).decode("ascii")
        return Outcome.from_dict(json.loads(json.dumps(run_case(job.request(source=source)))))


@pytest.mark.torch
def test_11_a_float32_lists_values_are_told_as_float32_writes_them(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    exercise = lesson(tmp_path, FIFTHS, **{"solution.py": FLOAT32_FIFTHS})
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grade = Grader(ChildRunner(), resolved, show=lambda path: Path(path).name)
    graded = grade.grade(Attempt(exercise, exercise.cases[0], learner="ann"))
    assert graded.result.status == Status.FAILED, graded.text
    # The terminal's words, the result every report keeps, and the learner's feedback file.
    report = feedback_files.feedback("ann", [graded.result], {str(exercise.path): []})
    folded = " ".join(graded.text.split())
    # The items where the lists part, as the learner's float32 tensor holds them.
    assert "expected 2 items, got 3" in folded and "got 0.2 0.4 [0.6]" in folded
    for text in (graded.text, graded.result.message, report):
        assert "got 0.2 (allowed" in " ".join(text.split()), text
        for float64 in ("0.20000000298023224", "0.4000000059604645", "0.6000000238418579"):
            assert float64 not in text, text


def test_15_the_short_form_never_cuts_an_exceptions_message_at_its_own_full_stop(
    tmp_path: Path,
) -> None:
    raised = Outcome(
        "raised",
        error_type="ValueError",
        message="bad shape. Expected 2.",
        phase="call",
        frames=(Frame("/x/solution.py", 2, "solve", "raise ValueError(...)"),),
    )
    exercise = lesson(tmp_path, DOUBLE)
    grade, _ = grader({("solution.py", "solve"): lambda x: raised})
    grade.grade(Attempt(exercise, exercise.cases[0]))
    second = grade.grade(Attempt(exercise, exercise.cases[1])).text
    assert second.startswith(
        "solve raised ValueError at line 2 of solution.py: bad shape. Expected 2.\n"
        "  (the same problem as case 1"
    )
    assert first_sentence("Do this. Then that.") == "Do this."
    assert first_sentence("Keep `x. y` as is. Why.") == "Keep `x. y` as is."
    assert first_sentence("Put True on the diagonal.\nWhy: it sees itself.") == (
        "Put True on the diagonal."
    )


WATCHED = (
    DOUBLE
    + '''
[[watch_out]]
id = "halved"
mistake = "halved"
message = """
multiply by 2, not divide. Yours halves each number,
which is the inverse. A second line.
"""
'''
)


def test_10_a_watch_out_is_told_whole_once_then_by_its_first_sentence(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, WATCHED, **{"mistakes.py": ""})

    def halved(x: Any) -> Any:
        return [v / 2 for v in x]

    grade, _ = grader({("solution.py", "solve"): halved, ("mistakes.py", "halved"): halved})
    first = grade.grade(Attempt(exercise, exercise.cases[0])).text
    second = grade.grade(Attempt(exercise, exercise.cases[1])).text
    assert "second line." in first
    assert second.startswith(
        "Watch out: multiply by 2, not divide.\n  (the same mistake as case 1; its explanation"
    )


def test_12_the_class_report_rounds_its_means_and_draws_every_bar_label_whole() -> None:
    results = [
        case_result(1, who != "cy", learner=who, max_points=42.0) for who in ("ada", "bo", "cy")
    ]
    results[2] = replace(
        results[2], diagnosis="plain-tensor-parameters", diagnosis_kind="watch_out"
    )
    page = classreport.render(results)
    assert "mean 28 of 42 points" in page
    assert "watch out: plain-tensor-parameters</text>" in page
    assert classreport.mean_text(89 / 3) == "29.7"
    assert any("mean 28 of 42 points" in line for line in classreport.class_lines(results))


def test_13_a_single_number_is_told_as_a_number(tmp_path: Path) -> None:
    toml = '[exercise]\ntitle = "t"\ninputs = ["x"]\n\n[[case]]\nx = 1\nexpected = 2.5\n'
    exercise = lesson(tmp_path, toml)
    grade, _ = grader({("solution.py", "solve"): lambda x: 3.0})
    text = grade.grade(Attempt(exercise, exercise.cases[0])).text
    assert text.startswith("Check your calculation: your number is 3, the expected one 2.5.")
    assert "got        3\n  expected   2.5 (allowed" in text
    assert "at []" not in text and "shape" not in text


def test_7_a_list_of_the_wrong_length_shows_its_ids_where_it_parts() -> None:
    kind = kinds.parse("list[int]")
    short = kind.compare([5, 6, 7, 8, 9], [5, 6, 7], 0, 0)
    assert short.evidence == (("expected", "5 6 7 [8] 9"), ("got", "5 6 7 [end]"))
    long = kind.compare([5, 6, 7], [5, 6, 7, 1, 2], 0, 0)
    assert long.evidence == (("expected", "5 6 7 [end]"), ("got", "5 6 7 [1] 2"))


SAMPLER = """
[exercise]
title = "Draw"
inputs = ["n", { name = "g", pass = "generator", primitive = "torch.randint(n, (1,), generator=g)" }]
format = 2

[[case]]
n = 5
g = 0
expected = 3

[[case]]
n = 5
g = 2654435769
expected = 1
"""


def test_6_the_global_generator_is_seeded_apart_and_a_missed_generator_is_named(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, SAMPLER)
    # The learner's draw left g alone and moved torch's global generator.
    missed = Outcome("returned", answer=4, details={"streams": {"unused": [1], "global": True}})
    grade, runner = grader({("solution.py", "solve"): lambda n, g: missed})
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.result.headline == (
        "Pass generator=g to your draw (torch.randint(n, (1,), generator=g)): your code left g "
        "as it was and drew from torch's global generator instead, so its numbers are not the "
        "case's."
    )
    assert graded.result.diagnosis == "generator-unused"
    grade.grade(Attempt(exercise, exercise.cases[1]))
    # Never a case's own seed, not even one that is the global seed's first choice.
    seeds = [job.seed for job in runner.jobs]
    assert seeds[0] == randomness.GLOBAL_SEED != 0
    assert seeds[1] not in (0, 2654435769)
    # A lesson without generators keeps the global seed it always had.
    plain, plain_runner = grader({("solution.py", "solve"): lambda x: [2, 4]})
    (tmp_path / "plain").mkdir()
    double = lesson(tmp_path / "plain", DOUBLE)
    plain.grade(Attempt(double, double.cases[0]))
    assert plain_runner.jobs[0].seed == 0


@pytest.mark.torch
def test_6_the_child_says_which_generators_a_call_left_as_they_were(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    source = "import torch\n\n\ndef solve(n, g):\n    return int(torch.randint(n, (1,)))\n"
    request = {
        "solution": str(tmp_path / "solution.py"),
        "entry": "solve",
        "inputs": [5, {"$input": "generator", "seed": 7}],
        "source": base64.b64encode(source.encode()).decode(),
        "seed": randomness.GLOBAL_SEED,
    }
    result = run_case(request)
    assert result["details"]["streams"] == {"unused": [1], "global": True}
    used = source.replace("(1,))", "(1,), generator=g)")
    request["source"] = base64.b64encode(used.encode()).decode()
    assert run_case(request)["details"]["streams"] == {"unused": [], "global": False}


def test_8_a_notebooks_starter_cells_leave_progress_and_hints_as_they_were(tmp_path: Path) -> None:
    course_folder = tmp_path / "course"
    folder = course_folder / "double"
    folder.mkdir(parents=True)
    (folder / "exercise.toml").write_text(DOUBLE + '\n[[hint]]\ntitle = "Idea"\ntext = "x2"\n')
    (course_folder / "course.toml").write_text('[course]\ntitle = "c"\nlessons = ["double"]\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    lessons = Lessons(cwd=course_folder, environ={})
    found = lessons.lesson("double")
    cache = cache_of(found.folder)
    exercise = lesson_model.load(found.path)
    # Never tried: a notebook run from the top asks for a hint of every lesson.
    assert "Write your code in the `%%lesson double` cell and run it" in str(
        lessons.hints("double").lines
    )
    cache.set(summary.state_key(found.path), "passed")  # solution.py passed in pytest

    def stub(case: int) -> Any:
        return case_result(
            case,
            False,
            exercise="double",
            path=str(found.path),
            cases=2,
            status="error",
            fault="raised NotImplementedError at solution.py:2",
        )

    shown = lessons.feedback(found, exercise, [(stub(1), ""), (stub(2), "")])
    assert shown.progress[-1].startswith("lessons: 1/1 passed")
    assert cache.get(summary.state_key(found.path), "") == "passed"
    # The learner's own failing cell counts, and a hint then opens.
    wrong = replace(stub(1), fault="", status="failed")
    lessons.feedback(found, exercise, [(wrong, ""), (stub(2), "")])
    assert cache.get(summary.state_key(found.path), "") == "failing"
    assert "Hint 1: Idea" in lessons.hints("double").lines


def test_the_return_example_of_several_outputs_is_python_even_for_labels() -> None:
    expected = {"grad of x": [1.0], "grad of weight": [2.0]}
    said = compare_outputs(expected, 5.0, ["grad of x", "grad of weight"], 1e-4, 1e-4).headline
    assert said.startswith(
        "Return 2 values, in this order: grad of x, grad of weight (for example "
        "`return grad_x, grad_weight`). solve returned"
    )


def test_the_rows_finding_tells_rows_scaled_each_by_its_own_factor_as_such() -> None:
    # RMSNorm with eps outside the root: a row of small values is scaled down, the others
    # stay within tolerance.
    eps = 0.1
    x = [[3.0, -4.0, 5.0], [0.01, -0.02, 0.03], [2.0, 1.0, -2.0]]

    def norm(row: list[float], inside: bool) -> list[float]:
        ms = sum(v * v for v in row) / len(row)
        return [v / ((ms + eps) ** 0.5 if inside else ms**0.5 + eps) for v in row]

    expected = [norm(r, True) for r in x]
    got = [norm(r, False) if i == 1 else norm(r, True) for i, r in enumerate(x)]
    found = detectors.rows(
        detectors.Evidence(read_numbers(got), read_numbers(expected), 1e-4, 1e-4)
    )
    assert found is not None
    assert "row 1 is wrong while rows 0, 2 are right. Each wrong row is the right row" in (
        found.headline
    )
    assert "such as where eps goes" in found.headline and "index" not in found.headline


def test_a_shape_expression_takes_whole_number_factors(tmp_path: Path) -> None:
    toml = DOUBLE + (
        "\n[generate]\ncount = 3\naxes = { T = [1, 3], C = [2, 4] }\n"
        'inputs = { x = ["T", "4*C"] }\n'
    )
    exercise = lesson(tmp_path, toml, **{"reference.py": "def solve(x):\n    return x\n"})
    for case in exercise.cases[2:]:
        assert case.sizes is not None
        width = len(case.inputs["x"][0])
        assert width == 4 * case.sizes["C"]
        assert axis_sizes({"x": ["T", "4*C"]}, case.inputs) == case.sizes
    assert generate.size_of("2*C*3", {"C": 5}) == 30
    assert generate.axis_names("4*C") == ["C"]


HARNESS = """
import torch

from pytest_lessons.harness import uncounted


def drive(learner, n):
    with uncounted():
        setup = torch.ones(n * 1000) * 2
    return learner.solve(n)
"""


@pytest.mark.torch
def test_a_harness_keeps_its_own_set_up_out_of_the_work_count(tmp_path: Path) -> None:
    pytest.importorskip("torch")

    def counted(harness: str, solution: str) -> dict[str, int]:
        request = {
            "solution": str(tmp_path / "solution.py"),
            "entry": "solve",
            "inputs": [3],
            "source": base64.b64encode(solution.encode()).decode(),
            "work": {},
            "behaviour": {
                "names": ["n"],
                "after": {},
                "observed": [],
                "alias": {"solve": "solve"},
                "harness": {
                    "file": str(tmp_path / "harness.py"),
                    "source": base64.b64encode(harness.encode()).decode(),
                },
            },
        }
        result = run_case(request)
        assert result["kind"] == "returned", result
        figures: dict[str, int] = result["details"]["work"]["at"]
        return figures

    plain = "import torch\n\n\ndef solve(n):\n    return (torch.arange(n) + 1).tolist()\n"
    kept_out = counted(HARNESS, plain)
    kept_in = counted(HARNESS.replace("with uncounted():", "if True:"), plain)
    assert kept_out["operations"] == 2  # the learner's arange and add
    assert kept_in["elements"] >= kept_out["elements"] + 6000
    # The learner's own file cannot pause the count.
    hiding = plain.replace(
        "def solve(n):\n",
        "from pytest_lessons.harness import uncounted\n\n\ndef solve(n):\n    with uncounted():\n"
        "        torch.ones(5000) * 2\n",
    )
    assert counted(HARNESS, hiding)["elements"] >= kept_out["elements"] + 10000
