"""A 10-step training scenario graded through a lesson's harness, against the same steps in
one plain call. Run from the repository root:

    python benchmarks/harness.py                      # 15 rounds, fork mode
    python benchmarks/harness.py --isolation spawn --rounds 5   # waits 6 s before each case

Each round grades one case of each lesson through the core (``Grader.grade``: the job with its
harness's bytes, the runner, the child, the judge) and the medians are printed. The lessons:

* ``harness``: ``harness.py`` builds the learner's ``TinyModel(8)`` (a linear layer), loads its
  weights with ``load_strict`` (names and shapes checked, then ``load_state_dict(strict=True)``),
  makes an SGD optimizer and calls the learner's ``train_step(model, optimizer, x, y)`` 10
  times; the observable is the list of the 10 losses (``list[float]``), and ``x`` is declared
  ``after = "unchanged"``, so it is checked after the 10 steps too.
* ``plain``: ``solve(w, x, y)`` does the same 10 steps itself and returns the losses: what a
  lesson without a harness would have to ask of the learner.

The difference is the harness's own cost a case (loading it, the learner's view, the
read-back of the unchanged input). An optimizer's first step imports ``torch._dynamo`` (some
800 modules, seconds on a loaded machine) in every child unless the worker has:
``--preload torch,torch._dynamo`` (the run setting ``--lesson-preload``) shows the difference.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import run_options

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_lessons.core import model  # noqa: E402
from pytest_lessons.core.attempt import Attempt  # noqa: E402
from pytest_lessons.core.grader import Grader  # noqa: E402
from pytest_lessons.core.settings import Settings  # noqa: E402
from pytest_lessons.isolation.runner import make_runner  # noqa: E402

INPUTS = (
    '[{ name = "w", pass = "tensor", dtype = "float32" }, '
    '{ name = "x", pass = "tensor", dtype = "float32", after = "unchanged" }, '
    '{ name = "y", pass = "tensor", dtype = "float32" }]'
)
CASE = """
[[case]]
w = [[0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8]]
x = [[1, 0, 0, 0, 0, 0, 0, 1], [0, 1, 0, 0, 0, 0, 1, 0],
     [0, 0, 1, 0, 0, 1, 0, 0], [0, 0, 0, 1, 1, 0, 0, 0]]
y = [[1.0], [0.0], [1.0], [0.0]]
expected = { from = "reference" }
"""
HARNESS = """
import torch
from pytest_lessons.harness import load_strict


def drive(learner, w, x, y):
    model = learner.TinyModel(8)
    load_strict(model, {"linear.weight": w, "linear.bias": torch.zeros(1)}, "TinyModel")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return {"losses": [float(learner.train_step(model, optimizer, x, y)) for _ in range(10)]}
"""
MODULE = """
import torch


class TinyModel(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = torch.nn.Linear(width, 1)

    def forward(self, x):
        return self.linear(x)


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
"""
PLAIN = (
    MODULE
    + """

def solve(w, x, y):
    model = TinyModel(8)
    model.load_state_dict({"linear.weight": w, "linear.bias": torch.zeros(1)}, strict=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return [train_step(model, optimizer, x, y) for _ in range(10)]
"""
)


def lesson(root: Path, name: str, head: str, code: str, **files: str) -> model.Exercise:
    folder = root / name
    folder.mkdir()
    for file, text in {"solution.py": code, "reference.py": code, **files}.items():
        (folder / file).write_text(text)
    (folder / "exercise.toml").write_text(
        f'[exercise]\ntitle = "{name}"\ninputs = {INPUTS}\n'
        f'outputs = [{{ name = "losses", kind = "list[float]" }}]\n{head}\n{CASE}'
    )
    return model.load(folder / "exercise.toml")


def main() -> None:
    parser = run_options.parser(rounds=15)
    parser.add_argument(
        "--preload",
        default="torch",
        help="modules the worker imports first (torch,torch._dynamo: an optimizer's first step "
        "imports torch._dynamo, some 800 modules, which each case pays for otherwise)",
    )
    args = parser.parse_args()
    settle = run_options.settle(args)
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        lessons = {
            "plain": lesson(root, "plain", "", PLAIN),
            "harness": lesson(
                root,
                "harness",
                'entry = "TinyModel"\nharness = "harness.py"',
                MODULE,
                **{"harness.py": HARNESS},
            ),
        }
        runner = make_runner(args.isolation, preload=tuple(args.preload.split(",")))
        grader = Grader(runner, Settings(given={}, isolation=args.isolation))
        runner.warm_up()
        times: dict[str, list[float]] = {name: [] for name in lessons}
        try:
            for round_number in range(args.rounds + 1):
                for name, exercise in lessons.items():
                    # A fresh grader's caches each round: the case and its reference both run.
                    grader = Grader(runner, Settings(given={}, isolation=args.isolation))
                    time.sleep(settle)
                    started = time.perf_counter()
                    graded = grader.grade(Attempt(exercise, exercise.cases[0]))
                    seconds = time.perf_counter() - started
                    assert graded.passed, graded.text
                    if round_number:
                        times[name].append(seconds)
        finally:
            runner.close()
    print(
        f"{args.isolation} mode, preload {args.preload}, {args.rounds} rounds, median per case "
        "(learner + reference):"
    )
    base = statistics.median(times["plain"])
    for name, found in times.items():
        median = statistics.median(found)
        extra = f"  ({median - base:+.3f} s against plain)" if name != "plain" else ""
        print(f"  {name:8s} {median:.3f} s, {1 / median:.1f} cases/s{extra}")


if __name__ == "__main__":
    main()
