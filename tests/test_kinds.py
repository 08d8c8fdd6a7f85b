"""Format version 2's kinds of expected value (:mod:`pytest_lessons.core.kinds`), as a learner
and an author meet them: through the grader with the fake runner (the words of each kind's
failure), the format's checks, the learner's copy, and one real worker that packs every kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core import judge, kinds, model
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.results import Status
from pytest_lessons.isolation.answers import encode, valid_answer

from helpers import grader, lesson


def wire(value: Any) -> Any:
    """*value* as the worker sends it: encoded, through JSON, validated."""
    data = json.loads(json.dumps(encode(value)))
    assert valid_answer(data)
    return data


def graded(toml: str, tmp_path: Path, solve: Callable[..., Any], **files: str) -> tuple[Any, str]:
    """The first case of the lesson *toml*, graded with *solve* as the learner's code."""
    exercise = lesson(tmp_path, toml, **files)
    grade, _ = grader({("solution.py", "solve"): lambda *a: wire(solve(*a))})
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    return graded.result, graded.text


TOKENS = """
[exercise]
title = "Encode"
inputs = ["n"]
outputs = [{ name = "ids", kind = "list[int]" }]

[[case]]
n = 40
expected = [IDS]
"""


def test_token_ids_compare_exactly_and_a_failure_names_the_position_with_its_neighbours(
    tmp_path: Path,
) -> None:
    ids = [50000 + i for i in range(40)]
    toml = TOKENS.replace("[IDS]", json.dumps(ids))
    off_by_one = [*ids[:17], ids[17] - 1, *ids[18:]]
    result, text = graded(toml, tmp_path, lambda n: off_by_one)
    # 50,016 is within the numeric default's 1e-4 of 50,017: an int kind is exact.
    assert result.status == Status.FAILED
    assert result.headline == "Check your calculation: at position 17: expected 50017, got 50016."
    assert "expected   … 50014 50015 50016 [50017] 50018 50019 50020 …" in text
    assert "got        … 50014 50015 50016 [50016] 50018 50019 50020 …" in text
    assert "differ     1 of 40 positions" in text
    result, _ = graded(toml, tmp_path, lambda n: [float(i) for i in ids])
    assert result.headline == "Return a list of ints: got a float at [0]."
    result, _ = graded(toml, tmp_path, lambda n: ids[:30])
    assert result.headline == (
        "Return the expected number of items: expected 40 items, got 30; the first 30 are right."
    )
    result, _ = graded(toml, tmp_path, lambda n: tuple(ids))
    assert result.status == Status.PASSED  # a tuple of ids is the same sequence


TEXTS = """
[exercise]
title = "Decode"
inputs = ["ids"]
format = 2

[[case]]
ids = [1, 2]
expected = "Hello, Ada"

[[case]]
ids = [3]
expected = [[true, false], [true, true]]

[[case]]
ids = [4]
expected = { hex = "68e969" }

[[case]]
ids = [5]
expected = { a = 1.5, b = "x" }

[[case]]
ids = [6]
expected = [2, 3]
"""


def test_a_format_2_lesson_reads_each_kind_from_its_expected_value(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, TEXTS)
    assert exercise.format == 2 and exercise.kinds == ()
    grade, _ = grader(
        {
            ("solution.py", "solve"): lambda ids: wire(
                {
                    1: "Hello, Adb",
                    3: [[True, False], [True, False]],
                    4: b"h\xe9j",
                    5: {"a": 1.50001, "c": "x"},
                    6: [2.00001, 3],
                }[ids[0]]
            )
        }
    )
    words = [grade.grade(Attempt(exercise, case)).result.headline for case in exercise.cases]
    assert words == [
        "Check your text: at character 9: expected 'a' (U+0061), got 'b' (U+0062).",
        "Check your condition: expected True at [1, 1], got False.",
        "Check your bytes: at byte 2: expected 0x69, got 0x6a.",
        "Return every expected key and no other: missing key 'b' and extra key 'c'.",
        "",  # integers stay numbers, within tolerance
    ]
    text = grade.grade(Attempt(exercise, exercise.cases[0])).text
    assert "expected   'Hello, Ada'" in text and "lengths    expected 10 characters, got 10" in text
    # In format 1 the same file is refused: every expected value is numbers there.
    error = model.ExerciseError
    try:
        lesson(tmp_path / "..", TEXTS.replace("format = 2\n", ""))
    except error as found:
        assert found.problem == "case 1.expected must be a number or a nested list of numbers"
    else:
        raise AssertionError("a format-1 lesson expected text")


