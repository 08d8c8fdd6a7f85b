"""Format v2 authoring, through the grading core and its fake runner: expected values computed
from the reference or read from snapshot files, ``--lesson-regenerate``'s rewrite and its
refusal in a learner's copy, the export's freezing, variants and the margins table, and
generated inputs of every kind. What only a pytest run shows is at the end (pytester)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_lessons import schema
from pytest_lessons.core import authoring, export, model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.generate import draw, smaller
from pytest_lessons.core.results import Status

from helpers import double, grader, said

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

COMPUTED = """
[exercise]
title = "Double every number"
inputs = ["x"]

[[case]]
name = "typed"
x = [1, 2]
expected = [2, 4]

[[case]]
name = "computed"
x = [3, 4]
expected = { from = "reference" }

[[case]]
name = "long"
x = [5, 6]
expected = { snapshot = "snapshots/long.json" }

[[case]]
hidden = true
x = [7, 8]
expected = { snapshot = "snapshots/secret.json" }
"""


def folder_of(tmp_path: Path, toml: str = COMPUTED, **files: str) -> Path:
    folder = tmp_path / "double"
    folder.mkdir(exist_ok=True)
    for name, text in {"reference.py": "", "solution.py": "", **files}.items():
        (folder / name).write_text(text)
    (folder / "exercise.toml").write_text(toml)
    return folder


def test_computed_and_snapshot_answers_grade_regenerate_and_freeze(tmp_path: Path) -> None:
    folder = folder_of(tmp_path)
    exercise = model.load(folder / "exercise.toml")
    assert [(c.source, c.snapshot, c.expected) for c in exercise.cases] == [
        (None, None, [2, 4]),
        ("reference", None, None),
        ("snapshot", "snapshots/long.json", None),
        ("snapshot", "snapshots/secret.json", None),
    ]
    grade, runner = grader({("reference.py", "solve"): double, ("solution.py", "solve"): double})
    graded = [grade.grade(Attempt(exercise, case)) for case in exercise.cases]
    # The computed case passes against the reference; a snapshot not written yet is the
    # lesson's failure, told to its author with the command that writes it.
    assert [g.status for g in graded] == [Status.PASSED, Status.PASSED, *[Status.INTERNAL] * 2]
    assert graded[2].result.lesson_error == (
        "snapshots/long.json is missing or not JSON: write it with pytest --lesson-check "
        "--lesson-regenerate.\n"
    )
    assert runner.ran("reference.py") == 1
    with pytest.raises(
        authoring.LessonProblem, match=re.escape("Write double's snapshots/long.json first")
    ):
        authoring.learner_copy(grade, exercise)  # an export would ship a case with no answer

    # --lesson-regenerate writes each snapshot, then says what changed in each.
    (folder / "snapshots").mkdir()
    (folder / "snapshots" / "long.json").write_text("[1,")  # a broken file loads as missing
    assert model.load(folder / "exercise.toml").cases[2].expected is None
    assert authoring.regenerate(grade, exercise) == [
        "double: snapshots/long.json (case 3 (long)): written, 2 values (the old file was not "
        "JSON)",
        "double: snapshots/secret.json (hidden case 4): written, 2 values",
    ]
    assert json.loads((folder / "snapshots" / "long.json").read_text()) == [10, 12]
    exercise = model.load(folder / "exercise.toml")
    assert [c.expected for c in exercise.cases[2:]] == [[10, 12], [14, 16]]
    assert all(grade.grade(Attempt(exercise, case)).passed for case in exercise.cases)
    changed = {("reference.py", "solve"): lambda x: [2 * x[0], 2 * x[1] + 0.5]}
    assert authoring.regenerate(grader(changed)[0], exercise) == [
        "double: snapshots/long.json (case 3 (long)): 1 of 2 values changed, largest gap 0.5 at [1]: "
        "12 -> 12.5",
        "double: snapshots/secret.json (hidden case 4): 1 of 2 values changed, largest gap 0.5 at [1]: "
        "16 -> 16.5",
    ]
    assert authoring.regenerate(grader(changed)[0], model.load(exercise.path))[0].endswith(
        "unchanged"
    )

    # The learner's copy: the computed case frozen with the reference's answer, the public
    # snapshot kept with its file, the hidden one gone with its file; no variants.py.
    (folder / "variants.py").write_text("def solve(x):\n    return x\n")
    exercise = model.load(folder / "exercise.toml")
    text, origin = authoring.learner_copy(grade, exercise)
    assert origin == [1, 2, 3] and text.startswith(export.MARK + "\n")
    copy = tmp_path / "learners" / "double"
    export.write_files(copy, exercise, text)
    frozen = model.load(copy / "exercise.toml")
    assert [(c.source, c.expected) for c in frozen.cases] == [
        (None, [2, 4]),
        (None, [6, 8]),
        ("snapshot", [10, 12.5]),
    ]
    assert sorted(p.name for p in copy.rglob("*") if p.is_file()) == [
        "exercise.toml",
        "long.json",
        "solution.py",
    ]
    assert "secret" not in text and "variants" not in text
    # ... where regenerating is refused, in one sentence that says where to do it.
    with pytest.raises(authoring.LessonProblem) as refused:
        authoring.regenerate(grade, frozen)
    assert str(refused.value) == (
        "Regenerate snapshots in the course's own folder, not here: double is a learner's copy "
        "(made by --lesson-export, without reference.py), so its answers cannot be computed "
        "again.\n"
    )
    (copy / "reference.py").write_text("")  # a reference copied in: still the learner's copy
    with pytest.raises(authoring.LessonProblem):
        authoring.regenerate(grade, model.load(copy / "exercise.toml"))


@pytest.mark.parametrize(
    ("expected", "words"),
    [
        (
            '{ from = "mistakes" }',
            'case 1.expected.from must be "reference" (the one source today)',
        ),
        (
            '{ snapshot = "../x.json" }',
            "case 1.expected.snapshot must be a .json file inside the exercise folder, such as "
            '"snapshots/case_3.json"',
        ),
    ],
)
def test_a_wrong_source_names_the_key(expected: str, words: str, tmp_path: Path) -> None:
    toml = COMPUTED.split("[[case]]")[0] + f"[[case]]\nx = [1]\nexpected = {expected}\n"
    folder = folder_of(tmp_path, toml)
    with pytest.raises(model.ExerciseError) as error:
        model.load(folder / "exercise.toml")
    assert error.value.problem.startswith(words)


MARGINS = """
[exercise]
title = "Double every number"
inputs = ["x"]
rtol = 0
atol = 0.01

