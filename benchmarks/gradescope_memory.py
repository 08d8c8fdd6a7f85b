"""Gradescope's container (768 MB by default): the peak memory of grading one upload, as the
recipe's run_autograder does, for the course's heaviest lessons. Run from the repository root:

    python benchmarks/gradescope_memory.py                 # the heaviest lessons, one by one
    python benchmarks/gradescope_memory.py --all           # every lesson handed in at once
    python benchmarks/gradescope_memory.py --hog 1500      # a solution that takes 1500 MiB

Each run is ``python -m pytest_lessons gradescope`` on a copy of the course with the lessons'
own references handed in as the learner's files (every case runs to its end), with the
environment docs/recipes/gradescope/run_autograder sets (``--defaults`` for none). The whole
process tree (the autograder, pytest, the worker that imports torch, each case's child) is
sampled every 10 ms: the peak of its proportional set size (PSS: a page shared by a forked
child counted once) and of its anonymous part (what a container's memory cgroup cannot
reclaim; file pages of torch's libraries it can drop, at a cost in speed), in MiB.

``--hog MIB`` grades instead a learner whose solution (for the first lesson named) allocates
MIB MiB in every case: under the recipe's ``PYTEST_LESSONS_MEMORY`` each case fails on its
own (the allocation is refused) and the tree stays under the container's 768 MB; with the
defaults (2048 MiB) it takes the container past its limit, where the kernel's OOM killer
stops a process of its choosing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "exercises"
RECIPE = ROOT / "docs" / "recipes" / "gradescope" / "run_autograder"

#: The lessons that hold the largest tensors or train a model: the heaviest to grade.
HEAVY = (
    "train_steps",
    "gpt_forward",
    "checkpoint",
    "adamw_step",
    "cached_generate",
    "attention_module",
    "grouped_query_attention",
)

HOG = """
import torch

def solve(*args, **kwargs):
    hog = torch.ones({count}, dtype=torch.uint8)  # {mib} MiB, every page touched
    return float(hog.sum())
"""


def recipe_env() -> dict[str, str]:
    """The variables run_autograder exports (``export NAME=VALUE`` lines)."""
    found = re.findall(r"^export (PYTEST_LESSONS_[A-Z_]+)=(\S+)", RECIPE.read_text(), re.M)
    return dict(found)


def tree(root: int) -> list[int]:
    """*root* and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def pss(pid: int) -> tuple[int, int]:
    """(PSS, anonymous PSS) of *pid*, in KiB (0 for a process gone)."""
    total = anon = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    total = int(line.split()[1])
                elif line.startswith("Pss_Anon:"):
                    anon = int(line.split()[1])
    except OSError:
        pass
    return total, anon


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """(seconds, peak PSS MiB, peak anonymous PSS MiB, exit status) of *command*'s tree."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    peak = peak_anon = 0
    while child.poll() is None:
        sizes = [pss(pid) for pid in tree(child.pid)]
        peak = max(peak, sum(s[0] for s in sizes))
        peak_anon = max(peak_anon, sum(s[1] for s in sizes))
        time.sleep(0.01)
    return time.perf_counter() - started, peak / 1024, peak_anon / 1024, child.returncode


def grade(lessons: list[str], env: dict[str, str], hog: int, work: Path) -> str:
    source, submission = work / "source", work / "submission"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(EXERCISES, source / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    for lesson in lessons:
        (submission / lesson).mkdir(parents=True)
        code = (EXERCISES / lesson / "reference.py").read_text(encoding="utf-8")
        if hog:
            code = HOG.format(count=hog * 2**20, mib=hog)
        (submission / lesson / "solution.py").write_text(code, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "pytest_lessons",
        "gradescope",
        str(source),
        str(submission),
        str(work / "results" / "results.json"),
    ]
    seconds, peak, anon, status = measure(command, {**os.environ, **env})
    try:
        report = json.loads((work / "results" / "results.json").read_text(encoding="utf-8"))
        scored = f"score {report['score']:g} of {sum(t['max_score'] for t in report['tests']):g}"
    except (OSError, ValueError, KeyError):
        scored = "no results.json"
    what = ", ".join(lessons) if len(lessons) < 4 else f"{len(lessons)} lessons"
    if hog:
        what += f" (a solution taking {hog} MiB)"
    return (
        f"{what}: peak {peak:.0f} MiB PSS, {anon:.0f} MiB anonymous, {seconds:.1f} s, "
        f"{scored}, exit {status}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every lesson handed in, one run")
    parser.add_argument("--hog", type=int, default=0, metavar="MIB", help="a solution taking MIB")
    parser.add_argument("--defaults", action="store_true", help="without the recipe's settings")
    parser.add_argument("lessons", nargs="*", help=f"default: {', '.join(HEAVY)}")
    args = parser.parse_args()
    env = {} if args.defaults else recipe_env()
    print(f"settings: {' '.join(f'{k}={v}' for k, v in env.items()) or 'the defaults'}")
    lessons = args.lessons or list(HEAVY)
    with tempfile.TemporaryDirectory(prefix="gradescope-memory-") as folder:
        work = Path(folder)
        if args.hog:
            print(grade(lessons[:1], env, args.hog, work / "run"), flush=True)
        elif args.all:
            every = sorted(p.parent.name for p in EXERCISES.glob("*/reference.py"))
            print(grade(every, env, 0, work / "run"), flush=True)
        else:
            for lesson in lessons:
                print(grade([lesson], env, 0, work / "run"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
