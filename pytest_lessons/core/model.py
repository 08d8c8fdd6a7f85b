"""The exercise format: read ``exercise.toml`` into an :class:`Exercise`, or say what is wrong.

Format versions 1 and 2 are a public contract, documented in docs/authors/ (format-v1.md,
format-v2.md; version 2 adds the ``format`` key and kinds declared in ``outputs``; every
version-1 file reads as before). The
schema below is the one place that knows which keys exist, their types and defaults;
validation walks it, so adding a key is adding a :class:`Field`.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from pytest_lessons.core import (
    budget,
    datafiles,
    fit,
    generate,
    gradients,
    initial,
    randomness,
    rules,
)
from pytest_lessons.core import kinds as kind_names
from pytest_lessons.core.budget import CaseWork
from pytest_lessons.core.frequencies import FALSE_FAIL, FREQUENCIES
from pytest_lessons.core.generate import GenerateSpec, axis_names, distinct_possible, draw
from pytest_lessons.core.kinds import NUMERIC, expected_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old Pythons only
    import tomli as tomllib


def read_toml(text: str) -> dict[str, Any]:
    """*text* as TOML data (``tomllib`` on Python 3.11+, ``tomli`` before)."""
    return tomllib.loads(text)


#: The name of the file that makes a folder an exercise.
EXERCISE_FILE = "exercise.toml"

#: Default relative tolerance: with :data:`DEFAULT_ATOL` it accepts answers written with four
#: decimals, as lesson authors do.
DEFAULT_RTOL = 1e-4
#: Default absolute tolerance, see :data:`DEFAULT_RTOL`.
DEFAULT_ATOL = 1e-4

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_CASE_HEADER = re.compile(r"^\s*\[\[\s*case\s*\]\]")
_GENERATE_HEADER = re.compile(r"^\s*\[\s*generate\s*\]")
_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


class ExerciseError(Exception):
    """``exercise.toml`` cannot be used: :attr:`problem` says why, in the author's terms."""

    def __init__(self, path: Path, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem
        self.line = line

    def __str__(self) -> str:
        where = f"{self.path.name}, line {self.line}" if self.line else self.path.name
        return f"{where}: {self.problem}"


@dataclass(frozen=True)
class Case:
    """One graded call of the learner's function."""

    number: int
    """1-based position among the exercise's cases."""
    inputs: dict[str, Any]
    """The arguments, by input name, as plain TOML data."""
    expected: Any
    """The right answer, a value of its kind (:mod:`pytest_lessons.core.kinds`), as TOML
    writes it: in format 1 always a number or a rectangular nested list of numbers; in format
    2 also text, booleans, tables and the spellings ``{ hex = "..." }`` and
    ``{ none = true }``. None where the reference computes it (:attr:`from_reference`) and
    for a snapshot not written yet."""
    rtol: float
    atol: float
    name: str | None = None
    line: int | None = None
    """Line of the case's ``[[case]]`` header in ``exercise.toml`` (of ``[generate]`` for a
    generated case), when it could be found."""
    points: float = 1.0
    """What passing this case is worth, after the exercise's ``points`` scaled it."""
    hidden: bool = False
    """Graded and counted, but its inputs and expected answer are never shown."""
    generated: bool = False
    """Drawn from ``[generate]``: ``expected`` is None until the reference computes it."""
    sizes: dict[str, int] | None = None
    """For a generated case: the size drawn for each axis."""
    source: str | None = None
    """Where a hand-written case's expected value comes from when the author did not type it:
    ``"reference"`` (computed by ``reference.py`` when the case runs, as for a generated case)
    or ``"snapshot"`` (read from :attr:`snapshot`; ``expected`` is None while the file is not
    written yet). None: typed in ``exercise.toml``."""
    snapshot: str | None = None
    """For a snapshot case: its file, relative to the exercise folder."""
    draws: int | None = None
    """For a statistical case (``draws = N``): how many calls share one generator; its
    ``expected`` is then the distribution (None until ``distribution()`` computes it)."""
    observe: str | None = None
    """For a statistical case of several outputs: the output whose values are the draws."""
    false_fail: float = FALSE_FAIL
    """For a statistical case: the highest chance that right code fails it."""
    work: CaseWork | None = None
    """For a case of the lesson's ``[budget]``: the work it counts and bounds."""

    @property
    def from_reference(self) -> bool:
        """Whether the reference computes this case's expected value when the case runs."""
        return self.generated or self.source == "reference"

    @property
    def label(self) -> str:
        """How the case is named to a learner: ``case 1 (worked example)``, ``hidden case 5``."""
        if self.hidden:
            return f"hidden case {self.number}"
        if self.generated:
            return f"case {self.number} (generated)"
        return f"case {self.number} ({self.name})" if self.name else f"case {self.number}"

    @property
    def id(self) -> str:
        """The case's part of the pytest node id: ``case-1``, ``case-2-worked-example``,
        ``generated-5``. A named case carries its name, so ``-k worked`` selects it and an IDE's
        test tree shows it; the number first keeps ids unique and in order. Hidden cases never
        carry their name: it could tell what they test."""
        if self.generated:
            return f"generated-{self.number}"
        slug = _id_part(self.name) if self.name and not self.hidden else ""
        return f"case-{self.number}-{slug}" if slug else f"case-{self.number}"


def _id_part(name: str, limit: int = 40) -> str:
    """*name* as a node id part: lower-case letters, digits and single dashes, cut at a dash."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if len(slug) > limit:
        cut = slug.rfind("-", 0, limit + 1)
        slug = slug[: cut if cut > 0 else limit]
    return slug


#: The generic detectors (see detectors.py) a watch-out may word in a lesson's terms.
DETECTORS = ("layout", "offset", "scaled", "triangle", "rows", "shuffled")


@dataclass(frozen=True)
class WatchOut:
    """A catalogued mistake of a lesson (``[[watch_out]]`` in ``exercise.toml``)."""

    id: str
    message: str
    mistake: str | None = None
    """The function in the lesson's ``mistakes.py`` that makes this mistake."""
    detector: str | None = None
    """A generic detector whose finding this watch-out words in the lesson's terms."""
    fit: tuple[float, float] | None = None
    """Bounds of a free last argument of the mistake function, fitted to the learner's answer
    (see :mod:`pytest_lessons.core.fit`)."""
    right: str | None = None
    """With ``fit``: the right value, an expression of axis sizes (the message's ``{right}``)."""
    named: tuple[tuple[str, str], ...] = ()
    """With ``fit``: (expression, words) for values a learner is likely to use, tried first and
    named in the message's ``{fitted}``."""
    code: str | None = None
    """A regular expression the graded file's source must match for the watch-out to fire:
    for a message that tells of a call (``\\.split\\(``), so code that gives the same answer
    another way is never told about a call it does not make."""
    check: str | None = None
    """The id of a check of the lesson's harness (a ``LessonFailure(..., check=...)``) that
    stops this mistake: the watch-out fires when that check fails the case (and, with a
    message, where its mistake's answer is the learner's, as any watch-out), so a mistake the
    harness stops can be proven by the lesson check. Its message may then be empty: the
    harness's own words are the headline."""
    stands_in: tuple[tuple[str, str], ...] = ()
    """(name the harness asks for, name in ``mistakes.py``) for the other names this mistake
    stands in for besides the entry (a module with several entry points, or one mistaken
    helper shared by several names)."""


@dataclass(frozen=True)
class Hint:
    """One hint; hints open one at a time, in order."""

    title: str
    text: str


@dataclass(frozen=True)
class Exercise:
    """A validated exercise folder."""

    path: Path
    """The ``exercise.toml`` file."""
    title: str
    inputs: tuple[str, ...]
    entry: str
    solution: Path
    """The learner's file, absolute."""
    rtol: float
    atol: float
    cases: tuple[Case, ...]
    task: str = ""
    limits: dict[str, float] = field(default_factory=dict)
    """Per-exercise overrides of run limits (``timeout``, ``memory``), as written by the author."""
    watch_outs: tuple[WatchOut, ...] = ()
    hints: tuple[Hint, ...] = ()
    solution_steps: tuple[str, ...] = ()
    """The worked solution's steps, shown with the reference code once the exercise passes."""
    mistakes: Path | None = None
    """The author's ``mistakes.py`` (absolute), if the exercise names one or has the file."""
    reference: Path | None = None
    """The author's ``reference.py`` (absolute)."""
    generate: GenerateSpec | None = None
    outputs: tuple[str, ...] = ()
    """Names of the several values the entry function returns, in order; empty for one."""
    stands_in: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    """(author file, its name standing in for the entry) -> the other names the harness asks
    for and that file's names standing in for them: a watch-out's ``stands_in`` (keyed by
    ``mistakes.py``) and the ``[variants]`` table's (keyed by ``variants.py``)."""
    variants: Path | None = None
    """The author's ``variants.py`` (absolute): known-correct alternatives to the reference,
    each of which ``--lesson-check`` requires to pass every case."""
    kinds: tuple[str | None, ...] = ()
    """The declared kind of each returned value (:func:`pytest_lessons.core.kinds.parse`
    reads it), in the order of :attr:`outputs`, or one for a single value; None where the
    kind follows the expected value; empty when nothing is declared."""
    format: int = 1
    """The format version: 2 when ``format = 2`` is written or a format-2 field is used (a
    declared kind). In version 2 an expected value's kind follows the value (a string is
    text) where none is declared; in version 1 every expected value is numbers."""
    tensors: dict[str, str | None] = field(default_factory=dict)
    """The inputs passed to the entry function as torch tensors (``pass = "tensor"``), each
    with its declared dtype (None: the file's own, or torch's choice for inline numbers)."""
    harness: Path | None = None
    """The author's ``harness.py`` (absolute) that drives the learner's module and returns
    the observables (see :mod:`pytest_lessons.isolation.drive`); None: the entry function is
    called once."""
    after: dict[str, str] = field(default_factory=dict)
    """Input name -> its mutation rule, for the inputs that have one (``after = "unchanged"``
    or ``"updated"``); the others get a fresh copy per call."""
    observed: tuple[str, ...] = ()
    """The names of the judged values in order, as ``outputs`` writes them (a single named
    table included); an ``updated`` input is read back under its own name."""
    generators: dict[str, str | None] = field(default_factory=dict)
    """The inputs passed as a seeded ``torch.Generator`` (``pass = "generator"``), each with
    the draw the task prescribes (``primitive``), or None."""
    parts: str = "library"
    """What the course library's parts are to the learner's code: the library's own
    (``library``) or the learner's solutions of those lessons (``own``); see
    :mod:`pytest_lessons.core.courselib`."""
    gradients: gradients.GradientSpec | None = None
    """A gradient lesson's ``[gradients]`` (:mod:`pytest_lessons.core.gradients`): its
    gradients are among :attr:`outputs` (``grad of x``)."""
    preload: tuple[str, ...] = ()
    """Modules the lesson's code needs imported before it runs (``preload``), besides its
    course's (:func:`pytest_lessons.core.parts.preload` joins the two)."""
    rules: tuple[rules.Rule, ...] = ()
    """The lesson's rules on how an answer is computed (``[[rule]]``: calls it forbids, Python
    loops), kept in the child (:mod:`pytest_lessons.core.rules`)."""
    initial: tuple[initial.Initial, ...] = ()
    """The lesson's rules on its parameters' initial values (``[[initial]]``), judged in the
    grader on the values its harness's ``check_initial`` sends
    (:mod:`pytest_lessons.core.initial`)."""

    @property
    def points(self) -> float:
        """What the whole exercise is worth."""
        return sum(case.points for case in self.cases)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def slug(self) -> str:
        """The exercise's short name: its folder's name."""
        return self.folder.name


# --- the schema ----------------------------------------------------------------------------

Check = Callable[[Any], "str | None"]
"""Returns None when a value is acceptable, else what it must be ("must be a number")."""


def _number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "must be a number"
    return None


def _non_negative(value: Any) -> str | None:
    return _number(value) or ("must not be negative" if value < 0 else None)


def _positive(value: Any) -> str | None:
    return _number(value) or ("must be greater than 0" if value <= 0 else None)


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _identifier(value: Any) -> str | None:
    if not isinstance(value, str) or not _NAME.match(value):
        return 'must be a Python name such as "solve"'
    return None


def _stands_in(value: Any) -> str | None:
    if not isinstance(value, dict) or not value:
        return 'must be a table: name the harness asks for = "name in the author\'s file"'
    for name, target in value.items():
        if not _NAME.match(name) or _identifier(target) is not None:
            return f'must map Python names to Python names: {name} = "{target}" is not one'
    return None


def _relative_file(value: Any) -> str | None:
    if not isinstance(value, str) or not value.endswith(".py"):
        return "must be the name of a .py file in the exercise folder"
    if Path(value).is_absolute() or ".." in Path(value).parts:
        return "must be a path inside the exercise folder"
    return None


def _names(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and _NAME.match(v) for v in value):
        return 'must be a list of names, such as ["Q", "K", "V"]'
    if not value:
        return "must name at least one input"
    if len(set(value)) != len(value):
        return "must not name an input twice"
    return None


def _outputs(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return 'must be a list of names, such as ["Q", "K", "V"], or of { name = ..., kind = ... }'
    if all(isinstance(v, str) for v in value):
        return _names(value)
    for number, entry in enumerate(value, 1):
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict) or set(entry) - {"name", "kind"}:
            return f"entry {number} must be a name or a table {{ name = ..., kind = ... }}"
        if "name" not in entry and len(value) > 1:
            return f"entry {number} needs a name: several outputs are told apart by name"
        if "name" in entry and _identifier(entry["name"]):
            return f"entry {number}: name must be a Python name"
        if "kind" in entry:
            if not isinstance(entry["kind"], str):
                return f'entry {number}: kind must be a string, such as "list[int]"'
            try:
                kind_names.parse(entry["kind"])
            except kind_names.KindError as error:
                return f"entry {number}: kind {error}"
    names = [e if isinstance(e, str) else e.get("name") for e in value]
    if len(set(names)) != len(names):
        return "must not name an output twice"
    return None


#: The format versions of ``exercise.toml`` this plugin reads.
FORMAT_VERSIONS = (1, 2)


def _format(value: Any) -> str | None:
    if type(value) is int and value in FORMAT_VERSIONS:
        return None
    return "must be " + " or ".join(str(version) for version in FORMAT_VERSIONS)


def _input_list(value: Any) -> str | None:
    """Format 1's list of names, or in format 2 also tables naming how an input is passed."""
    if not isinstance(value, list):
        return _names(value)
    names = []
    for item in value:
        if isinstance(item, dict):
            problem = _input_table(item)
            if problem:
                return problem
            names.append(item["name"])
        else:
            names.append(item)
    return _names(names)


#: How an input reaches the entry function: as its plain data, as a torch tensor, or as a
#: ``torch.Generator`` seeded with the case's value (:mod:`pytest_lessons.core.randomness`).
PASSES = ("plain", "tensor", randomness.GENERATOR)
#: What is checked of an input after the call: nothing (a fresh copy per call, the default),
#: that it is as it was (``unchanged``), or its new value, judged as an output (``updated``).
AFTER = ("copy", "unchanged", "updated")
#: The keys of an input's table.
INPUT_KEYS = ("name", "pass", "dtype", "after", "primitive", "grad")


def input_rules(value: list[Any]) -> dict[str, str]:
    """The mutation rules of a checked ``[exercise] inputs`` list: input name -> rule, for
    the inputs whose rule is not the default copy."""
    return {
        item["name"]: item["after"]
        for item in value
        if isinstance(item, dict) and item.get("after", "copy") != "copy"
    }


def _input_table(item: dict[str, Any]) -> str | None:
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        return 'tables must have a name, such as { name = "ids", pass = "tensor" }'
    for key in item:
        if key not in INPUT_KEYS:
            return f'input "{name}": {_unknown(key, list(INPUT_KEYS))}'
    if "grad" in item and (not isinstance(item["grad"], bool) or item.get("pass") != "tensor"):
        return f'input "{name}": grad must be true or false, with pass = "tensor"'
    if item.get("pass", "plain") not in PASSES:
        return f'input "{name}": pass must be "plain", "tensor" or "generator"'
    if item.get("after", "copy") not in AFTER:
        return f'input "{name}": after must be "copy", "unchanged" or "updated"'
    if "primitive" in item and (
        item.get("pass") != randomness.GENERATOR or not isinstance(item["primitive"], str)
    ):
        return f'input "{name}": primitive is the draw a generator input prescribes, a string'
    dtype = item.get("dtype")
    if dtype is not None:
        if dtype not in datafiles.TENSOR_DTYPES:
            return f'input "{name}": dtype must be one of {", ".join(datafiles.TENSOR_DTYPES)}'
        if item.get("pass") != "tensor":
            return f'input "{name}": dtype needs pass = "tensor"'
    return None


def input_specs(value: list[Any]) -> tuple[tuple[str, ...], dict[str, str | None]]:
    """The names of a checked ``[exercise] inputs`` list, and the inputs passed as tensors
    with their declared dtype."""
    names = tuple(item["name"] if isinstance(item, dict) else item for item in value)
    tensors = {
        item["name"]: item.get("dtype")
        for item in value
        if isinstance(item, dict) and item.get("pass") == "tensor"
    }
    return names, tensors


def input_problem(
    value: Any, name: str, folder: Path, tensors: dict[str, str | None]
) -> str | None:
    """None if a case's *value* of input *name* can be used: plain data (for a tensor input,
    numbers), or a file table whose file, key and dtype fit (see
    :mod:`pytest_lessons.core.datafiles`)."""
    tensor = name in tensors
    if datafiles.is_file_input(value):
        try:
            datafiles.check(folder, value, tensor, tensors.get(name))
        except datafiles.DataFileError as error:
            return str(error)
        return None
    complaint = _plain_value(value)
    if complaint is None and tensor:
        complaint = datafiles.inline_problem(value, tensors.get(name))
    return complaint


def _slug(value: Any) -> str | None:
    if not isinstance(value, str) or not _SLUG.match(value):
        return 'must be lower-case letters, digits and dashes, such as "missing-transpose"'
    return None


def _detector(value: Any) -> str | None:
    if value not in DETECTORS:
        return "must be one of " + ", ".join(DETECTORS)
    return None


def _any(value: Any) -> str | None:
    return None  # checked where its meaning is known (expected values, outputs)


def _any_table(value: Any) -> str | None:
    return None  # checked against the exercise's inputs and axes


def _work_table(value: Any) -> str | None:
    return None if isinstance(value, dict) else "must be a table"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _upstream_shape(value: Any) -> str | None:
    if isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, (str, int)) for v in value)
    ):
        return None
    return 'must be "x.shape" or a list of sizes, such as ["x.shape[0]", "W.shape[0]"]'


