"""Exact comparison benchmark (issue 24): 100,000 token ids judged by the ``list[int]`` kind.

    python benchmarks/kinds.py

The answer goes the way a worker's does: packed by the child (``answers.encode``: int64, in
base64), through JSON and the validation of untrusted answers, then judged against an
expected list as TOML gives it. Timed: packing, reading back (JSON + validation), and the
judgement, for a right answer and one wrong at a single position (which finds it, counts the
others and builds the words). Target: the judgement under 50 ms.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from typing import Any, Callable

from pytest_lessons.core.kinds import parse
from pytest_lessons.isolation.answers import encode, valid_answer

SIZE = 100_000
REPEAT = 7


def best(work: Callable[[], Any]) -> float:
    """The median of REPEAT runs of *work*, in milliseconds."""
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    rng = random.Random(0)
    expected = [rng.randrange(50257) for _ in range(SIZE)]
    wrong = expected[:]
    wrong[SIZE // 2] += 1
    kind = parse("list[int]")
    for label, answer in (("right", expected), ("one wrong", wrong)):
        packed = encode(answer)
        text = json.dumps(packed)

        def read(text: str = text) -> Any:
            data = json.loads(text)
            assert valid_answer(data)
            return data

        data = read()
        verdict = kind.compare(expected, data, 0, 0)
        assert verdict.passed == (label == "right"), verdict.headline
        print(
            f"{label:>9}: pack {best(lambda a=answer: encode(a)):6.1f} ms   "
            f"read {best(read):6.1f} ms   "
            f"judge {best(lambda d=data: kind.compare(expected, d, 0, 0)):6.1f} ms   "
            f"({len(text) / 1e6:.2f} MB of JSON)"
        )
    print(f"headline: {verdict.headline}")


if __name__ == "__main__":
    main()