VOCAB = """
[exercise]
title = "Vocabulary"
inputs = ["n"]
outputs = [{ kind = "dict[int, bytes]" }]

[[case]]
n = 3
expected = { "97" = { hex = "61" }, "256" = "ab" }
"""


def test_a_mapping_names_missing_and_extra_keys_and_compares_values_by_their_kind(
    tmp_path: Path,
) -> None:
    exercise = lesson(tmp_path, VOCAB)
    assert exercise.kinds == ("dict[int, bytes]",) and exercise.outputs == ()
    cases = [
        ({97: b"a", 256: b"ab"}, ""),
        (
            {97: b"a", 257: b"ab"},
            "Return every expected key and no other: missing key 256 and extra key 257.",
        ),
        (
            {97: b"a", 256: b"ac"},
            "Check your bytes: at byte 1 of key 256: expected 0x62, got 0x63.",
        ),
        (
            {"97": b"a", "256": b"ab"},
            "Return a dict of ints to bytes: got a string as a key ('97').",
        ),
        (
            [[97, b"a"]],
            "Return a dict of ints to bytes: got a list.",
        ),
        (
            {97: "a", 256: b"ab"},
            "Return a dict of ints to bytes: got a string at key 97.",
        ),
    ]
    for answer, words in cases:
        grade, _ = grader({("solution.py", "solve"): lambda n, a=answer: wire(a)})
        assert grade.grade(Attempt(exercise, exercise.cases[0])).result.headline == words
    # The learner's copy writes a reference's answer back as the kind reads it.
    plain = judge.plain_answer(exercise, wire({97: b"a", 256: b"ab"}))
    assert plain == {"97": {"hex": "61"}, "256": {"hex": "6162"}}
    assert exercise.cases[0].expected != plain
    assert judge.judge(exercise, plain, wire({97: b"a", 256: b"ab"}), 0, 0).passed


STRUCTURES = """
[exercise]
title = "Structures"
inputs = ["n"]
outputs = [
  { name = "merges", kind = "list[tuple[bytes, bytes]]" },
  { name = "words", kind = "set[str]" },
  { name = "grads", kind = "list[list[float] | None]" },
]

[[case]]
n = 1
expected = { merges = [["a", "b"], ["ab", "c"]], words = ["the", "cat"], grads = [[0.5, 1.0], { none = true }, [2.0]] }
"""


def test_ragged_lists_tuples_sets_and_none_where_declared(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, STRUCTURES)
    right = ([(b"a", b"b"), (b"ab", b"c")], {"cat", "the"}, [[0.5, 1.0], None, [2.00001]])
    cases: list[tuple[Any, str]] = [
        (right, ""),
        (
            ([(b"a", b"b")], *right[1:]),
            "In merges (value 1 of 3): Return the expected number of items: expected 2 items, "
            "got 1; the first 1 are right.",
        ),
        (
            (right[0], ["the", "cat"], right[2]),
            "In words (value 2 of 3): Return a set of strings: got "
            "a list (build it with set(...)).",
        ),
        (
            (right[0], {"the", "dog"}, right[2]),
            "In words (value 2 of 3): Return the expected items: missing 'cat'; not expected 'dog'.",
        ),
        (
            (*right[:2], [[0.5, 1.0], [0.0], [2.0]]),
            "In grads (value 3 of 3): Check which values are None: expected None at [1], got a "
            "list.",
        ),
        (
            (*right[:2], [[0.5, 1.0], None, None]),
            "In grads (value 3 of 3): Check which values are None: expected a list of numbers "
            "at [2], got None.",
        ),
        (
            (*right[:2], [[0.5, 1.5], None, [2.0]]),
            "In grads (value 3 of 3): Check your calculation: at [0, 1]: expected 1, got 1.5 "
            "(allowed ±0.0002).",
        ),
    ]
    for answer, words in cases:
        grade, _ = grader({("solution.py", "solve"): lambda n, a=answer: wire(a)})
        assert grade.grade(Attempt(exercise, exercise.cases[0])).result.headline == words


