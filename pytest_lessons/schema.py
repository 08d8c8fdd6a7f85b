"""A JSON Schema for ``exercise.toml``, for editors (Taplo / Even Better TOML).

Built from the model's own field lists, so the schema and the plugin's validation cannot drift
apart: each check function has its schema here, and a test proves the shipped
``exercise.schema.json`` is what this module builds. What a schema cannot say (a case's keys
must be the exercise's inputs; generated axes must allow distinct sizes) only the plugin checks.

Regenerate the shipped file with ``python -m pytest_lessons.schema``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pytest_lessons.core import budget, datafiles, generate, kinds, model, randomness

SHIPPED = Path(__file__).with_name("exercise.schema.json")

_NUMBER: dict[str, Any] = {"type": "number"}
_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"}
_NESTED = {
    "$comment": "a number or a rectangular nested list of numbers",
    "anyOf": [{"type": "number"}, {"type": "array", "items": {"$ref": "#/$defs/nested"}}],
}


def _kind() -> dict[str, Any]:
    """An output's ``kind``: its examples come from the kinds' own table (kinds.WORDS)."""
    examples = ", ".join(kinds.kind_examples())
    return {"type": "string", "description": f"A kind in Python's type syntax: {examples}."}


_EXPECTED = {
    "$comment": "format 1: a number or a rectangular nested list of numbers; format 2 adds "
    "strings, booleans, ragged lists, tables (mappings, { hex = ... } for bytes, "
    "{ none = true } for None)",
    "anyOf": [
        {"type": ["number", "string", "boolean"]},
        {"type": "array"},
        {"type": "object"},
    ],
}
_VALUE = {
    "anyOf": [
        {"type": ["number", "string", "boolean"]},
        {"type": "array", "items": {"$ref": "#/$defs/value"}},
    ]
}

#: Format 2: an input read from a file (see core/datafiles.py).
_FILE = {
    "type": "object",
    "description": "An input read from a file, its path relative to the lesson folder.",
    "properties": {
        "file": {
            "type": "string",
            "pattern": r"\.(" + "|".join(suffix[1:] for suffix in datafiles.READERS) + ")$",
        },
        "key": {"type": "string", "description": "One tensor of a safetensors, npz or pt file."},
    },
    "required": ["file"],
    "additionalProperties": False,
}
_INPUT_TABLE = {
    "type": "object",
    "properties": {
        "name": _NAME,
        "pass": {"enum": list(model.PASSES), "default": "plain"},
        "dtype": {"enum": list(datafiles.TENSOR_DTYPES)},
        "after": {
            "enum": list(model.AFTER),
            "default": "copy",
            "description": "What is checked of the input after the call: nothing (a fresh copy "
            "per call), that it is unchanged (a change fails the case, naming where), or its "
            "new value (updated: judged as the output of its name).",
        },
        "primitive": {
            "type": "string",
            "description": 'For pass = "generator": the draw the task prescribes, named when a '
            "seeded case fails but the draws follow the right distribution.",
        },
        "grad": {
            "type": "boolean",
            "description": "Compare the gradient with respect to this input (a floating tensor): "
            "see [gradients].",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}

_SIZES = {
    "type": "object",
    "propertyNames": _NAME,
    "additionalProperties": {"type": "integer", "minimum": 1, "maximum": generate.SIZE_CEILING},
}
_TIMES_REFERENCE = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*x\s+reference\s*$"}
_TIMES = {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*x\s*$"}


def _budget() -> dict[str, Any]:
    """``[budget]``, from the keys core/budget.py reads (see its module docstring)."""
    keys = budget.BUDGET_KEYS
    growth_keys = budget.GROWTH_KEYS
    growth = {
        "type": "object",
        "description": keys["growth"],
        "properties": {
            "axis": {**_NAME, "description": growth_keys["axis"]},
            "sizes": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": generate.SIZE_CEILING},
                "minItems": 2,
                "maxItems": 2,
                "description": growth_keys["sizes"],
            },
            **{m: {**_TIMES, "description": growth_keys[m]} for m in budget.MEASURES},
        },
        "required": ["axis", "sizes"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "description": "A work budget: cases whose work is counted (needs [generate]).",
        "properties": {
            "sizes": {**_SIZES, "description": keys["sizes"]},
            **{m: {**_TIMES_REFERENCE, "description": keys[m]} for m in budget.MEASURES},
            "advice": {"type": "string", "description": keys["advice"]},
            "watch_outs": {
                "type": "array",
                "items": {"type": "string"},
                "description": keys["watch_outs"],
            },
            "points": {"type": "number", "minimum": 0, "description": keys["points"]},
            "growth": growth,
        },
        "additionalProperties": False,
    }


def _outputs() -> dict[str, Any]:
    """``outputs``: names, or tables with a ``kind``, built when the schema is (so that a kind
    added to kinds.WORDS is in it)."""
    return {
        "anyOf": [
            {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True},
            {
                "type": "array",
                "minItems": 1,
                "items": {
                    "anyOf": [
                        _NAME,
                        {
                            "type": "object",
                            "properties": {"name": _NAME, "kind": _kind()},
                            "additionalProperties": False,
                        },
                    ]
                },
            },
        ]
    }


#: The schema of each check function of model.py (or the function that builds it).
CHECKS: dict[Any, Any] = {
    model._text: {"type": "string"},
    model._number: _NUMBER,
    model._non_negative: {"type": "number", "minimum": 0},
    model._positive: {"type": "number", "exclusiveMinimum": 0},
    model._identifier: _NAME,
    model._stands_in: {"type": "object", "additionalProperties": _NAME, "minProperties": 1},
    model._relative_file: {"type": "string", "pattern": r"^(?!/)(?!.*\.\.).*\.py$"},
    model._names: {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True},
    model._input_list: {
        "type": "array",
        "items": {"anyOf": [_NAME, _INPUT_TABLE]},
        "minItems": 1,
        "uniqueItems": True,
    },
    model._slug: {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]*$"},
    model._detector: {"enum": list(model.DETECTORS)},
    model._strings: {"type": "array", "items": {"type": "string"}},
    model._labels: {"type": "object", "additionalProperties": {"type": "string"}},
    model._ranges: {
        "type": "object",
        "additionalProperties": {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2},
    },
    model._boolean: {"type": "boolean"},
    model._integer: {"type": "integer"},
    model._count: {"type": "integer", "minimum": 1, "maximum": 1000},
    model._decimals: {"type": "integer", "minimum": 0, "maximum": 10},
    model._range: {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2},
    model._axes: {
        "type": "object",
        "minProperties": 1,
        "propertyNames": _NAME,
        "additionalProperties": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": generate.SIZE_CEILING},
            "minItems": 2,
            "maxItems": 2,
        },
    },
    model._any: _EXPECTED,
    model._outputs: _outputs,
    model._format: {"enum": list(model.FORMAT_VERSIONS)},
    model._parts: {"enum": list(model.PARTS)},
    model.modules_problem: {
        "type": "array",
        "items": {"type": "string", "pattern": r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$"},
    },
    model._any_table: {
        "type": "object",
        "additionalProperties": {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}},
                {"$ref": "#/$defs/generated_input"},
                # Read from a file, the same in every drawn case.
                _FILE,
            ]
        },
    },
    model._max_size: {"type": "integer", "minimum": 1, "maximum": generate.SIZE_CEILING},
    model._max_elements: {"type": "integer", "minimum": 1, "maximum": generate.ELEMENTS_CEILING},
    model._input_kind: {"enum": list(generate.INPUT_KINDS)},
    model._size_range: {
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
        "minItems": 2,
        "maxItems": 2,
    },
    model._alphabet: {"type": "string", "minLength": 1},
    randomness.draws_problem: {"type": "integer", "minimum": 1, "maximum": randomness.MAX_DRAWS},
    randomness.false_fail_problem: {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    model._work_table: {"type": "object"},
    model._upstream_shape: {
        "anyOf": [
            {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*\.shape$"},
            {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"type": "integer", "minimum": 0},
                        {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*\.shape\[-?\d+\]$"},
                    ]
                },
            },
        ]
    },
}


def _case() -> dict[str, Any]:
    """``[[case]]``: ``expected`` is required, but for a statistical case (``draws``), whose
    distribution may come from ``reference.py``'s ``distribution()``."""
    table = _table(model.CASE_FIELDS, extra={"$ref": "#/$defs/input"})
    table["required"] = [name for name in table["required"] if name != "expected"]
    table["if"] = {"not": {"required": ["draws"]}}
    table["then"] = {"required": ["expected"]}
    return table


