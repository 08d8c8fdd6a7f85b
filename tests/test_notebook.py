"""The notebook front end in a real Jupyter kernel: cells run by nbclient in ipykernel, as
Jupyter and Colab run them, graded by the same core, worker and sandbox as ``pytest``.

One kernel serves the module's cell tests (starting one costs a few seconds, and its worker
imports torch once); the test of interrupts and restarts, and the run of the course's own
notebook, have their own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core import course as course_toml
from pytest_lessons.core import model

from helpers import (
    OUTSIDE_ENVIRONMENT,
    ROOT,
    alive,
    dedent,
    descendants,
    representative,
    wait_until,
)

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from nbclient.util import run_sync  # noqa: E402

# Every test here starts a Jupyter kernel: the slow tier (tests/README.md).
pytestmark = [pytest.mark.torch, pytest.mark.slow]

#: The case limit in the kernels under test: a looping cell costs twice this (the loop budget).
TIMEOUT = 5

#: The course as course.toml gives it: a lesson added there is graded here without an edit.
COURSE = course_toml.load(ROOT / "exercises" / "course.toml")
LESSONS = [path.parent.name for path in COURSE.lessons]
#: A lesson of each kind: between them they use every feature any lesson of the course uses.
KINDS_OF_LESSON = representative(LESSONS)
ATTENTION = next(len(c.lessons) for c in COURSE.chapters if c.number == 7)

#: One mistake of each lesson (a watch-out without a fitted value), graded as the solution;
#: a lesson not named here uses its first such watch-out.
MISTAKES = {
    "causal_mask": "true_where_masked",
    "outer_product": "b_outer_a",
    "eye": "booleans",
    "triu": "lower_triangle",
    "cumsum": "triangle_times_a",
    "gather_targets": "columns_only",
    "utf8_bytes": "code_points",
    "pair_counts": "non_overlapping",
    "merge_pair": "step_of_one",
    "top_pair": "first_seen_wins_a_tie",
    "train_bpe": "first_seen_wins_a_tie",
    "build_vocab": "bytes_of_an_int",
    "decode": "each_token_decoded",
    "tokenizer": "SpecialsNotSplit",  # a class, which its harness asks for as Tokenizer
    "token_embeddings": "positions_from_token_ids",
    "softmax_ce_backward": "without_one_over_n",
    "linear_backward": "transposed_dW",
    "layernorm_backward": "without_mean_terms",
    "gelu_function": "ignores_grad_output",
    "split_heads": "reshape_straight_to_heads",
    "causal_attention": "no_mask",
    "combine_heads": "reshape_without_transpose",
    "kv_cache_step": "attend_before_appending",
    "grouped_query_attention": "tiled_instead_of_interleaved",
}


def clean_env(**extra: str) -> dict[str, str]:
    """This machine's environment without what changes a run under test, plus *extra*."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in OUTSIDE_ENVIRONMENT and not name.startswith("PYTEST_LESSONS_")
    }
    return {**env, **extra}


class Kernel:
    """A real ipykernel, driven cell by cell through nbclient as a notebook server would."""

    def __init__(self, cwd: Path) -> None:
        self.notebook = nbformat.v4.new_notebook()
        self.client = nbclient.NotebookClient(
            self.notebook,
            timeout=240,
            kernel_name="python3",
            resources={"metadata": {"path": str(cwd)}},
        )
        self._kernel = self.client.setup_kernel(
            env=clean_env(PYTEST_LESSONS_TIMEOUT=str(TIMEOUT), PYDEVD_DISABLE_FILE_VALIDATION="1")
        )
        self._kernel.__enter__()
        self.replies: list[dict[str, Any]] = []
        self.client.on_cell_executed = lambda **hook: self.replies.append(hook["execute_reply"])
        self.pid = int(self.run("import os; print(os.getpid())").strip())

    def cell(self, code: str) -> Any:
        """Run *code* as a new cell; the executed cell with its outputs."""
        cell = nbformat.v4.new_code_cell(dedent(code))
        self.notebook.cells.append(cell)
        self.client.execute_cell(cell, len(self.notebook.cells) - 1)
        # nbclient raises for an error, but hands back a cell the kernel cancelled (queued
        # behind an error) as if it had run and shown nothing.
        status = self.replies[-1]["content"]["status"]
        assert status != "aborted", f"the kernel cancelled the cell {code!r}"
        return cell

    def run(self, code: str) -> str:
        """What a cell printed and returned, as text."""
        return "".join(
            output.get("text", "")
            if output.get("name") == "stdout"
            else output.get("data", {}).get("text/plain", "")
            for output in self.cell(code).outputs
            if output.get("name") == "stdout" or output.get("output_type") == "execute_result"
        )

    def result(self, code: str) -> dict[str, str]:
        """The rich result a cell displayed (its mime bundle)."""
        bundles = [o["data"] for o in self.cell(code).outputs if "data" in o]
        assert bundles, "the cell displayed nothing"
        return bundles[-1]

    def close(self) -> None:
        self._kernel.__exit__(None, None, None)


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the course (its pyproject.toml makes it pytest's root folder, and so the
    home of its .pytest_cache)."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "exercises", root / "exercises")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.fixture(scope="module")