def test_the_format_names_a_kind_it_cannot_read_and_an_expected_value_not_of_its_kind(
    tmp_path: Path,
) -> None:
    for old, new, words in [
        (
            'kind = "list[int]"',
            'kind = "list[integer]"',
            'exercise.outputs entry 1: kind "list[integer]": unknown kind "integer"',
        ),
        (
            'kind = "list[int]"',
            'kind = "list[int"',
            'exercise.outputs entry 1: kind "list[int": close its "[" with "]"',
        ),
        (
            'kind = "list[int]"',
            'kind = "tensor | None"',
            'exercise.outputs entry 1: kind "tensor | None": a tensor can only be a whole '
            "output, not a part of one",
        ),
        ("[IDS]", "[1, 2.5]", "case 1.expected must be a list of ints ([1] is not an int)"),
        ("[IDS]", '"12"', "case 1.expected must be a list of ints"),
        (
            '{ name = "ids", kind = "list[int]" }',
            '{ name = "ids", kind = "int" }, { kind = "str" }',
            "exercise.outputs entry 2 needs a name",
        ),
    ]:
        toml = TOKENS.replace(old, new).replace("[IDS]", "[1, 2]")
        try:
            lesson(tmp_path, toml)
        except model.ExerciseError as error:
            assert error.problem.startswith(words), error.problem
        else:
            raise AssertionError(new)


def test_a_kind_added_to_the_table_is_read_named_among_the_kinds_and_in_the_editor_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_lessons import schema

    def described() -> str:
        outputs = schema.build()["properties"]["exercise"]["properties"]["outputs"]
        return str(outputs["anyOf"][1]["items"]["anyOf"][1]["properties"]["kind"]["description"])

    def refusal() -> str:
        with pytest.raises(kinds.KindError) as error:
            kinds.parse("list[integer]")
        return str(error.value)

    # What an author reads in both places is the table, in its order, and every example in
    # it is a kind (a new row needs no change here).
    spellings = ", ".join(word.spelling for word in kinds.WORDS)
    assert refusal() == f'"list[integer]": unknown kind "integer" (the kinds are {spellings})'
    assert refusal().startswith('"list[integer]": unknown kind "integer" (the kinds are int, ')
    examples = [example for word in kinds.WORDS for example in word.examples]
    assert described() == f"A kind in Python's type syntax: {', '.join(examples)}."
    assert "dict[int, bytes], set[str], int | None, optional[int], tensor" in described()
    for example in examples:
        kinds.parse(example)
    pair = kinds.Word("pair", "pair[...]", ("pair[int]",), 1, lambda p: kinds.Seq(p * 2, True))
    monkeypatch.setattr(kinds, "WORDS", (*kinds.WORDS, pair))
    assert kinds.parse("pair[str]").name == "tuple[str, str]"
    assert refusal().endswith("optional[...], tensor, pair[...])")
    assert described().endswith("tensor[float32], pair[int].")
    toml = TOKENS.replace('kind = "list[int]"', 'kind = "pair[int]"').replace("[IDS]", "[1, 2]")
    assert lesson(tmp_path, toml).cases[0].expected == [1, 2]