[[case]]
x = [1, 2]
expected = [2, 4]

[[case]]
x = [100]
expected = { from = "reference" }

[[watch_out]]
id = "tripled"
mistake = "tripled"
message = "multiply by 2, not 3."

[[watch_out]]
id = "nudged"
mistake = "nudged"
message = "add nothing."
"""


def test_variants_must_pass_and_the_margins_table_warns_within_ten_times(tmp_path: Path) -> None:
    variants = "def exact(x):\n    pass\n\ndef rounded(x):\n    pass\n\ndef _helper():\n    pass\n"
    mistakes = "def tripled(x):\n    pass\n\ndef nudged(x):\n    pass\n"
    folder = folder_of(tmp_path, MARGINS, **{"variants.py": variants, "mistakes.py": mistakes})
    exercise = model.load(folder / "exercise.toml")

    def add(amount: float) -> Any:
        return lambda x: [2 * v + amount for v in x]

    code = {
        ("reference.py", "solve"): double,
        ("variants.py", "exact"): double,
        ("variants.py", "rounded"): add(0.004),  # 0.4 of the tolerance: within 10x
        ("mistakes.py", "tripled"): lambda x: [3 * v for v in x],
        ("mistakes.py", "nudged"): add(0.05),  # caught by 5x the tolerance only
    }
    check = authoring.LessonCheck(grader(code)[0], exercise)
    assert check.problems() == []
    assert check.notes == [
        "double: margins (gaps in tolerances: 1 is the edge; rtol 0, atol 0.01)",
        "  reference.py       0  largest, on case 1",
        "  variant exact      0  largest, on case 1; 0 from reference.py's answers",
        "  variant rounded  0.4  largest, on case 1; 0.4 from reference.py's answers",
        "  mistake tripled  200  smallest, on case 1; caught on 2 of 2",
        "  mistake nudged     5  smallest, on case 1; caught on 2 of 2",
        "  WARNING: variant rounded is within 2.5x of the tolerance from reference.py's "
        "answers: a right answer computed another way may fail; widen rtol/atol, or make the "
        "cases less sensitive to rounding (smaller values, fewer steps)",
        "  WARNING: mistake nudged is caught by only 5x the tolerance on case 1: a slightly wider "
        "tolerance lets it pass there; add a case where it differs more, or tighten rtol/atol",
    ]
    # Typed answers may take up to half the tolerance (their rounding); past it, the case's
    # expected values want more decimals.
    code[("reference.py", "solve")] = add(0.006)
    notes = authoring.LessonCheck(grader(code)[0], exercise)
    assert notes.problems() == []
    assert (
        "  WARNING: reference.py is within 1.7x of the tolerance on case 1: write that case's "
        "expected values with more decimals, or widen rtol/atol"
    ) in notes.notes
    code[("reference.py", "solve")] = double
    # A variant that fails is a problem of the lesson: a right answer would fail.
    code[("variants.py", "rounded")] = add(0.02)
    problems = authoring.LessonCheck(grader(code)[0], exercise).problems()
    assert problems[0] == (
        "double: variant rounded of variants.py is a right answer but fails case 1: "
        "Check your calculation: the shape is right, but 2 of 2 values differ from the "
        "expected answer. Widen the tolerance, or fix the variant"
    )
    assert len(problems) == 2 and "fails case 2: " in problems[1]


GENERATED = """
[exercise]
title = "Embed"
inputs = ["table", "ids", "flags", "words", "rows", "seed", "size"]

