"""Grading the seed lesson end to end, as a learner runs it: exit codes and the words shown."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

from helpers import DOUBLE_TOML, NO_TRANSPOSE, REFERENCE, said

Make = Callable[..., Path]


def test_the_reference_passes_all_four_seed_cases_and_the_generated_ones(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(REFERENCE)
    result = pytester.runpytest("combine_heads", "-k", "case-")
    result.assert_outcomes(passed=4)
    assert result.ret == 0
    result = pytester.runpytest("combine_heads")
    result.assert_outcomes(passed=10)
    assert result.ret == 0


def test_the_stub_fails_every_case_kindly_and_says_it_once(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads()
    result = pytester.runpytest("combine_heads")
    result.stdout.fnmatch_lines(["*= 1 failed, 9 failed the same way in *"])
    assert result.ret == 1
    text = said(result).split("short test summary")[0]
    assert text.count("combine_heads is not implemented yet") == 1
    assert "combine_heads 0 of 10 cases cases 2 to 10 failed as case 1 did" in text
    # The target: one fault, one message; the whole run fits on one screen.
    assert len(result.outlines) <= 40
    assert "Open combine_heads/solution.py and replace `raise NotImplementedError`" in text
    assert "Traceback" not in text and "pytest_lessons" not in text


def test_a_missing_transpose_shows_shapes_counts_worst_index_and_table(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(NO_TRANSPOSE)
    result = pytester.runpytest("combine_heads")
    result.assert_outcomes(passed=2, failed=8)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*combine_heads: case 1 (worked example)*",
            "*shape*expected [[]2, 2[]]   got [[]2, 2[]]",
            "*mismatched*2 of 4 values (50%)",
            "*largest gap*at [[]*[]]: got *, expected * (allowed ±*)",
            "*at*got*expected",
            "*[[]0, 1[]]*3*29.8661",
            "*[[]1, 0[]]*29.8661*3",
            "*inputs*Q = [[][[][[]0[]], [[]0[]][]], [[][[]1[]], [[]1[]][]][]]",
            "*your code*combine_heads/solution.py",
            "*combine_heads: case 3 (two heads of width 2)*",
            "*mismatched*4 of 8 values (50%)",
        ]
    )


def test_ids_and_headers_name_the_lesson_and_case(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    combine_heads(REFERENCE)
    result = pytester.runpytest("combine_heads", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "combine_heads/exercise.toml::case-1-worked-example",
            "combine_heads/exercise.toml::case-2-one-head-one-token",
            "combine_heads/exercise.toml::case-3-two-heads-of-width-2",
            "combine_heads/exercise.toml::case-4-two-heads-one-token",
        ]
        + [f"combine_heads/exercise.toml::generated-{n}" for n in range(5, 11)]
    )


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_on_ci_the_summary_and_junit_carry_the_headline_not_the_whole_text(
    pytester: pytest.Pytester, make_exercise: Make, monkeypatch: pytest.MonkeyPatch, workers: list
) -> None:
    # On CI pytest prints each failure's whole message in the short summary; ours is a page.
    monkeypatch.setenv("CI", "true")
    # An author's message over several TOML lines is still one summary line.
    watch_out = '''
[[watch_out]]
id = "returned-input"
mistake = "unchanged"
message = """Multiply every value by 2:
your answer is the input as it came."""
'''
    make_exercise(
        solution="def solve(x):\n    return x\n",
        toml=DOUBLE_TOML + watch_out,
        mistakes__py="def unchanged(x):\n    return x\n",
    )
    make_exercise("broken", toml="[exercise]\ntitle = 'Broken'\ninputs = ['x']\n")
    result = pytester.runpytest(*workers, "-rf", "--junitxml=junit.xml")
    result.assert_outcomes(failed=3)
    headline = "Watch out: Multiply every value by 2: your answer is the input as it came."
    summary = [line for line in result.stdout.lines if line.startswith("FAILED ")]
    assert sorted(summary) == [
        "FAILED broken/exercise.toml::exercise - Fix broken/exercise.toml: no [[case]] in "
        "exercise.toml: add at least one case",
        f"FAILED double/exercise.toml::case-1-a-row - {headline}",
        f"FAILED double/exercise.toml::case-2 - {headline}",
    ]
    # The evidence (the inputs line) is in the failures section once per case, not repeated.
    assert result.stdout.str().count("inputs     x = ") == 2
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count('message="') == 3 and "inputs     x = " in junit
    assert junit.count('message="Fix broken/exercise.toml: no [[case]]') == 1


def run_double(
    pytester: pytest.Pytester, make_exercise: Make, solution: str | None, **files: str
) -> pytest.RunResult:
    make_exercise(solution=solution, **files)
    # No failure here is about time, and a solution that imports torch with nothing preloaded
    # took more than the default 10 s on a machine at load 19.
    return pytester.runpytest("double", "--lesson-timeout=120")


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize(
    ("solution", "words"),
    [
        (None, "Create double/solution.py and write solve(x) in it"),
        (
            "def solve(x)\n    return x\n",
            "Fix the syntax error in double/solution.py*",
        ),
        (
            "import no_such_module_here\n",
            "solution.py raised ModuleNotFoundError at line 1 while it was loading: No module named "
            "'no_such_module_here'.*"
            "Check the module's name, then install it in the Python that runs pytest*",
        ),
        (
            "def twice(x):\n    return x\n\nclass Helper:\n    pass\n",
            "Define a function named solve in double/solution.py: the grader calls solve(x),"
            " and the file defines Helper, twice.",
        ),
        ("solve = 3\n", "Make solve a function (def solve(x):) in double/solution.py*"),
        (
            "def solve(x, y):\n    return x\n",
            "Give solve 1 parameter, in this order: def solve(x). Yours takes (x, y).",
        ),
        ("def solve(x):\n    x.append(1)\n", "Return your answer: solve returned None*"),
        ("def solve(x):\n    return (v for v in x)\n", "Build a list*returned a generator*"),
        (
            "def solve(x):\n    return str(x)\n",
            "Return a nested list of shape*returned the string*",
        ),
        ("def solve(x):\n    return [x, [1]]\n", "Make every row the same length*"),
        (
            "def solve(x):\n    return [x]\n",
            "Remove the extra dimension of size 1 at position 0 with .squeeze(0): your "
            "answer has shape [[]1, 2[]], the expected one [[]2[]].*",
        ),
        (
            "def solve(x):\n    return [float('nan') for v in x]\n",
            "Find where NaN comes from: your answer holds NaN at [[]0[]] (and 1 more place)*",
        ),
        pytest.param(
            "import torch\ndef solve(x):\n    return torch.tensor(x) * 2\n",
            "Return plain Python numbers: add .tolist() to your result*torch.Tensor*",
            marks=pytest.mark.torch,
        ),
    ],
    ids=[
        "missing-file",
        "syntax",
        "import-error",
        "no-entry",
        "not-callable",
        "signature",
        "none",
        "generator",
        "string",
        "ragged",
        "rank",
        "nan",
        "tensor",
    ],
)
def test_each_failure_mode_fails_with_its_words(
    pytester: pytest.Pytester, make_exercise: Make, solution: str | None, words: str
) -> None:
    result = run_double(pytester, make_exercise, solution)
    assert result.ret == 1
    assert fnmatch.fnmatch(said(result), f"*double: case 1 (a row)*{words}*")
    assert "Traceback" not in result.stdout.str()


@pytest.mark.usefixtures("no_preload")
def test_a_syntax_error_names_file_and_line(pytester: pytest.Pytester, make_exercise: Make) -> None:
    result = run_double(pytester, make_exercise, "x = 1\n\ndef solve(x)\n    return x\n")
    result.stdout.fnmatch_lines(["*double/solution.py, line 3", "*def solve(x)", "*SyntaxError: *"])


@pytest.mark.usefixtures("no_preload")
def test_an_exception_shows_only_the_learners_frames(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    solution = """
    def helper(v):
        return v / 0

    def solve(x):
        return [helper(v) for v in x]
    """
    make_exercise(solution=solution)
    result = pytester.runpytest("double", "--lesson-report=r.json", "--junitxml=j.xml")
    # The headline is a whole sentence: the exception, its message and the learner's line
    # (issue 22), in the terminal, the json report and JUnit's message alike.
    headline = "solve raised ZeroDivisionError at line 2 of solution.py: division by zero."
    report = json.loads((pytester.path / "r.json").read_text())["results"]
    assert report[0]["headline"] == headline
    assert f'message="{headline}"' in (pytester.path / "j.xml").read_text()
    result.stdout.fnmatch_lines(
        [
            headline,
            "*double/solution.py, line 5, in solve",
            "*return [[]helper(v) for v in x[]]",
            "*double/solution.py, line 2, in helper",
            "*return v / 0",
            "*ZeroDivisionError: division by zero",
        ]
    )
    assert "child.py" not in result.stdout.str()


#: Edits of a solution that raise a torch error, and words of the explanation it gets.
TORCH_ERRORS = {
    "view-after-transpose": (
        ("out.reshape(q.shape[1], -1)", "out.transpose(0, 1).view(q.shape[1], -1)"),
        "case-3",
        "Use .reshape, which copies when it must.",
    ),
    "keys-not-transposed": (
        ("out = F.scaled_dot_product_attention(q, k, v)", "out = (q @ k).softmax(-1) @ v"),
        "case-1",
        "A's last dimension must equal B's second to last (for attention scores: "
        "Q @ K.transpose(-2, -1)).",
    ),
    "reshape-sizes": (
        ("out.reshape(q.shape[1], -1)", "out.reshape(q.shape[1] + 1, -1)"),
        "case-1",
        "The sizes you reshape to must multiply to the number of values the tensor holds.",
    ),
}


@pytest.mark.parametrize("error", list(TORCH_ERRORS))
def test_a_known_torch_error_is_explained(
    pytester: pytest.Pytester, combine_heads: Make, error: str
) -> None:
    (old, new), case, words = TORCH_ERRORS[error]
    assert old in NO_TRANSPOSE
    combine_heads(NO_TRANSPOSE.replace(old, new))
    result = pytester.runpytest("combine_heads", "-k", case)
    result.assert_outcomes(failed=1, deselected=9)
    assert "solve raised RuntimeError at line " in said(result)
    assert words in said(result)


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("isolation", ["fork", "spawn", "off"])
def test_a_learner_that_mutates_inputs_does_not_change_other_cases(
    pytester: pytest.Pytester, make_exercise: Make, isolation: str
) -> None:
    # With isolation off the learner's code shares the pytest process with the case: only a
    # fresh copy of the inputs keeps the report showing what the case really passed.
    solution = """
    def solve(x):
        x.clear()
        x.append("changed")
        return []
    """
    make_exercise(solution=solution)
    result = pytester.runpytest(
        "double", f"--lesson-isolation={isolation}", "--lesson-report=r.json"
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*inputs*x = [[]1, 2[]]", "*inputs*x = [[][[]1.5, 2[]], [[]3, 4[]][]]"]
    )
    assert "changed" not in result.stdout.str()
    calls = [r["call"] for r in json.loads((pytester.path / "r.json").read_text())["results"]]
    assert calls == ["solve(x=[1, 2])", "solve(x=[[1.5, 2], [3, 4]])"]


SPLIT_TOML = """
[exercise]
title = "Split a row"
inputs = ["x"]
outputs = ["out", "k_cache", "v_cache"]

