"""Grader-owned randomness (docs/authors/randomness.md): generator inputs and
statistical cases, as a learner and an author meet them.

The core with the fake runner: what the job carries, the verdict on counts and its words, the
watch-out matched by counts, the distribution from ``reference.py``, the format's checks, the
false-failure bound. One real run per isolation mode with the sandbox on: the same seed gives
the same stream as in this process, and correct code that draws another way is told so.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_lessons import schema
from pytest_lessons.core import model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.frequencies import bounds
from pytest_lessons.core.results import Status
from pytest_lessons.isolation.answers import valid_answer

from helpers import ROOT, grader, lesson, said

DRAW_TOML = """
[exercise]
title = "Draw"
inputs = ["n", { name = "g", pass = "generator", primitive = "torch.randint(n, (4,), generator=g)" }]
format = 2
outputs = [{ kind = "list[int]" }]

[[case]]
name = "seeded"
n = 10
g = 7
expected = SEEDED

[[case]]
name = "uniform"
n = 10
g = 8
draws = 500
expected = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]

[[watch_out]]
id = "one-short"
mistake = "one_short"
message = "draw from 0 to n - 1: torch.randint(n, ...) leaves n out already."
"""


def counts(calls: int, items: dict[int, int], **more: Any) -> dict[str, Any]:
    """A counts tag as the child packs it (checked as the runner checks every answer): by
    default each call gave the same number of draws."""
    sizes = more.pop("sizes", [[sum(items.values()) // calls, calls]])
    tag = {
        "$": "counts",
        "calls": calls,
        "items": sorted([k, c] for k, c in items.items()),
        "sizes": sizes,
        **more,
    }
    assert valid_answer(tag)
    return tag


def test_statistical_cases_judge_counts_and_say_what_is_off_to_the_learner(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, DRAW_TOML.replace("SEEDED", "[1, 2, 3, 4]"), **{"mistakes.py": ""})
    seeded, uniform = exercise.cases
    assert (uniform.draws, uniform.false_fail, exercise.generators["g"]) == (
        500,
        1e-6,
        "torch.randint(n, (4,), generator=g)",
    )
    even = counts(500, dict.fromkeys(range(10), 200))
    never_nine = counts(500, {**dict.fromkeys(range(9), 222), 0: 224})
    learners = {
        "right": lambda n, g: [1, 2, 3, 4] if "draws" not in g else even,
        "stream": lambda n, g: [4, 3, 2, 1] if "draws" not in g else even,
        "wrong": lambda n, g: [1, 2, 3, 5] if "draws" not in g else never_nine,
        "tenth": lambda n, g: [1, 2, 3, 5] if "draws" not in g else counts(500, {10: 2000}),
        "floats": lambda n, g: (
            [0.5]
            if "draws" not in g
            else counts(
                2,
                {3: 8},
                sizes=[[4, 2]],
                bad={
                    "call": 3,
                    "answer": {
                        "$": "tensor",
                        "type": "torch.Tensor",
                        "shape": [4],
                        "dtype": "torch.float32",
                    },
                },
            )
        ),
    }
    code = {
        ("mistakes.py", "one_short"): lambda n, g: [1, 2, 3, 5] if "draws" not in g else never_nine
    }
    for name, solve in learners.items():
        grade, runner = grader({("solution.py", "solve"): solve, **code})
        first, second = (grade.grade(Attempt(exercise, case)) for case in (seeded, uniform))
        if name == "right":
            assert first.passed and second.passed
            # The child is told the seed, and for the statistical case how many calls.
            mine = [job for job in runner.jobs if job.solution.name == "solution.py"]
            assert mine[0].inputs[1] == {"$input": "generator", "seed": 7}
            assert mine[1].inputs[1] == {
                "$input": "generator",
                "seed": 8,
                "draws": {"n": 500, "output": -1},
            }
        elif name == "stream":
            # Right distribution, another stream: the seeded case names the prescribed call.
            assert second.passed and first.status == Status.FAILED
            assert first.result.diagnosis == "different-stream"
            assert first.result.headline.startswith(
                "Draw with torch.randint(n, (4,), generator=g): your draws follow the right "
                "distribution (the lesson's statistical cases pass), but come from another "
                "random stream"
            )
        elif name == "wrong":
            # A wrong distribution: its catalogued mistake, matched by the same counts, and
            # the category that is off with its expected and drawn frequencies.
            assert second.result.diagnosis == "one-short"
            assert second.result.headline.startswith("Watch out: draw from 0 to n - 1")
            assert "category 9   expected 0.1000, drawn 0.0000 (allowed 0.0" in second.text
            assert "false-failure rate 1e-06 (Bonferroni over 10 categories)" in second.text
            assert first.result.diagnosis != "different-stream"
        elif name == "tenth":
            assert second.result.headline == (
                "Draw only what the distribution allows: 1 category with probability 0 came "
                "up (10)."
            )
        else:
            assert second.result.headline == (
                "Return ints (a token id, an integer tensor) from every call: call 3 of 500 "
                "returned a float32 tensor."
            )


def test_a_statistical_case_with_a_seeded_cases_inputs_runs_its_own_draws(
    tmp_path: Path,
) -> None:
    # The cache of outcomes is by what a case runs, not its inputs alone: before, the
    # statistical case took the seeded case's one answer, and correct code failed with
    # "the draws did not come back as counts".
    toml = DRAW_TOML.replace("SEEDED", "[1, 2, 3, 4]").replace("g = 8", "g = 7")
    exercise = lesson(tmp_path, toml, **{"mistakes.py": ""})
    seeded, uniform = exercise.cases
    assert seeded.inputs == uniform.inputs
    even = counts(500, dict.fromkeys(range(10), 200))
    grade, runner = grader(
        {("solution.py", "solve"): lambda n, g: [1, 2, 3, 4] if "draws" not in g else even}
    )
    for case in (seeded, uniform, seeded, uniform):
        assert grade.grade(Attempt(exercise, case)).passed
    assert runner.ran("solution.py") == 2  # each run once, then both from the cache


def test_each_call_gives_the_draws_the_case_asks_or_that_learner_fails_the_case(
    tmp_path: Path,
) -> None:
    # The attack: one draw, then empty int tensors. Its counts (1 draw in all) fit
    # any distribution's bounds for n = 1; the case asks 4 draws of each of 500 calls, so
    # the test is on 2,000 draws, and a short (or long) call is the learner's failure first.
    exercise = lesson(tmp_path, DRAW_TOML.replace("SEEDED", "[1, 2, 3, 4]"), **{"mistakes.py": ""})
    uniform = exercise.cases[1]
    even = counts(500, dict.fromkeys(range(10), 200))
    learners: dict[str, Any] = {
        "right": even,
        "one then empty": counts(500, {3: 1}, sizes=[[1, 1], [0, 499]]),
        "four then empty": counts(500, {3: 4}, sizes=[[4, 1], [0, 499]]),
        "one a call": counts(500, dict.fromkeys(range(10), 50)),
        "eight a call": counts(500, dict.fromkeys(range(10), 400)),
        "forged calls": counts(1, {0: 4}),
    }

    def reference(n: int, g: dict[str, Any]) -> Any:  # asked for one call: 4 draws
        assert g["draws"] == {"n": 1, "output": -1}
        return counts(1, {0: 1, 1: 1, 2: 1, 3: 1})

    said: dict[str, tuple[bool, str]] = {}
    for name, tag in learners.items():
        for with_reference in (True, False):
            code = {("solution.py", "solve"): lambda n, g, tag=tag: tag}
            if with_reference:
                code[("reference.py", "solve")] = reference
            grade, runner = grader(code)
            graded = grade.grade(Attempt(exercise, uniform))
            said[name + ("" if with_reference else ", no reference")] = (
                graded.passed,
                " ".join(graded.text.split()),
            )
            # The reference is asked for one call, before the learner's 500.
            assert [(j.solution.name, j.inputs[1]["draws"]["n"]) for j in runner.jobs[:2]] == [
                ("reference.py", 1),
                ("solution.py", 500),
            ]
    passed = {name for name, (ok, _) in said.items() if ok}
    # Without a reference, each call must give as many draws as the first: a learner's copy
    # cannot tell one draw a call from the four the task asks.
    assert passed == {
        "right",
        "right, no reference",
        "one a call, no reference",
        "eight a call, no reference",
    }
    text = {name: words for name, (_, words) in said.items()}
    assert "Return 4 draws from each call: call 1 of 500 returned 1." in text["one then empty"]
    assert "Return 4 draws from each call: call 2 of 500 returned 0." in text["four then empty"]
    assert "4 draws asked of each of 500 calls" in text["four then empty"]
    assert "Return 4 draws from each call: call 1 of 500 returned 1." in text["one a call"]
    assert "Return 4 draws from each call: call 1 of 500 returned 8." in text["eight a call"]
    assert (
        "Return the same number of draws from each call: call 1 returned 1, call 2 of 500 "
        "returned 0." in text["one then empty, no reference"]
    )
    # Calls the child did not make: a result it did not write.
    assert "the draws did not come back as counts" in text["forged calls"]
    assert "the draws did not come back as counts" in text["forged calls, no reference"]


def test_the_distribution_comes_from_reference_py_and_the_format_checks_its_keys(
    tmp_path: Path,
) -> None:
    toml = DRAW_TOML.replace("SEEDED", "[1, 2, 3, 4]").replace(
        "expected = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]\n", ""
    )
    exercise = lesson(tmp_path, toml, **{"mistakes.py": ""})
    uniform = exercise.cases[1]
    # The editor's schema takes a statistical case without expected, and a generator input.
    jsonschema.validate(model.read_toml(toml), json.loads(schema.SHIPPED.read_text()))
    assert uniform.source == "distribution" and uniform.expected is None
    even = counts(500, dict.fromkeys(range(10), 200))
    for distribution, status in (([0.1] * 10, Status.PASSED), ([0.5, 0.6], Status.INTERNAL)):
        grade, runner = grader(
            {
                ("solution.py", "solve"): lambda n, g: even,
                ("reference.py", "distribution"): lambda n, g, d=distribution: d,
            }
        )
        graded = grade.grade(Attempt(exercise, uniform))
        assert graded.status == status
        # The reference's distribution() is asked once, without the statistical plan.
        assert [j.inputs[1] for j in runner.jobs if j.entry == "distribution"] == [
            {"$input": "generator", "seed": 8}
        ]
    assert graded.result.lesson_error.startswith(
        "reference.py's distribution() gave no distribution for case 2 (uniform): it "
        "returned no probabilities summing to 1."
    )
    wrong = {
        "g = 8\ndraws = 500": ("g = -1\ndraws = 500", "must be a seed: a whole number from 0"),
        "draws = 500": ("draws = 0", "case 2.draws must be a whole number of calls"),
        'pass = "generator", primitive': ('pass = "plain", primitive', "primitive is the draw"),
        'name = "uniform"': ('name = "u"\nfalse_fail = 2', "false_fail must be a probability"),
    }
    for old, (new, words) in wrong.items():
        with pytest.raises(model.ExerciseError, match=words.replace("(", r"\(")):
            lesson(tmp_path, DRAW_TOML.replace("SEEDED", "[1]").replace(old, new, 1))
    several = DRAW_TOML.replace("SEEDED", "{ a = [1], b = [2] }").replace(
        'outputs = [{ kind = "list[int]" }]',
        'outputs = [{ name = "a", kind = "list[int]" }, { name = "b", kind = "list[int]" }]',
    )
    with pytest.raises(model.ExerciseError, match="name the output whose values are the draws"):
        lesson(tmp_path, several)


def test_the_binomial_bounds_leave_at_most_half_the_rate_in_each_tail() -> None:
    # Exact tails of Binomial(n, p) outside [lo, hi]: each at most alpha / 2, and one count
    # tighter on either side would put more than alpha / 2 there (the bounds are the tightest).
    # In whole numbers: p = a / b, each term scaled by b ** n (floats of n = 1,500 overflow).
    for n, a, b, alpha in ((200, 1, 10, F(1, 1000)), (1500, 1, 15, F(1, 15_000_000))):
        lo, hi = bounds(n, a / b, float(alpha))
        terms = [math.comb(n, k) * a**k * (b - a) ** (n - k) for k in range(n + 1)]
        half = alpha / 2 * b**n
        assert sum(terms[:lo]) <= half < sum(terms[: lo + 1])
        assert sum(terms[hi + 1 :]) <= half < sum(terms[hi:])
    assert bounds(100, 0.0, 1e-6) == (0, 0) and bounds(100, 1.0, 1e-6) == (100, 100)


def test_the_two_sample_fit_leaves_at_most_half_the_rate_in_each_tail() -> None:
    # The fit that names a mistake drawn another way: a category seen m times in both
    # samples (n of the learner's, n' of the mistake's) has Hypergeometric(n + n', m, n)
    # of them in the learner's when both follow one distribution. Its exact tails outside
    # [lo, hi] are each at most alpha / 2, and the bounds are the tightest.
    from pytest_lessons.core.frequencies import hypergeometric_bounds, same_distribution

    for total, marked, taken, alpha in ((300, 40, 120, F(1, 1000)), (4000, 700, 2000, F(1, 10**7))):
        lo, hi = hypergeometric_bounds(total, marked, taken, float(alpha))
        terms = [
            math.comb(marked, k) * math.comb(total - marked, taken - k)
            for k in range(min(marked, taken) + 1)
        ]
        half = alpha / 2 * math.comb(total, taken)
        assert sum(terms[:lo]) <= half < sum(terms[: lo + 1])
        assert sum(terms[hi + 1 :]) <= half < sum(terms[hi:])
    # Counts in the proportions of their sample sizes fit; a category one sample never drew
    # and the other drew often does not.
    assert same_distribution([[0, 300], [1, 100]], [[1, 200], [0, 600]], 1e-6)
    assert not same_distribution([[0, 400]], [[0, 300], [1, 100]], 1e-6)
    assert not same_distribution([], [[0, 3]], 1e-6)


# At the top: pytester restores sys.modules after each test, and torch cannot load twice.
# Where this Python has no torch (CI's 3.9 and 3.13 runs), the tests marked torch skip.
try:
    import torch
except ImportError:
    torch = None  # type: ignore[assignment]

RIGHT = (
    "import torch\n\ndef solve(n, g):\n    return torch.randint(n, (4,), generator=g).tolist()\n"
)
# The same distribution, drawn through multinomial: another stream for the same seed.
OTHER_STREAM = (
    "import torch\n\ndef solve(n, g):\n"
    "    return torch.multinomial(torch.ones(n), 4, replacement=True, generator=g).tolist()\n"
)


@pytest.mark.torch
@pytest.mark.parametrize("isolation", ["fork", "spawn", "off"])
def test_the_same_seed_draws_the_same_stream_in_every_mode_and_another_stream_is_named(
    pytester: pytest.Pytester, isolation: str
) -> None:
    seeded = torch.randint(10, (4,), generator=torch.Generator().manual_seed(7)).tolist()
    folder = pytester.path / "draw"
    folder.mkdir()
    (folder / "exercise.toml").write_text(DRAW_TOML.replace("SEEDED", json.dumps(seeded)))
    (folder / "mistakes.py").write_text(
        "import torch\n\ndef one_short(n, g):\n"
        "    return torch.randint(n - 1, (4,), generator=g).tolist()\n"
    )
    (folder / "solution.py").write_text(RIGHT)
    run = ("draw", f"--lesson-isolation={isolation}", "--lesson-report=r.json")
    result = pytester.runpytest_subprocess(*run, "--lesson-report-format=json")
    result.assert_outcomes(passed=2)
    (folder / "solution.py").write_text(OTHER_STREAM)
    result = pytester.runpytest_subprocess(*run, "--lesson-report-format=json")
    result.assert_outcomes(passed=1, failed=1)
    text = " ".join(said(result).split())
    assert (
        "Draw with torch.randint(n, (4,), generator=g): your draws follow the right "
        "distribution (the lesson's statistical cases pass), but come from another random "
        "stream, so the seeded values differ."
    ) in text
    report = json.loads((pytester.path / "r.json").read_text())
    assert [r["diagnosis"] for r in report["results"]] == ["different-stream", None]


#: Samplers for the real runs: each call of a statistical case is one call of these.
SAMPLERS = {
    "right": RIGHT,
    # The attack: the draws of one call, then empty int tensors.
    "then_empty": "import torch\n\nCALLS = [0]\n\ndef solve(n, g):\n    CALLS[0] += 1\n"
    "    if CALLS[0] == 1:\n        return torch.randint(n, (4,), generator=g)\n"
    "    return torch.empty(0, dtype=torch.long)\n",
    "eight": "import torch\n\ndef solve(n, g):\n    return torch.randint(n, (8,), generator=g)\n",
}


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_a_sampler_that_returns_too_few_or_too_many_draws_fails_in_every_mode(
    tmp_path: Path, mode: str
) -> None:
    from pytest_lessons.core import settings
    from pytest_lessons.core.grader import Grader
    from pytest_lessons.isolation.runner import make_runner

    exercise = lesson(
        tmp_path,
        DRAW_TOML.replace("SEEDED", "[1, 2, 3, 4]"),
        **{"reference.py": RIGHT, "mistakes.py": "def one_short(n, g):\n    return [0]\n"},
    )
    uniform = exercise.cases[1]
    runner = make_runner(mode)
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grade = Grader(runner, resolved, show=lambda path: Path(path).name)
    said = {}
    try:
        for name, code in SAMPLERS.items():
            folder = tmp_path / "learners" / name / "double"
            folder.mkdir(parents=True)
            (folder / "solution.py").write_text(code)
            attempt = Attempt(
                exercise,
                uniform,
                solution=folder / "solution.py",
                learner=name,
                folder=folder.parent,
            )
            graded = grade.grade(attempt)
            said[name] = (graded.status, graded.result.headline)
    finally:
        runner.close()
    assert said == {
        "right": (Status.PASSED, ""),
        "then_empty": (
            Status.FAILED,
            "Return 4 draws from each call: call 2 of 500 returned 0.",
        ),
        "eight": (Status.FAILED, "Return 4 draws from each call: call 1 of 500 returned 8."),
    }


HARNESSED_TOML = """
[exercise]
title = "Draw through a harness"
entry = "sample"
harness = "harness.py"
inputs = [
    { name = "weights", pass = "tensor", dtype = "float32", after = "unchanged" },
    { name = "g", pass = "generator" },
]
format = 2
outputs = [{ name = "token", kind = "int" }]

