"""A case whose input is a 1M-float file, end to end, against the same case with a small
inline input. Run from the repository root:

    python benchmarks/file_input.py               # 15 rounds, fork mode
    python benchmarks/file_input.py --rounds 5 --isolation spawn   # waits 6 s before each case

Each round grades one case of each lesson through the core (``Runs.job``: the file's packed
argument, then the runner: the job sent to the worker, the child's rebuild of the input, the
call, the answer back); the lessons alternate, and the medians are printed with the cost of
the file input above the inline one (target: at most 0.2 s a case). The lessons:

* ``inline``: ``x = [[1.0, 2.0], [3.0, 4.0]]``, ``solve`` returns ``x[0][0]``.
* ``file``: ``x = { file = "big.safetensors", key = "w" }``, a 1000×1000 float32 tensor (4 MB),
  passed as nested lists (as ``.tolist()`` gives them).
* ``tensor``: the same file with ``pass = "tensor"``: the child builds the tensor from the raw
  bytes.
* ``json``: the same 1M numbers written inline as a JSON list (what format 1 could do, for
  comparison; its collection alone reads a 20 MB TOML file, so it is timed from the model).

The first round of each (the file read, checksummed and packed once per session) is reported
apart.
"""

from __future__ import annotations

import json
import random
import statistics
import struct
import sys
import tempfile
import time
from array import array
from pathlib import Path

import run_options

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_lessons.core import model  # noqa: E402
from pytest_lessons.core.runs import Runs  # noqa: E402
from pytest_lessons.core.settings import Settings  # noqa: E402
from pytest_lessons.isolation.outcome import RETURNED  # noqa: E402
from pytest_lessons.isolation.runner import make_runner  # noqa: E402

SIDE = 1000
SOLUTION = "def solve(x):\n    return float(x[0][0])\n"


def safetensors(name: str, values: array, shape: list[int]) -> bytes:
    """A one-tensor safetensors file of float32 *values*."""
    data = values.tobytes()
    header = json.dumps({name: {"dtype": "F32", "shape": shape, "data_offsets": [0, len(data)]}})
    return struct.pack("<Q", len(header)) + header.encode() + data


def lesson(root: Path, name: str, inputs: str, value: str) -> model.Exercise:
    folder = root / name
    folder.mkdir(exist_ok=True)
    (folder / "solution.py").write_text(SOLUTION)
    (folder / "exercise.toml").write_text(
        f'[exercise]\ntitle = "{name}"\ninputs = {inputs}\n\n[[case]]\nx = {value}\nexpected = 0\n'
    )
    return model.load(folder / "exercise.toml")


def main() -> None:
    parser = run_options.parser(rounds=15)
    args = parser.parse_args()
    settle = run_options.settle(args)
    rng = random.Random(0)
    values = array("f", (rng.uniform(-1, 1) for _ in range(SIDE * SIDE)))
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        lessons = {
            "inline": lesson(root, "inline", '["x"]', "[[1.0, 2.0], [3.0, 4.0]]"),
        }
        for name, inputs in (("file", '["x"]'), ("tensor", '[{ name = "x", pass = "tensor" }]')):
            (root / name).mkdir()
            (root / name / "big.safetensors").write_bytes(safetensors("w", values, [SIDE, SIDE]))
            lessons[name] = lesson(root, name, inputs, '{ file = "big.safetensors", key = "w" }')
        rows = [values[i : i + SIDE].tolist() for i in range(0, SIDE * SIDE, SIDE)]
        runner = make_runner(args.isolation)
        runs = Runs(runner, Settings(given={}, isolation=args.isolation))
        runner.warm_up()
        times: dict[str, list[float]] = {name: [] for name in [*lessons, "json"]}
        first: dict[str, float] = {}
        try:
            for round_number in range(args.rounds + 1):
                for name, exercise in lessons.items():
                    case = exercise.cases[0]
                    time.sleep(settle)
                    started = time.perf_counter()
                    job = runs.job(exercise, exercise.solution, "solve", case.inputs)
                    outcome = runner.run(job)
                    seconds = time.perf_counter() - started
                    assert outcome.kind == RETURNED, outcome
                    if round_number == 0:
                        first[name] = seconds
                    else:
                        times[name].append(seconds)
                # Format 1's way: the same numbers inline, as JSON in the job.
                time.sleep(settle)
                started = time.perf_counter()
                job = runs.job(lessons["inline"], lessons["inline"].solution, "solve", {"x": rows})
                outcome = runner.run(job)
                seconds = time.perf_counter() - started
                assert outcome.kind == RETURNED, outcome
                if round_number:
                    times["json"].append(seconds)
        finally:
            runner.close()
    base = statistics.median(times["inline"])
    print(f"{args.isolation} mode, {args.rounds} rounds, medians per case:")
    for name, found in times.items():
        median = statistics.median(found)
        extra = f"  (+{median - base:.3f} s above inline)" if name != "inline" else ""
        once = f"; first case {first[name]:.3f} s" if name in first else ""
        print(f"  {name:7s} {median:.3f} s{extra}{once}")


if __name__ == "__main__":
    main()
