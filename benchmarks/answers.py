"""The grader's own work on the worst answers learner code can hand it (issue 35, point 7).

    python benchmarks/answers.py                    # every attack at 32 MiB
    python benchmarks/answers.py --size 8 set_collide dict_collide
    python benchmarks/answers.py --cpu-limit 120    # give a slow attack longer

A learner's answer comes back as the bytes of its result file, which learner code can write
itself (it shares the child's process): anything up to ``--lesson-answer-size`` (32 MiB) plus
the result's envelope. Each attack below is such a file, built to cost the grader as much as
it can: hash collisions (ints that share one hash, as set items, dict keys and a statistical
case's categories), many small values (ints, floats, empty lists, tags, dict keys, deep
nesting), huge ints and strings, NaNs, a dense block whose shape says more than it holds.

Each attack runs in a fresh Python, through what the pytest process does with a case's result:
the runner's reading of the bytes (:class:`~pytest_lessons.isolation.runner.Ended`, as a pool
keeps a prefetched outcome), then the grading core on a lesson whose expected value is of the
kind the attack aims at (a :class:`~pytest_lessons.core.grader.Grader`: the judge, the
watch-out whose mistake function answers something else, the words). Printed per attack: the
grader's own CPU seconds (``time.process_time``) and its peak memory above what it held before
it read the file (``VmHWM``, reset through ``/proc/self/clear_refs``), as a multiple of the
file's size and of the answer limit. Each attack holds as many items as the grader's count of
values lets through (the worst answer it reads), so some files are shorter than the limit.
Goal: at most 2 s and 4x the limit for every attack. An attack stopped by ``--cpu-limit``
(default 60 s) prints as more than that.

    python benchmarks/answers.py --pool 2           # a pool's memory while answers wait
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MIB = 1 << 20
#: The most values the grader reads in a 32 MiB answer and its envelope.
VALUES = ((32 << 20) + (256 << 10)) // 32
#: The modulus of CPython's int hash: ``hash(k + i * P) == hash(k)`` for every i.
P = 2**61 - 1


def lesson_toml(kind: str, expected: str, inputs: str = '["x"]', case: str = "x = 1") -> str:
    return (
        f'[exercise]\ntitle = "Attacked"\nformat = 2\ninputs = {inputs}\n'
        f'outputs = [{{ kind = "{kind}" }}]\n\n[[case]]\n{case}\nexpected = {expected}\n\n'
        '[[watch_out]]\nid = "other"\nmistake = "other"\nmessage = "another answer."\n'
    )


STATISTICAL = lesson_toml(
    "list[int]",
    "[0.25, 0.25, 0.25, 0.25]",
    inputs='["x", { name = "g", pass = "generator" }]',
    case="x = 1\ng = 7\ndraws = 1000",
)


def filled(size: int, head: str, item: Callable[[int], str], tail: str, sep: str = ",") -> bytes:
    """``head item(0),item(1),... tail`` as long as it stays within *size* bytes."""
    parts: list[str] = []
    used = len(head) + len(tail)
    i = 0
    # The worst answer is one the grader reads: as many items as its count of values allows
    # (each item's structure bytes and its separator), else as many as fit.
    per = sum(map(item(0).count, ",[{:")) + 1
    most = (VALUES - 40) // per
    while i < most:
        text = item(i)
        if used + len(text) + len(sep) > size:
            break
        parts.append(text)
        used += len(text) + len(sep)
        i += 1
    return (head + sep.join(parts) + tail).encode()


def result(answer_json: str) -> tuple[str, str]:
    return '{"kind": "returned", "answer": ', "}"


def wrapped(size: int, open_: str, item: Callable[[int], str], close: str) -> bytes:
    head, tail = result("")
    return filled(size, head + open_, item, close + tail)


def counts_attack(size: int) -> bytes:
    """A statistical case's counts: every category a different int of one hash, drawn once,
    over 1,000 calls that each gave as many (so the tag is consistent)."""
    item = len(f"[{1 + 10**6 * P},1],")
    n = min((size - 200) // item, (VALUES - 40) // 4) // 1000 * 1000
    items = ",".join(f"[{1 + i * P},1]" for i in range(n))
    return (
        '{"kind": "returned", "answer": {"$": "counts", "calls": 1000, "items": ['
        + items
        + f'], "sizes": [[{n // 1000}, 1000]]}}}}'
    ).encode()


def dense_shape(size: int) -> bytes:
    shape = '"shape": [1000000000000000000, 0]'
    head = '{"kind": "returned", "answer": {"$": "dense", '
    return (head + shape + ', "float64le": ""}}').encode()


def dense_block(size: int, key: str = "int64le") -> bytes:
    """One block of numbers, as the child packs a rectangular list: one value as counted, a
    Python number per 8 bytes when read."""
    import base64

    n = (size - 200) // 4 * 3 // 8
    data = base64.b64encode(bytes(8 * n)).decode()
    head = '{"kind": "returned", "answer": {"$": "dense", '
    return (head + f'"shape": [{n}], "{key}": "{data}"}}}}').encode()


def one_int(size: int) -> bytes:
    head, tail = result("")
    return (head + "1" * (size - len(head) - len(tail)) + tail).encode()


def big_string(size: int) -> bytes:
    head, tail = result("")
    return (head + '"' + "\\u00e9" * ((size - 60) // 6) + '"' + tail).encode()


#: name -> (kind, expected as TOML, the result file's bytes for a size)
ATTACKS: dict[str, tuple[str, str, Callable[[int], bytes]]] = {
    "set_collide": (
        "set[int]",
        "[1, 2, 3]",
        lambda s: wrapped(
            s, '{"$": "set", "type": "set", "items": [', lambda i: str(1 + i * P), "]}"
        ),
    ),
    "dict_collide": (
        "dict[int, int]",
        "[[1, 1], [2, 2]]",
        lambda s: wrapped(
            s, '{"$": "dict", "type": "dict", "items": [', lambda i: f"[{1 + i * P},0]", "]}"
        ),
    ),
    "tuple_collide": (
        "set[tuple[int, int]]",
        "[[1, 2]]",
        lambda s: wrapped(
            s, '{"$": "set", "type": "set", "items": [', lambda i: f"[{1 + i * P},1]", "]}"
        ),
    ),
    "counts_collide": ("list[int]", "", counts_attack),
    "small_ints": ("list[int]", "[1, 2, 3]", lambda s: wrapped(s, "[", lambda i: "1", "]")),
    "distinct_ints": (
        "list[int]",
        "[1, 2, 3]",
        lambda s: wrapped(s, "[", lambda i: str(i), ",0.5]"),
    ),
    "tiny_floats": (
        "numeric",
        "[1.0, 2.0, 3.0]",
        lambda s: wrapped(s, "[", lambda i: "1e-300", ",1]"),
    ),
    "empty_lists": ("list[list[int]]", "[[1]]", lambda s: wrapped(s, "[", lambda i: "[]", "]")),
    "nested_lists": (
        "list[int]",
        "[1, 2, 3]",
        lambda s: wrapped(s, "[", lambda i: "[" * 78 + "]" * 78, "]"),
    ),
    "object_tags": (
        "list[int]",
        "[1, 2, 3]",
        lambda s: wrapped(s, "[", lambda i: '{"$":"object","type":""}', "]"),
    ),
    "many_keys": (
        "dict[str, int]",
        "{ a = 1 }",
        lambda s: wrapped(
            s, '{"$": "dict", "type": "dict", "items": [', lambda i: f'["k{i}",0]', "]}"
        ),
    ),
    "nan_set": (
        "set[float]",
        "[1.0]",
        lambda s: wrapped(s, '{"$": "set", "type": "set", "items": [', lambda i: "NaN", "]}"),
    ),
    "huge_ints": (
        "list[int]",
        "[1, 2, 3]",
        lambda s: wrapped(s, "[", lambda i: "9" * 4299, "]"),
    ),
    "one_huge_int": ("int", "1", one_int),
    "long_string": ("str", '"hello"', big_string),
    "dense_shape": ("numeric", "[[1.0, 2.0], [3.0, 4.0]]", dense_shape),
    "dense_ints": ("list[int]", "[1, 2, 3]", dense_block),
    "dense_floats": ("numeric", "[1.0, 2.0, 3.0]", lambda s: dense_block(s, "float64le")),
    "many_tensors": (
        "numeric",
        "[1.0, 2.0, 3.0]",
        lambda s: wrapped(
            s,
            "[",
            lambda i: (
                '{"$":"tensor","type":"torch.Tensor","shape":[2],'
                '"dtype":"torch.float64","values":[1.5,2.5]}'
            ),
            "]",
        ),
    ),
}


def _status(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def one(name: str, file: Path) -> dict[str, Any]:
    """Grade the attack *name*'s result *file* in this process; its cost, measured."""
    from pytest_lessons.core import model, settings
    from pytest_lessons.core.attempt import Attempt
    from pytest_lessons.core.grader import Grader
    from pytest_lessons.isolation.outcome import Outcome, from_untrusted
    from pytest_lessons.isolation.runner import Job, Runner

    try:
        from pytest_lessons.isolation.runner import Ended
    except ImportError:  # before issue 35.7: the figures "before" come from the same script
        Ended = None

    kind, expected, _ = ATTACKS[name]
    folder = Path(tempfile.mkdtemp()) / "attacked"
    folder.mkdir()
    toml = STATISTICAL if name == "counts_collide" else lesson_toml(kind, expected)
    (folder / "exercise.toml").write_text(toml)
    (folder / "reference.py").write_text("")
    (folder / "mistakes.py").write_text("")
    exercise = model.load(folder / "exercise.toml")

    class Replay(Runner):
        """The learner's result is the attack's file; the reference and the mistake answer
        plain values (the reference: one draw a call, for the statistical lesson)."""

        def run(self, job: Job) -> Outcome:
            if job.solution.name == "solution.py":
                data = file.read_bytes()
                if Ended is None:
                    return from_untrusted(data, job.answer_bytes + (256 << 10))
                return Ended("exited", "open", data, job.answer_bytes).outcome()
            if job.entry == "other":
                return Outcome("returned", answer=[7])
            return Outcome(
                "returned", answer={"$": "counts", "calls": 1, "items": [[0, 1]], "sizes": [[1, 1]]}
            )

    resolved = settings.resolve(option=lambda n: None, ini=lambda n: None, environ={})
    grader = Grader(Replay(), resolved, show=lambda path: Path(path).name)
    attempt = Attempt(exercise, exercise.cases[0], solution=folder / "solution.py")
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets VmHWM to the current resident size
    except OSError:
        pass
    before = _status("VmRSS")
    started = time.process_time()
    graded = grader.grade(attempt)
    cpu = time.process_time() - started
    peak = _status("VmHWM") - before
    return {
        "cpu": cpu,
        "peak": peak,
        "status": str(graded.result.status),
        "headline": graded.result.headline[:100],
    }