[[case]]
name = "uniform"
weights = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
g = 8
draws = 300
expected = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]
"""

# The harness's check: sample gives one Python int, as the next step of a decoding loop
# uses it (a one-element tensor would be counted as a draw if the harness were skipped).
HARNESS = """
from pytest_lessons.harness import LessonFailure


def drive(learner, weights, g):
    token = learner.sample(weights, g)
    if type(token) is not int:
        raise LessonFailure(
            "Return the token as a Python int from sample (token.item()): the decoding "
            f"loop appends it to a list of ints, and sample returned a {type(token).__name__}.",
            check="token-not-an-int",
        )
    return token
"""

HARNESSED_LEARNERS = {
    "right": "import torch\n\ndef sample(weights, g):\n"
    "    return int(torch.multinomial(weights, 1, generator=g))\n",
    # The harness's check fails on every call: a tensor, not an int.
    "tensor": "import torch\n\ndef sample(weights, g):\n"
    "    return torch.multinomial(weights, 1, generator=g)\n",
    # It fails from the second call on: the check runs on every draw, not the first alone.
    "then_tensor": "import torch\n\nCALLS = [0]\n\ndef sample(weights, g):\n"
    "    CALLS[0] += 1\n    token = torch.multinomial(weights, 1, generator=g)\n"
    "    return int(token) if CALLS[0] == 1 else token\n",
    # The mutation rule holds on every draw too: weights normalised in place.
    "in_place": "import torch\n\ndef sample(weights, g):\n    weights /= weights.sum()\n"
    "    return int(torch.multinomial(weights, 1, generator=g))\n",
}


@pytest.mark.torch
@pytest.mark.slow
def test_every_draw_of_a_statistical_case_goes_through_the_lessons_harness(
    tmp_path: Path,
) -> None:
    # Before, the N draws called sample directly: the harness's check never ran, and a
    # sampler that returns tensors passed a lesson whose harness asks for ints.
    from pytest_lessons.core import settings
    from pytest_lessons.core.grader import Grader
    from pytest_lessons.isolation.runner import make_runner

    exercise = lesson(tmp_path, HARNESSED_TOML, **{"harness.py": HARNESS})
    runner = make_runner("fork")
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grade = Grader(runner, resolved, show=lambda path: Path(path).name)
    seen = {}
    try:
        for name, code in HARNESSED_LEARNERS.items():
            folder = tmp_path / "learners" / name / "draw"
            folder.mkdir(parents=True)
            (folder / "solution.py").write_text(code)
            attempt = Attempt(
                exercise,
                exercise.cases[0],
                solution=folder / "solution.py",
                learner=name,
                folder=folder.parent,
            )
            graded = grade.grade(attempt)
            seen[name] = (graded.status, graded.result.diagnosis, graded.result.headline)
    finally:
        runner.close()
    told = (
        "Return the token as a Python int from sample (token.item()): the decoding loop "
        "appends it to a list of ints, and sample returned a Tensor."
    )
    assert seen == {
        "right": (Status.PASSED, None, ""),
        "tensor": (Status.FAILED, "token-not-an-int", told),
        "then_tensor": (Status.FAILED, "token-not-an-int", told),
        # Told as for an ordinary case: an error, the input and where it changed.
        "in_place": (
            Status.ERROR,
            None,
            "Leave the input weights as it was: your code changed it in place (at [0]: it was "
            "2.0, now 0.1). Build a new value, or work on a copy of weights: the caller still "
            "needs its own.",
        ),
    }


def test_get_batchs_statistical_case_keeps_its_stated_power_at_a_quarter_of_the_draws() -> None:
    # The figures docs/authors/randomness.md states for get_batch's 250 calls of 8 starts
    # (2,000 draws; 1,000 calls before, 2.4 s a learner): the false-fail bound unchanged,
    # and the chance each kind of wrong sampler fails.
    from pytest_lessons.core.frequencies import power, within

    exercise = model.load(ROOT / "exercises" / "get_batch" / "exercise.toml")
    case = next(case for case in exercise.cases if case.draws is not None)
    n = case.draws * 8 if case.draws else 0
    assert (n, case.false_fail) == (2000, 1e-6)
    right = {k: 1 / 15 for k in range(15)}
    lo, hi = bounds(n, 1 / 15, 1e-6 / 15)
    assert (lo, hi) == (77, 197)
    assert 15 * (1 - within(n, 1 / 15, lo, hi)) < 7.8e-7  # a bound on right code failing
    off_by_one = {k: 1 / 14 for k in range(14)}
    does_not_fit = {k: 1 / 16 for k in range(16)}
    half = {**{k: (1 - 0.5 / 15) / 14 for k in range(1, 15)}, 0: 0.5 / 15}
    twice = {**{k: (1 - 2 / 15) / 14 for k in range(1, 15)}, 0: 2 / 15}
    assert power(right, off_by_one, 1e-6, n) == 1.0
    assert power(right, does_not_fit, 1e-6, n) == 1.0
    assert power(right, half, 1e-6, n) >= 0.88
    assert power(right, twice, 1e-6, n) >= 0.9999


#: get_batch learners for the real statistical case: the start 0 comes up twice as often
#: (a draw from one start too many, wrapped around), and the off-by-one mistake written
#: another way than mistakes.py's.
GET_BATCH_WRONG = {
    "wrapped": "import torch\n\ndef solve(data, B, T, g):\n"
    "    ix = torch.randint(len(data) - T + 1, (B,), generator=g) % (len(data) - T)\n"
    "    x = torch.stack([data[i : i + T] for i in ix])\n"
    "    return x, torch.stack([data[i + 1 : i + 1 + T] for i in ix])\n",
    "off_by_one": "import torch\n\ndef solve(data, B, T, g):\n"
    "    ix = torch.randint(0, len(data) - (T + 1), (B,), generator=g)\n"
    "    x = torch.stack([data[i : i + T] for i in ix])\n"
    "    return x, torch.stack([data[i + 1 : i + 1 + T] for i in ix])\n",
}


@pytest.mark.torch
@pytest.mark.slow
def test_get_batchs_fewer_draws_still_pass_right_code_and_fail_wrong_samplers(
    tmp_path: Path,
) -> None:
    from pytest_lessons.core import settings
    from pytest_lessons.core.grader import Grader
    from pytest_lessons.isolation.runner import make_runner

    exercise = model.load(ROOT / "exercises" / "get_batch" / "exercise.toml")
    case = next(case for case in exercise.cases if case.draws is not None)
    learners = {
        "right": (exercise.path.parent / "reference.py").read_text(),
        **GET_BATCH_WRONG,
    }
    runner = make_runner("fork")
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grade = Grader(runner, resolved, show=lambda path: Path(path).name)
    seen = {}
    try:
        for name, code in learners.items():
            folder = tmp_path / name / "get_batch"
            folder.mkdir(parents=True)
            (folder / "solution.py").write_text(code)
            attempt = Attempt(
                exercise, case, solution=folder / "solution.py", learner=name, folder=folder.parent
            )
            graded = grade.grade(attempt)
            seen[name] = (graded.status, graded.result.headline)
    finally:
        runner.close()
    assert seen["right"] == (Status.PASSED, "")
    assert seen["wrapped"] == (
        Status.FAILED,
        "Check the probabilities you draw from: 1 category came up too often or too rarely "
        "for the right distribution (0).",
    )
    assert seen["off_by_one"][0] == Status.FAILED


#: sample_top_k learners that draw with Gumbel-max (argmax of log-probabilities plus Gumbel
#: noise) where the lesson's mistakes call torch.multinomial: the same distribution drawn
#: another way, so the counts are never the mistake's own.
GUMBEL = """
import torch