def test_a_kind_python_reads_but_that_is_no_kind_is_refused_with_what_to_write() -> None:
    # Python's own parser reads the expression; what it reads that is no kind (a call, a
    # dotted name, a value, an operation other than | None) is refused, naming the part.
    write = "write a kind such as list[int] or int | None"
    for text, words in [
        ("list(int)", f'"list(int)": {write}; "list(int)" is a call'),
        ("torch.float32", f'"torch.float32": {write}; "torch.float32" is a dotted name'),
        ("typing.List[int]", f'"typing.List[int]": {write}; "typing.List" is a dotted name'),
        ("list[3]", f'"list[3]": {write}; "3" is a value'),
        ('dict[str, "int"]', f'"dict[str, "int"]": {write}; ""int"" is a string'),
        ("[int]", f'"[int]": {write}; "[int]" is a list'),
        ("int + str", f'"int + str": {write}; "int + str" is an operation: "| None" is the only'),
        ("list[int, str]", '"list[int, str]": list[...] takes 1 kind(s)'),
        ("int, str", '"int, str": write several values as tuple[int, str]'),
        ("tuple[int, ...]", '"tuple[int, ...]": write list[...] for any number of items'),
        ("List[int]", '"List[int]": unknown kind "List" (write list; the kinds are int, '),
        ("int[str]", '"int[str]": int holds no other kind; write int alone'),
        ("list[]", '"list[]": say what list holds, such as list[int]'),
        ("tensor[torch.float32]", '"tensor[torch.float32]": the dtype must be one of float16,'),
        ("list[None]", '"list[None]": None is written as "kind | None"'),
        ("None", '"None": None alone is not a kind (write "int | None")'),
        ("int | str", '"int | str": a union may only add None to one kind (int | None)'),
        ("list[int)", '"list[int)": close its "[" with "]", not ")"'),
        ("list[int]]", '"list[int]]": remove the "]" at character 10: nothing opens it'),
        ("int # ids", '"int # ids": remove the comment ("# ids")'),
        ("int str", '"int str": write a kind in Python\'s type syntax, such as list[int] or int'),
    ]:
        with pytest.raises(kinds.KindError) as error:
            kinds.parse(text)
        assert str(error.value).startswith(words), str(error.value)
    # What the old reader took stays a kind, spaces and newlines between words included.
    for text, name in [
        (" dict[str,\n list[int | None]] ", "dict[str, list[optional[int]]]"),
        ("tuple[bytes, bytes] | None", "optional[tuple[bytes, bytes]]"),
        ("tensor[float32]", "tensor[float32]"),
        ("list[list[float]]", "list[list[numeric]]"),
    ]:
        assert kinds.parse(text).name == name
        assert kinds.named(kinds.parse(text).name).name == name
    # A union too long for Python's parser is refused as a kind, never a crash of the grader.
    with pytest.raises(kinds.KindError):
        kinds.parse(" | ".join(["int"] * 20000))


TOKENIZER = """
[exercise]
title = "Encode"
inputs = ["text"]
outputs = [{ kind = "list[int]" }]

[[case]]
text = "ab"
expected = [97, 98]

[[case]]
text = "hi"
expected = [104, 105]

[[watch_out]]
id = "off-by-one"
mistake = "shifted"
message = "count ids from 0: yours start one too high."
"""


def test_a_known_mistake_of_an_exact_kind_still_gives_its_watch_out(tmp_path: Path) -> None:
    exercise = lesson(tmp_path, TOKENIZER, **{"mistakes.py": ""})

    def shifted(text: str) -> Any:
        return wire([ord(c) + 1 for c in text])

    for learner, headline in [
        (shifted, "Watch out: count ids from 0: yours start one too high."),
        (
            lambda text: wire([ord(c) + 2 for c in text]),
            "Check your calculation: at position 0: expected 97, got 99.",
        ),
    ]:
        grade, _ = grader({("solution.py", "solve"): learner, ("mistakes.py", "shifted"): shifted})
        graded = grade.grade(Attempt(exercise, exercise.cases[0]))
        assert graded.result.headline == headline


TENSORS = """
[exercise]
title = "Project"
inputs = ["x"]
outputs = [{ kind = "tensor[float32]" }]

[[case]]
x = 1
expected = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

[[case]]
x = 2
atol = 1e-3
expected = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
"""


