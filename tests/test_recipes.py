"""The documented CI recipes, run as far as this machine allows (no GitHub, no Gradescope)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema

from conftest import COMBINE_HEADS, NO_TRANSPOSE, dedent

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "docs" / "recipes"
SCHEMAS = Path(__file__).parent / "schemas"


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def course(where: Path) -> Path:
    shutil.copytree(
        COMBINE_HEADS,
        where / "exercises" / "combine_heads",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return where


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def test_the_gradescope_recipe_writes_results_json(tmp_path: Path) -> None:
    root = tmp_path / "autograder"
    course(root / "source")
    submission = root / "submission" / "combine_heads"
    submission.mkdir(parents=True)
    (submission / "solution.py").write_text(dedent(NO_TRANSPOSE))
    (root / "submission" / "conftest.py").write_text("raise SystemExit('never loaded')\n")
    env = environment() | {"AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable}
    run = subprocess.run(
        ["bash", str(RECIPES / "gradescope" / "run_autograder")],
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


def test_the_github_classroom_grade_step_hands_the_reporter_a_base64_result(tmp_path: Path) -> None:
    workflow = (RECIPES / "github-classroom" / "classroom.yml").read_text()
    step = re.search(r"id: lessons\n\s+run: \|\n((?:\s{10}.*\n)+)", workflow)
    assert step is not None
    script = dedent(step.group(1))
    repository = course(tmp_path / "repo")
    (repository / "exercises" / "combine_heads" / "solution.py").write_text(dedent(NO_TRANSPOSE))
    output = tmp_path / "github_output"
    env = environment() | {
        "GITHUB_OUTPUT": str(output),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    run = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=repository,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    name, _, encoded = output.read_text().strip().partition("=")
    assert name == "result"
    # What the reporter does with LESSONS_RESULTS: base64, then JSON.
    result = json.loads(base64.b64decode(encoded))
    jsonschema.validate(result, schema("classroom"))
    assert result["status"] == "fail" and result["max_score"] == 10
    assert sum(t["score"] for t in result["tests"]) == 2
    assert "LESSONS_RESULTS" in workflow and "runners: lessons" in workflow
