"""What ``pytest exercises/combine_heads`` costs against its floor (issue 21), and where the gap is.

    python benchmarks/floor.py                # 7 rounds
    python benchmarks/floor.py --rounds 11

The floor is what grading cannot do without: ``python -c`` that imports torch, loads the
reference and calls its ``solve`` on the inputs of the lesson's 10 cases (4 written, 6
generated). Against it, in alternating rounds, with the reference as solution.py in a copy of
``exercises/`` alone (pytest's root folder is that copy, as a learner's course folder is;
``-p no:cacheprovider``, nothing written back):

- ``pytest combine_heads``: a learner's run, as pytest's plugin, worker and sandbox make it;
- the same with ``--lesson-sandbox=off`` and with ``--lesson-isolation=off`` (no worker: the
  cases run in pytest itself), which tell the sandbox's and the worker's shares;
- the stages without torch: ``python -c pass``, ``import pytest``, that and ``import
  pytest_lessons.plugin``, and ``pytest --collect-only --lesson-isolation=off`` (pytest's
  start-up with every installed plugin, and the lesson's collection; no worker started).

Bytecode: a package installed with pip has its modules compiled once, at install; a checkout
writes ``__pycache__`` on the first run. Where ``PYTHONDONTWRITEBYTECODE`` is set (this
workplace sets it), every ``pytest`` run compiles this package's ~30 modules from source again
(~0.15 s CPU), while torch's and pytest's bytecode came with their wheels. So by default every
command runs with the variable removed and ``PYTHONPYCACHEPREFIX`` set to a fresh folder (the
first, unmeasured round writes the bytecode there); ``--no-bytecode-cache`` keeps the
environment as it is.

Printed: the median wall time and CPU time (user + system of the process tree) of each, and
the ratio of each to the floor. Figures on a shared machine swing with its load: the load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = "combine_heads"


def _inputs() -> list[list[object]]:
    """The inputs of the lesson's cases, as the plugin makes them (written, then generated)."""
    sys.path.insert(0, str(ROOT))
    from pytest_lessons.core.model import load

    exercise = load(ROOT / "exercises" / LESSON / "exercise.toml")
    return [list(case.inputs.values()) for case in exercise.cases]


FLOOR = """
import json, sys
import torch
source = open(sys.argv[1]).read()
space = {"__name__": "solution"}
exec(compile(source, sys.argv[1], "exec"), space)
for inputs in json.loads(sys.argv[2]):
    space["solve"](*inputs)
"""


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-bytecode-cache", action="store_true")
    options = parser.parse_args()
    rounds = options.rounds
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    course = Path(tempfile.mkdtemp(prefix="lessons-floor-"))
    try:
        shutil.copytree(ROOT / "exercises", course / "exercises")
        folder = course / "exercises" / LESSON
        shutil.copy(folder / "reference.py", folder / "solution.py")
        inputs = json.dumps(_inputs())
        python = sys.executable
        pytest = [python, "-m", "pytest", LESSON, "-q", "-p", "no:cacheprovider"]
        commands = {
            "floor (python, import torch, the solves)": [
                python,
                "-c",
                FLOOR,
                str(folder / "reference.py"),
                inputs,
            ],
            "pytest combine_heads": pytest,
            "  --lesson-sandbox=off": [*pytest, "--lesson-sandbox=off"],
            "  --lesson-isolation=off": [*pytest, "--lesson-isolation=off"],
            "python -c pass": [python, "-c", "pass"],
            "python -c 'import pytest'": [python, "-c", "import pytest"],
            "  and import pytest_lessons.plugin": [
                python,
                "-c",
                "import pytest, pytest_lessons.plugin",
            ],
            "pytest --collect-only --lesson-isolation=off": [
                *pytest,
                "--collect-only",
                "--lesson-isolation=off",
            ],
        }
        cwd = course / "exercises"
        env = dict(os.environ)
        if not options.no_bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(course / "bytecode")
        print(
            "bytecode:",
            "as the environment has it"
            if options.no_bytecode_cache
            else "cached (written in the first, unmeasured round)",
            f"(PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r})",
        )
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for command in commands.values():  # once, so that every file is in the page cache
            _timed(command, cwd, env)
        for _ in range(rounds):
            for name, command in commands.items():
                times[name].append(_timed(command, cwd, env))
    finally:
        shutil.rmtree(course, ignore_errors=True)
    floor_wall, floor_cpu = (
        statistics.median(t[i] for t in times[next(iter(times))]) for i in (0, 1)
    )
    for name, found in times.items():
        wall = statistics.median(t[0] for t in found)
        cpu = statistics.median(t[1] for t in found)
        print(
            f"{name:44s} {wall:6.2f} s wall ({wall / floor_wall:4.2f}x)  "
            f"{cpu:6.2f} s CPU ({cpu / floor_cpu:4.2f}x)"
        )
    print(f"medians of {rounds}; load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