def test_a_tensor_answer_is_checked_for_dtype_and_shape_first_then_values_by_its_dtype(
    tmp_path: Path,
) -> None:
    torch = pytest.importorskip("torch")
    exercise = lesson(tmp_path, TENSORS)
    # The default tolerance is float32's in torch.testing.assert_close; a case's own wins.
    assert (exercise.rtol, exercise.atol) == (1.3e-6, 1e-5)
    assert [(c.rtol, c.atol) for c in exercise.cases] == [(1.3e-6, 1e-5), (1.3e-6, 1e-3)]
    right = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    near = right + 2e-5  # the GELU tanh-vs-erf gap: outside float32's tolerance
    answers = [
        (right, ""),
        (
            right.double(),
            "Return a float32 tensor of shape [2, 3] (convert with .to(torch.float32)): expected a float32 tensor of shape [2, 3], got float64 [2, 3].",
        ),
        (
            right[:1],
            "Return a float32 tensor of shape [2, 3]: expected a float32 tensor of shape "
            "[2, 3], got float32 [1, 3].",
        ),
        (
            right.tolist(),
            "Return a torch tensor: expected a float32 tensor of shape [2, 3], got a list.",
        ),
        (
            near,
            "Check your calculation: the shape is right, but 6 of 6 values differ from the expected answer.",
        ),
    ]
    for answer, words in answers:
        grade, _ = grader({("solution.py", "solve"): lambda x, a=answer: wire(a)})
        assert grade.grade(Attempt(exercise, exercise.cases[0])).result.headline == words
    grade, _ = grader({("solution.py", "solve"): lambda x: wire(near)})
    assert grade.grade(Attempt(exercise, exercise.cases[1])).status == Status.PASSED
    # An int64 tensor compares exactly, whatever the tolerance.
    as_ints = TENSORS.replace("tensor[float32]", "tensor").replace(".0", "")
    ints = lesson(tmp_path / "..", as_ints)
    grade, _ = grader(
        {("solution.py", "solve"): lambda x: wire(torch.tensor([[1, 2, 4], [4, 5, 6]]))}
    )
    graded = grade.grade(Attempt(ints, ints.cases[1]))
    assert graded.result.headline == "Check your calculation: at [0, 2]: expected 3, got 4."
    grade, _ = grader(
        {("solution.py", "solve"): lambda x: wire(torch.tensor([[1, 2, 3], [4, 5, 6]]))}
    )
    assert grade.grade(Attempt(ints, ints.cases[1])).status == Status.PASSED


EVERY_KIND = """
[exercise]
title = "Every kind"
inputs = ["n"]
outputs = [
  { name = "raw", kind = "bytes" },
  { name = "vocab", kind = "dict[int, bytes]" },
  { name = "pair", kind = "tuple[int, str]" },
  { name = "seen", kind = "set[str]" },
  { name = "nothing", kind = "int | None" },
  { name = "ids", kind = "tensor[int64]" },
  { name = "mask", kind = "list[bool]" },
  { name = "tokens", kind = "list[int]" },
]

[[case]]
name = "right"
n = 0
expected = { raw = { hex = "00ff" }, vocab = { "256" = "ab" }, pair = [1, "a"], seen = ["x", "y"], nothing = { none = true }, ids = [[9007199254740993, 2]], mask = [true, false], tokens = [50256, 11] }

[[case]]
name = "one token off"
n = 1
expected = { raw = { hex = "00ff" }, vocab = { "256" = "ab" }, pair = [1, "a"], seen = ["x", "y"], nothing = { none = true }, ids = [[9007199254740993, 2]], mask = [true, false], tokens = [50256, 12] }
"""

EVERY_KIND_SOLUTION = """
import torch

def solve(n):
    ids = torch.tensor([[9007199254740993, 2]], dtype=torch.int64)
    return b"\\x00\\xff", {256: b"ab"}, (1, "a"), {"y", "x"}, None, ids, [True, False], [50256, 11]
"""


@pytest.mark.torch
def test_a_real_worker_packs_every_kind_faithfully_and_an_exact_int_fails_by_position(
    pytester: pytest.Pytester, make_exercise: Callable[..., Path]
) -> None:
    make_exercise("every", solution=EVERY_KIND_SOLUTION, toml=EVERY_KIND)
    result = pytester.runpytest("every", "-p", "no:cacheprovider", "--lesson-report=r.json")
    result.assert_outcomes(passed=1, failed=1)
    text = " ".join(result.stdout.str().split())
    # 2**53 + 1 survives the trip (as float64 it would be 2**53), and 11 is not 12.
    assert (
        "In tokens (value 8 of 8): Check your calculation: at position 1: expected 12, got 11."
        in text
    )
    assert "expected 50256 [12] got 50256 [11]" in text
    report = json.loads((pytester.path / "r.json").read_text())
    assert [case["status"] for case in report["results"]] == ["passed", "failed"]


