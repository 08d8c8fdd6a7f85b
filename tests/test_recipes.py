"""The documented CI recipes, run as far as this machine allows (no GitHub, no Gradescope, no
PyTorch index): each installs pytest-lessons from the wheel we build, in a new virtual
environment, and grades for real; the output is checked against the platform's format."""

from __future__ import annotations

import base64
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import jsonschema
import pytest
from packaging.requirements import Requirement

from helpers import COMBINE_HEADS, DOUBLE_RIGHT, DOUBLE_TOML, NO_TRANSPOSE, dedent

#: Every recipe grades the combine_heads lesson, which needs torch.
pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "docs" / "recipes"
SCHEMAS = Path(__file__).parent / "schemas"

#: The one line every recipe and the README use for torch: PyTorch's CPU wheels.
TORCH_LINE = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def course(where: Path) -> Path:
    shutil.copytree(
        COMBINE_HEADS,
        where / "exercises" / "combine_heads",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return where


def environment(venv_dir: Path = Path(sys.executable).parent.parent) -> dict[str, str]:
    """This machine's environment with *venv_dir* first on PATH and nothing that would let
    the recipe import pytest-lessons from this checkout instead of the installed wheel: every
    Python these tests start for a recipe gets it (a developer may run the suite with
    ``PYTHONPATH`` pointing at a checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env.pop("VIRTUAL_ENV", None)
    return env


def _closure(name: str) -> list:
    """The installed distributions *name* needs, itself included."""
    import importlib.metadata as metadata

    seen: dict[str, metadata.Distribution] = {}
    todo = [name]
    while todo:
        dist = metadata.distribution(todo.pop())
        key = dist.metadata["Name"].lower()
        if key in seen:
            continue
        seen[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(seen.values())


def torch_venv(where: Path, shared: Path) -> Path:
    """A new virtual environment at *where* that sees this environment's torch and pytest with
    their dependencies, and nothing else of it: the recipes' torch line then finds torch
    installed and downloads nothing (PyTorch's index is out of reach here, and the CUDA build
    must never be pulled), and installing our wheel downloads nothing either, as from a
    platform's pip cache. What the recipe installs is still only the wheel we built."""
    if not shared.exists():
        shared.mkdir(parents=True)
        for dist in _closure("torch") + _closure("pytest"):
            site = Path(dist.locate_file(""))
            for file in dist.files or []:
                top = file.parts[0]
                if top != ".." and not (shared / top).exists() and (site / top).exists():
                    (shared / top).symlink_to(site / top)
    venv.create(where, with_pip=True)
    (site,) = where.glob("lib/python*/site-packages")
    (site / "torch-from-tests.pth").write_text(f"{shared}\n")
    return where


@pytest.fixture(scope="module")
def shared_torch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shared") / "torch"


@pytest.fixture
def checkout_on_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PYTHONPATH`` pointing at this checkout, as a developer may run the suite: a recipe
    must still install and import the wheel, so every Python started for it drops the
    variable (``environment()``)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


#: What a checkout holds that no build reads: left out of the copy a wheel is built from.
UNSHIPPED = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*_cache", "mutants")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest-lessons built as a wheel, as a course author builds it, from a clean copy of the
    checkout: built in place, setuptools ships whatever a stale ``build/`` folder holds, which
    hid a wheel without the package's folders."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "pytest-lessons"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*UNSHIPPED))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(out), source],
        env=environment(),
        check=True,
        timeout=600,
    )
    (built,) = out.glob("pytest_lessons-*.whl")
    return built


def installed_from(python: Path) -> str:
    """The file *python* imports pytest_lessons from, in the environment a recipe runs in."""
    return subprocess.run(
        [str(python), "-c", "import pytest_lessons; print(pytest_lessons.__file__)"],
        cwd=python.parent,  # not this checkout, whose folder -c would put first on sys.path
        env=environment(python.parent.parent),
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.slow
def test_the_build_makes_a_wheel_and_sdist_that_twine_accepts(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    built = sorted(p.name for p in tmp_path.iterdir())
    assert built == ["pytest_lessons-0.1.0-py3-none-any.whl", "pytest_lessons-0.1.0.tar.gz"]
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, tmp_path.iterdir())],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    with zipfile.ZipFile(tmp_path / built[0]) as whl:
        names = whl.namelist()
    assert "pytest_lessons/exercise.schema.json" in names and "pytest_lessons/py.typed" in names


