"""What the sandbox costs a case (issue 9). Run from the repository root:

    python benchmarks/sandbox.py              # 200 forks, 100 round trips
    python benchmarks/sandbox.py --rounds 50

1. Closing the sandbox: the time :func:`pytest_lessons.isolation.sandbox.confine` takes in a
   child forked from a process that imported torch, as a case's child is: with the walls built
   ahead from the sandbox's shared part (:func:`pytest_lessons.isolation.sandbox.prepare_rules`)
   as a fork server's waiting child and a spawned Python do (their CPU time printed too: off
   the case's clock, not free), and cold, as only a fork server's first case is.
2. A case's round trip through the fork server with the sandbox and without it, the two
   alternating, on the combine_heads reference: the difference is what a case pays in all
   (private folder made and removed, environment, limits, cgroup or namespaces, Landlock,
   capabilities, seccomp).

The sandbox is the one a grading run gets here, with the default limits (its header line is
printed first). This process is set up as the worker is (one OpenMP thread, the worker's
environment): a thread pool started before a fork leaves its locks held in the child, where
torch's next operator would hang.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "exercises" / "combine_heads"
INPUTS = [[[[0], [0]], [[1], [1]]], [[[0], [0]], [[0], [5]]], [[[2], [4]], [[10], [30]]]]


def _policy():  # type: ignore[no-untyped-def]
    from pytest_lessons.core import settings
    from pytest_lessons.isolation import sandbox

    limits = {key: settings.BY_NAME[name].default for name, key in sandbox.LIMITS.items()}
    _, policy = sandbox.choose("require", os.environ, limits=limits)
    return policy.for_course([LESSON], ROOT)


def confine_cost(rounds: int) -> None:
    import torch  # noqa: F401 - the child is forked from a process that holds torch

    from pytest_lessons.isolation.child import prepare
    from pytest_lessons.isolation.sandbox import confine, prepare_rules, shared_part

    prepare()
    # As the worker does: objects from before the fork stay out of the child's collections.
    import gc

    gc.freeze()
    policy = _policy()
    session = Path(tempfile.mkdtemp(prefix="lessons-bench-"))
    # CPU time of the child's thread: what the case pays, without the time another process
    # held the core (wall time is printed too). Built ahead, the walls cost CPU too, off the
    # case's clock: that is measured apart.
    kinds = {
        "fork": "walls built ahead in the waiting child, as in fork mode",
        "spawn": "walls built ahead in a spawned Python, its own cgroup",
        "cold": "nothing ahead: a fork server's first case",
    }
    times: dict[str, list[tuple[float, float, float]]] = {kind: [] for kind in kinds}
    for number in range(rounds):
        for kind in kinds:
            private = session / f"case-{number}-{kind}"
            private.mkdir()
            # As the runner does: where a tmpfs covers the private folders, the case's result
            # file is made beside its folder's name, off the case's clock.
            Path(f"{private}.json").touch()
            request = policy.request(private, LESSON / "reference.py")
            readable, writable = os.pipe()
            pid = os.fork()
            if pid == 0:
                prepare()  # as a waiting child does, off the case's clock
                ahead = time.thread_time()
                if kind != "cold":
                    prepare_rules(shared_part(request), os.getppid() if kind == "fork" else None)
                ahead = time.thread_time() - ahead
                wall, cpu = time.perf_counter(), time.thread_time()
                confine(request, f"{private}.json")
                spent = (time.perf_counter() - wall, time.thread_time() - cpu, ahead)
                os.write(writable, json.dumps(spent).encode())
                os._exit(0)
            os.close(writable)
            with os.fdopen(readable, "rb") as handle:
                times[kind].append(tuple(json.loads(handle.read())))
            os.waitpid(pid, 0)
    for kind, words in kinds.items():
        wall, cpu, ahead = (statistics.median(t[i] for t in times[kind]) * 1000 for i in range(3))
        built = f"; built ahead: {ahead:.3f} ms CPU" if kind != "cold" else ""
        print(
            f"1. closing the sandbox ({words}): median {cpu:.3f} ms CPU, {wall:.3f} ms wall"
            f"{built}; over {rounds} forked children ({len(policy.read)} readable paths)"
        )


def round_trip(rounds: int) -> None:
    from dataclasses import replace

    from pytest_lessons.isolation.runner import ForkRunner, Job

    bare = Job(LESSON / "reference.py", "solve", INPUTS, 10.0, 2048.0, 65536, 1)
    confined = replace(bare, sandbox=_policy())
    # One worker for each: a worker's waiting child builds the walls ahead from the job
    # before, as in a grading run, where every job has the same sandbox.
    runners = {"sandbox": ForkRunner(), "none": ForkRunner()}
    timings: dict[str, list[float]] = {"sandbox": [], "none": []}
    try:
        runners["sandbox"].run(confined)  # the worker has imported torch
        runners["none"].run(bare)
        for _ in range(rounds):
            for name, job in (("sandbox", confined), ("none", bare)):
                started = time.perf_counter()
                outcome = runners[name].run(job)
                timings[name].append(time.perf_counter() - started)
                assert outcome.kind == "returned", outcome
    finally:
        for runner in runners.values():
            runner.close()
    with_box, without = (statistics.median(timings[k]) for k in ("sandbox", "none"))
    print(
        f"2. a case's round trip, alternating: {with_box * 1000:.1f} ms with the sandbox, "
        f"{without * 1000:.1f} ms without: {1000 * (with_box - without):+.2f} ms a case "
        f"(medians of {rounds})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    rounds = parser.parse_args().rounds
    sys.path.insert(0, str(ROOT))
    if os.environ.get("OMP_NUM_THREADS") != "1":
        from pytest_lessons.isolation.runner import _worker_env

        os.execve(sys.executable, [sys.executable, *sys.argv], _worker_env())
    from pytest_lessons.isolation import sandbox

    print("sandbox:", sandbox.describe(sandbox.probe(), _policy()))
    confine_cost(rounds)
    round_trip(rounds)


if __name__ == "__main__":
    main()