def test_the_child_keeps_kinds_and_untrusted_tags_are_refused_not_believed() -> None:
    from collections import Counter, namedtuple

    pair = namedtuple("pair", "a b")
    packed = wire(
        [Counter({(1, 2): 3}), pair(1, "x"), {3, 1, 2}, frozenset({1, "a"}), bytearray(b"\x01")]
    )
    counter, named_pair, numbers, mixed, raw = packed
    key = {"$": "tuple", "type": "tuple", "items": [1, 2]}
    assert counter == {"$": "dict", "type": "collections.Counter", "items": [[key, 3]]}
    assert named_pair["$"] == "tuple" and named_pair["items"] == [1, "x"]
    assert numbers == {"$": "set", "type": "set", "items": [1, 2, 3]}  # sorted
    assert mixed["$"] == "set" and sorted(map(str, mixed["items"])) == ["1", "a"]
    assert raw == {"$": "bytes", "type": "bytearray", "hex": "01"}
    assert wire([1, 2.5]) == [1, 2.5]  # ints and floats mixed keep each one's type
    assert wire([2**70]) == [2**70]  # too large for int64: JSON keeps it whole
    for damaged in [
        {"$": "dict", "type": "dict", "items": [[1]]},
        {"$": "dict", "type": "dict", "items": "no"},
        {"$": "set", "type": 3, "items": []},
        {"$": "bytes", "type": "bytes", "hex": "6"},
        {"$": "bytes", "type": "bytes", "hex": "zz"},
        {"$": "dense", "shape": [1], "int64le": "AAAAAAAAAAA=", "float64le": "AAAAAAAAAAA="},
        {"$": "dense", "shape": [2], "int64le": "AAAAAAAAAAA="},
    ]:
        assert not valid_answer(damaged), damaged
    deep: Any = 1
    for _ in range(100):
        deep = {"$": "tuple", "type": "tuple", "items": [deep]}
    assert not valid_answer(deep)


def test_every_format_2_lesson_here_validates_against_the_editor_schema() -> None:
    import jsonschema

    from pytest_lessons import schema

    shipped = json.loads(schema.SHIPPED.read_text())
    for toml in (TOKENS.replace("[IDS]", "[1]"), TEXTS, VOCAB, STRUCTURES, TENSORS, EVERY_KIND):
        jsonschema.validate(model.read_toml(toml), shipped)
    for bad in ('outputs = [{ nme = "ids" }]', "format = 3", "outputs = [{ kind = 3 }]"):
        toml = TOKENS.replace("[IDS]", "[1]").replace(
            'outputs = [{ name = "ids", kind = "list[int]" }]', bad
        )
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(model.read_toml(toml), shipped)


def test_a_hidden_case_of_an_exact_kind_shows_neither_answer(tmp_path: Path) -> None:
    toml = TOKENS.replace("[IDS]", "[50256, 11]").replace("n = 40", "n = 40\nhidden = true")
    result, text = graded(toml, tmp_path, lambda n: [50256, 12])
    assert result.headline == "Hidden case 1 failed: your answer is wrong."
    assert "50256" not in text and "12" not in text
    result, text = graded(toml, tmp_path, lambda n: "50256 11")
    assert result.headline == (
        "Hidden case 1 failed: your answer does not have the expected type or shape."
    )


TOKENIZER_LESSON = {
    "reference.py": "def solve(text):\n    return list(text.encode())\n",
    "mistakes.py": "def shifted(text):\n    return [b + 1 for b in text.encode()]\n",
}


def test_the_lesson_check_proves_an_exact_kinds_watch_out_and_names_a_wrong_expected_value(
    pytester: pytest.Pytester, make_exercise: Callable[..., Path]
) -> None:
    stub = "def solve(text):\n    raise NotImplementedError\n"
    make_exercise("sound", solution=stub, toml=TOKENIZER, **TOKENIZER_LESSON)
    wrong = TOKENIZER.replace("expected = [104, 105]", "expected = [104, 106]")
    make_exercise("wrong", solution=stub, toml=wrong, **TOKENIZER_LESSON)
    result = pytester.runpytest("--lesson-check", "sound", "wrong", "-p", "no:cacheprovider")
    text = " ".join(result.stdout.str().split())
    result.assert_outcomes(passed=1, failed=1)
    assert "expects [104, 106], the reference returns [104, 105]" in text, text