@pytest.mark.slow
@pytest.mark.usefixtures("checkout_on_pythonpath")
def test_the_gradescope_recipe_ships_the_wheel_and_writes_results_json(
    tmp_path: Path, shared_torch: Path
) -> None:
    grading = course(tmp_path / "course")
    zip_path = tmp_path / "autograder.zip"
    make = subprocess.run(
        [
            "bash",
            str(RECIPES / "gradescope" / "make_autograder.sh"),
            str(grading / "exercises"),
            str(zip_path),
        ],
        env=environment() | {"PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert make.returncode == 0, make.stdout + make.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        archive.extractall(root / "source")
    assert {"setup.sh", "run_autograder", "exercises/combine_heads/exercise.toml"} <= set(names)
    assert any(re.fullmatch(r"pytest_lessons-[\d.]+-py3-none-any\.whl", n) for n in names)
    # Gradescope's image build: setup.sh in a machine whose venv is there (here: one that
    # already sees torch, so the CPU index is not needed).
    venv_dir = torch_venv(root / "venv", shared_torch)
    env = environment(venv_dir) | {"AUTOGRADER_ROOT": str(root)}
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert str(venv_dir) in installed_from(venv_dir / "bin" / "python")
    # A submission: the learner's solution, and a conftest.py that must never be loaded.
    submission = root / "submission" / "combine_heads"
    submission.mkdir(parents=True)
    (submission / "solution.py").write_text(dedent(NO_TRANSPOSE))
    (root / "submission" / "conftest.py").write_text("raise SystemExit('never loaded')\n")
    run = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, schema("gradescope"))
    assert results["score"] == 2 and len(results["tests"]) == 10
    assert (
        "Watch out: each row of your answer mixes different tokens" in results["tests"][0]["output"]
    )


def step_script(workflow: str, name: str) -> str:
    """The ``run: |`` script of the workflow step named *name*."""
    step = re.search(
        rf"- name: {re.escape(name)}\n(?:\s+(?!run:)\S.*\n)*?\s+run: \|\n((?:\s{{10}}.*\n|\n)+)",
        workflow,
    )
    assert step is not None, name
    return dedent(step.group(1))


def runner(tmp_path: Path, learner: Path) -> dict[str, str]:
    """What GitHub sets for a job's steps: the learner's checkout, and the runner's own
    temporary folder outside it."""
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    return {"GITHUB_WORKSPACE": str(learner), "RUNNER_TEMP": str(temp)}


@pytest.mark.slow
@pytest.mark.usefixtures("checkout_on_pythonpath")
def test_the_github_classroom_workflow_grades_the_grading_copy_with_the_wheel(
    tmp_path: Path, wheel: Path, shared_torch: Path
) -> None:
    workflow = (RECIPES / "github-classroom" / "classroom.yml").read_text()
    # The learner's repository: their copy of the course, with their answer and a file that
    # claims to be the lesson's reference (it must not be what grades them).
    learner = course(tmp_path / "repo")
    lesson = learner / "exercises" / "combine_heads"
    (lesson / "solution.py").write_text(dedent(NO_TRANSPOSE))
    (lesson / "exercise.toml").write_text("[exercise]\ntitle = 'forged'\ninputs = ['x']\n")
    # The grading copy, as actions/checkout fetches the private course repository.
    grading = course(learner / ".grading")
    (grading / "dist").mkdir()
    shutil.copy(wheel, grading / "dist")
    venv_dir = torch_venv(tmp_path / "venv", shared_torch)
    output = tmp_path / "github_output"
    env = environment(venv_dir) | {"GITHUB_OUTPUT": str(output)} | runner(tmp_path, learner)
    for name in ("Install", "Grade"):
        run = subprocess.run(
            ["bash", "-e", "-c", step_script(workflow, name)],
            cwd=learner,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stdout + run.stderr
    assert str(venv_dir) in installed_from(venv_dir / "bin" / "python")
    assert not (learner / ".grading").exists()  # later steps never see the grading copy
    assert not (tmp_path / "runner-temp" / "lessons-grading").exists()
    name, _, encoded = output.read_text().strip().partition("=")
    assert name == "result"
    # What the reporter does with LESSONS_RESULTS: base64, then JSON.
    result = json.loads(base64.b64decode(encoded))
    jsonschema.validate(result, schema("classroom"))
    assert result["status"] == "fail" and result["max_score"] == 10
    assert sum(t["score"] for t in result["tests"]) == 2
    assert "LESSONS_RESULTS" in workflow and "runners: lessons" in workflow
    assert "secrets.LESSONS_COURSE_TOKEN" in workflow and "cache: pip" in workflow


#: What the installed wheel must hold and answer: every documented entry point and import path.
WHEEL_CHECK = """
import importlib.metadata, json, pkgutil, sys
from pathlib import Path

import pytest_lessons
import pytest_lessons.diagnose
from pytest_lessons.notebook import load_ipython_extension

(plugin,) = [e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "lessons"]
plugin.load()
package = Path(pytest_lessons.__file__).parent
print(json.dumps({
    "file": pytest_lessons.__file__,
    "modules": sorted(m.name for m in pkgutil.walk_packages(pytest_lessons.__path__, "pytest_lessons.")),
    "data": sorted(p.name for p in package.iterdir() if p.suffix in (".json", ".typed")),
    "plugin": plugin.value,
    "same_diagnosis": pytest_lessons.diagnose.Diagnosis is pytest_lessons.Diagnosis
    and pytest_lessons.diagnose.WATCH_OUT is pytest_lessons.WATCH_OUT,
    "public": [name for name in pytest_lessons.__all__ if getattr(pytest_lessons, name, None) is None],
    "load_ext": callable(pytest_lessons.load_ipython_extension)
    and callable(pytest_lessons.unload_ipython_extension) and callable(load_ipython_extension),
}))
"""


@pytest.mark.slow
def test_the_wheel_ships_every_folder_and_each_documented_entry_point_works(
    tmp_path: Path, wheel: Path, shared_torch: Path
) -> None:
    venv_dir = torch_venv(tmp_path / "venv", shared_torch)
    python = venv_dir / "bin" / "python"
    env = environment(venv_dir)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        env=env,
        check=True,
        timeout=300,
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        # From an empty folder, so nothing of this checkout can be imported instead.
        return subprocess.run(
            [str(python), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    check = run("-c", WHEEL_CHECK)
    assert check.returncode == 0, check.stderr
    found = json.loads(check.stdout)
    assert found["file"].startswith(str(venv_dir))
    import pytest_lessons

    here = pkgutil.walk_packages(pytest_lessons.__path__, "pytest_lessons.")
    assert found["modules"] == sorted(m.name for m in here)
    assert found["data"] == ["exercise.schema.json", "py.typed"]
    assert found["plugin"] == "pytest_lessons.plugin"
    assert found["same_diagnosis"] and found["public"] == [] and found["load_ext"]

    merge = run("-m", "pytest_lessons", "--help")
    assert merge.returncode == 0
    commands = re.search(r"\{([a-z,]+)\}", merge.stdout)
    assert commands and {"merge", "gradescope", "place"} <= set(commands[1].split(","))
    schema = run("-m", "pytest_lessons.schema")
    assert schema.returncode == 0, schema.stderr
    assert "exercise.toml" in json.loads(schema.stdout)["title"]
    notebook = run("-m", "pytest_lessons.notebook")
    assert notebook.returncode == 2
    assert "usage: python -m pytest_lessons.notebook NOTEBOOK.ipynb" in notebook.stderr
    # pytest finds the plugin through its pytest11 entry point: the options are there.
    options = run("-m", "pytest", "--help")
    assert options.returncode == 0 and "--lesson-check" in options.stdout


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "docs/learners/install.md",
        "docs/recipes/gradescope/setup.sh",
        "docs/recipes/github-classroom/classroom.yml",
        "docs/recipes/github-actions/grade-class.yml",
    ],
)
def test_every_recipe_installs_the_cpu_torch_and_never_pytest_lessons_from_pypi(
    path: str,
) -> None:
    text = (ROOT / path).read_text()
    assert TORCH_LINE in text
    assert "pip install pytest-lessons" not in text
    # No torch line without PyTorch's CPU index (on Linux it would pull the CUDA build).
    for line in text.splitlines():
        if re.search(r"pip install\S* .*torch==", line):
            assert "--index-url https://download.pytorch.org/whl/cpu" in line, line


# --- the autograder's own failures ---------------------------------------------------------
# A failing case (pytest's exit 1) is the learner's result: both recipes report its points and
# go on. Any other exit is the grader's fault; a recipe that went on would post a score of 0
# (or none) as if the learner had earned it. These run the recipes' own scripts with this
# environment's Python, which has pytest-lessons: what is tested is how each script treats
# pytest's exit status, not the install (the tests above cover that).

#: Courses the grader cannot grade: (what the autograder ships, what pytest says, its exit).
BROKEN_COURSES = [
    pytest.param("empty", "no tests ran", 5, id="no-exercise"),
    pytest.param("missing", "file or directory not found: exercises", 4, id="no-folder"),
]


def broken_course(where: Path, kind: str) -> Path:
    """*where* with an ``exercises`` folder that holds no exercise, or without one."""
    where.mkdir(parents=True, exist_ok=True)
    if kind == "empty":
        (where / "exercises").mkdir()
    return where


def pytest_status(course_root: Path) -> int:
    """pytest's own exit status on *course_root*'s exercises: the premise of the tests below."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "exercises", "-p", "no:cacheprovider"],
        cwd=course_root,
        env=environment(),
        capture_output=True,
        timeout=300,
    ).returncode


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "words", "status"), BROKEN_COURSES)
def test_the_gradescope_autograder_fails_when_pytest_cannot_grade(
    tmp_path: Path, kind: str, words: str, status: int
) -> None:
    root = tmp_path / "autograder"
    broken_course(root / "source", kind)
    assert pytest_status(root / "source") == status  # neither passed (0) nor failed (1)
    (root / "submission").mkdir()
    (root / "submission" / "solution.py").write_text(dedent(NO_TRANSPOSE))
    env = environment() | {
        "AUTOGRADER_ROOT": str(root),
        "PYTHON": sys.executable,
    }
    run = subprocess.run(
        ["bash", str(RECIPES / "gradescope" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0, run.stdout + run.stderr
    assert words in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "words", "status"), BROKEN_COURSES)
def test_the_github_classroom_grade_step_fails_when_pytest_cannot_grade(
    tmp_path: Path, kind: str, words: str, status: int
) -> None:
    workflow = (RECIPES / "github-classroom" / "classroom.yml").read_text()
    learner = course(tmp_path / "repo")
    (learner / "exercises" / "combine_heads" / "solution.py").write_text(dedent(NO_TRANSPOSE))
    broken_course(learner / ".grading", kind)
    assert pytest_status(learner / ".grading") == status
    output = tmp_path / "github_output"
    env = environment() | {"GITHUB_OUTPUT": str(output)} | runner(tmp_path, learner)
    run = subprocess.run(
        ["bash", "-e", "-c", step_script(workflow, "Grade")],
        cwd=learner,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0, run.stdout + run.stderr
    assert words in run.stdout + run.stderr
    # Nothing goes to the reporter: no score of 0 is posted as the learner's.
    assert not output.exists() or "result=" not in output.read_text()


def run_autograder(root: Path) -> subprocess.CompletedProcess[str]:
    """The Gradescope recipe's run_autograder on *root*, with this environment's Python."""
    env = environment(Path(sys.executable).parent.parent) | {
        "AUTOGRADER_ROOT": str(root),
        "PYTHON": sys.executable,
        "PYTEST_LESSONS_PRELOAD": "none",
    }
    return subprocess.run(
        ["bash", str(RECIPES / "gradescope" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def stub_exercises(exercises: Path, names: tuple[str, ...] = ("double", "twice")) -> Path:
    """*exercises* holding an exercise per name (DOUBLE_TOML), each a stub beside its right
    reference.py, as a grading copy of the course holds them."""
    for name in names:
        lesson = exercises / name
        lesson.mkdir(parents=True)
        (lesson / "exercise.toml").write_text(dedent(DOUBLE_TOML))
        (lesson / "solution.py").write_text("def solve(x):\n    raise NotImplementedError\n")
        (lesson / "reference.py").write_text(dedent(DOUBLE_RIGHT))
    return exercises


def two_stub_exercises(tmp_path: Path) -> Path:
    """A Gradescope root whose course has two exercises, double and twice, both stubs."""
    root = tmp_path / "autograder"
    stub_exercises(root / "source" / "exercises")
    return root


@pytest.mark.slow
def test_gradescope_grades_what_was_handed_in_and_says_what_was_not(tmp_path: Path) -> None:
    root = two_stub_exercises(tmp_path)
    (root / "source" / "exercises" / "course.toml").write_text(
        '[course]\nlessons = ["twice", "double"]\n'
    )
    upload = root / "submission"
    (upload / "double").mkdir(parents=True)
    (upload / "double" / "solution.py").write_text("def solve(x):\n    return x\n")
    run = run_autograder(root)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, schema("gradescope"))
    twice = results["tests"][:2]
    assert [t["name"] for t in results["tests"]][::2] == [
        "twice: case 1 (a row)",
        "double: case 1 (a row)",
    ]
    assert twice[0]["output"] == (
        "Not handed in: your submission has no file for twice, so this case scores 0 of 1. "
        "Upload twice/solution.py with your other files and submit again."
    )
    assert "not implemented" not in json.dumps(results)
    # A wrong answer names the learner's own file, not the grader's copy of the course.
    double = results["tests"][2]["output"]
    assert "double/solution.py" in double and "exercises/" not in double
    # One solution.py for two exercises: explained, and graded as nothing handed in.
    (upload / "double" / "solution.py").unlink()
    (upload / "double").rmdir()
    (upload / "solution.py").write_text("def solve(x):\n    return x\n")
    assert run_autograder(root).returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0
    assert results["output"].startswith(
        "Upload one folder per exercise, each with its solution.py (double/solution.py, "
        "twice/solution.py): you uploaded a single solution.py, and this assignment has 2 "
        "exercises, so it cannot tell which one it is. It was not graded.\n\n"
    )
    # One solution.py for a one-exercise assignment: graded.
    shutil.rmtree(root / "source" / "exercises" / "twice")
    (root / "source" / "exercises" / "course.toml").unlink()
    (upload / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    assert run_autograder(root).returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 2 and "Upload" not in results["output"]


@pytest.mark.slow
def test_gradescope_grades_a_link_in_the_upload_as_a_link_never_as_what_it_points_to(
    tmp_path: Path,
) -> None:
    root = tmp_path / "autograder"
    stub_exercises(root / "source" / "exercises", ("double", "twice", "thrice"))
    upload = root / "submission"
    upload.mkdir()
    # A link to the lesson's own reference, a linked exercise folder, and a right solution.
    (upload / "double").mkdir()
    (upload / "double" / "solution.py").symlink_to(
        root / "source" / "exercises" / "double" / "reference.py"
    )
    (tmp_path / "crib").mkdir()
    (tmp_path / "crib" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    (upload / "twice").symlink_to(tmp_path / "crib")
    (upload / "thrice").mkdir()
    (upload / "thrice" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    run = run_autograder(root)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, schema("gradescope"))
    assert results["score"] == 2
    tests = [(t["name"].split(": ")[0], t["score"], t["output"]) for t in results["tests"]]
    assert linked_scores(tests) == {"double": 0, "twice": 0, "thrice": 2}


@pytest.mark.slow
def test_gradescope_grades_a_folder_or_fifo_named_solution_py_as_no_file_and_never_waits(
    tmp_path: Path,
) -> None:
    """A ``solution.py`` that is a folder, or a FIFO no one writes (a read of it would wait for
    ever): placed as no file, graded as the learner's error with what to do, and the results
    written; a right solution beside them still passes. run_autograder's timeout is the guard
    against a wait."""
    root = tmp_path / "autograder"
    stub_exercises(root / "source" / "exercises", ("double", "twice", "thrice"))
    upload = root / "submission"
    (upload / "double" / "solution.py").mkdir(parents=True)
    (upload / "double" / "solution.py" / "main.py").write_text(dedent(DOUBLE_RIGHT))
    (upload / "twice").mkdir()
    os.mkfifo(upload / "twice" / "solution.py")
    (upload / "thrice").mkdir()
    (upload / "thrice" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    run = run_autograder(root)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, schema("gradescope"))
    assert results["score"] == 2
    for test in results["tests"]:
        exercise = test["name"].split(": ")[0]
        if exercise == "thrice":
            assert test["score"] == test["max_score"], test
        else:
            assert test["score"] == 0 and " ".join(test["output"].split()).startswith(
                f"Make {exercise}/solution.py a plain file with solve(x) in it: there it is a "
                "folder or a device."
            ), test
    # The place step on its own, as the GitHub Classroom recipe runs it: it exits 0, and the
    # grading copy holds no file where the learner's is none.
    copy = stub_exercises(tmp_path / "copy" / "exercises", ("double", "twice", "thrice"))
    placed = subprocess.run(
        [sys.executable, "-m", "pytest_lessons", "place", str(upload), str(copy)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert placed.returncode == 0 and placed.stdout == "", placed.stdout + placed.stderr
    assert not (copy / "double" / "solution.py").is_file()
    assert not (copy / "twice" / "solution.py").is_file()
    assert (copy / "thrice" / "solution.py").read_text() == dedent(DOUBLE_RIGHT)


def linked_scores(tests: list[tuple[str, float, str]]) -> dict[str, float]:
    """The points per exercise of *tests* (exercise, score, what the learner reads), each
    one without points checked to tell the learner, as class runs do, to hand in the file
    itself."""
    totals: dict[str, float] = {}
    for exercise, score, text in tests:
        totals[exercise] = totals.get(exercise, 0) + score
        if not score:
            assert "Hand in" in text and "itself, not a link" in text, (exercise, text)
    return totals


# --- links: a learner's file is read as data, never through a link ----------------------------
# Each recipe's grading step, run as written with this environment's Python: a solution.py
# that links to the lesson's reference, and an exercise folder that links to a right solution
# elsewhere, score nothing and say so; a right solution beside them still passes.


@pytest.mark.slow
def test_the_github_classroom_grade_step_grades_a_link_as_the_learners_error(
    tmp_path: Path,
) -> None:
    workflow = (RECIPES / "github-classroom" / "classroom.yml").read_text()
    grade_step = step_script(workflow, "Grade")
    assert "python -m pytest_lessons place " in grade_step and "cp " not in grade_step
    learner = tmp_path / "repo"
    stub_exercises(learner / ".grading" / "exercises", ("double", "twice", "thrice"))
    mine = learner / "exercises"
    # Committed as relative links, which a clone makes as they are; the grading copy is
    # fetched beside them, at .grading.
    (mine / "double").mkdir(parents=True)
    (mine / "double" / "solution.py").symlink_to("../../.grading/exercises/double/reference.py")
    (learner / "crib").mkdir()
    (learner / "crib" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    (mine / "twice").symlink_to("../crib")
    (mine / "thrice").mkdir()
    (mine / "thrice" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    output = tmp_path / "github_output"
    env = environment() | {"GITHUB_OUTPUT": str(output), "PYTEST_LESSONS_PRELOAD": "none"}
    env |= runner(tmp_path, learner)
    run = subprocess.run(
        ["bash", "-e", "-c", grade_step],
        cwd=learner,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(base64.b64decode(output.read_text().strip().partition("=")[2]))
    jsonschema.validate(result, schema("classroom"))
    tests = [(t["name"].split(": ")[0], t["score"], t["message"]) for t in result["tests"]]
    assert linked_scores(tests) == {"double": 0, "twice": 0, "thrice": 2}
    assert "exercises/double/solution.py itself, not a link" in result["tests"][0]["message"]


#: A learner's conftest.py at their repository's root: it leaves a mark, and at exit writes
#: the classroom report as all-pass (what the red team's did, after reading a reference).
FORGER = """
import atexit, json, sys
from pathlib import Path

Path(__file__).with_name("conftest-ran").write_text("imported by the grading run")


def forge():
    for arg in sys.argv:
        if arg.startswith("--lesson-report="):
            report = Path(arg.partition("=")[2])
            tests = [{"name": "forged", "status": "pass", "score": 99, "max_score": 99}]
            report.write_text(json.dumps(
                {"version": 1, "status": "pass", "max_score": 99, "tests": tests}
            ))


atexit.register(forge)
"""


@pytest.mark.parametrize(
    ("config", "text"),
    [
        ("pytest.ini", "[pytest]\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\n"),
        ("tox.ini", "[pytest]\n"),
        ("setup.cfg", "[tool:pytest]\n"),
    ],
)
@pytest.mark.slow
def test_the_github_classroom_grade_step_never_runs_the_learners_pytest_config_or_conftest(
    tmp_path: Path, config: str, text: str
) -> None:
    workflow = (RECIPES / "github-classroom" / "classroom.yml").read_text()
    learner = tmp_path / "repo"
    stub_exercises(learner / ".grading" / "exercises")
    (learner / "exercises" / "double").mkdir(parents=True)
    (learner / "exercises" / "double" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    # At the root of the learner's repository, which holds the grading copy's folder: a
    # pytest configuration would make it the run's rootdir, and its conftest.py the run's.
    (learner / config).write_text(text)
    (learner / "conftest.py").write_text(FORGER)
    # And a package named like the grader's: `python -m` imports from its folder first.
    (learner / "pytest_lessons").mkdir()
    (learner / "pytest_lessons" / "__init__.py").write_text(
        "from pathlib import Path\n\nPath(__file__).parents[1].joinpath('shadow-ran').touch()\n"
    )
    output = tmp_path / "github_output"
    env = environment() | {"GITHUB_OUTPUT": str(output), "PYTEST_LESSONS_PRELOAD": "none"}
    env |= runner(tmp_path, learner)
    run = subprocess.run(
        ["bash", "-e", "-c", step_script(workflow, "Grade")],
        cwd=learner,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (learner / "conftest-ran").exists(), run.stdout + run.stderr
    assert not (learner / "shadow-ran").exists(), run.stdout + run.stderr
    result = json.loads(base64.b64decode(output.read_text().strip().partition("=")[2]))
    jsonschema.validate(result, schema("classroom"))
    # The honest grade: double right (2 points), twice not handed in (0 of 2).
    assert result["status"] == "fail" and result["max_score"] == 4
    scores: dict[str, float] = {}
    for test in result["tests"]:
        lesson = test["name"].split(": ")[0]
        scores[lesson] = scores.get(lesson, 0) + test["score"]
    assert scores == {"double": 2, "twice": 0}
    assert f"rootdir: {tmp_path / 'runner-temp'}" in run.stdout


@pytest.mark.slow
def test_the_github_actions_grade_step_grades_a_link_as_that_learners_error(
    tmp_path: Path,
) -> None:
    workflow = (RECIPES / "github-actions" / "grade-class.yml").read_text()
    grade_step = re.search(r"run: (python -m pytest exercises .*)", workflow)
    assert grade_step is not None
    # One shard of one: which shard grades a learner is not what this checks.
    command = grade_step[1].replace("${{ matrix.shard }}/3", "1/1")
    command = command.replace("${{ matrix.shard }}", "1")
    stub_exercises(tmp_path / "exercises", ("double",))
    submissions = tmp_path / "submissions"
    (submissions / "ada" / "double").mkdir(parents=True)
    (submissions / "ada" / "double" / "solution.py").write_text(dedent(DOUBLE_RIGHT))
    (submissions / "bo" / "double").mkdir(parents=True)
    (submissions / "bo" / "double" / "solution.py").symlink_to(
        "../../../exercises/double/reference.py"
    )
    (submissions / "cy").mkdir()
    (submissions / "cy" / "double").symlink_to("../ada/double")  # a classmate's folder
    env = environment() | {"PYTEST_LESSONS_PRELOAD": "none"}
    run = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((tmp_path / "shard-1.json").read_text())
    tests = [(r["learner"], r["points"], r["message"]) for r in report["results"]]
    assert linked_scores(tests) == {"ada": 2, "bo": 0, "cy": 0}
