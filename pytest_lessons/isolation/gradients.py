"""The child's side of a gradient case: run the code forward, take its gradients, return them
as observables (see :mod:`pytest_lessons.core.gradients` for the lesson's side).

Runs in the process that runs learner code, after the arguments are built and the code is
loaded; it knows nothing of expected answers. :func:`call` stands in for the plain call of
the entry function when a job carries a ``gradients`` request:

``{"mode": "autograd", "grad": [0, 1], "seed": 3, "observe": "all", "gradcheck": {...}}``
    the arguments at ``grad`` (floating tensors) require grad; the entry's output is
    back-propagated with an upstream gradient drawn in its shape, and the answer is the tuple
    ``(output, grad 0, grad 1, ...)`` (``observe = "grads"``: the gradients alone), then, with
    ``gradcheck``, what a finite-difference check needs (:func:`probes`): the forward at
    inputs moved by a small step and the backward's Jacobian rows. No verdict is made here:
    this process runs learner code, which could replace ``torch.autograd.gradcheck`` or any
    other function; the grader judges the data (:func:`pytest_lessons.core.gradients.checked`).
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
from collections.abc import Callable, Sequence
from typing import Any


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
    set of the same arguments built beside them before learner code loaded, is where
    :func:`probes` starts from (the call may have changed the first)."""
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
        observed.append(probes(function, spare or arguments, indices, request["gradcheck"]))
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


def probes(
    function: Callable[..., Any],
    arguments: Sequence[Any],
    indices: Sequence[int],
    check: dict[str, Any],
) -> Any:
    """What the grader's finite-difference check of *function* needs, as data (the check and
    its verdict are the grader's: :func:`pytest_lessons.core.gradients.checked`), with respect
    to the arguments at *indices* (float64), the others held fixed. *check* is the request's
    ``{"eps": 1e-06, "rows": 4096, "entries": 65536}``.

    The output's flat elements at ``spread(m, rows)`` are the Jacobian's rows; an input's flat
    elements at ``spread(n, max(1, min(rows, entries // len(rows))))`` its columns. For each
    input, in order, a tuple ``(plus, minus, jacobian)`` of nested lists: the rows of the
    forward's output at the input moved by +eps and -eps at each column, one list per column,
    and the backward's gradient of each row at the columns, one list per row. When learner
    code raises here: ``"raises <type>: <first line>"``; None when the forward gives no tensor.
    """
    torch = _torch()
    eps = float(check["eps"])
    fixed = list(arguments)
    try:
        leaves = [fixed[i].detach().clone().requires_grad_(True) for i in indices]

        def forward(*values: Any) -> Any:
            called = list(fixed)
            for i, value in zip(indices, values):
                called[i] = value
            return function(*called)

        output = forward(*leaves)
        if not isinstance(output, torch.Tensor):
            return None
        flat = output.reshape(-1)
        rows = spread(flat.numel(), int(check["rows"]))
        limit = max(1, min(int(check["rows"]), int(check["entries"]) // max(1, len(rows))))
        # The backward of each row: its gradient with respect to every input at once.
        analytic: list[list[Any]] = []
        for row in rows:
            if flat.requires_grad:
                found = torch.autograd.grad(flat[row], leaves, retain_graph=True, allow_unused=True)
            else:  # nothing reaches the inputs: their gradients are zero, as gradcheck takes it
                found = (None,) * len(leaves)
            analytic.append([None if g is None else g.detach().reshape(-1) for g in found])
        answer = []
        with torch.no_grad():
            for k, base in enumerate(leaf.detach() for leaf in leaves):
                columns = spread(base.numel(), limit) if rows else []
                moved: tuple[list[Any], list[Any]] = ([], [])
                for column in columns:
                    for step, into in ((eps, moved[0]), (-eps, moved[1])):
                        values = [leaf.detach() for leaf in leaves]
                        shifted = base.clone().reshape(-1)
                        shifted[column] += step
                        values[k] = shifted.reshape(base.shape)
                        value = forward(*values)
                        into.append(value.detach().reshape(-1)[rows].double().tolist())
                jacobian = [
                    grads[k][columns].tolist()
                    if grads[k] is not None and columns
                    else [0.0] * len(columns)
                    for grads in analytic
                ]
                answer.append((moved[0], moved[1], jacobian))
        return tuple(answer)
    except Exception as error:  # the learner's code fails only here (a dtype it hard-codes)
        first = (str(error).splitlines() or [""])[0][:200]
        return f"raises {type(error).__name__}: {first}"


def spread(count: int, limit: int) -> list[int]:
    """The flat positions probed of *count* elements: all of them up to *limit*, else *limit*
    of them spread evenly (the grader's :func:`pytest_lessons.core.gradients.spread`, which
    must agree)."""
    if count <= limit:
        return list(range(count))
    return [step * count // limit for step in range(limit)]