def test_the_learners_copy_freezes_a_generated_answer_of_every_kind_so_it_reads_back(
    tmp_path: Path,
) -> None:
    from pytest_lessons.core import export

    toml = EVERY_KIND + '\n[generate]\ncount = 1\naxes = { n = [1, 3] }\ninputs = { n = "n" }\n'
    exercise = lesson(tmp_path, toml)
    generated = exercise.cases[-1]
    assert generated.generated
    answer = wire(
        (b"\x00", {256: b"ab", 7: b""}, (1, "a"), {"y", "x"}, None, [[1, 2]], [True], [3, 4])
    )
    # The reference's int64 tensor arrives as a tensor tag; a list of its values stands in.
    tensor = {"$": "tensor", "type": "torch.Tensor", "shape": [1, 2], "dtype": "torch.int64"}
    answer["items"][5] = {**tensor, "values": wire([[1, 2]])}
    plain = judge.plain_answer(exercise, answer)
    assert plain["vocab"] == {"256": {"hex": "6162"}, "7": {"hex": ""}}
    assert plain["seen"] == ["x", "y"] and plain["nothing"] == {"none": True}
    assert plain["ids"] == [[1, 2]] and plain["pair"] == [1, "a"]
    text, _ = export.learner_toml(model.read_toml(toml), exercise, {generated.number: plain})
    copy = model.parse(text, tmp_path / "double" / "exercise.toml")
    frozen = copy.cases[-1]
    assert not frozen.generated and frozen.expected == plain
    assert judge.judge(copy, frozen.expected, answer, 0, 0).passed


def test_a_tensor_kinds_mistake_gives_its_watch_out_from_the_tensors_values(
    tmp_path: Path,
) -> None:
    torch = pytest.importorskip("torch")
    toml = TENSORS.replace(
        "[[case]]\nx = 2",
        "[[case]]\nx = 3\nexpected = [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]\n\n[[case]]\nx = 2",
        1,
    )
    toml += (
        '\n[[watch_out]]\nid = "plus-one"\nmistake = "plus_one"\nmessage = "add x, not x + 1."\n'
    )
    exercise = lesson(tmp_path, toml, **{"mistakes.py": ""})

    def plus_one(x: int) -> Any:
        return wire(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]) + x)

    grade, _ = grader({("solution.py", "solve"): plus_one, ("mistakes.py", "plus_one"): plus_one})
    graded = grade.grade(Attempt(exercise, exercise.cases[0]))
    assert graded.result.headline == "Watch out: add x, not x + 1."


def test_two_answers_are_the_same_only_as_their_kind_compares() -> None:
    """What matches a mistake's answer to the learner's (judge.same_values): an exact kind
    equal to the letter (an int is not its float), a tensor kind by dtype and shape first,
    then its values within the tolerance where the dtype has one, else exactly."""
    ids = kinds.parse("list[int]")
    assert ids.same([1, 2], [1, 2], 0, 0)
    assert not ids.same([1, 2], [1, 3], 0, 0)
    assert not ids.same([1, 2], [1, 2.0], 0, 0)

    def tensor(dtype: str, shape: list[int], values: Any) -> dict[str, Any]:
        return {"$": "tensor", "dtype": f"torch.{dtype}", "shape": shape, "values": values}

    floats = kinds.parse("tensor[float32]")
    mine = tensor("float32", [2], [1.0, 2.0])
    assert floats.same(mine, tensor("float32", [2], [1.0, 2.00001]), 1e-3, 1e-3)
    assert not floats.same(mine, tensor("float32", [2], [1.0, 2.1]), 1e-3, 1e-3)
    big = tensor("float32", [2], [1000.0, 2000.0])
    assert floats.same(big, tensor("float32", [2], [1000.0, 2000.5]), 1e-3, 0)  # rtol's
    assert not floats.same(big, tensor("float32", [2], [1000.0, 2000.5]), 0, 1e-3)
    assert not floats.same(mine, tensor("float64", [2], [1.0, 2.0]), 1, 1)
    assert not floats.same(mine, tensor("float32", [1, 2], [[1.0, 2.0]]), 1, 1)
    longs = kinds.parse("tensor[int64]")
    assert longs.same(tensor("int64", [2], [1, 2]), tensor("int64", [2], [1, 2]), 0, 0)
    assert not longs.same(tensor("int64", [2], [1, 2]), tensor("int64", [2], [1, 3]), 10, 10)
