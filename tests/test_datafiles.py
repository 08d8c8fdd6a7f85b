"""Format 2's inputs from files and tensor inputs: what an author writes, what a learner's
``solve`` receives, what the reports and a learner's copy hold.

The core's part (reading, checking, checksums, errors) runs with a fake runner that rebuilds
each job's inputs as the child does, from the job's frame; a few pytester runs grade real
files with a real ``solve`` in the sandboxed child. Fixture files are written here, byte by
byte, in each format's own layout (torch writes the ``.pt`` ones)."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
from array import array
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_lessons.core import datafiles, export, model, settings
from pytest_lessons.core.attempt import Attempt
from pytest_lessons.core.grader import Grader
from pytest_lessons.isolation.arguments import frame, rebuild, unframe
from pytest_lessons.isolation.outcome import Outcome
from pytest_lessons.isolation.runner import Job, PoolRunner, Runner

from helpers import ROOT, said

# --- files in their formats' own layouts ------------------------------------------------------

_CODES = {"F32": "f", "F64": "d", "I64": "q", "I32": "i", "U8": "B"}


def safetensors(tensors: dict[str, tuple[str, list[int], list[Any]]]) -> bytes:
    """A safetensors file: 8-byte header length, JSON header, raw little-endian bytes."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    body = b""
    for name, (dtype, shape, values) in tensors.items():
        data = array(_CODES[dtype], values).tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(body), len(body) + len(data)],
        }
        body += data
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def npy(descr: str, shape: tuple[int, ...], values: list[Any], code: str) -> bytes:
    """A version 1.0 .npy file (numpy's header padded to 64 bytes, then the raw data)."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return (
        b"\x93NUMPY\x01\x00"
        + struct.pack("<H", len(header))
        + header.encode()
        + array(code, values).tobytes()
    )


def npz(arrays: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in arrays.items():
            archive.writestr(f"{name}.npy", data)
    return out.getvalue()


WEIGHTS = safetensors(
    {
        "h.0.attn.weight": ("F32", [2, 3], [1, 2, 3, 4, 5, 6]),
        "h.0.attn.bias": ("F32", [3], [0.5, 0.25, 0.125]),
        "wte": ("I64", [2], [7, 9]),
    }
)


def course(tmp_path: Path, toml: str, **files: bytes) -> Path:
    """A course folder with one lesson, ``lesson/``, and a shared ``fixtures/`` folder; each
    of *files* is written at its name (``fixtures__w__safetensors`` -> fixtures/w.safetensors)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "course.toml").write_text('[course]\ntitle = "c"\nlessons = ["lesson"]\n')
    lesson = tmp_path / "lesson"
    lesson.mkdir(exist_ok=True)
    for name, data in files.items():
        parts = name.split("__")
        path = tmp_path.joinpath(*parts[:-2], f"{parts[-2]}.{parts[-1]}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (lesson / "reference.py").write_text("")
    (lesson / "exercise.toml").write_text(toml)
    return lesson / "exercise.toml"


class RebuildingRunner(Runner):
    """Runs no process: ``code[(file, function)]`` gets the job's inputs as a child rebuilds
    them, from the frame the worker would forward."""

    def __init__(self, code: dict[tuple[str, str], Callable[..., Any]]) -> None:
        self.code = code
        self.seen: list[list[Any]] = []

    def run(self, job: Job) -> Outcome:
        request = unframe(frame(job.request()))
        arguments = [rebuild(value) for value in request["inputs"]]
        self.seen.append(arguments)
        answer = self.code[(job.solution.name, job.entry)](*arguments)
        return Outcome("returned", answer=answer)


def grade(exercise: model.Exercise, code: Callable[..., Any]) -> tuple[list[Any], RebuildingRunner]:
    runner = RebuildingRunner({("solution.py", "solve"): code})
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    grader = Grader(runner, resolved, show=lambda path: Path(path).name)
    return [grader.grade(Attempt(exercise, case)).result for case in exercise.cases], runner


# --- the core ---------------------------------------------------------------------------------

FILES_TOML = """
[exercise]
title = "Files"
inputs = ["w", "sd", "a", "b", "text", "data"]

[[case]]
w = { file = "../fixtures/w.safetensors", key = "h.0.attn.weight" }
sd = { file = "../fixtures/w.safetensors" }
a = { file = "a.npy" }
b = { file = "../fixtures/arrays.npz", key = "ids" }
text = { file = "corpus.txt" }
data = { file = "merges.json" }
expected = 1

[[case]]
hidden = true
w = { file = "../fixtures/secret.safetensors", key = "wte" }
sd = { file = "../fixtures/w.safetensors" }
a = { file = "a.npy" }
b = { file = "../fixtures/arrays.npz", key = "ids" }
text = { file = "corpus.txt" }
data = { file = "merges.json" }
expected = 1
"""


def files_lesson(tmp_path: Path) -> Path:
    return course(
        tmp_path,
        FILES_TOML,
        fixtures__w__safetensors=WEIGHTS,
        fixtures__secret__safetensors=safetensors({"wte": ("I64", [1], [3])}),
        fixtures__arrays__npz=npz({"ids": npy("<i8", (3,), [4, 5, 6], "q")}),
        lesson__a__npy=npy("<f8", (2, 2), [1.5, 2.5, 3.5, 4.5], "d"),
        lesson__corpus__txt="héllo\nworld\n".encode(),
        lesson__merges__json=b'{"merges": [["h", "e"], ["l", "l"]], "n": 2}',
    )


def test_each_kind_of_file_reaches_solve_as_plain_data_with_its_checksum_in_the_result(
    tmp_path: Path,
) -> None:
    exercise = model.load(files_lesson(tmp_path))
    results, runner = grade(exercise, lambda *inputs: 1)
    w, sd, a, b, text, data = runner.seen[0]
    assert w == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert list(sd) == ["h.0.attn.weight", "h.0.attn.bias", "wte"]
    assert sd["h.0.attn.bias"] == [0.5, 0.25, 0.125] and sd["wte"] == [7, 9]
    assert a == [[1.5, 2.5], [3.5, 4.5]] and b == [4, 5, 6]
    assert text == "héllo\nworld\n"
    assert data == {"merges": [["h", "e"], ["l", "l"]], "n": 2}
    assert runner.seen[1][0] == [3]  # the hidden case's own file
    # A big-endian .npy reads as the same numbers.
    swapped = array("d", [1.5, -2.0])
    swapped.byteswap()
    (tmp_path / "lesson" / "be.npy").write_bytes(npy(">f8", (2,), [], "d") + swapped.tobytes())
    be = datafiles.argument(tmp_path / "lesson", {"file": "be.npy"}, False, None)
    assert rebuild(be) == [1.5, -2.0]
    assert all(r.passed for r in results)
    # Each file input's sha256, as the grader read it, by input name: never the file's name.
    assert results[0].files["w"] == hashlib.sha256(WEIGHTS).hexdigest()
    assert results[0].files["text"] == hashlib.sha256("héllo\nworld\n".encode()).hexdigest()
    assert set(results[1].files) == {"w", "sd", "a", "b", "text", "data"}
    assert "secret" not in json.dumps(results[1].to_dict())
    # The job's frame carries the numbers as raw bytes, never as JSON numbers.
    resolved = settings.resolve(option=lambda name: None, ini=lambda name: None, environ={})
    job = Grader(runner, resolved).runs.job(
        exercise, exercise.solution, "solve", exercise.cases[0].inputs
    )
    framed = frame(job.request())
    head = framed.split(b"\n", 1)[0]
    assert b"1.5" not in head and array("d", [1.5, 2.5, 3.5, 4.5]).tobytes() in framed
    assert rebuild(unframe(framed)["inputs"][2]) == [[1.5, 2.5], [3.5, 4.5]]
    # A pool matches a job run ahead to the job asked for by its content, bytes included.
    again = Grader(runner, resolved).runs.job(
        exercise, exercise.solution, "solve", exercise.cases[0].inputs
    )
    assert (
        PoolRunner.key(job)
        == PoolRunner.key(again)
        != PoolRunner.key(
            Grader(runner, resolved).runs.job(
                exercise, exercise.solution, "solve", exercise.cases[1].inputs
            )
        )
    )


def test_a_learners_copy_ships_the_public_cases_files_and_not_a_hidden_cases(
    tmp_path: Path,
) -> None:
    exercise = model.load(files_lesson(tmp_path / "full"))
    target = tmp_path / "copy" / "lesson"
    text, _ = export.learner_toml(model.read_toml(exercise.path.read_text()), exercise, {})
    export.write_files(target, exercise, text)
    assert (tmp_path / "copy" / "fixtures" / "w.safetensors").read_bytes() == WEIGHTS
    assert (target / "a.npy").is_file() and (target / "corpus.txt").is_file()
    assert not (tmp_path / "copy" / "fixtures" / "secret.safetensors").exists()
    assert "secret" not in (target / "exercise.toml").read_text()
    # The copy reads as a lesson of its own: its course folder holds the fixtures.
    copy = model.load(target / "exercise.toml")
    assert [c.inputs["w"]["key"] for c in copy.cases] == ["h.0.attn.weight"]


TENSOR_TOML = """
[exercise]
title = "Tensors"
inputs = [{ name = "ids", pass = "tensor", dtype = "int64" }, { name = "w", pass = "tensor" }, "n"]

[[case]]
ids = [[1, 2], [3, 4]]
w = { file = "../fixtures/w.safetensors" }
n = 2
expected = 1
"""


@pytest.mark.torch
def test_tensor_inputs_arrive_as_tensors_of_their_dtype_fresh_for_every_call(
    tmp_path: Path,
) -> None:
    import torch

    exercise = model.load(course(tmp_path, TENSOR_TOML, fixtures__w__safetensors=WEIGHTS))
    assert exercise.inputs == ("ids", "w", "n") and exercise.tensors == {"ids": "int64", "w": None}

    def solve(ids: Any, w: Any, n: Any) -> int:
        assert ids.dtype == torch.int64 and ids.tolist() == [[1, 2], [3, 4]]
        assert w["h.0.attn.weight"].dtype == torch.float32 and w["wte"].dtype == torch.int64
        assert w["h.0.attn.weight"].shape == (2, 3) and n == 2
        assert float(w["h.0.attn.weight"].sum()) == 21.0
        ids.add_(100)  # the learner may change an input: the next call gets it unchanged
        w["h.0.attn.weight"].mul_(0)
        return 1

    results, _ = grade(exercise, solve)
    again = model.load(exercise.path)
    grade(again, solve)
    assert results[0].passed


@pytest.mark.parametrize(
    ("value", "files", "words"),
    [
        ('{ file = "nothere.safetensors" }', {}, 'file "nothere.safetensors" does not exist'),
        (
            '{ file = "../fixtures/w.safetensors", key = "h.0.attn.weigth" }',
            {},
            'use a name w.safetensors holds: it has no "h.0.attn.weigth" ("h.0.attn.weight", '
            '"h.0.attn.bias", "wte")',
        ),
        (
            '{ file = "../../elsewhere.npy" }',
            {},
            'move the file "../../elsewhere.npy" into the course folder',
        ),
        (
            '{ file = "/etc/passwd.txt" }',
            {},
            "must be relative to the lesson folder, written with /",
        ),
        (
            '{ file = "notes.csv" }',
            {"lesson__notes__csv": b"1,2"},
            "the grader reads .safetensors, .npy",
        ),
        (
            '{ file = "corpus.txt", key = "a" }',
            {"lesson__corpus__txt": b"hi"},
            "leave out key: corpus.txt holds one value",
        ),
        (
            '{ file = "corpus.txt", keys = "a" }',
            {"lesson__corpus__txt": b"hi"},
            'unknown key "keys"',
        ),
        (
            '{ file = "bad.txt" }',
            {"lesson__bad__txt": b"\xff\xfe"},
            "bad.txt is not UTF-8 text (byte 0)",
        ),
        (
            '{ file = "obj.npy" }',
            {"lesson__obj__npy": npy("|O", (1,), [0], "q")},
            "holds numpy dtype '|O'",
        ),
    ],
)
def test_a_file_input_the_grader_cannot_use_is_named_with_its_line_in_exercise_toml(
    tmp_path: Path, value: str, files: dict[str, bytes], words: str
) -> None:
    toml = f'[exercise]\ntitle = "t"\ninputs = ["w"]\n\n[[case]]\nexpected = 1\nw = {value}\n'
    path = course(tmp_path, toml, fixtures__w__safetensors=WEIGHTS, **files)
    with pytest.raises(model.ExerciseError) as error:
        model.load(path)
    assert str(error.value).startswith('exercise.toml, line 7: case 1, input "w": ')
    assert words in str(error.value)


def test_a_link_a_wrong_dtype_text_as_a_tensor_and_a_huge_file_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(inputs: str, value: str) -> str:
        toml = (
            f'[exercise]\ntitle = "t"\ninputs = {inputs}\n\n[[case]]\nw = {value}\nexpected = 1\n'
        )
        (tmp_path / "lesson" / "exercise.toml").write_text(toml)
        with pytest.raises(model.ExerciseError) as error:
            model.load(tmp_path / "lesson" / "exercise.toml")
        return str(error.value)

    course(tmp_path, "", fixtures__w__safetensors=WEIGHTS, lesson__t__txt=b"hi")
    (tmp_path / "lesson" / "link.safetensors").symlink_to(tmp_path / "fixtures" / "w.safetensors")
    assert "link.safetensors is a symbolic link; put the file itself there" in refused(
        '["w"]', '{ file = "link.safetensors" }'
    )
    tensor = '[{ name = "w", pass = "tensor", dtype = "int64" }]'
    assert (
        'declare dtype = "float32" or store it as int64: w.safetensors "h.0.attn.weight" is '
        "float32, and the input declares int64"
        in refused(tensor, '{ file = "../fixtures/w.safetensors", key = "h.0.attn.weight" }')
    )
    assert 'leave out pass = "tensor": t.txt is text, which cannot be a tensor' in refused(
        '[{ name = "w", pass = "tensor" }]', '{ file = "t.txt" }'
    )
    assert "case 1.w is passed as a tensor of int64, so it must be whole numbers" in refused(
        tensor, "[1.5, 2]"
    )
    assert 'input "w": dtype needs pass = "tensor"' in refused(
        '[{ name = "w", dtype = "int64" }]', "[1]"
    )
    assert "dtype must be one of float64, float32" in refused(
        '[{ name = "w", pass = "tensor", dtype = "int" }]', "[1]"
    )
    outside = refused('["w"]', '{ file = "../../w.safetensors" }')
    assert f'move the file "../../w.safetensors" into the course folder {tmp_path}: it is ' in (
        outside
    )
    monkeypatch.setattr(datafiles, "MAX_FILE_BYTES", 100)
    assert "an input file holds at most 0 MiB" in refused(
        '["w"]', '{ file = "../fixtures/w.safetensors" }'
    )


@pytest.mark.torch
def test_a_pt_file_is_read_without_torch_and_a_pickled_object_is_refused(tmp_path: Path) -> None:
    import torch

    linear = torch.nn.Linear(3, 2)
    state = linear.state_dict()
    state["tied"] = state["weight"]
    state["ids"] = torch.arange(4, dtype=torch.int64)[1:]  # a view with an offset
    torch.save(state, tmp_path / "sd.pt")
    torch.save(linear, tmp_path / "module.pt")
    loaded = datafiles.read(tmp_path / "sd.pt").value
    assert set(loaded) == {"weight", "bias", "tied", "ids"}
    weight = rebuild(datafiles.argument(tmp_path, {"file": "sd.pt", "key": "weight"}, False, None))
    assert weight == state["weight"].tolist()
    assert rebuild(datafiles.argument(tmp_path, {"file": "sd.pt", "key": "ids"}, False, None)) == [
        1,
        2,
        3,
    ]
    with pytest.raises(datafiles.DataFileError) as error:
        datafiles.read(tmp_path / "module.pt")
    assert (
        "module.pt holds a torch.nn.modules.linear.Linear, which the grader does not read"
        in str(error.value)
    )


# --- real runs --------------------------------------------------------------------------------

REAL_TOML = """
[exercise]
title = "Files in the child"
inputs = ["w", { name = "sd", pass = "tensor" }, "a", "text", { name = "ids", pass = "tensor", dtype = "int64" }, "p"]

[[case]]
name = "files"
w = { file = "../fixtures/w.safetensors", key = "h.0.attn.weight" }
sd = { file = "../fixtures/w.safetensors" }
a = { file = "a.npy" }
text = { file = "corpus.txt" }
ids = [1, 2, 3]
p = { file = "../fixtures/sd.pt", key = "ids" }
# 21 + 0.875 + 4.5 + 12 characters + 6 + 30
expected = 74.375
"""

REAL_SOLUTION = """
import torch

def solve(w, sd, a, text, ids, p):
    assert isinstance(w, list) and p == [10, 20] and isinstance(sd["wte"], torch.Tensor), (w, sd)
    assert ids.dtype == torch.int64 and sd["wte"].dtype == torch.int64
    return sum(map(sum, w)) + float(sd["h.0.attn.bias"].sum()) + a[1][1] + len(text) + int(ids.sum()) + sum(p)
"""

OPENS_THE_FILE = """
from pathlib import Path

def solve(w, sd, a, text, ids, p):
    return len(Path(__file__).parent.parent.joinpath("fixtures", "w.safetensors").read_bytes())
"""


@pytest.mark.torch
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_real_solve_gets_every_file_input_and_cannot_open_the_file_itself(
    pytester: pytest.Pytester, isolation: str
) -> None:
    import torch

    torch.save({"ids": torch.tensor([10, 20])}, pytester.path / "sd.pt")
    # The pytest process reads every file, .pt included, without importing torch.
    pytester.makeconftest(
        "import sys\n\ndef pytest_collection_finish(session):\n"
        "    open('torch.txt', 'w').write(str('torch' in sys.modules))\n"
    )
    course(
        pytester.path,
        REAL_TOML,
        fixtures__w__safetensors=WEIGHTS,
        lesson__a__npy=npy("<f8", (2, 2), [1.5, 2.5, 3.5, 4.5], "d"),
        lesson__corpus__txt="héllo\nworld\n".encode(),
        fixtures__sd__pt=(pytester.path / "sd.pt").read_bytes(),
    )
    (pytester.path / "lesson" / "solution.py").write_text(REAL_SOLUTION)
    result = pytester.runpytest_subprocess(
        "lesson",
        f"--lesson-isolation={isolation}",
        "--lesson-report=r.json",
        "--lesson-report-format=json",
    )
    result.assert_outcomes(passed=1)
    assert (pytester.path / "torch.txt").read_text() == "False"
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["results"][0]["files"]["w"] == hashlib.sha256(WEIGHTS).hexdigest()
    # Our json report, checked against its schema, with the checksums in it.
    import jsonschema

    jsonschema.validate(
        report, json.loads((ROOT / "tests" / "schemas" / "json.schema.json").read_text())
    )
    from pytest_lessons.isolation import sandbox

    if not sandbox.probe().abi:
        return  # no Landlock here: nothing keeps a file from learner code
    (pytester.path / "lesson" / "solution.py").write_text(OPENS_THE_FILE)
    result = pytester.runpytest("lesson", f"--lesson-isolation={isolation}")
    result.assert_outcomes(failed=1)
    assert (
        "Remove the code that uses fixtures/w.safetensors: that is not allowed while grading"
        in said(result)
    )


def test_the_editor_schema_takes_file_and_tensor_inputs_and_refuses_a_wrong_dtype() -> None:
    import jsonschema

    from pytest_lessons import schema

    shipped = json.loads(schema.SHIPPED.read_text())
    for toml in (FILES_TOML, TENSOR_TOML, REAL_TOML):
        jsonschema.validate(model.read_toml(toml), shipped)
    for wrong in ('dtype = "int64"', 'pass = "tensor", dtype = "int64"'):
        bad = TENSOR_TOML.replace(
            'pass = "tensor", dtype = "int64"', wrong.replace("int64", "long")
        )
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(model.read_toml(bad), shipped)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            model.read_toml(FILES_TOML.replace('file = "a.npy"', 'file = "a.csv"')), shipped
        )
