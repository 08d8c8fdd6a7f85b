"""Gradient cases (format 2): a lesson's ``[gradients]`` table, the jobs it makes and the words
for what only gradients can get wrong.

A lesson flags inputs ``grad = true`` (tensor inputs of a floating dtype); its cases then
compare gradients with respect to them, by name (``grad of x``), as named outputs of the
lesson: every case is judged, watched out for and reported by the kinds' machinery like any
other output. Two ways to get the learner's gradients:

* **autograd** (no ``upstream``): the learner's entry is a forward (a custom
  ``torch.autograd.Function``, an ``nn.Module`` it builds); the child calls it, draws the
  upstream gradient in the output's shape and runs autograd back to the flagged inputs. The
  observables are ``output``, then ``grad of <input>`` for each flagged input, then
  ``gradcheck`` when asked for: torch.autograd.gradcheck's test of the entry in float64,
  made here from data the child returns (:func:`checked`), never in the child.
* **by hand** (``upstream = "dY"``): the learner's entry is a backward; the grader draws the
  upstream gradient and passes it as one more, last, argument (its shape written as
  ``upstream_shape``); the entry returns the gradients of the flagged inputs in their order.
  With ``forward = "forward"``, the expected gradients are autograd of that function of
  ``reference.py``, run in its own child on the same upstream gradient; without it the
  reference's own entry (its hand-written backward) gives them.

The upstream gradient is ``torch.randn(shape, generator=torch.Generator().manual_seed(seed),
dtype=torch.float64)``, cast to the output's dtype: non-uniform (a wrong formula passes with a
gradient of ones: a transposed ``dW`` of a square layer, a missing sum over a broadcast axis)
and the same in every mode and every child. The child's side is
:mod:`pytest_lessons.isolation.gradients`; this module knows the names and the words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_lessons.core.compare import Comparison, Numbers, read_numbers, split_outputs
from pytest_lessons.isolation.answers import TAG, TENSOR, TUPLE, tag_of

#: What a lesson's gradient outputs are called: ``grad of x``.
PREFIX = "grad of "
#: The name of the forward's value among a lesson's outputs (autograd mode).
OUTPUT = "output"
#: The name of the gradcheck verdict among a lesson's outputs, and what it is when it passes.
GRADCHECK = "gradcheck"
PASSED = "passed"
#: gradcheck's own step and tolerances (``torch.autograd.gradcheck(eps, atol, rtol)``): its
#: central differences with step EPS, and a backward's entry passes within ATOL + RTOL times
#: the finite difference's size.
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3
#: The most elements of an output (the Jacobian's rows) and of an input (its columns) the
#: check probes, and the most entries of one input's Jacobian: a bound on the child's work
#: (two forwards a column, one backward a row) and on the answer's size (three numbers an
#: entry). Past them, evenly spread elements are probed (:func:`spread`).
MAX_PROBED = 4096
MAX_ENTRIES = 1 << 16
#: The verdicts only the grader makes: the child's data cannot be read as the check's (a
#: forward that returned no tensor there, or learner code that changed what the child sends),
#: or its outputs a step from the inputs disagree with its graded output at them.
UNCHECKED = "gives no values the check can read"
UNSTEADY = "gives outputs a step from its inputs that disagree with its output at them"
#: Floating dtypes a gradient can be taken in.
FLOATING = ("float64", "float32", "float16", "bfloat16")

_DIM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\.shape(?:\[(-?\d+)\])?$")


class GradientError(ValueError):
    """A ``[gradients]`` table or a ``grad = true`` flag that cannot be used (the model
    words it as the lesson's error)."""


@dataclass(frozen=True)
class GradientSpec:
    """A validated ``[gradients]`` table, with the inputs flagged ``grad = true``."""

    grads: tuple[str, ...]
    """The inputs whose gradients are compared, in ``inputs`` order."""
    seed: int = 0
    """Seeds the upstream gradient's draw (``upstream_seed``)."""
    upstream: str | None = None
    """By hand: the name of the learner's last parameter, the drawn upstream gradient."""
    upstream_shape: tuple[Any, ...] | str = ()
    """By hand: its shape, each item an int or ``(input, dim)``; or an input's name (its
    whole shape: ``"x.shape"``)."""
    upstream_dtype: str = "float64"
    forward: str | None = None
    """By hand: the function of ``reference.py`` whose autograd gives the expected answer."""
    gradcheck: bool = False

    @property
    def by_hand(self) -> bool:
        return self.upstream is not None or self.forward is not None


def _shape_item(item: Any, inputs: tuple[str, ...]) -> Any:
    if type(item) is int and item >= 0:
        return item
    found = _DIM.match(item) if isinstance(item, str) else None
    if found is None or found.group(2) is None or found.group(1) not in inputs:
        raise GradientError(
            f'gradients.upstream_shape: write each size as an int or "x.shape[0]" for an '
            f"input x (the inputs are {', '.join(inputs)}), not {item!r}"
        )
    return (found.group(1), int(found.group(2)))


def parse(
    table: dict[str, Any] | None,
    inputs: tuple[str, ...],
    tensors: dict[str, str | None],
    grads: tuple[str, ...],
) -> GradientSpec | None:
    """The lesson's gradient spec from its checked ``[gradients]`` table (None when absent)
    and its inputs flagged ``grad = true``; raises :class:`GradientError`."""
    if table is None and not grads:
        return None
    if not grads:
        raise GradientError(
            "[gradients] needs at least one input flagged grad = true, such as "
            '{ name = "x", pass = "tensor", dtype = "float64", grad = true }'
        )
    table = table or {}
    for name in grads:
        dtype = tensors.get(name, "")
        if dtype not in FLOATING:
            raise GradientError(
                f'input "{name}": grad = true needs pass = "tensor" and a floating dtype, '
                'such as dtype = "float64"'
            )
    upstream, forward = table.get("upstream"), table.get("forward")
    shape_text = table.get("upstream_shape")
    if upstream is not None and upstream in inputs:
        raise GradientError(
            f'gradients.upstream: "{upstream}" is drawn by the grader and passed after the '
            "inputs; remove it from inputs"
        )
    if (upstream is None) != (shape_text is None):
        raise GradientError("gradients.upstream and gradients.upstream_shape go together")
    shape: tuple[Any, ...] | str = ()
    if isinstance(shape_text, str):
        found = _DIM.match(shape_text)
        if found is None or found.group(2) is not None or found.group(1) not in inputs:
            raise GradientError(
                'gradients.upstream_shape: write "x.shape" for the shape of an input x, or a '
                'list such as ["x.shape[0]", "W.shape[0]"]'
            )
        shape = found.group(1)
    elif shape_text is not None:
        shape = tuple(_shape_item(item, inputs) for item in shape_text)
    gradcheck = bool(table.get("gradcheck", False))
    if gradcheck and (upstream is not None or forward is not None):
        raise GradientError(
            "gradients.gradcheck checks a forward under autograd: it needs the learner's "
            "function to be the forward (no gradients.upstream or gradients.forward)"
        )
    if gradcheck:
        for name in grads:
            if tensors.get(name) != "float64":
                raise GradientError(
                    f'input "{name}": gradients.gradcheck is only meaningful in float64: '
                    "torch.autograd.gradcheck compares with finite differences, which "
                    f"{tensors.get(name)} rounding swamps at its tolerances. Declare dtype = "
                    '"float64" for every input flagged grad = true'
                )
    dtypes = [tensors.get(name) or "float64" for name in grads]
    return GradientSpec(
        grads=grads,
        seed=int(table.get("upstream_seed", 0)),
        upstream=upstream,
        upstream_shape=shape,
        upstream_dtype=dtypes[0] if len(set(dtypes)) == 1 else "float64",
        forward=forward,
        gradcheck=gradcheck,
    )


def outputs(
    spec: GradientSpec,
    tensors: dict[str, str | None],
    names: tuple[str, ...],
    kinds: tuple[str | None, ...],
) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """The lesson's outputs with its gradients (names and declared kinds), from the outputs
    it declares for its forward (*names*, *kinds*: none, or one value)."""
    grad_names = tuple(PREFIX + name for name in spec.grads)
    grad_kinds = tuple(f"tensor[{tensors.get(name)}]" for name in spec.grads)
    if spec.by_hand:
        return grad_names, grad_kinds
    if len(names) > 1:
        raise GradientError(
            "a gradient lesson's forward returns one tensor: declare one output (or none)"
        )
    forward_kind = kinds[0] if kinds else "tensor"
    extra_names: tuple[str, ...] = (GRADCHECK,) if spec.gradcheck else ()
    extra_kinds: tuple[str | None, ...] = ("str",) if spec.gradcheck else ()
    return (
        (OUTPUT, *grad_names, *extra_names),
        (forward_kind, *grad_kinds, *extra_kinds),
    )


def job_parts(
    spec: GradientSpec, inputs: tuple[str, ...], entry: str, expected: bool
) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """For a job of a gradient lesson: the entry to call, the arguments to put before the
    job's own extra ones, and the child's gradient request
    (:func:`pytest_lessons.isolation.gradients.call`). *expected*: the job computes the
    reference's answer (autograd of ``forward`` when the lesson names one)."""
    request: dict[str, Any] = {"seed": spec.seed, "count": len(spec.grads)}
    if spec.upstream is not None:
        request["upstream"] = {
            "index": len(inputs),
            "shape": _shape_request(spec.upstream_shape, inputs),
            "dtype": spec.upstream_dtype,
        }
    if expected and spec.forward is not None:
        request["mode"] = "autograd"
        request["grad"] = [inputs.index(name) for name in spec.grads]
        request["observe"] = "grads"
        if spec.upstream is None:
            request["unit"] = True  # the gradient of a loss: its upstream is 1
        return spec.forward, (), request
    if spec.by_hand:
        request["mode"] = "by_hand"
        placeholder: tuple[Any, ...] = (None,) if spec.upstream is not None else ()
        return entry, placeholder, request
    request["mode"] = "autograd"
    request["grad"] = [inputs.index(name) for name in spec.grads]
    request["observe"] = "all"
    request["gradcheck"] = (
        {"eps": EPS, "rows": MAX_PROBED, "entries": MAX_ENTRIES} if spec.gradcheck else False
    )
    return entry, (), request


def _shape_request(shape: tuple[Any, ...] | str, inputs: tuple[str, ...]) -> Any:
    if isinstance(shape, str):
        return {"like": inputs.index(shape)}
    return [item if isinstance(item, int) else [inputs.index(item[0]), item[1]] for item in shape]


def upstream_text(spec: GradientSpec) -> str:
    """How a learner makes the upstream gradient of a by-hand lesson, as code."""
    if isinstance(spec.upstream_shape, str):
        shape = f"{spec.upstream_shape}.shape"
    else:
        parts = [
            str(item) if isinstance(item, int) else f"{item[0]}.shape[{item[1]}]"
            for item in spec.upstream_shape
        ]
        shape = f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"
    cast = "" if spec.upstream_dtype == "float64" else f".to(torch.{spec.upstream_dtype})"
    return (
        f"torch.randn({shape}, generator=torch.Generator().manual_seed({spec.seed}), "
        f"dtype=torch.float64){cast}"
    )


# --- the check, from the child's data -------------------------------------------------------


def spread(count: int, limit: int) -> list[int]:
    """The flat positions probed of *count* elements: all of them up to *limit*, else *limit*
    of them spread evenly (the child's :func:`pytest_lessons.isolation.gradients.spread`,
    which must agree)."""
    if count <= limit:
        return list(range(count))
    return [step * count // limit for step in range(limit)]


def checked(spec: GradientSpec, names: tuple[str, ...], answer: Any) -> Any:
    """*answer* (encoded, as a child returned it) with its ``gradcheck`` part made the
    verdict: :data:`PASSED`, ``"grad of x at [1, 2]"`` (the first input whose backward
    disagrees with the finite differences of the forward, and the element where most),
    what learner code raised (``"raises TypeError: ..."``), :data:`UNCHECKED` or
    :data:`UNSTEADY`. The child sends data only
    (:func:`~pytest_lessons.isolation.gradients.probes`): it runs learner code, which may
    replace any function there, so no verdict it could send is read, and data of the wrong
    shape is the learner's failure. An answer that is not one
    part per output is left as it is (the judge fails it)."""
    if not spec.gradcheck or spec.by_hand or GRADCHECK not in names:
        return answer
    parts = split_outputs(answer, len(names))
    if parts is None:
        return answer
    at = names.index(GRADCHECK)
    grads = [parts[names.index(PREFIX + name)] for name in spec.grads]
    items = list(parts)
    items[at] = _verdict(spec, parts[names.index(OUTPUT)], grads, parts[at])
    if isinstance(answer, dict):
        return {**answer, TAG: TUPLE, "items": items}
    return items


def _verdict(spec: GradientSpec, output: Any, grads: list[Any], data: Any) -> str:
    if isinstance(data, str):  # what learner code raised there: a failure, whatever it says
        return data[:300] if data.startswith("raises ") else UNCHECKED
    values = _tensor_numbers(output)
    inputs = _items(data)
    if values is None or inputs is None or len(inputs) != len(spec.grads):
        return UNCHECKED
    out_shape, out_values = values
    rows = spread(math.prod(out_shape), MAX_PROBED)
    limit = max(1, min(MAX_PROBED, MAX_ENTRIES // max(1, len(rows))))
    unsteady = False
    for name, grad, item in zip(spec.grads, grads, inputs):
        shape = _tensor_shape(grad)  # judged against the reference's: x's own shape
        parts = _items(item)
        if shape is None or parts is None or len(parts) != 3:
            return UNCHECKED
        columns = spread(math.prod(shape), limit) if rows else []
        width, height = len(columns), len(rows)
        plus = _block(parts[0], width, height)  # the forward a step up, column by column
        minus = _block(parts[1], width, height)
        jacobian = _block(parts[2], height, width)  # the backward, row by row
        if plus is None or minus is None or jacobian is None:
            return UNCHECKED
        # gradcheck's test, entry by entry: |analytic - numeric| <= ATOL + RTOL * |numeric|;
        # the element named is the column with the largest excess (NaN the largest).
        worst, where = 0.0, -1
        for t in range(width):
            for r in range(height):
                up, down = plus[t * height + r], minus[t * height + r]
                numeric = (up - down) / (2 * EPS)
                gap = abs(jacobian[r * width + t] - numeric) - (ATOL + RTOL * abs(numeric))
                if math.isnan(gap):
                    gap = math.inf
                if gap > worst:
                    worst, where = gap, t
                # The steps straddle the graded output: else the data is not the forward's.
                centre, want = (up + down) / 2, out_values[rows[r]]
                if not abs(centre - want) <= ATOL + RTOL * abs(want):
                    unsteady = True
        if where >= 0:
            index = ", ".join(str(i) for i in _unravel(columns[where], shape))
            return f"{PREFIX}{name} at [{index}]"
    return UNSTEADY if unsteady else PASSED


def _items(value: Any) -> list[Any] | None:
    """The items of an encoded tuple (or list), or None."""
    if tag_of(value) == TUPLE:
        value = value.get("items")
    return value if isinstance(value, list) else None


def _tensor_shape(value: Any) -> tuple[int, ...] | None:
    shape = value.get("shape") if tag_of(value) == TENSOR else None
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        return None
    return tuple(shape)


def _tensor_numbers(value: Any) -> tuple[tuple[int, ...], Sequence[float]] | None:
    """An encoded tensor's shape and flat values, read as numbers, or None."""
    shape = _tensor_shape(value)
    numbers = _numbers(value.get("values")) if shape is not None else None
    if shape is None or numbers is None or len(numbers.flat) != math.prod(shape):
        return None
    return shape, numbers.flat


def _numbers(value: Any) -> Numbers | None:
    try:
        return read_numbers(value)
    except Exception:  # not numbers: the learner's data cannot be read
        return None


def _block(value: Any, rows: int, columns: int) -> Sequence[float] | None:
    """The flat values of an encoded *rows* x *columns* list of lists (None when it is
    anything else); an empty block may be written ``[]``."""
    numbers = _numbers(value)
    if numbers is None or len(numbers.flat) != rows * columns:
        return None
    if rows * columns and tuple(numbers.shape) != (rows, columns):
        return None
    return numbers.flat


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return list(reversed(index))


# --- what a learner reads ---------------------------------------------------------------------


def _part(exercise_outputs: tuple[str, ...], answer: Any, name: str) -> Any:
    parts = split_outputs(answer, len(exercise_outputs))
    if parts is None or name not in exercise_outputs:
        return None
    return parts[exercise_outputs.index(name)]


def reword(
    spec: GradientSpec, names: tuple[str, ...], comparison: Comparison, answer: Any, entry: str
) -> Comparison:
    """A failed comparison of a gradient lesson in the learner's terms where the kinds'
    words cannot say it: a gradient autograd never reached (None), a failed gradcheck."""
    if comparison.passed or not comparison.part:
        return comparison
    got = _part(names, answer, comparison.part)
    where = comparison.where
    if comparison.part == GRADCHECK and isinstance(got, str):
        return replace(comparison, headline=f"In {where}: {gradcheck_words(got)}", evidence=())
    name = comparison.part[len(PREFIX) :]
    if comparison.part.startswith(PREFIX) and got is None and not spec.by_hand:
        return replace(
            comparison,
            headline=(
                f"In {where}: keep {name} in the autograd graph: after backward, {name}.grad "
                f"is None, so the output of {entry} does not depend on {name} through torch "
                "operations (.detach(), .item(), .tolist(), numpy or torch.no_grad() cut the "
                "graph)."
            ),
        )
    return comparison


def gradcheck_words(verdict: str) -> str:
    """What a learner is told of a gradcheck verdict (:func:`checked`'s)."""
    if verdict == UNCHECKED:
        return (
            "make your function run under torch.autograd.gradcheck as a plain function of its "
            "float64 inputs, returning a tensor: the check could not read its forward and "
            "backward there (leave torch's own functions as they are)."
        )
    if verdict == UNSTEADY:
        return (
            "make your forward give the same output for the same input: under "
            "torch.autograd.gradcheck, in float64, its outputs a step of 1e-06 from the "
            "inputs disagree with its output at them (a forward that changes its inputs or "
            "draws random numbers, or torch's own functions replaced)."
        )
    if verdict.startswith(PREFIX):
        name, _, where = verdict[len(PREFIX) :].partition(" at ")
        at = f" (most at {name}{where})" if where else ""
        return (
            f"make your backward's gradient of {name} agree with your forward: "
            "torch.autograd.gradcheck, in float64, finds it differs from the finite "
            f"differences of your forward{at}. A forward or backward that computes in float32 "
            "(.float(), dtype=torch.float32) fails it too: keep the inputs' dtype."
        )
    return (
        "make your function run under torch.autograd.gradcheck, in float64: there it "
        f"{verdict}. Keep the inputs' dtype (no .float() or torch.float32 inside)."
    )


def reference_problem(spec: GradientSpec, names: tuple[str, ...], answer: Any) -> str | None:
    """Why the reference's answer cannot be a gradient case's expected value (it fails its
    own gradcheck), or None."""
    if not spec.gradcheck:
        return None
    verdict = _part(names, answer, GRADCHECK)
    if verdict == PASSED:
        return None
    return f"the reference fails gradcheck: {verdict}"


def shown_upstream(spec: GradientSpec) -> str:
    """The call text's last argument for a by-hand lesson (``dY=torch.randn(...)``)."""
    return f"{spec.upstream}={upstream_text(spec)}" if spec.upstream else ""


class Drawn:
    """The upstream gradient among a case's inputs as a learner reads them."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def __repr__(self) -> str:
        return f"<drawn by the grader: torch.randn, seed {self.seed}>"


def shown_inputs(spec: GradientSpec | None, inputs: dict[str, Any]) -> dict[str, Any]:
    """A case's inputs as a learner's failure lists them: a by-hand lesson's drawn upstream
    gradient too, last, as the learner's function receives it."""
    if spec is None or spec.upstream is None:
        return inputs
    return {**inputs, spec.upstream: Drawn(spec.seed)}