def _integer(value: Any) -> str | None:
    return None if type(value) is int else "must be a whole number"


def _count(value: Any) -> str | None:
    return _integer(value) or ("must be between 1 and 1000" if not 1 <= value <= 1000 else None)


def _decimals(value: Any) -> str | None:
    return _integer(value) or ("must be between 0 and 10" if not 0 <= value <= 10 else None)


def _range(value: Any) -> str | None:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(_number(v) for v in value)
        or value[0] > value[1]
    ):
        return "must be [lowest, highest], two numbers in order"
    return None


def _axes(value: Any) -> str | None:
    if not isinstance(value, dict) or not value:
        return "must be a table of axis names, such as heads = [1, 4]"
    for name, bounds in value.items():
        if (
            not _NAME.match(name)
            or not isinstance(bounds, list)
            or len(bounds) != 2
            or any(type(b) is not int for b in bounds)
            or not 1 <= bounds[0] <= bounds[1] <= generate.SIZE_CEILING
        ):
            return (
                # The default limit: a lesson that raises max_size is told of it apart.
                f'axis "{name}" must be [smallest, largest]: whole sizes from 1 to '
                f"{generate.MAX_SIZE}, in order"
            )
    return None


def _max_size(value: Any) -> str | None:
    ceiling = generate.SIZE_CEILING
    return _integer(value) or (
        f"must be between 1 and {ceiling}" if not 1 <= value <= ceiling else None
    )