def _table(fields: tuple[model.Field, ...], extra: Any = False) -> dict[str, Any]:
    properties = {}
    for field in fields:
        check = CHECKS[field.check]
        schema = dict(check() if callable(check) else check)
        schema["description"] = field.doc
        if field.default not in (None, "", []):
            schema["default"] = field.default
        properties[field.name] = schema
    table: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": [f.name for f in fields if f.required],
        "additionalProperties": extra,
    }
    return table


def _generate() -> dict[str, Any]:
    """``[generate]``: axes up to the default :data:`~pytest_lessons.core.generate.MAX_SIZE`
    unless the table raises ``max_size`` (the plugin checks the axes against its value)."""
    table = _table(model.GENERATE_FIELDS)
    most = {"items": {"maximum": generate.MAX_SIZE}}
    table["if"] = {"not": {"required": ["max_size"]}}
    table["then"] = {"properties": {"axes": {"additionalProperties": most}}}
    return table


def build() -> dict[str, Any]:
    """The schema of exercise.toml, format versions 1 and 2."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pytest-lessons exercise.toml, format versions 1 and 2",
        "type": "object",
        "properties": {
            "exercise": _table(model.EXERCISE_FIELDS),
            "case": {
                "type": "array",
                "description": "The graded cases. Besides the keys below, one key per input.",
                "items": _case(),
            },
            "watch_out": {"type": "array", "items": _table(model.WATCH_OUT_FIELDS)},
            "hint": {"type": "array", "items": _table(model.HINT_FIELDS)},
            "solution": _table(model.SOLUTION_FIELDS),
            "generate": _generate(),
            "budget": _budget(),
            "gradients": _table(model.GRADIENT_FIELDS),
            "variants": {
                "type": "object",
                "description": "Variant name -> the other names the harness asks for and the "
                "names in variants.py that stand in for them.",
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": _NAME,
                    "minProperties": 1,
                },
            },
            "rule": {"type": "array", "items": _rule()},
            "initial": {"type": "array", "items": _initial()},
        },
        "required": ["exercise"],
        "additionalProperties": False,
        "$defs": {
            "nested": _NESTED,
            "value": _VALUE,
            "generated_input": _table(model.GENERATE_INPUT_FIELDS),
            "input": {"anyOf": [{"$ref": "#/$defs/value"}, _FILE]},
        },
    }


def _initial() -> dict[str, Any]:
    """An ``[[initial]]`` table (:mod:`pytest_lessons.core.initial` checks the same)."""
    positive = {"type": "number", "exclusiveMinimum": 0}
    return {
        "type": "object",
        "properties": {
            "parameter": {
                "type": "string",
                "pattern": r"^[A-Za-z_]\w*$",
                "description": 'The parameter the harness\'s check_initial checks ("weight").',
            },
            "within": {**positive, "description": "Every value within ±within / sqrt(fan_in)."},
            "spread": {
                "type": "array",
                "items": positive,
                "minItems": 2,
                "maxItems": 2,
                "description": "[lowest, highest] standard deviation, over sqrt(fan_in).",
            },
            "random": {"type": "boolean", "description": "Not every value the same."},
            "fan_in": {
                "type": "string",
                "pattern": r"^[A-Za-z_]\w*\.shape\[-?\d+\]$",
                "description": 'The input axis whose size is fan_in ("weight.shape[1]").',
            },
            "scale_words": {
                "type": "string",
                "description": 'sqrt(fan_in) in the lesson\'s words ("sqrt(in_features)").',
            },
            "what": {"type": "string", "description": 'The module in the words ("Linear").'},
        },
        "required": ["parameter"],
        "additionalProperties": False,
    }


def _rule() -> dict[str, Any]:
    """A ``[[rule]]`` table (:mod:`pytest_lessons.core.rules` checks the same)."""
    return {
        "type": "object",
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^[a-z0-9][a-z0-9-]*$",
                "description": 'A short stable name, such as "no-autograd".',
            },
            "forbid": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "string",
                    "pattern": r"^(loop|[A-Za-z_]\w*(\.[A-Za-z_]\w*)+)$",
                },
                "description": "The calls the lesson forbids, by their dotted names "
                '("torch.autograd.grad"), or "loop" for a Python loop or comprehension.',
            },
            "message": {
                "type": "string",
                "description": "What to do, then why: the failure's headline.",
            },
            "mistake": {
                "type": "string",
                "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                "description": "The function of mistakes.py that computes the right answer "
                "the forbidden way: the lesson check proves the rule stops it.",
            },
        },
        "required": ["id", "forbid", "message"],
        "additionalProperties": False,
    }


def text() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(text())
