"""What the sandbox costs a case (issue 9). Run from the repository root:

    python benchmarks/sandbox.py              # 300 forks, 100 round trips, 10 first cases
    python benchmarks/sandbox.py --rounds 50 --first 5

1. Closing the sandbox: the time :func:`pytest_lessons.isolation.sandbox.confine` takes in a
   child forked from a process that imported torch, as a case's child is: with the walls built
   ahead from the sandbox's shared part (:func:`pytest_lessons.isolation.sandbox.prepare_rules`)
   as a fork server's waiting child and a spawned Python do (their CPU time printed too: off
   the case's clock, not free), and cold: nothing built ahead, as a case whose sandbox the
   runner did not know ahead gets it (a first case before :meth:`Runner.announce` existed).
2. A case's round trip through the fork server with the sandbox and without it, the two
   alternating, on the combine_heads reference: the difference is what a case pays in all
   (private folder made and removed, environment, limits, cgroup or namespaces, Landlock,
   capabilities, seccomp).
3. A fork server's first case, in fresh workers started side by side and each left to import
   torch and fork its waiting child: without a sandbox, with the sandbox announced before the
   first job (as pytest does once it has collected the course), and with the sandbox given
   only in the job. Printed: the median time the worker saw the case run (from its job
   handed over to its answer written), which holds the walls the waiting child did not build
   ahead.

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
from dataclasses import replace
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

    from pytest_lessons.isolation import walls
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
        # Since runners are told the sandbox before the first job, no case of a grading run
        # takes this path unless a job's sandbox is not the one announced.
        "cold": "nothing ahead: a sandbox not known before its job",
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
                if request.get("memory_cap"):
                    # As the worker or runner does before it sends the job: the case's memory
                    # cgroup with the job's limit (2048 MiB, the default), off the case's clock.
                    name = walls.memory_cgroup(os.getpid(), os.getppid())
                    walls.limit_memory_cgroup(name, walls.case_memory(2048, request) or 0)
                wall, cpu = time.perf_counter(), time.thread_time()
                confine(request, f"{private}.json")
                spent = (time.perf_counter() - wall, time.thread_time() - cpu, ahead)
                os.write(writable, json.dumps(spent).encode())
                os._exit(0)
            os.close(writable)
            with os.fdopen(readable, "rb") as handle:
                times[kind].append(tuple(json.loads(handle.read())))
            os.waitpid(pid, 0)
            walls.remove_memory_cgroup(walls.memory_cgroup(pid, os.getpid()), wait=1.0)
    for kind, words in kinds.items():
        wall, cpu, ahead = (statistics.median(t[i] for t in times[kind]) * 1000 for i in range(3))
        built = f"; built ahead: {ahead:.3f} ms CPU" if kind != "cold" else ""
        print(
            f"1. closing the sandbox ({words}): median {cpu:.3f} ms CPU, {wall:.3f} ms wall"
            f"{built}; over {rounds} forked children ({len(policy.read)} readable paths)"
        )


def round_trip(rounds: int) -> None:
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


def first_case(rounds: int) -> None:
    import select

    from pytest_lessons.isolation.runner import ForkRunner, Job

    bare = Job(LESSON / "reference.py", "solve", INPUTS, 10.0, 2048.0, 65536, 1)
    confined = replace(bare, sandbox=_policy())
    ways = {
        "no sandbox": (bare, False),
        "sandbox announced": (confined, True),
        "sandbox in the job only": (confined, False),
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        runners = {name: ForkRunner() for name in ways}
        try:
            for name, (job, announced) in ways.items():
                runners[name].warm_up()
                if announced:
                    runners[name].announce(job.sandbox)
            for runner in runners.values():  # each worker's ready line: torch is imported
                assert runner.process is not None and runner.process.stdout is not None
                select.select([runner.process.stdout], [], [], 120)
            time.sleep(0.2)  # its waiting child is forked (and has built what it was told)
            for name, (job, _) in ways.items():
                outcome = runners[name].run(job)
                assert outcome.kind == "returned", outcome
                seconds[name].append(outcome.seconds)
        finally:
            for runner in runners.values():
                runner.close()
    print(
        "3. a fork server's first case, as its worker timed it: "
        + ", ".join(
            f"{name} {statistics.median(found) * 1000:.1f} ms" for name, found in seconds.items()
        )
        + f" (medians of {rounds} fresh workers each)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--first", type=int, default=10, help="fresh workers for part 3")
    options = parser.parse_args()
    rounds = options.rounds
    sys.path.insert(0, str(ROOT))
    if os.environ.get("OMP_NUM_THREADS") != "1":
        from pytest_lessons.isolation.runner import _worker_env

        os.execve(sys.executable, [sys.executable, *sys.argv], _worker_env())
    from pytest_lessons.isolation import sandbox

    print("sandbox:", sandbox.describe(sandbox.probe(), _policy()))
    confine_cost(rounds)
    round_trip(rounds)
    if options.first:
        first_case(options.first)


if __name__ == "__main__":
    main()
