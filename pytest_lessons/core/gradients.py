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
  ``gradcheck`` when asked for (``torch.autograd.gradcheck`` on the entry, in float64).
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

import re
from dataclasses import dataclass, replace
from typing import Any

from pytest_lessons.core.compare import Comparison, split_outputs

#: What a lesson's gradient outputs are called: ``grad of x``.
PREFIX = "grad of "
#: The name of the forward's value among a lesson's outputs (autograd mode).
OUTPUT = "output"
#: The name of the gradcheck verdict among a lesson's outputs, and what it is when it passes.
GRADCHECK = "gradcheck"
PASSED = "passed"
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
    request["gradcheck"] = spec.gradcheck
    request["names"] = list(spec.grads)
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
    """What a learner is told of a gradcheck verdict (the child's
    :func:`~pytest_lessons.isolation.gradients.gradcheck`)."""
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
