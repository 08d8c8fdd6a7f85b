"""The child's side of a gradient case: run the code forward, take its gradients, return them
as observables (see :mod:`pytest_lessons.core.gradients` for the lesson's side).

Runs in the process that runs learner code, after the arguments are built and the code is
loaded; it knows nothing of expected answers. :func:`call` stands in for the plain call of
the entry function when a job carries a ``gradients`` request:

``{"mode": "autograd", "grad": [0, 1], "seed": 3, "observe": "all", "gradcheck": true}``
    the arguments at ``grad`` (floating tensors) require grad; the entry's output is
    back-propagated with an upstream gradient drawn in its shape, and the answer is the tuple
    ``(output, grad 0, grad 1, ...)`` (``observe = "grads"``: the gradients alone), then
    gradcheck's verdict: ``"passed"`` or what failed (``"grad of x at [1, 2]"``: the input,
    and the element whose gradient is furthest from the finite differences).
``{"mode": "by_hand", "count": 3, "upstream": {"index": 3, "shape": [[0, 0], [1, 0]]}}``
    the entry is a backward: it gets the drawn upstream gradient at argument ``index`` and
    its answer, the gradients, is returned as a tuple of ``count`` (one gradient returned
    alone is put in a tuple of one).

An upstream's ``shape`` lists sizes (ints, or ``[argument, dim]``: that argument's size), or
is ``{"like": argument}``; ``"unit": true`` takes the gradient of a scalar (a loss) itself.
Exceptions learner code raises, in its forward or its backward, pass through to the caller,
which reports them as any exception of a call. Only :func:`call` imports torch, and only
when a job asks for gradients.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

#: gradcheck's own tolerances and step (float64).
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3
#: The most elements of an input probed one by one for where gradcheck failed.
MAX_PROBED = 4096


def _torch() -> Any:
    return importlib.import_module("torch")


def draw(seed: int, shape: Sequence[int], dtype: str = "float64") -> Any:
    """The upstream gradient: standard normal values in *shape* from their own generator
    seeded with *seed*, drawn in float64 (so every dtype gets the same values), then cast."""
    torch = _torch()
    generator = torch.Generator().manual_seed(int(seed))
    values = torch.randn(list(shape), generator=generator, dtype=torch.float64)
    return values.to(getattr(torch, dtype))


def _size(value: Any, dim: int) -> int:
    shape = getattr(value, "shape", None)
    if shape is None:  # nested lists
        shape, level = [], value
        while isinstance(level, list):
            shape.append(len(level))
            level = level[0] if level else None
    return int(shape[dim])


def _shape(spec: Any, arguments: Sequence[Any]) -> list[int]:
    if isinstance(spec, dict):
        return list(getattr(arguments[int(spec["like"])], "shape", ()))
    return [item if isinstance(item, int) else _size(arguments[item[0]], item[1]) for item in spec]


def call(
    function: Callable[..., Any],
    arguments: list[Any],
    request: dict[str, Any],
    spare: list[Any] | None = None,
) -> Any:
    """The observables of *function* on *arguments* under the gradient *request* (see the
    module's docstring), as plain Python values for the answer's encoding; *spare*, a second
    set of the same arguments built beside them, is gradcheck's (the call may have changed
    the first)."""
    upstream = request.get("upstream")
    if request.get("mode") == "by_hand":
        if upstream is not None:
            index = int(upstream["index"])
            shape = _shape(upstream["shape"], arguments)
            arguments[index] = draw(request["seed"], shape, upstream.get("dtype", "float64"))
        answer = function(*arguments)
        count = int(request["count"])
        if count == 1 and not (isinstance(answer, tuple) and len(answer) == 1):
            return (answer,)
        return answer
    torch = _torch()
    indices = [int(i) for i in request["grad"]]
    leaves = [arguments[i].requires_grad_(True) for i in indices]
    output = function(*arguments)
    grads: list[Any] = [None] * len(leaves)
    if isinstance(output, torch.Tensor) and output.requires_grad:
        if request.get("unit"):
            gradient = torch.ones_like(output)
        elif upstream is not None:
            shape = _shape(upstream["shape"], arguments)
            gradient = draw(request["seed"], shape, str(output.dtype).rpartition(".")[2])
        else:
            gradient = draw(request["seed"], output.shape, str(output.dtype).rpartition(".")[2])
        # The vector-Jacobian product as the gradient of one scalar, sum(output * upstream):
        # the same numbers, and torch.autograd.grad given a gradient tensor imports
        # torch.fx's symbolic shapes (sympy: 1 to 4 s in every forked child).
        scalar = (output * gradient).sum()
        found = torch.autograd.grad(scalar, leaves, allow_unused=True)
        grads = [None if g is None else g.detach() for g in found]
    if request.get("observe") == "grads":
        return tuple(grads)
    observed = [output.detach() if isinstance(output, torch.Tensor) else output, *grads]
    if request.get("gradcheck"):
        names = list(request.get("names") or [])
        verdict = gradcheck(function, spare or arguments, indices, request["seed"])
        if verdict.startswith("grad of #"):
            number, _, rest = verdict[len("grad of #") :].partition(" ")
            name = names[int(number)] if int(number) < len(names) else number
            verdict = f"grad of {name}{' ' + rest if rest else ''}"
        observed.append(verdict)
    return tuple(observed)


def named_gradients(output: Any, tensors: dict[str, Any], seed: int) -> dict[str, Any]:
    """The gradients of *output* with respect to *tensors* (name -> a tensor that requires
    grad: a module's parameters, for a harness that drives an ``nn.Module``) for an upstream
    gradient drawn in the output's shape with *seed*; None where autograd does not reach."""
    torch = _torch()
    names = list(tensors)
    if not (isinstance(output, torch.Tensor) and output.requires_grad):
        return dict.fromkeys(names)
    upstream = draw(seed, output.shape, str(output.dtype).rpartition(".")[2])
    found = torch.autograd.grad(
        (output * upstream).sum(), [tensors[n] for n in names], allow_unused=True
    )
    return {n: None if g is None else g.detach() for n, g in zip(names, found)}


def gradcheck(
    function: Callable[..., Any], arguments: Sequence[Any], indices: Sequence[int], seed: int
) -> str:
    """``torch.autograd.gradcheck`` of *function* with respect to the arguments at *indices*
    (float64: only there are its finite differences meaningful), the others held fixed:
    ``"passed"``, ``"grad of <argument number> at [i, j]"`` for the first input whose gradient
    disagrees (where, with the drawn upstream gradient, the backward is furthest from the
    finite differences of the forward), or what raised."""
    torch = _torch()
    fixed = list(arguments)
    leaves = [fixed[i].detach().clone().requires_grad_(True) for i in indices]

    def forward(*grads: Any) -> Any:
        values = list(fixed)
        for i, g in zip(indices, grads):
            values[i] = g
        return function(*values)

    try:
        torch.autograd.gradcheck(forward, tuple(leaves), eps=EPS, atol=ATOL, rtol=RTOL)
    except importlib.import_module("torch.autograd.gradcheck").GradcheckError as error:
        text = str(error)
        marker = "with respect to input "
        at = text.find(marker)
        number = int(text[at + len(marker) :].split(",")[0].split()[0]) if at >= 0 else 0
        return f"grad of #{number}{_worst(forward, leaves, number, seed)}"
    except Exception as error:  # the learner's code fails only here (a dtype it hard-codes)
        first = (str(error).splitlines() or [""])[0][:200]
        return f"raises {type(error).__name__}: {first}"
    return "passed"


def _worst(forward: Callable[..., Any], leaves: list[Any], number: int, seed: int) -> str:
    """`` at [i, j]``: the element of input *number* where the backward's vector-Jacobian
    product with a drawn upstream gradient is furthest from the forward's central difference
    (empty when it cannot be told)."""
    torch = _torch()
    try:
        output = forward(*leaves)
        upstream = draw(seed, output.shape)
        (analytic,) = torch.autograd.grad((output * upstream).sum(), leaves[number])
        base = leaves[number].detach()
        if base.numel() > MAX_PROBED:
            return ""
        worst, where = -1.0, None
        with torch.no_grad():
            for flat in range(base.numel()):
                index = list(_unravel(flat, list(base.shape)))
                step = torch.zeros_like(base).view(-1)
                step[flat] = EPS
                step = step.view(base.shape)
                args = [leaf.detach() for leaf in leaves]
                args[number] = base + step
                up = float((forward(*args) * upstream).sum())
                args[number] = base - step
                down = float((forward(*args) * upstream).sum())
                numeric = (up - down) / (2 * EPS)
                value = float(analytic.reshape(-1)[flat])
                gap = abs(value - numeric) - (ATOL + RTOL * abs(numeric))
                if math.isnan(gap) or gap > worst:
                    worst, where = (math.inf if math.isnan(gap) else gap), index
        return "" if where is None else f" at [{', '.join(str(i) for i in where)}]"
    except Exception:  # a failure here only loses the position
        return ""


def _unravel(flat: int, shape: list[int]) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return list(reversed(index))