def kernel(course: Path) -> Any:
    started = Kernel(course / "exercises")
    started.run("%load_ext pytest_lessons")
    yield started
    started.close()


def lesson(name: str, code: str) -> str:
    return f"%%lesson {name}\n{dedent(code)}"


def source(name: str, file: str) -> str:
    return (ROOT / "exercises" / name / file).read_text()


def mistake(name: str) -> str:
    lesson = model.load(ROOT / "exercises" / name / "exercise.toml")
    chosen = MISTAKES.get(name) or next(
        w.mistake for w in lesson.watch_outs if w.mistake and w.fit is None
    )
    return f"{source(name, 'mistakes.py')}\n\n{lesson.entry} = {chosen}\n"


def test_a_right_cell_passes_and_ends_with_the_course_progress(kernel: Kernel) -> None:
    shown = kernel.result(lesson("split_heads", source("split_heads", "reference.py")))
    text = shown["text/plain"]
    assert text.startswith("split_heads: every case passed")
    assert "every case passed" in shown["text/html"]
    last = text.rstrip("\n").split("\n")
    assert last[-2].split() == ["split_heads", "passed"]
    # The course's chapters are tallied after the bar.
    assert re.fullmatch(
        rf"lessons: \d+/{len(LESSONS)} passed \[[#-]{{10}}\]   chapter 7: \d/{ATTENTION}", last[-1]
    )
    # The pass opens the worked solution, as --lesson-solution would.
    solution = kernel.result("%lesson_solution split_heads")["text/plain"]
    assert solution.startswith("Worked solution of split_heads\n1. ")
    assert "split_heads/reference.py:" in solution


def test_the_missing_transpose_cell_names_its_watch_out_in_the_html(kernel: Kernel) -> None:
    shown = kernel.result(lesson("combine_heads", mistake("combine_heads")))
    page = shown["text/html"]
    headline = "Watch out: each row of your answer mixes different tokens."
    # The headline comes before the evidence, the map is a coloured grid, and the other cases
    # with the same mistake are folded away.
    assert headline in page
    assert page.index(headline) < page.index("where it differs")
    grid = page[page.index('class="lessons-map"') :]
    assert 'title="outside tolerance">x</td>' in grid and 'title="matches">.</td>' in grid
    assert "<th" in page[: page.index("where it differs")]  # the table of mismatches
    assert "<details" in page and "made the same mistake as case 1 (worked example)" in page
    text = shown["text/plain"]
    assert text.startswith("combine_heads: 2 passed, 8 failed")
    assert headline in " ".join(text.split())
    assert "your code  your cell" in text
    assert "`%lesson_hints combine_heads` opens a hint" in text
    assert "watch out: missing-transpose" in text.rstrip("\n").split("\n")[-2]
    # The cell's code ran in the worker, not here: the kernel has no solve.
    assert "NameError" in kernel.run(
        "try:\n    solve\nexcept NameError as e:\n    print('NameError')"
    )


def test_a_looping_cell_is_stopped_within_the_loop_budget_and_the_kernel_lives(
    kernel: Kernel,
) -> None:
    text = kernel.result(
        lesson("combine_heads", "def solve(Q, K, V):\n    while True:\n        pass\n")
    )["text/plain"]
    said = " ".join(text.split())
    assert f"Make solve finish sooner: it ran longer than {TIMEOUT} s and was stopped" in said
    assert "this case was not run, because cases 1, 2 of combine_heads already ran out" in said
    assert "cases 3 to 10 not run (too many timeouts)" in said
    assert kernel.run("1 + 1") == "2"


