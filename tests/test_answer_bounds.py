"""The grader's own work on a learner's answer is bounded before it starts, and linear (issue
35, point 7): the answer comes back as bytes learner code may have written itself, so every
shape that would cost the pytest process more than its size is refused or handled in sorted
passes. The speed figures are in ``benchmarks/answers.py``; these tests assert the verdicts."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.words import fmt_number
from pytest_lessons.isolation.answers import TAG
from pytest_lessons.isolation.outcome import (
    DIED,
    RETURNED,
    Outcome,
    count_values,
    from_untrusted,
    values_limit,
)
from pytest_lessons.isolation.runner import Ended, Job, PoolRunner, Runner

from helpers import grader, lesson

#: The modulus of CPython's int hash: ``hash(1 + i * P) == hash(1)`` for every i.
P = 2**61 - 1
LIMIT = 1 << 20


def result(answer: str) -> bytes:
    return ('{"kind": "returned", "answer": ' + answer + "}").encode()


def colliding(n: int, form: str = "{}") -> str:
    return ",".join(form.format(1 + i * P) for i in range(n))


def headline(tmp_path: Path, kind: str, expected: str, data: bytes) -> str:
    """The headline of a one-case lesson of *kind* whose learner's result file is *data*
    ("" when the case passed)."""
    toml = (
        f'[exercise]\ntitle = "T"\nformat = 2\ninputs = ["x"]\noutputs = [{{ kind = "{kind}" }}]'
        f"\n\n[[case]]\nx = 1\nexpected = {expected}\n"
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    exercise = lesson(tmp_path, toml)
    outcome = from_untrusted(data, LIMIT)
    grade, _ = grader({("solution.py", "solve"): lambda x: outcome})
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.result.status != "internal", graded.text
    return graded.result.headline


def test_a_set_of_ints_that_share_one_hash_is_judged_by_its_items(tmp_path: Path) -> None:
    # 20,000 such ints cost the grader 15 s as a frozenset: now sorted, never hashed.
    forged = result('{"$": "set", "type": "set", "items": [' + colliding(20_000) + "]}")
    assert headline(tmp_path / "a", "set[int]", "[1, 2, 3]", forged) == (
        "Return the expected items: missing 2, 3; not expected 2305843009213693952, "
        "4611686018427387903, 6917529027641081854, 9223372036854775805, "
        "11529215046068469756 and 19994 more."
    )
    # Members that share a hash are still told apart, and a set is its members in any order.
    expected = f"[1, {1 + P}, {1 + 2 * P}]"
    right = result('{"$": "set", "type": "set", "items": [' + f"{1 + 2 * P}, 1, {1 + P}]}}")
    assert headline(tmp_path / "b", "set[int]", expected, right) == ""
    short = result('{"$": "set", "type": "set", "items": [' + f"1, {1 + 2 * P}, 1]}}")
    assert headline(tmp_path / "c", "set[int]", expected, short) == (
        f"Return the expected items: missing {1 + P}."
    )
    pairs = result('{"$": "set", "type": "set", "items": [' + colliding(5_000, "[{},1]") + "]}")
    assert headline(tmp_path / "d", "set[tuple[int, int]]", "[[1, 2]]", pairs).startswith(
        "Return the expected items: missing (1, 2); not expected (1, 1), "
    )


def test_a_dict_whose_keys_share_one_hash_is_judged_by_its_keys(tmp_path: Path) -> None:
    expected = f"[[1, 1], [{1 + P}, 2]]"
    forged = result('{"$": "dict", "type": "dict", "items": [' + colliding(5_000, "[{},0]") + "]}")
    assert headline(tmp_path / "a", "dict[int, int]", expected, forged) == (
        f"Return every expected key and no other: extra keys {1 + 2 * P}, {1 + 3 * P}, "
        f"{1 + 4 * P}, {1 + 5 * P}, {1 + 6 * P} and 4993 more."
    )
    swapped = result('{"$": "dict", "type": "dict", "items": [' + f"[{1 + P}, 2], [1, 1]]}}")
    assert headline(tmp_path / "b", "dict[int, int]", expected, swapped) == ""
    wrong = result('{"$": "dict", "type": "dict", "items": [' + f"[{1 + P}, 3], [1, 1]]}}")
    assert headline(tmp_path / "c", "dict[int, int]", expected, wrong) == (
        f"Check your calculation: at key {1 + P}: expected 2, got 3."
    )


def test_an_answer_of_more_values_than_its_size_allows_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    most = values_limit(LIMIT)
    assert most == LIMIT // 32
    # Two bytes a value: 64 bytes of Python each, had it been read.
    many = result("[" + "[]," * most + "[]]")
    outcome = from_untrusted(many, LIMIT)
    assert outcome.kind == RETURNED and outcome.answer[TAG] == "cut"
    # Counted as an upper bound: each empty list's bracket counts as a value too.
    counted = count_values(many, most)
    assert 2 * most <= counted <= 2 * most + 10
    assert headline(tmp_path / "a", "list[list[int]]", "[[1]]", many) == (
        "Return a list of lists of ints: got an answer too large to send (more values than "
        f"the grader reads: {counted:,}; the limit is {most:,}, one per 32 bytes of "
        "--lesson-answer-size)."
    )
    # Commas, brackets and colons in a string are no values: a long string is one value.
    # (Its envelope, {"kind": ..., "answer": ...}, is 5 values as counted.)
    text = result('"' + '[,:{\\"\\\\' * (most // 2) + '"')
    assert count_values(text, most) == 5 and from_untrusted(text, LIMIT).kind == RETURNED
    # Keys count as values: 10 here, counted exactly once the rough count is over 1.
    assert count_values(b'{"a": [1, 2, {"b": "x,y"}], "c": "\\"[,"}', 1) == 10


def test_an_int_longer_than_python_reads_is_an_unreadable_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Converting n digits to an int takes time quadratic in n where Python has no limit.
    digits = result("9" * 5000)
    assert from_untrusted(digits, LIMIT).kind == DIED
    if hasattr(sys, "set_int_max_str_digits"):
        before = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            assert from_untrusted(digits, LIMIT).kind == DIED
            # In a string, digits are text; ints of as many digits as Python reads are ints.
            assert from_untrusted(result('"' + "9" * 5000 + '"'), LIMIT).kind == RETURNED
            runs = result("[" + ",".join(["9" * 4300] * 100) + "]")
            assert from_untrusted(runs, LIMIT).answer[99] == 10**4300 - 1
        finally:
            sys.set_int_max_str_digits(before)


def test_a_forged_tag_without_a_type_is_named_an_object(tmp_path: Path) -> None:
    forged = result('[{"$": "object", "type": ""}]')
    assert headline(tmp_path, "list[int]", "[1]", forged) == (
        "Return a list of ints: got an object at [0]."
    )


def test_an_int_too_large_for_a_float_fails_its_case_with_words(tmp_path: Path) -> None:
    # Formatting it with "g" or subtracting it from a float would raise in the grader.
    huge = "9" * 4000
    assert headline(tmp_path / "a", "list[float]", "[1.5]", result(f"[{huge}]")) == (
        "Check your calculation: at [0]: expected 1.5, got 1e+4000 (allowed ±0.00025)."
    )
    assert headline(tmp_path / "b", "int", "1", result(huge)) == (
        "Check your calculation: expected 1, got 999999999999...999999999999 (4,000 digits)."
    )
    one = '{"$": "set", "type": "set", "items": [' + huge + "]}"
    assert headline(tmp_path / "c", "set[float]", "[1.5]", result(one)).startswith(
        "Return the expected items: missing 1.5; not expected 999999999999"
    )
    assert fmt_number(-(10**400), -(10**400) + 1) == "-1e+400"
    assert fmt_number(2.0, 2.0000001) == "2.0"


class Bytes(Runner):
    """Answers each job with a result file's bytes of *size* (its answer: the job's input),
    as a child's runner keeps them for a pool; records how many it ran."""

    mode = "fork"

    def __init__(self, size: int) -> None:
        self.size = size
        self.ran = 0

    def run(self, job: Job) -> Outcome:
        found = self.run_ahead(job)
        return found.outcome() if isinstance(found, Ended) else found

    def run_ahead(self, job: Job) -> Outcome | Ended:
        self.ran += 1
        answer = f'{{"kind": "returned", "answer": [{job.inputs[0]}, "'.encode()
        data = answer + b"x" * (self.size - len(answer) - 3) + b'"]}'
        return Ended("exited", "open", data, job.answer_bytes)


def test_a_pool_keeps_waiting_results_as_bytes_within_its_budget() -> None:
    runners = [Bytes(1 << 20), Bytes(1 << 20)]
    pool = PoolRunner(list[Runner](runners), ahead_bytes=3 << 20)
    jobs = [Job(Path("a"), "solve", [n], 1.0, 0, 1000, 2 << 20) for n in range(40)]
    try:
        pool.prefetch(jobs)
        time.sleep(1.0)  # time for every job, were the pool not to wait
        ahead = sum(r.ran for r in runners)
        for n, job in enumerate(jobs):
            answer: Any = pool.run(job).answer
            assert answer[0] == n and len(answer[1]) > 1000
    finally:
        pool.close()
    # 3 MiB a worker held, and each worker's one case in flight.
    assert ahead <= 2 * 3 + 2, ahead
    assert sum(r.ran for r in runners) == 40
