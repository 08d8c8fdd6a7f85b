"""A statistical case end to end: cases per second, against a seeded case of the same lesson.
Run from the repository root:

    python benchmarks/statistical.py                      # fork mode, N = 1,000 and 10,000
    python benchmarks/statistical.py --isolation spawn --rounds 3

The lesson is chapter 8's sampler in small: ``solve(logits, k, temperature, g)`` divides one
row of 8 logits by the temperature, keeps the top 5 and draws one token with
``torch.multinomial(probs, 1, generator=g)``. Each round grades, through the grading core (a
fresh :class:`~pytest_lessons.core.grader.Grader`, so nothing is cached between rounds):

* ``seeded``: one call, its token compared exactly;
* ``draws=N``: the statistical case, N calls with one generator in the child, the counts sent
  back and tested against the exact distribution (given inline, so no reference runs).

The medians are printed as seconds and cases per second, and per call for the statistical
cases (what a lesson author divides their case's time limit by).
"""

from __future__ import annotations

import math
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

SOLUTION = """
import torch

def solve(logits, k, temperature, g):
    scaled = logits / temperature
    kth = torch.topk(scaled, k, dim=-1).values[:, -1:]
    probs = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)
    return torch.multinomial(probs, 1, generator=g)
"""

LOGITS = [1.0, 0.5, 0.0, -0.5, -1.0, 2.0, 0.25, -2.0]


def distribution() -> list[float]:
    """softmax(top-5(logits / 0.8)), in plain Python."""
    scaled = [x / 0.8 for x in LOGITS]
    kth = sorted(scaled, reverse=True)[4]
    weights = [math.exp(x) if x >= kth else 0.0 for x in scaled]
    return [w / sum(weights) for w in weights]


def seeded() -> int:
    """The token the solution draws with seed 7 (computed here, with torch)."""
    import torch

    namespace: dict[str, object] = {}
    exec(SOLUTION, namespace)
    logits = torch.tensor([LOGITS])
    token = namespace["solve"](logits, 5, 0.8, torch.Generator().manual_seed(7))  # type: ignore[operator]
    return int(token)


def lesson(root: Path, draws: list[int]) -> model.Exercise:
    folder = root / "sample"
    folder.mkdir(exist_ok=True)
    (folder / "solution.py").write_text(SOLUTION)
    head = (
        '[exercise]\ntitle = "Sample"\nformat = 2\n'
        'inputs = [{ name = "logits", pass = "tensor", dtype = "float32" }, "k", '
        '"temperature", { name = "g", pass = "generator" }]\n'
        'outputs = [{ kind = "tensor[int64]" }]\n'
    )
    common = f"logits = [{LOGITS}]\nk = 5\ntemperature = 0.8\ng = 7\n"
    cases = [f"\n[[case]]\nname = 'seeded'\n{common}expected = [[{seeded()}]]\n"]
    for n in draws:
        cases.append(
            f"\n[[case]]\nname = 'draws={n}'\n{common}draws = {n}\nexpected = {distribution()}\n"
        )
    (folder / "exercise.toml").write_text(head + "".join(cases))
    return model.load(folder / "exercise.toml")


def main() -> None:
    parser = run_options.parser(rounds=7)
    parser.add_argument("--draws", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    settle = run_options.settle(args)
    settings = Settings(given={"timeout": 120.0}, isolation=args.isolation)
    with tempfile.TemporaryDirectory() as temp:
        exercise = lesson(Path(temp), args.draws)
        runner = make_runner(args.isolation)
        runner.warm_up()
        times: dict[str, list[float]] = {case.name or "": [] for case in exercise.cases}
        try:
            for round_number in range(args.rounds + 1):
                grader = Grader(runner, settings)
                for case in exercise.cases:
                    time.sleep(settle)
                    started = time.perf_counter()
                    graded = grader.grade(Attempt(exercise, case))
                    seconds = time.perf_counter() - started
                    assert graded.passed, graded.text
                    if round_number:  # the first round warms the worker's caches
                        times[case.name or ""].append(seconds)
        finally:
            runner.close()
    print(f"isolation {args.isolation}, {args.rounds} rounds, medians:")
    for name, values in times.items():
        median = statistics.median(values)
        line = f"  {name:<12} {median:8.3f} s  {1 / median:8.2f} cases/s"
        if name.startswith("draws="):
            line += f"  {median / int(name.split('=')[1]) * 1e6:6.0f} us a call"
        print(line)


if __name__ == "__main__":
    main()