def test_hints_open_one_at_a_time_in_the_store_pytest_uses(kernel: Kernel, course: Path) -> None:
    kernel.result(lesson("causal_attention", mistake("causal_attention")))
    first = kernel.result("%lesson_hints causal_attention")["text/plain"]
    assert "Hint 1:" in first and "Hint 2:" not in first
    second = kernel.result("%lesson_hints causal_attention")["text/plain"]
    assert "Hint 1:" in second and "Hint 2:" in second and "Hint 3:" not in second
    assert not re.search(r"\d+ (more )?hints? (left|remain)", second)
    stored = list((course / ".pytest_cache" / "v" / "lessons" / "hints").glob("causal_attention-*"))
    assert [json.loads(p.read_text()) for p in stored] == [2]
    # pytest opens the next one from the same store, and the notebook sees it.
    (course / "exercises" / "causal_attention" / "solution.py").write_text(
        mistake("causal_attention")
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "exercises/causal_attention", "--lesson-hints"],
        cwd=course, env=clean_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "Hint 3:" in done.stdout and "That was the last hint of causal_attention" in done.stdout
    third = kernel.result("%lesson_hints causal_attention")["text/plain"]
    assert "Hint 3:" in third and "That was the last hint" in third
    gate = kernel.result("%lesson_solution causal_attention")["text/plain"]
    assert "opens once all its cases pass" in gate
    assert "`%lesson_solution causal_attention show-anyway`" in gate


def test_a_cell_that_ends_its_process_fails_its_cases_and_the_kernel_lives(kernel: Kernel) -> None:
    code = "import os\n\ndef solve(X, heads):\n    os._exit(0)\n"
    text = kernel.result(lesson("split_heads", code))["text/plain"]
    assert text.startswith("split_heads: 1 failed,") and "passed" not in text.split("\n")[0]
    assert kernel.run("6 * 7") == "42"


def test_a_cell_that_reads_the_reference_is_refused(kernel: Kernel, course: Path) -> None:
    from pytest_lessons.isolation import sandbox

    if not sandbox.probe().abi:
        pytest.skip("this kernel has no Landlock: the sandbox cannot refuse a read")
    reference = course / "exercises" / "split_heads" / "reference.py"
    code = f"def solve(X, heads):\n    return open({str(reference)!r}).read()\n"
    text = " ".join(kernel.result(lesson("split_heads", code))["text/plain"].split())
    assert "is not allowed while grading" in text
    assert "def solve" not in text.split("your code")[0]
    # The course's shared input files too, which the grader reads for the learner's code.
    fixture = course / "exercises" / "fixtures" / "tiny_embeddings.safetensors"
    code = f"def solve(idx, wte, wpe):\n    return open({str(fixture)!r}, 'rb').read()\n"
    text = " ".join(kernel.result(lesson("token_embeddings", code))["text/plain"].split())
    assert "is not allowed while grading" in text