def _top_k(scaled, k):
    kth = torch.topk(scaled, k, dim=-1).values[:, -1:]
    return scaled.masked_fill(scaled < kth, float("-inf"))


def solve(logits, k, temperature, g):
    probs = PROBS
    noise = -torch.log(-torch.log(torch.rand(probs.shape, generator=g)))
    return probs, (torch.log(probs) + noise).argmax(dim=-1, keepdim=True)
"""
GUMBEL_LEARNERS = {
    # mistakes.py's temperature_after_softmax: the temperature cancels out.
    "after_softmax": GUMBEL.replace(
        "PROBS",
        "torch.softmax(_top_k(logits, k), dim=-1) / temperature\n"
        "    probs = probs / probs.sum(dim=-1, keepdim=True)",
    ),
    # A mistake the lesson does not catalogue: the logits multiplied by the temperature.
    "multiplied": GUMBEL.replace("PROBS", "torch.softmax(_top_k(logits * temperature, k), dim=-1)"),
}


@pytest.mark.torch
@pytest.mark.slow
def test_a_catalogued_mistake_drawn_another_way_is_named_by_its_distribution(
    tmp_path: Path,
) -> None:
    # Before, a watch-out fired on a statistical case only when the mistake's counts were
    # the learner's own: the same mistake drawn with Gumbel-max went unnamed.
    from pytest_lessons.core import settings
    from pytest_lessons.core.grader import Grader
    from pytest_lessons.isolation.runner import make_runner

    exercise = model.load(ROOT / "exercises" / "sample_top_k" / "exercise.toml")
    case = next(case for case in exercise.cases if case.draws is not None)
    runner = make_runner("fork")
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grade = Grader(runner, resolved, show=lambda path: Path(path).name)
    seen = {}
    try:
        for name, code in GUMBEL_LEARNERS.items():
            folder = tmp_path / name / "sample_top_k"
            folder.mkdir(parents=True)
            (folder / "solution.py").write_text(code)
            attempt = Attempt(
                exercise, case, solution=folder / "solution.py", learner=name, folder=folder.parent
            )
            graded = grade.grade(attempt)
            seen[name] = (graded.status, graded.result.diagnosis, graded.text)
    finally:
        runner.close()
    status, diagnosis, text = seen["after_softmax"]
    assert (status, diagnosis) == (Status.FAILED, "temperature-after-softmax")
    words = " ".join(text.split())
    assert "Watch out: divide the logits by the temperature before the softmax" in words
    assert (
        "Your draws follow the distribution this mistake draws from, though drawn another way"
    ) in words
    # Draws that fit no catalogued mistake's distribution name none of them.
    status, diagnosis, _ = seen["multiplied"]
    assert status == Status.FAILED
    assert diagnosis not in {watch.id for watch in exercise.watch_outs}