[[case]]
x = [1, 2]
expected = { out = [1, 2], k_cache = [2, 4], v_cache = [3] }
"""


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize(
    ("returned", "words"),
    [
        (
            "[9, 9], [2, 4], [3]",
            "In out (value 1 of 3): Check your calculation: the shape is right, but 2 of 2 "
            "values differ from the expected answer.",
        ),
        (
            "x, [2, 4], [3, 1]",
            "In v_cache (value 3 of 3): Return shape [1]: your answer has shape [2].",
        ),
        (
            "x, [2, 4]",
            "Return 3 values, in this order: out, k_cache, v_cache (for example "
            "`return out, k_cache, v_cache`). solve returned 2 values.",
        ),
        (
            "x",
            "Return 3 values, in this order: out, k_cache, v_cache (for example "
            "`return out, k_cache, v_cache`). solve returned 2 values.",
        ),
        (
            "None",
            "Return 3 values, in this order: out, k_cache, v_cache (for example "
            "`return out, k_cache, v_cache`). solve returned None.",
        ),
    ],
)
def test_several_outputs_name_the_wrong_one_or_the_count_expected(
    pytester: pytest.Pytester, make_exercise: Make, returned: str, words: str
) -> None:
    make_exercise(solution=f"def solve(x):\n    return {returned}\n", toml=SPLIT_TOML)
    result = pytester.runpytest("double")
    result.assert_outcomes(failed=1)
    assert words in said(result)
    make_exercise(solution="def solve(x):\n    return x, [2, 4], [3]\n", toml=SPLIT_TOML)
    pytester.runpytest("double").assert_outcomes(passed=1)


BROKEN = {
    "syntax": ("[exercise\ntitle = 'x'\n", "exercise.toml, line 1: is not valid TOML*"),
    "missing-expected": (
        "[exercise]\ntitle='t'\ninputs=['x']\n\n[[case]]\nx=[1]\nexpected=[2]\n\n[[case]]\nx=[2]\n",
        'exercise.toml, line 9: case 2: missing "expected"',
    ),
    "typo": (
        "[exercise]\ntitle='t'\ninputs=['x']\n[[case]]\nx=[1]\nexpectd=[2]\n",
        'exercise.toml, line 6: case 1: unknown key "expectd" (did you mean "expected"?)',
    ),
    "rtol": (
        "[exercise]\ntitle='t'\ninputs=['x']\nrtol='a'\n[[case]]\nx=1\nexpected=2\n",
        "exercise.toml: exercise.rtol must be a number",
    ),
    "no-cases": (
        "[exercise]\ntitle='t'\ninputs=['x']\n",
        "exercise.toml: no ??case?? in exercise.toml*",
    ),
    "inputs": (
        "[exercise]\ntitle='t'\ninputs='x'\n[[case]]\nx=1\nexpected=2\n",
        "exercise.toml: exercise.inputs must be a list of names*",
    ),
}


@pytest.mark.usefixtures("no_preload")
@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_exercise_file_fails_and_the_other_exercise_still_runs(
    pytester: pytest.Pytester, make_exercise: Make, kind: str
) -> None:
    toml, words = BROKEN[kind]
    make_exercise()
    make_exercise("broken", toml=toml)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == 1
    assert fnmatch.fnmatch(
        said(result), f"*broken: exercise.toml is broken*Fix broken/exercise.toml*{words}*"
    )
    assert "INTERNALERROR" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def test_collection_imports_neither_torch_nor_learner_code(
    pytester: pytest.Pytester, combine_heads: Make
) -> None:
    marker = pytester.path / "learner-code-ran"
    combine_heads(f"open({str(marker)!r}, 'w').close()\nimport torch\n" + REFERENCE)
    probe = textwrap.dedent(
        """
        import sys, pytest
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "combine_heads"])
        print("TORCH_IMPORTED" if "torch" in sys.modules else "NO_TORCH")
        sys.exit(code)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "10 tests collected" in run.stdout
    assert "NO_TORCH" in run.stdout
    assert not marker.exists()