[generate]
count = 5
seed = 1
[generate.axes]
vocab = [3, 6]
width = [2, 4]
time = [7, 9]
[generate.inputs]
table = ["vocab", "width"]
ids = { kind = "int", axes = ["time"], below = "vocab" }
flags = { kind = "bool", axes = ["time"] }
words = { kind = "str", axes = ["width"], alphabet = "ab", length = [0, 3] }
rows = { kind = "float", axes = ["width"], ragged = [1, 4], range = [0, 1], decimals = 1 }
seed = { kind = "int", range = [0, 1000] }
size = "time"
"""


def test_generated_inputs_of_every_kind_arrive_as_python_values(tmp_path: Path) -> None:
    exercise = model.load(folder_of(tmp_path, GENERATED) / "exercise.toml")
    spec = exercise.generate
    assert spec is not None
    for case in exercise.cases:
        sizes, inputs = case.sizes, case.inputs
        assert sizes is not None
        ids, flags, words = inputs["ids"], inputs["flags"], inputs["words"]
        assert len(ids) == sizes["time"] and all(type(i) is int for i in ids)
        assert all(0 <= i < sizes["vocab"] for i in ids)  # valid rows of table
        assert len(flags) == sizes["time"] and all(type(f) is bool for f in flags)
        assert all(set(w) <= {"a", "b"} and len(w) <= 3 for w in words)
        assert all(1 <= len(row) <= 4 for row in inputs["rows"])
        assert type(inputs["seed"]) is int and 0 <= inputs["seed"] <= 1000
        assert inputs["size"] == sizes["time"]
    lengths = {len(row) for case in exercise.cases for row in case.inputs["rows"]}
    assert len(lengths) > 1  # ragged: rows of different lengths
    # Smaller inputs keep every kind (only floats are rounded) and never cut the vocabulary.
    case = exercise.cases[0]
    assert case.sizes is not None
    for sizes, inputs in smaller(spec, case.sizes, case.inputs):
        assert "vocab" not in sizes or sizes["vocab"] == case.sizes["vocab"]
        assert all(type(i) is int for i in inputs["ids"])
        assert inputs["words"] == case.inputs["words"][: sizes["width"]]
    assert draw(spec) == [(c.sizes, c.inputs) for c in exercise.cases]  # the same each time
    # The editor's schema takes the new forms as the plugin does.
    for text in (GENERATED, COMPUTED):
        jsonschema.validate(tomllib.loads(text), json.loads(schema.SHIPPED.read_text()))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            ("vocab = [3, 6]", "vocab = [3, 100]"),
            'generate.axes axis "vocab" must be [smallest, largest]: whole sizes from 1 to 64, '
            "in order",
        ),
        (
            ("count = 5", "count = 5\nmax_size = 80\nmax_elements = 500"),
            None,
        ),
        (
            ("count = 5", "count = 5\nmax_size = 8\n"),
            'generate.axes: axis "time" may reach 9, above generate.max_size = 8; raise '
            "max_size (at most 4096) or lower the axis",
        ),
        (
            ("count = 5", "count = 5\nmax_elements = 60"),
            "generate: a case may hold 71 values at the axes' largest sizes, above "
            "generate.max_elements = 60; raise max_elements (at most 1000000) or lower the axes",
        ),
        (
            ('below = "vocab"', 'below = "vocab", decimals = 2'),
            'generate.inputs.ids.decimals is not for kind = "int"',
        ),
        (('below = "vocab"', 'below = "words"'), 'generate.inputs.ids names unknown axis "words"'),
        (('kind = "bool"', 'kind = "char"'), "generate.inputs.flags.kind must be one of"),
    ],
)
def test_generate_limits_and_input_tables_name_the_key(
    change: tuple[str, str], words: str | None, tmp_path: Path
) -> None:
    assert change[0] in GENERATED
    toml = GENERATED.replace(*change, 1)
    if words is None:
        model.load(
            folder_of(tmp_path, toml.replace("vocab = [3, 6]", "vocab = [3, 80]")) / "exercise.toml"
        )
        return
    with pytest.raises(model.ExerciseError) as error:
        model.load(folder_of(tmp_path, toml) / "exercise.toml")
    assert error.value.problem.startswith(words)


# --- what only a pytest run shows -----------------------------------------------------------

REFERENCE = "def solve(x):\n    return [2 * v for v in x]\n"


@pytest.mark.usefixtures("no_preload")
def test_regenerate_prints_the_changes_and_the_margins_and_refuses_in_a_learner_copy(
    pytester: pytest.Pytester, make_exercise: Any
) -> None:
    toml = COMPUTED.split("[[case]]\nhidden")[0]
    make_exercise(
        "double",
        toml=toml,
        solution="def solve(x):\n    raise NotImplementedError\n",
        reference__py=REFERENCE,
        variants__py="def with_floats(x):\n    return [2.0 * v + 1e-6 for v in x]\n",
    )
    alone = pytester.runpytest("double", "--lesson-regenerate")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    assert "Give --lesson-regenerate with --lesson-check" in alone.stderr.str()
    # The snapshot is missing: the check fails and says how to write it.
    missing = pytester.runpytest("double", "--lesson-check")
    assert missing.ret == pytest.ExitCode.TESTS_FAILED
    assert "snapshots/long.json is missing or not JSON; write it with --lesson-regenerate" in said(
        missing
    )
    first = pytester.runpytest("double", "--lesson-check", "--lesson-regenerate")
    assert first.ret == pytest.ExitCode.OK
    first.stdout.fnmatch_lines(
        [
            "*= lessons: lesson check =*",
            "double: snapshots/long.json (case 3 (long)): written, 2 values",
            "double: margins (gaps in tolerances: 1 is the edge; rtol 0.0001, atol 0.0001)",
            "  reference.py              0  largest, on case 1 (typed)",
            "  variant with_floats  0.0033  largest, on case 1 (typed); 0.0033 from reference.py's answers",
        ]
    )
    (pytester.path / "double" / "reference.py").write_text(REFERENCE.replace("2 * v", "2 * v + 1"))
    stale = pytester.runpytest("double", "--lesson-check")
    assert stale.ret == pytest.ExitCode.TESTS_FAILED
    assert (
        "snapshots/long.json no longer holds the reference's answer; write it again with pytest "
        "--lesson-check --lesson-regenerate"
    ) in said(stale)
    again = pytester.runpytest("double", "--lesson-check", "--lesson-regenerate")
    # The typed case now disagrees with the new reference: regenerate rewrote only the file.
    again.stdout.fnmatch_lines(
        [
            "double: snapshots/long.json (case 3 (long)): 2 of 2 values changed, largest gap 1 at [[]0[]]: 10 -> 11"
        ]
    )
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    pytester.runpytest("double", "--lesson-export=learners")
    refused = pytester.runpytest("learners/double", "--lesson-check", "--lesson-regenerate")
    assert refused.ret == pytest.ExitCode.TESTS_FAILED
    assert (
        "Regenerate snapshots in the course's own folder, not here: double is a learner's copy"
        in said(refused)
    )