def test_a_cell_gives_the_verdicts_points_and_headlines_pytest_gives(
    kernel: Kernel, course: Path
) -> None:
    """For each kind of lesson (:func:`helpers.course.representative`: every feature a lesson
    of the course uses is in one of them), its reference and one of its mistakes: graded from
    a cell, then by ``pytest`` with the same code in solution.py. The notebook and pytest share
    the grader: what could differ is what each feature's lesson hands it."""

    def from_cells(codes: dict[str, str]) -> list[tuple[Any, ...]]:
        found = []
        for name, code in codes.items():
            kernel.result(lesson(name, code))
            dumped = kernel.run("import json; print(json.dumps([r.to_dict() for r in _.results]))")
            found += [_key(r) for r in json.loads(dumped)]
        return found

    def from_pytest(codes: dict[str, str]) -> list[tuple[Any, ...]]:
        for name, code in codes.items():
            (course / "exercises" / name / "solution.py").write_text(code)
        subprocess.run(
            [sys.executable, "-m", "pytest", *(f"exercises/{name}" for name in codes),
             "-p", "no:cacheprovider",
             "--lesson-report=report.json", "--lesson-report-format=json"],
            cwd=course, env=clean_env(), capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        report = json.loads((course / "report.json").read_text())
        return [_key(r) for r in report["results"]]

    for codes in (
        {name: source(name, "reference.py") for name in KINDS_OF_LESSON},
        {name: mistake(name) for name in KINDS_OF_LESSON},
    ):
        cells = from_cells(codes)
        assert len(cells) > 4 * len(KINDS_OF_LESSON)
        assert sorted(cells) == sorted(from_pytest(codes))


def _key(result: dict[str, Any]) -> tuple[Any, ...]:
    return (
        result["exercise"],
        result["id"],
        result["status"],
        result["points"],
        result["headline"],
        result["diagnosis"],
    )


def test_interrupting_or_restarting_the_kernel_leaves_no_process(course: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("processes are looked for in /proc")
    own = Kernel(course / "exercises")
    try:
        own.run("%load_ext pytest_lessons")
        assert not descendants(own.pid)
        # The worker starts with the first graded cell, and only then.
        own.result(lesson("split_heads", source("split_heads", "reference.py")))
        worker = descendants(own.pid)
        assert worker
        code = lesson("split_heads", "def solve(X, heads):\n    while True:\n        pass\n")
        # Sent as a cell whose error does not stop the cells after it: with stop_on_error
        # (what "Run all" sends) ipykernel cancels every execute request it gets until its
        # shell thread clears an "aborting" flag, which it does only after sending this cell's
        # reply, so the next cell, sent on that reply, was now and then cancelled unrun and
        # showed nothing. Which cells ipykernel cancels is not what is tested here.
        own.client.kc.execute(code, stop_on_error=False)
        # A case's own process is running (the worker's child, below the kernel's child).
        assert wait_until(lambda: len(descendants(own.pid)) > len(worker), 30)
        running = descendants(own.pid)
        run_sync(own.client.km.interrupt_kernel)()
        reply = run_sync(own.client.kc.get_shell_msg)(timeout=60)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        shown = "\n".join(reply["content"]["traceback"])
        assert "the cell's grading was stopped" in shown and "runner.py" not in shown
        assert wait_until(lambda: not alive(running), 10), "processes left after an interrupt"
        assert own.run("1 + 1") == "2"
        # The next cell starts a new worker, and a restart stops it.
        own.result(lesson("split_heads", source("split_heads", "reference.py")))
        before = descendants(own.pid)
        assert before
        run_sync(own.client.km.restart_kernel)(now=False)
        assert wait_until(lambda: not alive(before), 15), "processes left after a restart"
    finally:
        own.close()


def test_the_course_notebook_runs_as_shipped(tmp_path: Path) -> None:
    """exercises/course.ipynb, executed top to bottom as Jupyter's "Run all" does: each lesson
    cell shows its feedback (the starters are not implemented yet) and nothing raises. On a
    course of its own: the module's copy remembers the lessons other tests graded."""
    course = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", course / "exercises")
    shutil.copy(ROOT / "pyproject.toml", course / "pyproject.toml")
    notebook = nbformat.read(ROOT / "exercises" / "course.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=240,
        kernel_name="python3",
        resources={"metadata": {"path": str(course / "exercises")}},
    )
    client.execute(env=clean_env(PYTEST_LESSONS_TIMEOUT=str(TIMEOUT)))
    shown = [
        output["data"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "data" in output
    ]
    lessons = [data for data in shown if "text/html" in data and "lessons:" in data["text/plain"]]
    assert len(lessons) == 3
    for data in lessons:
        said = " ".join(data["text/plain"].split())
        assert (
            "is not implemented yet. Open your cell and replace `raise NotImplementedError`" in said
        )
        assert data["text/plain"].rstrip("\n").split("\n")[-1].startswith("lessons: ")
    # "Run all" runs each starter and then the hints cell: a starter is no try, so no hint
    # opens (a notebook run from the top would open one of every lesson), and it says why.
    hints = [data["text/plain"] for data in shown if "Hint 1:" in data["text/plain"]]
    assert not hints
    assert any(
        "then ask again: a hint opens for a lesson you have tried" in data["text/plain"]
        for data in shown
    )