def test_plugin_load_and_help_do_not_import_torch(pytester: pytest.Pytester) -> None:
    probe = (
        "import sys, pytest; pytest.main(['--help']);"
        "print('TORCH_IMPORTED' if 'torch' in sys.modules else 'NO_TORCH')"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "--lesson-timeout" in run.stdout
    assert "NO_TORCH" in run.stdout


@pytest.mark.usefixtures("no_preload")
def test_pytest_given_a_lessons_python_file_grades_the_lesson_never_imports_it(
    pytester: pytest.Pytester, make_exercise: Make
) -> None:
    # Issue 22: `pytest exercises/split_heads/solution.py` collected 0 items, exited 5, and
    # imported the learner's file into pytest itself, outside the sandbox.
    marker = pytester.path / "imported-by"
    solution = (
        "import os\n\n"
        "try:\n"
        f"    with open({str(marker)!r}, 'a') as out:\n"
        "        out.write(f'{os.getpid()}\\n')\n"
        "except OSError:  # the sandbox refuses it: as it should\n"
        "    pass\n\n"
        "def solve(x):\n"
        "    if isinstance(x[0], list):\n"
        "        return [[2 * v for v in row] for row in x]\n"
        "    return [2 * v for v in x]\n"
    )
    make_exercise(solution=solution, helper__py="VALUE = 1\n")
    for given in ("double/solution.py", "double/helper.py"):
        result = pytester.runpytest(given)
        result.assert_outcomes(passed=2)
        assert result.ret == 0
        result.stdout.fnmatch_lines(
            [
                f"lessons: {given.split('/')[1]} is graded as its lesson: this runs "
                f"`pytest double` (pytest never imports {given.split('/')[1]} itself)"
            ]
        )
    imported = marker.read_text().split() if marker.exists() else []
    assert str(os.getpid()) not in imported


def test_torchs_warning_without_numpy_never_reaches_the_learner(
    pytester: pytest.Pytester, combine_heads: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 22: where torch loads without NumPy, torch warns "Failed to initialize NumPy", a
    # warning about torch's own set-up; with isolation off it landed in the learner's run.
    fake = pytester.mkdir("no-numpy") / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    combine_heads(REFERENCE)
    result = pytester.runpytest_subprocess(
        "combine_heads", "--lesson-isolation=off", "-k", "case-1"
    )
    result.assert_outcomes(passed=1, deselected=9)
    assert "NumPy" not in result.stdout.str() + result.stderr.str()