def _max_elements(value: Any) -> str | None:
    ceiling = generate.ELEMENTS_CEILING
    return _integer(value) or (
        f"must be between 1 and {ceiling}" if not 1 <= value <= ceiling else None
    )


def _input_kind(value: Any) -> str | None:
    return (
        None
        if value in generate.INPUT_KINDS
        else "must be one of " + ", ".join(generate.INPUT_KINDS)
    )


def _size_range(value: Any) -> str | None:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(type(v) is not int for v in value)
        or not 0 <= value[0] <= value[1]
    ):
        return "must be [shortest, longest]: two whole numbers from 0, in order"
    return None


def _alphabet(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return None
    return "must be a string of at least one character"


def _ranges(value: Any) -> str | None:
    if not isinstance(value, dict) or any(_range(v) for v in value.values()):
        return "must be a table of input name = [lowest, highest]"
    return None


def _labels(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        return 'must be a table of expression = "words"'
    return None


#: Whose parts an exercise grades: the course library's or the learner's own.
PARTS = ("library", "own")


def _parts(value: Any) -> str | None:
    if value in PARTS:
        return None
    return "must be " + " or ".join(f'"{part}"' for part in PARTS)


def _strings(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of strings"
    return None


def modules_problem(value: Any) -> str | None:
    """Why *value* is no ``preload`` list (None: a list of module names, such as
    ``["torch._dynamo"]``); ``course.toml``'s ``[course] preload`` is checked by it too."""
    if not isinstance(value, list) or not all(
        isinstance(v, str) and all(_NAME.match(part) for part in v.split(".")) for v in value
    ):
        return 'must be a list of module names, such as ["torch._dynamo"]'
    return None


@dataclass(frozen=True)
class Field:
    """One key of a table in ``exercise.toml``."""

    name: str
    check: Check
    doc: str
    required: bool = False
    default: Any = None


EXERCISE_FIELDS: tuple[Field, ...] = (
    Field("title", _text, "The exercise's title, shown to learners.", required=True),
    Field(
        "inputs",
        _input_list,
        'The entry function\'s parameters, in order: names, or tables { name = "ids", pass = '
        '"tensor", dtype = "int64" } for an input passed as a torch tensor.',
        required=True,
    ),
    Field("task", _text, "What the learner is asked to do, in a sentence or two.", default=""),
    Field(
        "outputs",
        _outputs,
        "Names of the values the entry function returns, in order, when "
        "it returns several (expected is then a table of them); or tables "
        '{ name = "ids", kind = "list[int]" } that declare each value\'s kind (one '
        "table without a name: the kind of the single value returned).",
        default=None,
    ),
    Field(
        "format",
        _format,
        "The format version: 2 reads an expected value's kind from the value (text, "
        "booleans, bytes, mappings) where none is declared.",
        default=1,
    ),
    Field(
        "entry",
        _identifier,
        "The function the learner writes (with a harness: the name it asks the learner's "
        "module for, such as a class).",
        default="solve",
    ),
    Field(
        "harness",
        _relative_file,
        "The author's code that drives the learner's module (drive(learner, *inputs)) and "
        "returns the observables, judged as outputs.",
        default=None,
    ),
    Field("solution", _relative_file, "The learner's file.", default="solution.py"),
    Field("rtol", _non_negative, "Relative tolerance of every case.", default=DEFAULT_RTOL),
    Field("atol", _non_negative, "Absolute tolerance of every case.", default=DEFAULT_ATOL),
    Field("timeout", _positive, "Seconds one case may take (run setting).", default=None),
    Field("memory", _positive, "MiB of memory learner code may add (run setting).", default=None),
    Field(
        "points",
        _positive,
        "What the whole exercise is worth; its cases' points are "
        "scaled to add up to it (default: the sum of the cases' points).",
        default=None,
    ),
    Field("reference", _relative_file, "The author's right answer.", default="reference.py"),
    Field("mistakes", _relative_file, "The author's known wrong answers.", default="mistakes.py"),
    Field(
        "variants",
        _relative_file,
        "The author's known-correct alternatives to the reference (each must pass every case).",
        default="variants.py",
    ),
    Field(
        "parts",
        _parts,
        "The course library's parts this lesson's code imports: \"library\" (the reference's) "
        'or "own" (the learner\'s solutions of those lessons).',
        default="library",
    ),
    Field(
        "preload",
        modules_problem,
        "Modules this lesson's code needs that take long to import (torch._dynamo for an "
        "optimizer's step, torch.fx.experimental.symbolic_shapes for gradcheck): imported once "
        "before the run's first case, not in every case.",
        default=[],
    ),
)

WATCH_OUT_FIELDS: tuple[Field, ...] = (
    Field("id", _slug, 'A short stable name, such as "missing-transpose".', required=True),
    Field(
        "message",
        _text,
        "What to do, then why; shown as the failure's headline (with check: optional, the "
        "harness's own words are shown).",
        default=None,
    ),
    Field(
        "mistake", _identifier, "The function in mistakes.py that makes this mistake.", default=None
    ),
    Field(
        "detector",
        _detector,
        "A generic detector this watch-out words for the lesson.",
        default=None,
    ),
    Field(
        "fit",
        _range,
        "[lowest, highest]: the mistake function takes one more argument, fitted to the "
        "learner's answer within these bounds.",
        default=None,
    ),
    Field(
        "right",
        _text,
        "With fit: the right value, axis sizes joined by * and /, maybe under sqrt(): "
        '"sqrt(width)", "heads*width", "1/sqrt(width)".',
        default=None,
    ),
    Field(
        "named",
        _labels,
        'With fit: expression (as in right) -> words, such as "sqrt(heads*width)" = "√ of '
        'the model width".',
        default=None,
    ),
    Field(
        "code",
        _text,
        "A regular expression the graded code must match for this watch-out to fire, for a "
        'message that tells of a call (such as "\\\\.split\\\\("): other code with the same '
        "answer is not told about it.",
        default=None,
    ),
    Field(
        "check",
        _slug,
        "The id of the harness's check (LessonFailure(..., check=...)) that stops this "
        "mistake: the watch-out fires when that check fails a case.",
        default=None,
    ),
    Field(
        "stands_in",
        _stands_in,
        "Other names the harness asks for -> the names in mistakes.py that stand in for them "
        "with the mistake (the entry's is mistake).",
        default=None,
    ),
)

HINT_FIELDS: tuple[Field, ...] = (
    Field("title", _text, "A few words, shown as 'Hint N: title'.", required=True),
    Field("text", _text, "The hint itself.", required=True),
)

GRADIENT_FIELDS: tuple[Field, ...] = (
    Field(
        "upstream_seed",
        _integer,
        "Seeds the upstream gradient the grader draws (torch.randn in float64).",
        default=0,
    ),
    Field(
        "upstream",
        _identifier,
        "By hand: the name of the learner's last parameter, the drawn upstream gradient; "
        "the function returns the gradients of the inputs flagged grad = true, in order.",
        default=None,
    ),
    Field(
        "upstream_shape",
        _upstream_shape,
        'With upstream: its shape, "x.shape" or a list such as ["x.shape[0]", "W.shape[0]"].',
        default=None,
    ),
    Field(
        "forward",
        _identifier,
        "By hand: the function of reference.py whose autograd gives the expected gradients.",
        default=None,
    ),
    Field(
        "gradcheck",
        _boolean,
        "Also run torch.autograd.gradcheck on the learner's forward (float64 inputs only).",
        default=False,
    ),
)

SOLUTION_FIELDS: tuple[Field, ...] = (
    Field("steps", _strings, "The worked solution's steps, in order.", default=[]),
)

CASE_FIELDS: tuple[Field, ...] = (
    Field(
        "expected",
        _any,
        "The right answer (a table of outputs when the exercise has several).",
        required=True,
    ),
    Field("name", _text, "A short name shown in reports.", default=None),
    Field("rtol", _non_negative, "This case's relative tolerance.", default=None),
    Field("atol", _non_negative, "This case's absolute tolerance.", default=None),
    Field("points", _non_negative, "What passing this case is worth.", default=1),
    Field("hidden", _boolean, "Grade the case but never show its inputs or answer.", default=False),
    Field(
        "draws",
        randomness.draws_problem,
        "A statistical case: call solve this many times with one generator, and test how "
        "often each value is drawn against the distribution (expected, or reference.py's "
        "distribution()).",
        default=None,
    ),
    Field(
        "observe",
        _identifier,
        "For a statistical case of several outputs: the output whose values are the draws.",
        default=None,
    ),
    Field(
        "false_fail",
        randomness.false_fail_problem,
        "For a statistical case: the highest chance that right code fails it (Bonferroni "
        "over the categories).",
        default=FALSE_FAIL,
    ),
    Field(
        "work",
        _work_table,
        "A learner's copy only (--lesson-export writes it): the work budget of a [budget] "
        "case, with the reference's figures frozen in it.",
        default=None,
    ),
)

#: A statistical case's fields: its expected value (the distribution) may be left out.
STATISTICAL_FIELDS: tuple[Field, ...] = tuple(
    replace(f, required=False) if f.name == "expected" else f for f in CASE_FIELDS
)

GENERATE_FIELDS: tuple[Field, ...] = (
    Field("count", _count, "How many cases to draw.", required=True),
    Field("axes", _axes, "Axis name -> [smallest, largest] size.", required=True),
    Field(
        "inputs",
        _any_table,
        "Input name -> its axes, outermost first, or one axis name (the input is then that size).",
        required=True,
    ),
    Field("seed", _integer, "The same seed draws the same cases.", default=0),
    Field("values", _range, "[lowest, highest] value drawn.", default=[-1.0, 1.0]),
    Field(
        "ranges",
        _ranges,
        "Input name -> its own [lowest, highest] value drawn (a temperature above 0).",
        default=None,
    ),
    Field("decimals", _decimals, "Digits each drawn value is rounded to.", default=2),
    Field("points", _non_negative, "What each generated case is worth.", default=1),
    Field("hidden", _boolean, "Hide the generated cases' inputs and answers.", default=False),
    Field(
        "max_size",
        _max_size,
        f"The largest size an axis may have (at most {generate.SIZE_CEILING}).",
        default=generate.MAX_SIZE,
    ),
    Field(
        "max_elements",
        _max_elements,
        "The most values (numbers, booleans, characters) one case may hold over all its "
        f"inputs, at the ranges' upper bounds (at most {generate.ELEMENTS_CEILING}).",
        default=generate.MAX_ELEMENTS,
    ),
)

GENERATE_INPUT_FIELDS: tuple[Field, ...] = (
    Field("kind", _input_kind, "What each value is: float, int, bool or str.", default="float"),
    Field("axes", _strings, "Its axes, outermost first (none: one value).", default=[]),
    Field(
        "range",
        _range,
        "For float and int: [lowest, highest] value drawn, both included.",
        default=None,
    ),
    Field(
        "below",
        _identifier,
        "For int: an axis whose size the values stay below (token ids of a vocabulary).",
        default=None,
    ),
    Field("decimals", _decimals, "For float: digits kept (default: the table's).", default=None),
    Field(
        "ragged",
        _size_range,
        "[shortest, longest]: one more, innermost, dimension whose length each row draws.",
        default=None,
    ),
    Field("alphabet", _alphabet, "For str: the characters drawn.", default=generate.LETTERS),
    Field("length", _size_range, "For str: [shortest, longest] string.", default=[1, 8]),
)

#: Top-level tables and arrays of tables the format knows.
TOP_LEVEL = (
    "exercise",
    "case",
    "watch_out",
    "hint",
    "solution",
    "generate",
    "budget",
    "gradients",
    "variants",
    "rule",
    "initial",
)

#: Exercise keys that are run settings, overridable from the command line (see settings.py).
LIMIT_KEYS = ("timeout", "memory")


# --- loading --------------------------------------------------------------------------------


def load(path: Path) -> Exercise:
    """Read and validate ``exercise.toml`` at *path*; raise :class:`ExerciseError` if unusable."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExerciseError(path, f"cannot be read: {exc}") from None
    return parse(text, path)


def parse(text: str, path: Path) -> Exercise:
    """Validate the TOML *text* of the exercise file at *path*."""
    lines = text.splitlines()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        position = _TOML_POSITION.search(message)
        line = int(position.group(1)) if position else None
        problem = _TOML_POSITION.sub("", message).strip()
        if line is not None and re.search(r"array|\]", problem, re.I):
            line = _unclosed(lines, line)
        raise ExerciseError(path, f"is not valid TOML: {problem}", line) from None
    case_lines = [n for n, line in enumerate(lines, 1) if _CASE_HEADER.match(line)]
    generate_line = next(
        (n for n, line in enumerate(lines, 1) if _GENERATE_HEADER.match(line)), None
    )
    try:
        return _initial_rules(_build(data, path, case_lines, generate_line), data, path)
    except ExerciseError as error:
        error.line = _key_line(lines, error) or error.line
        raise


def _initial_rules(exercise: Exercise, data: dict[str, Any], path: Path) -> Exercise:
    """*exercise* with its ``[[initial]]`` tables (:mod:`pytest_lessons.core.initial`), which
    need a harness: its ``check_initial`` sends the values they judge."""
    try:
        found = initial.parse(data.get("initial"), tuple(exercise.inputs))
    except initial.InitialError as error:
        raise ExerciseError(path, str(error)) from None
    if not found:
        return exercise
    if exercise.harness is None:
        raise ExerciseError(
            path, "[[initial]] needs a harness: its check_initial sends the values it judges"
        )
    return replace(exercise, initial=found)


def _brackets(line: str) -> int:
    """How many more [ than ] a line opens, outside strings and comments (roughly)."""
    depth, quote = 0, ""
    for char in line:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
    return depth


def _unclosed(lines: list[str], reported: int) -> int:
    """The line of an array left open: the parser notices it on a later line (the next key),
    the author needs the line where the ] is missing."""
    for number in range(min(reported, len(lines)), 0, -1):
        line = lines[number - 1]
        if number < reported and line.strip() and _brackets(line) > 0:
            stripped = line.strip()
            if not stripped.startswith("[") or "=" in stripped:
                return number
        if number < reported - 20:
            break
    return reported


def _key_line(lines: list[str], error: ExerciseError) -> int | None:
    """The line of the key an error names (``unknown key "expect"``, ``missing "x"``), looked
    for from the table the error is in; None when not found."""
    match = re.search(r'(?:unknown key|key|input|missing) "([^"]+)"', error.problem)
    if not match:
        return None
    key = re.escape(match.group(1))
    start = error.line or 1
    pattern = re.compile(rf"^\s*{key}\s*=")
    for number in range(start, len(lines) + 1):
        if number > start and lines[number - 1].lstrip().startswith("[") and error.line:
            break  # the next table: the key is not in the error's own table
        if pattern.match(lines[number - 1]):
            return number
    return None


def _unknown(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f'unknown key "{key}"' + (f' (did you mean "{close[0]}"?)' if close else "")


def _read_table(
    table: Any,
    fields: tuple[Field, ...],
    where: str,
    path: Path,
    line: int | None,
    allowed_extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Check *table* against *fields*; return every field's value (or default)."""
    if not isinstance(table, dict):
        raise ExerciseError(path, f"{where} must be a table", line)
    known = [f.name for f in fields]
    for key in table:
        if key not in known and key not in allowed_extra:
            raise ExerciseError(path, f"{where}: {_unknown(key, known)}", line)
    values: dict[str, Any] = {}
    for f in fields:
        if f.name not in table:
            if f.required:
                raise ExerciseError(path, f'{where}: missing "{f.name}"', line)
            values[f.name] = f.default
            continue
        complaint = f.check(table[f.name])
        if complaint:
            raise ExerciseError(path, f"{where}.{f.name} {complaint}", line)
        values[f.name] = table[f.name]
    return values


def _build(
    data: dict[str, Any], path: Path, case_lines: list[int], generate_line: int | None = None
) -> Exercise:
    for key in data:
        if key not in TOP_LEVEL:
            raise ExerciseError(path, f"top level: {_unknown(key, list(TOP_LEVEL))}")
    if "exercise" not in data:
        raise ExerciseError(path, "missing the [exercise] table (title and inputs)")
    ex = _read_table(data["exercise"], EXERCISE_FIELDS, "exercise", path, None)
    inputs, tensors = input_specs(ex["inputs"])
    after = input_rules(ex["inputs"])
    observed = _observed(ex["outputs"])
    _check_behaviour(ex, after, observed, path)
    generators = randomness.generator_inputs(ex["inputs"])
    names, declared = _declared_outputs(ex["outputs"])
    grad_spec = _gradients(data, ex["inputs"], inputs, tensors, path)
    if grad_spec is not None:  # its gradients are named outputs: core/gradients.py
        try:
            names, declared = gradients.outputs(grad_spec, tensors, names, declared)
        except gradients.GradientError as error:
            raise ExerciseError(path, str(error)) from None
    ex["outputs"], ex["kinds"] = list(names) or None, declared
    ex["format"] = 2 if ex["format"] == 2 or any(declared) else 1
    dtype_tolerance = kind_names.default_tolerance(declared)
    if dtype_tolerance is not None:  # a tensor output's dtype sets the default tolerance
        for key, value in zip(("rtol", "atol"), dtype_tolerance):
            if key not in data["exercise"]:
                ex[key] = value

    raw_cases = data.get("case")
    if raw_cases is None and "generate" not in data:
        raise ExerciseError(path, f"no [[case]] in {path.name}: add at least one case")
    raw_cases = raw_cases or []
    if not isinstance(raw_cases, list):
        raise ExerciseError(path, "case must be written as [[case]] tables")
    cases = []
    for number, raw in enumerate(raw_cases, 1):
        line = case_lines[number - 1] if number - 1 < len(case_lines) else None
        case = _build_case(raw, number, inputs, ex, path, line, tensors, generators)
        if isinstance(raw, dict) and "work" in raw:  # a budget case of a learner's copy
            try:
                case = replace(case, work=budget.frozen(raw["work"]))
            except budget.BudgetError as error:
                raise ExerciseError(path, f"case {number}.{error}", line) from None
        cases.append(case)

    spec = _generate_spec(data["generate"], inputs, path, tensors) if "generate" in data else None
    if spec is not None:
        if not (path.parent / ex["reference"]).is_file():
            raise ExerciseError(
                path, f"[generate] needs {ex['reference']}, which computes the expected answers"
            )
        for sizes, drawn in draw(spec):
            cases.append(
                Case(
                    number=len(cases) + 1,
                    inputs=drawn,
                    expected=None,
                    rtol=float(ex["rtol"]),
                    atol=float(ex["atol"]),
                    points=float(spec.points),
                    hidden=spec.hidden,
                    generated=True,
                    sizes=sizes,
                    # Where an editor or IDE jumps to: the table the case was drawn from.
                    line=generate_line,
                )
            )
    if "budget" in data:  # its cases, drawn from [generate] at the budget's sizes
        known = {str(w.get("id")) for w in data.get("watch_out", []) if isinstance(w, dict)}
        try:
            made = budget.cases(data["budget"], spec, known)
        except budget.BudgetError as error:
            raise ExerciseError(path, str(error)) from None
        for name, drawn, work, points in made:
            cases.append(
                Case(
                    number=len(cases) + 1,
                    inputs=drawn,
                    expected=None,
                    rtol=float(ex["rtol"]),
                    atol=float(ex["atol"]),
                    name=name,
                    points=float(points),
                    source="reference",
                    work=work,
                )
            )
    if ex["points"] is not None:
        total = sum(case.points for case in cases)
        if total == 0:
            raise ExerciseError(path, "exercise.points is set, but every case is worth 0 points")
        cases = [replace(c, points=c.points * ex["points"] / total) for c in cases]
    watch_outs = tuple(
        _watch_out(w, path, ex, data, n)
        for n, w in enumerate(_read_array(data, "watch_out", WATCH_OUT_FIELDS, path), 1)
    )
    ids = [w.id for w in watch_outs]
    for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
        raise ExerciseError(path, f'watch_out id "{duplicate}" is used twice')
    if any(w.mistake for w in watch_outs) and not (path.parent / ex["mistakes"]).is_file():
        raise ExerciseError(
            path, f"a watch_out names a mistake function, but {ex['mistakes']} is missing"
        )
    hints = tuple(
        Hint(h["title"].strip(), h["text"].strip())
        for h in _read_array(data, "hint", HINT_FIELDS, path)
    )
    steps: list[str] = []
    if "solution" in data:
        steps = _read_table(data["solution"], SOLUTION_FIELDS, "solution", path, None)["steps"]
    try:
        lesson_rules = rules.parse(data.get("rule"))
    except rules.RuleError as error:
        raise ExerciseError(path, str(error)) from None
    if any(r.mistake for r in lesson_rules) and not (path.parent / ex["mistakes"]).is_file():
        raise ExerciseError(
            path, f"a rule names a mistake function, but {ex['mistakes']} is missing"
        )
    solution = path.parent / ex["solution"]
    limits = {key: float(ex[key]) for key in LIMIT_KEYS if ex[key] is not None}
    return Exercise(
        path=path,
        title=ex["title"],
        inputs=inputs,
        entry=ex["entry"],
        solution=solution,
        rtol=float(ex["rtol"]),
        atol=float(ex["atol"]),
        cases=tuple(cases),
        task=ex["task"],
        limits=limits,
        watch_outs=watch_outs,
        hints=hints,
        solution_steps=tuple(step.strip() for step in steps),
        mistakes=path.parent / ex["mistakes"],
        reference=path.parent / ex["reference"],
        variants=path.parent / ex["variants"],
        stands_in=_stand_ins(data, ex, watch_outs, path),
        generate=spec,
        outputs=tuple(ex["outputs"] or ()),
        kinds=ex["kinds"],
        format=ex["format"],
        tensors=tensors,
        harness=path.parent / ex["harness"] if ex["harness"] else None,
        after=after,
        observed=observed,
        generators=generators,
        parts=ex["parts"],
        gradients=grad_spec,
        preload=tuple(ex["preload"]),
        rules=lesson_rules,
    )


def _stand_ins(
    data: dict[str, Any], ex: dict[str, Any], watch_outs: tuple[WatchOut, ...], path: Path
) -> dict[tuple[str, str], dict[str, str]]:
    """The names each mistake and variant stands in for besides the entry (see
    :attr:`Exercise.stands_in`); the ``[variants]`` table checked."""
    found = {
        (str(path.parent / ex["mistakes"]), w.mistake): dict(w.stands_in)
        for w in watch_outs
        if w.mistake and w.stands_in
    }
    raw = data.get("variants")
    if raw is None:
        return found
    if not ex["harness"]:
        raise ExerciseError(
            path, "[variants] names what the lesson's harness asks for, and it has none"
        )
    if not isinstance(raw, dict):
        raise ExerciseError(path, "[variants] must be a table: variant name = { name = ... }")
    for variant, table in raw.items():
        complaint = _identifier(variant) or _stands_in(table)
        if complaint:
            raise ExerciseError(path, f"variants.{variant} {complaint}")
        if ex["entry"] in table:
            raise ExerciseError(
                path, f"variants.{variant}: leave out {ex['entry']}: the variant stands in for it"
            )
        found[(str(path.parent / ex["variants"]), variant)] = dict(table)
    return found


def _observed(raw: Any) -> tuple[str, ...]:
    """The names ``exercise.outputs`` gives its values, in order (one named table too)."""
    return tuple(
        entry if isinstance(entry, str) else entry["name"]
        for entry in raw or ()
        if isinstance(entry, str) or "name" in entry
    )


def _check_behaviour(
    ex: dict[str, Any], after: dict[str, str], observed: tuple[str, ...], path: Path
) -> None:
    """A harness file that exists, and ``updated`` inputs that are named outputs."""
    if ex["harness"] and not (path.parent / ex["harness"]).is_file():
        raise ExerciseError(path, f"exercise.harness names {ex['harness']}, which is missing")
    for name, rule in after.items():
        if rule == "updated" and name not in observed:
            raise ExerciseError(
                path,
                f'exercise.outputs must name "{name}", the input updated in place, so that its '
                f'new value is judged: outputs = [{{ name = "{name}", kind = "tensor" }}]',
            )


def _gradients(
    data: dict[str, Any],
    raw_inputs: list[Any],
    inputs: tuple[str, ...],
    tensors: dict[str, str | None],
    path: Path,
) -> gradients.GradientSpec | None:
    """The lesson's ``[gradients]`` with its inputs flagged ``grad = true``, or None."""
    table = None
    if "gradients" in data:
        table = _read_table(data["gradients"], GRADIENT_FIELDS, "gradients", path, None)
    grads = tuple(i["name"] for i in raw_inputs if isinstance(i, dict) and i.get("grad"))
    try:
        return gradients.parse(table, inputs, tensors, grads)
    except gradients.GradientError as error:
        raise ExerciseError(path, str(error)) from None


def _declared_outputs(raw: Any) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """The names of several outputs and the declared kind of each returned value from
    ``exercise.outputs`` (checked): names alone are format 1's several outputs; a single
    table is the one value returned, its kind declared."""
    if raw is None:
        return (), ()
    if all(isinstance(entry, str) for entry in raw):
        return tuple(raw), ()
    entries = [{"name": e} if isinstance(e, str) else e for e in raw]
    declared = tuple(entry.get("kind") for entry in entries)
    if len(entries) == 1:
        return (), declared
    return tuple(entry["name"] for entry in entries), declared


def _expected_problem(value: Any, index: int, ex: dict[str, Any]) -> str | None:
    """What is wrong with the expected value of returned value *index*, by its kind: the
    declared one, else in format 2 the value's own, else numbers (format 1)."""
    declared = ex["kinds"][index] if index < len(ex["kinds"]) else None
    if declared:
        problem: str | None = kind_names.named(declared).problem(value)
        return problem
    if ex["format"] >= 2:
        problem = kind_names.infer(value).problem(value)
        return problem
    return expected_problem(value)


def _generate_spec(
    raw: Any, inputs: tuple[str, ...], path: Path, tensors: dict[str, str | None] | None = None
) -> GenerateSpec:
    table = _read_table(raw, GENERATE_FIELDS, "generate", path, None)
    axes = {name: (bounds[0], bounds[1]) for name, bounds in table["axes"].items()}
    if not distinct_possible(axes):
        raise ExerciseError(
            path, "generate.axes: the size ranges leave no way to give every axis its own size"
        )
    shapes = table["inputs"]
    if not isinstance(shapes, dict):
        raise ExerciseError(path, "generate.inputs must be a table: input name = [axis names]")
    for name in inputs:
        if name not in shapes:
            raise ExerciseError(path, f'generate.inputs lacks input "{name}"')
    kinds: dict[str, generate.InputSpec] = {}
    fixed: dict[str, dict[str, Any]] = {}
    for name, names in shapes.items():
        if name not in inputs:
            raise ExerciseError(path, f'generate.inputs has unknown input "{name}"')
        if datafiles.is_file_input(names):
            fixed[name] = _fixed_input(names, name, path, tensors or {})
            continue
        if isinstance(names, dict):
            kinds[name] = _input_spec(names, name, axes, path, table["values"])
            names = list(kinds[name].axes)
        elif isinstance(names, str):
            names = [names]  # the input is this axis's size
        elif not isinstance(names, list) or not all(isinstance(a, str) for a in names):
            # Format version 1's words; the table form is in docs/authors/format-v1.md and the
            # schema.
            raise ExerciseError(
                path, f"generate.inputs.{name} must be a list of axis names, or one axis name"
            )
        for axis in names:
            for part in axis_names(axis):
                if part not in axes:
                    raise ExerciseError(path, f'generate.inputs.{name} names unknown axis "{part}"')
    ranges = table["ranges"] or {}
    for name in ranges:
        if name not in inputs:
            raise ExerciseError(path, f"generate.ranges: {_unknown(name, list(inputs))}")
        if isinstance(shapes.get(name), str):
            raise ExerciseError(
                path, f"generate.ranges.{name}: this input is an axis size, drawn from its axis"
            )
        if name in kinds:
            raise ExerciseError(
                path, f"generate.ranges.{name}: this input is a table: give its range there"
            )
        if name in fixed:
            raise ExerciseError(
                path,
                f"generate.ranges.{name}: leave this range out: the input is read from "
                f"{fixed[name]['file']}, the same in every case, so nothing is drawn for it",
            )
    _size_limits(table, axes, shapes, kinds, path)
    return GenerateSpec(
        fixed=fixed,
        kinds=kinds,
        ranges={name: (float(b[0]), float(b[1])) for name, b in ranges.items()},
        count=table["count"],
        seed=table["seed"],
        axes=axes,
        inputs={
            name: _axes_of(shapes[name], kinds.get(name)) for name in inputs if name not in fixed
        },
        values=(float(table["values"][0]), float(table["values"][1])),
        decimals=table["decimals"],
        points=float(table["points"]),
        hidden=table["hidden"],
    )


def _fixed_input(
    raw: dict[str, Any], name: str, path: Path, tensors: dict[str, str | None]
) -> dict[str, Any]:
    """An input of ``[generate.inputs]`` read from a file (``{ file, key }``), the same in every
    drawn case; its file, key and dtype checked as a case's file input is."""
    where = f"generate.inputs.{name}"
    for key in ("kind", "axes", "range"):
        if key in raw:
            raise ExerciseError(
                path,
                f"{where}: leave out {key}, or the file: an input is either read from a file "
                "(file, key) or drawn (kind, axes, range), not both",
            )
    try:
        datafiles.check(path.parent, raw, name in tensors, tensors.get(name))
    except datafiles.DataFileError as error:
        raise ExerciseError(path, f"{where}: {error}") from None
    return dict(raw)


def _axes_of(shape: Any, kind: generate.InputSpec | None) -> tuple[str, ...] | str:
    """An input's axes as :attr:`GenerateSpec.inputs` holds them, whichever form it has."""
    if kind is not None:
        return kind.axes
    return shape if isinstance(shape, str) else tuple(shape)


def _input_spec(
    raw: dict[str, Any],
    name: str,
    axes: dict[str, tuple[int, int]],
    path: Path,
    values: list[float],
) -> generate.InputSpec:
    """An input of ``[generate.inputs]`` written as a table (format version 2); a float input
    without its own range draws from the table's *values*."""
    where = f"generate.inputs.{name}"
    table = _read_table(raw, GENERATE_INPUT_FIELDS, where, path, None)
    kind = table["kind"]
    allowed = {
        "float": {"range", "decimals"},
        "int": {"range", "below"},
        "bool": set(),
        "str": {"alphabet", "length"},
    }[kind]
    for key in ("range", "below", "decimals", "alphabet", "length"):
        if key in raw and key not in allowed:
            raise ExerciseError(path, f'{where}.{key} is not for kind = "{kind}"')
    if kind == "int" and table["range"] is not None and table["below"] is not None:
        raise ExerciseError(path, f"{where}: give range or below, not both")
    low, high = table["range"] or ([0, 1] if kind == "int" else values)
    if kind == "int" and (
        any(type(b) is not int for b in (low, high)) and table["range"] is not None
    ):
        raise ExerciseError(path, f'{where}.range must be two whole numbers for kind = "int"')
    if kind == "int" and table["range"] is None and table["below"] is None:
        raise ExerciseError(
            path, f'{where} needs range = [lowest, highest] or below = "an axis" for kind = "int"'
        )
    for axis in [*table["axes"], *([table["below"]] if table["below"] else [])]:
        for part in axis_names(axis):
            if part not in axes:
                raise ExerciseError(path, f'{where} names unknown axis "{part}"')
    return generate.InputSpec(
        kind=kind,
        axes=tuple(table["axes"]),
        low=low,
        high=high,
        below=table["below"],
        decimals=table["decimals"],
        ragged=tuple(table["ragged"]) if table["ragged"] is not None else None,
        alphabet=table["alphabet"],
        length=(table["length"][0], table["length"][1]),
    )


def _size_limits(
    table: dict[str, Any],
    axes: dict[str, tuple[int, int]],
    shapes: dict[str, Any],
    kinds: dict[str, generate.InputSpec],
    path: Path,
) -> None:
    """The lesson's size limits hold at every range's upper bound: no case can be drawn too
    big to send and grade quickly."""
    largest = table["max_size"]
    for name, (_, high) in axes.items():
        if high > largest and largest == generate.MAX_SIZE:
            # Format version 1's words, where the lesson keeps the default limit.
            raise ExerciseError(
                path,
                f'generate.axes axis "{name}" must be [smallest, largest]: whole sizes from 1 '
                f"to {largest}, in order",
            )
        if high > largest:
            raise ExerciseError(
                path,
                f'generate.axes: axis "{name}" may reach {high}, above generate.max_size = '
                f"{largest}; raise max_size (at most {generate.SIZE_CEILING}) or lower the axis",
            )
    total = 0
    for name, shape in shapes.items():
        if name in kinds:
            total += kinds[name].elements(axes)
        elif isinstance(shape, list):
            total += generate.InputSpec("float", tuple(shape)).elements(axes)
    if total > table["max_elements"]:
        raise ExerciseError(
            path,
            f"generate: a case may hold {total} values at the axes' largest sizes, above "
            f"generate.max_elements = {table['max_elements']}; raise max_elements (at most "
            f"{generate.ELEMENTS_CEILING}) or lower the axes",
        )


def _watch_out(
    w: dict[str, Any], path: Path, ex: dict[str, Any], data: dict[str, Any], number: int = 1
) -> WatchOut:
    """A watch-out, its fitted parameter's expressions checked against the lesson's axes."""
    where = f'watch_out "{w["id"]}"'
    if w["message"] is None and w["check"] is None:
        raise ExerciseError(path, f'watch_out {number}: missing "message"')
    if w["check"] is not None and not ex["harness"]:
        raise ExerciseError(
            path, f"{where}: check names a check of the lesson's harness, and it has none"
        )
    if w["stands_in"] is not None and not (ex["harness"] and w["mistake"]):
        raise ExerciseError(
            path,
            f"{where}: stands_in names what the lesson's harness asks for besides the entry: "
            "it needs a harness and a mistake",
        )
    if w["stands_in"] is not None and ex["entry"] in w["stands_in"]:
        raise ExerciseError(
            path, f"{where}.stands_in: leave out {ex['entry']}: mistake stands in for the entry"
        )
    if w["check"] is not None and (w["detector"] or w["fit"] is not None):
        raise ExerciseError(path, f"{where}: check is matched alone: leave out detector and fit")
    fitted = w["fit"] is not None
    if not fitted and (w["right"] is not None or w["named"] is not None):
        raise ExerciseError(path, f"{where}: right and named need fit = [lowest, highest]")
    if fitted and not w["mistake"]:
        raise ExerciseError(path, f"{where}: fit needs a mistake function to fit")
    if fitted and ex["harness"]:
        raise ExerciseError(path, f"{where}: fit is for a function called once, not a harness")
    if fitted and w["fit"][0] <= 0:
        raise ExerciseError(path, f"{where}.fit must be [lowest, highest], both above 0")
    if w["code"] is not None:
        try:
            re.compile(w["code"])
        except re.error as error:
            raise ExerciseError(
                path, f"{where}.code is not a regular expression: {error}"
            ) from None
    axes = set((data.get("generate") or {}).get("axes", {}) or {})
    expressions = [*([w["right"]] if w["right"] else []), *(w["named"] or {})]
    for expression in expressions:
        try:
            used = fit.names(expression)
        except fit.ExpressionError as error:
            raise ExerciseError(path, f"{where}: {error}") from None
        # Without [generate] (a learner's copy may leave it out) sizes are unknown, and only
        # the search can fit the value: nothing to check the names against.
        unknown = [name for name in used if name not in axes]
        if axes and unknown:
            raise ExerciseError(
                path,
                f'{where}: "{expression}" names "{unknown[0]}", which is not an axis of '
                "[generate.axes]",
            )
    return WatchOut(
        w["id"],
        (w["message"] or "").strip(),
        w["mistake"],
        w["detector"],
        fit=(float(w["fit"][0]), float(w["fit"][1])) if fitted else None,
        right=w["right"],
        named=tuple((w["named"] or {}).items()),
        code=w["code"],
        check=w["check"],
        stands_in=tuple((w["stands_in"] or {}).items()),
    )


def _read_array(
    data: dict[str, Any], key: str, fields: tuple[Field, ...], path: Path
) -> list[dict[str, Any]]:
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise ExerciseError(path, f"{key} must be written as [[{key}]] tables")
    return [_read_table(table, fields, f"{key} {n}", path, None) for n, table in enumerate(raw, 1)]


def _build_case(
    raw: Any,
    number: int,
    inputs: tuple[str, ...],
    ex: dict[str, Any],
    path: Path,
    line: int | None,
    tensors: dict[str, str | None] | None = None,
    generators: dict[str, str | None] | None = None,
) -> Case:
    where = f"case {number}"
    if not isinstance(raw, dict):
        raise ExerciseError(path, f"{where} must be a table", line)
    fields = STATISTICAL_FIELDS if "draws" in raw else CASE_FIELDS
    known = [f.name for f in fields]
    for key in raw:
        if key in known or key in inputs:
            continue
        if difflib.get_close_matches(key, known, n=1, cutoff=0.75):
            raise ExerciseError(path, f"{where}: {_unknown(key, known)}", line)
        names = ", ".join(inputs)
        raise ExerciseError(
            path, f'{where} has unknown input "{key}" (the inputs are {names})', line
        )
    values = _read_table(raw, fields, where, path, line, allowed_extra=inputs)
    for name in inputs:
        if name not in raw:
            raise ExerciseError(path, f'{where} lacks input "{name}"', line)
        if name in (generators or {}):
            complaint = randomness.seed_problem(raw[name])
            if complaint:
                raise ExerciseError(path, f"{where}.{name} {complaint}", line)
            continue
        complaint = input_problem(raw[name], name, path.parent, tensors or {})
        if complaint and datafiles.is_file_input(raw[name]):
            # Worded so that the error's line is the input's own (see _key_line).
            raise ExerciseError(path, f'{where}, input "{name}": {complaint}', line)
        if complaint:
            raise ExerciseError(path, f"{where}.{name} {complaint}", line)
    outputs = ex["outputs"]
    if values["draws"] is not None or "observe" in raw or "false_fail" in raw:
        return _statistical_case(raw, number, inputs, ex, values, path, line, generators or {})
    source, snapshot = _expected_source(values["expected"], outputs, where, path, line)
    if source == "reference" and not (path.parent / ex["reference"]).is_file():
        raise ExerciseError(
            path, f"{where}.expected is computed from {ex['reference']}, which is missing", line
        )
    if source is not None:
        expected = None
        if snapshot is not None:
            expected = _read_snapshot(path, snapshot, outputs, where, line)
        return _case(raw, number, inputs, ex, values, line, expected, source, snapshot)
    if outputs:
        expected = values["expected"]
        if not isinstance(expected, dict):
            listed = ", ".join(f"{n} = ..." for n in outputs)
            raise ExerciseError(
                path, f"{where}.expected must be a table of the outputs: {{ {listed} }}", line
            )
        for index, name in enumerate(outputs):
            if name not in expected:
                raise ExerciseError(path, f'{where}.expected lacks output "{name}"', line)
            complaint = _expected_problem(expected[name], index, ex)
            if complaint:
                raise ExerciseError(path, f"{where}.expected.{name} {complaint}", line)
        for name in expected:
            if name not in outputs:
                raise ExerciseError(path, f'{where}.expected has unknown output "{name}"', line)
    else:
        complaint = _expected_problem(values["expected"], 0, ex)
        if complaint:
            raise ExerciseError(path, f"{where}.expected {complaint}", line)
    return _case(raw, number, inputs, ex, values, line, values["expected"])


def _statistical_case(
    raw: dict[str, Any],
    number: int,
    inputs: tuple[str, ...],
    ex: dict[str, Any],
    values: dict[str, Any],
    path: Path,
    line: int | None,
    generators: dict[str, str | None],
) -> Case:
    """A case with ``draws = N`` (docs/authors/randomness.md)."""
    where = f"case {number}"
    if values["draws"] is None:
        raise ExerciseError(path, f"{where}: observe and false_fail need draws = N", line)
    if not generators:
        raise ExerciseError(
            path,
            f'{where}.draws needs a generator input: {{ name = "g", pass = "generator" }} in '
            "[exercise] inputs",
            line,
        )
    outputs = ex["outputs"] or []
    observe = values["observe"]
    if outputs and observe is None:
        raise ExerciseError(
            path, f"{where}: name the output whose values are the draws: observe = ...", line
        )
    if observe is not None and observe not in outputs:
        raise ExerciseError(path, f"{where}.observe: {_unknown(observe, outputs)}", line)
    expected, source = values["expected"], None
    if expected is None:
        source = "distribution"
        if not (path.parent / ex["reference"]).is_file():
            raise ExerciseError(
                path,
                f"{where} takes its distribution from {ex['reference']}'s distribution(), "
                "which is missing; or write expected = [p0, p1, ...]",
                line,
            )
    elif FREQUENCIES.problem(expected):
        raise ExerciseError(
            path,
            f"{where}.expected is the distribution: probabilities by category (a list whose "
            "index is the category), summing to 1",
            line,
        )
    case = _case(raw, number, inputs, ex, values, line, expected, source)
    return replace(
        case, draws=values["draws"], observe=observe, false_fail=float(values["false_fail"])
    )


def _case(
    raw: dict[str, Any],
    number: int,
    inputs: tuple[str, ...],
    ex: dict[str, Any],
    values: dict[str, Any],
    line: int | None,
    expected: Any,
    source: str | None = None,
    snapshot: str | None = None,
) -> Case:
    return Case(
        number=number,
        inputs={name: raw[name] for name in inputs},
        expected=expected,
        rtol=float(values["rtol"] if values["rtol"] is not None else ex["rtol"]),
        atol=float(values["atol"] if values["atol"] is not None else ex["atol"]),
        name=values["name"],
        line=line,
        points=float(values["points"]),
        hidden=values["hidden"],
        source=source,
        snapshot=snapshot,
    )


#: The keys of an ``expected`` table that say where a computed expected value comes from.
SOURCES = ("from", "snapshot")


def _expected_source(
    value: Any, outputs: list[str] | None, where: str, path: Path, line: int | None
) -> tuple[str | None, str | None]:
    """Where a case's expected value comes from: ``{ from = "reference" }`` (computed when
    the case runs), ``{ snapshot = "snapshots/x.json" }`` (a file beside the lesson), else
    (None, None): the value is typed in the case. A table of one such key is a source, unless
    the exercise has an output of that name."""
    if not isinstance(value, dict) or len(value) != 1:
        return None, None
    ((key, given),) = value.items()
    if key not in SOURCES or key in (outputs or ()):
        return None, None
    if key == "from":
        if given != "reference":
            raise ExerciseError(
                path, f'{where}.expected.from must be "reference" (the one source today)', line
            )
        return "reference", None
    if (
        not isinstance(given, str)
        or not given.endswith(".json")
        or Path(given).is_absolute()
        or ".." in Path(given).parts
    ):
        raise ExerciseError(
            path,
            f"{where}.expected.snapshot must be a .json file inside the exercise folder, such "
            'as "snapshots/case_3.json"',
            line,
        )
    return "snapshot", given


def _read_snapshot(
    path: Path, snapshot: str, outputs: list[str] | None, where: str, line: int | None
) -> Any:
    """A snapshot case's expected value from its file; None while the file is not written or
    not JSON (``--lesson-check --lesson-regenerate`` writes it, so the lesson must still load;
    the case cannot pass until then)."""
    file = path.parent / snapshot
    try:
        value = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    parts = value if outputs and isinstance(value, dict) else {"": value}
    if outputs and (not isinstance(value, dict) or set(value) != set(outputs)):
        raise ExerciseError(
            path, f"{where}.expected: {snapshot} must hold a table of the outputs", line
        )
    for name, part in parts.items():
        complaint = expected_problem(part)
        if complaint:
            shown = f" (output {name})" if name else ""
            raise ExerciseError(path, f"{where}.expected: {snapshot}{shown} {complaint}", line)
    return value


def _plain_value(value: Any) -> str | None:
    """Inputs may be numbers, booleans, strings and lists of them; not tables or dates."""
    if isinstance(value, (bool, int, float, str)):
        return None
    if isinstance(value, list):
        for item in value:
            complaint = _plain_value(item)
            if complaint:
                return complaint
        return None
    return "must be a number, a string, a boolean or a list of them (not a table or a date)"


def numeric_array_problem(value: Any) -> str | None:
    """None if *value* is a number or a rectangular nested list of numbers, else the problem
    (the numeric kind's check, :meth:`pytest_lessons.core.kinds.Numeric.problem`)."""
    return NUMERIC.problem(value)