def pool(workers: int) -> dict[str, Any]:
    """The pytest process's memory while a pool of *workers* runs a class of 32 MiB answers
    ahead of the judge: each answer kept as its result's bytes (an ``Ended``) until taken."""
    from pytest_lessons.isolation.outcome import Outcome
    from pytest_lessons.isolation.runner import Ended, Job, PoolRunner, Runner

    class Big(Runner):
        mode = "fork"

        def run(self, job: Job) -> Outcome:
            found = self.run_ahead(job)
            return found.outcome() if isinstance(found, Ended) else found

        def run_ahead(self, job: Job) -> Outcome | Ended:
            head = b'{"kind": "returned", "answer": ["' + str(job.inputs[0]).encode()
            data = head + b"x" * (32 * MIB - len(head) - 3) + b'"]}'
            return Ended("exited", "open", data, 32 * MIB)

    runners: list[Runner] = [Big() for _ in range(workers)]
    jobs = [Job(Path("a"), "solve", [n], 1.0, 0, 1000, 32 * MIB) for n in range(60)]
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    before = _status("VmRSS")
    runner = PoolRunner(runners)
    try:
        runner.prefetch(jobs)
        time.sleep(3.0)  # every job would be done by now, were the pool not to wait
        waiting = _status("VmRSS") - before
        for job in jobs:
            runner.run(job)
    finally:
        runner.close()
    return {"waiting": waiting, "peak": _status("VmHWM") - before}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("attacks", nargs="*", help=f"some of: {', '.join(ATTACKS)}")
    parser.add_argument("--size", type=float, default=32, help="MiB, the answer limit")
    parser.add_argument("--cpu-limit", type=int, default=60, help="CPU seconds an attack gets")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--pool", type=int, metavar="WORKERS", help="measure a pool instead")
    args = parser.parse_args()
    if args.pool:
        found = pool(args.pool)
        print(
            f"pool of {args.pool}: {found['waiting'] / MIB:.0f} MiB held while answers wait, "
            f"peak {found['peak'] / MIB:.0f} MiB ({found['peak'] / MIB / args.pool:.0f} MiB "
            "a worker)"
        )
        return
    if args.one:
        print(json.dumps(one(args.one[0], Path(args.one[1]))))
        return
    size = int(args.size * MIB)
    names = args.attacks or list(ATTACKS)
    print(
        f"{'attack':<15} {'bytes':>10} {'CPU s':>7} {'peak MiB':>9} {'x size':>7} "
        f"{'x limit':>7}  verdict"
    )
    worst_cpu, worst_ratio = 0.0, 0.0
    with tempfile.TemporaryDirectory() as temp:
        for name in names:
            data = ATTACKS[name][2](size)
            file = Path(temp) / f"{name}.json"
            file.write_bytes(data)
            del data
            limit = args.cpu_limit

            def cap(limit: int = limit) -> None:
                resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))

            run = subprocess.run(
                [sys.executable, __file__, "--one", name, str(file)],
                capture_output=True,
                text=True,
                preexec_fn=cap,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            length = file.stat().st_size
            if run.returncode != 0:
                why = run.stderr.strip().splitlines()[-1:] or [f"status {run.returncode}"]
                print(f"{name:<15} {length:>10,} {'>' + str(limit):>7} {'-':>9} {'-':>7}  {why[0]}")
                worst_cpu = float("inf")
                continue
            found = json.loads(run.stdout.strip().splitlines()[-1])
            ratio = found["peak"] / length
            worst_cpu, worst_ratio = max(worst_cpu, found["cpu"]), max(worst_ratio, ratio)
            print(
                f"{name:<15} {length:>10,} {found['cpu']:>7.2f} {found['peak'] / MIB:>9.1f} "
                f"{ratio:>7.2f} {found['peak'] / size:>7.2f}  "
                f"{found['status']}: {found['headline']}"
            )
    print(
        f"worst: {worst_cpu:.2f} s CPU, {worst_ratio:.2f}x the file's size "
        "(goal: 2 s, 4x the limit)"
    )


if __name__ == "__main__":
    main()
