"""A statistical case end to end: cases per second, against a seeded case of the same lesson.
Run from the repository root:

    python benchmarks/statistical.py                      # fork mode, N = 1,000 and 10,000
    python benchmarks/statistical.py --isolation spawn --rounds 3
    python benchmarks/statistical.py --lesson get_batch   # a course lesson's statistical cases

The lesson is chapter 8's sampler in small: ``solve(logits, k, temperature, g)`` divides one
row of 8 logits by the temperature, keeps the top 5 and draws one token with
``torch.multinomial(probs, 1, generator=g)``. Each round grades, through the grading core (a
fresh :class:`~pytest_lessons.core.grader.Grader`, so nothing is cached between rounds):

* ``seeded``: one call, its token compared exactly;
* ``draws=N``: the statistical case, N calls with one generator in the child, the counts sent
  back and tested against the exact distribution (given inline, so no reference runs).

The medians are printed as seconds and cases per second, and per call for the statistical
cases (what a lesson author divides their case's time limit by).

``--lesson NAME`` grades instead the statistical cases of ``exercises/NAME`` with its
``reference.py`` as each round's learner, as a class run does: one grader, so the reference's
distribution and draws per call are asked once, and each round another learner. It prints the
median wall time a learner and, with ``--isolation off`` (the case runs in this process), the
median CPU time a learner (``time.process_time``), the figure a class run's CPU-seconds add up.
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


def course_lesson(name: str, isolation: str, rounds: int, settle: float) -> None:
    """The median wall and CPU seconds of a learner's statistical cases of lesson *name*."""
    exercise = model.load(ROOT / "exercises" / name / "exercise.toml")
    cases = [case for case in exercise.cases if case.draws is not None]
    settings = Settings(given={"timeout": 120.0}, isolation=isolation)
    runner = make_runner(isolation)
    runner.warm_up()
    grader = Grader(runner, settings)
    walls: dict[str, list[float]] = {case.name or "": [] for case in cases}
    cpus: dict[str, list[float]] = {case.name or "": [] for case in cases}
    reference = (exercise.path.parent / "reference.py").read_text()
    temp = tempfile.TemporaryDirectory()
    try:
        for round_number in range(rounds + 1):
            # Each learner's own file: the grader keeps one outcome per file's bytes.
            folder = Path(temp.name) / f"learner-{round_number}" / name
            folder.mkdir(parents=True)
            (folder / "solution.py").write_text(f"{reference}\n# learner {round_number}\n")
            for case in cases:
                attempt = Attempt(
                    exercise,
                    case,
                    solution=folder / "solution.py",
                    learner=f"learner-{round_number}",
                    folder=folder.parent,
                )
                time.sleep(settle)
                started, cpu = time.perf_counter(), time.process_time()
                graded = grader.grade(attempt)
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
                assert graded.passed, graded.text
                if round_number:  # the first round asks the reference, once a session
                    walls[case.name or ""].append(wall)
                    cpus[case.name or ""].append(cpu)
    finally:
        runner.close()
        temp.cleanup()
    print(f"{name}, isolation {isolation}, {rounds} rounds, medians a learner:")
    for case in cases:
        label = case.name or ""
        line = f"  {label[:40]:<40} {case.draws:>7,} calls {statistics.median(walls[label]):7.3f} s"
        if isolation == "off":
            line += f"  cpu {statistics.median(cpus[label]):7.3f} s"
        print(line)


def main() -> None:
    parser = run_options.parser(rounds=7)
    parser.add_argument("--draws", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--lesson", help="a course lesson's statistical cases instead")
    args = parser.parse_args()
    settle = run_options.settle(args)
    if args.lesson:
        course_lesson(args.lesson, args.isolation, args.rounds, settle)
        return
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
