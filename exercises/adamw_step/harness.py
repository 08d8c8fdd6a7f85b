"""How the AdamW lesson drives your AdamW (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. Row i of
start is the first value of parameter i; frozen[i] says parameter i is frozen (its .grad stays
None). The harness builds one AdamW over the parameters, then for each step s sets each
parameter's .grad to a fresh copy of grads[s][i], calls step(), records every parameter and
calls zero_grad() (after which each .grad must be None or zeros). The observables are the
parameters after each step and, after the last, each parameter's state in optimizer.state[p]:
exp_avg, exp_avg_sq and step (zeros and 0 for a parameter with no state, a frozen one).
"""

import torch

from pytest_lessons.harness import LessonFailure


def _state(optimizer, p, name):
    try:
        state = optimizer.state.get(p)
    except (AttributeError, TypeError):
        raise LessonFailure(
            "Keep each parameter's state in optimizer.state, a dict keyed by the parameter "
            "(self.state[p] = {...}), as torch.optim does: the lesson reads the moving "
            "averages and the step count there."
        ) from None
    if state is None or len(state) == 0:
        return None
    if name not in state:
        raise LessonFailure(
            f'Name the entries of self.state[p] "step", "exp_avg" and "exp_avg_sq", as '
            f"torch.optim.AdamW does: the lesson reads them by name, and yours has no "
            f'"{name}" (it has {", ".join(repr(k) for k in state)}).'
        )
    return state[name]


def _average(value, p, name):
    if value is None:
        return torch.zeros_like(p)
    try:
        tensor = torch.as_tensor(value).detach().clone().float()
    except (TypeError, ValueError, RuntimeError):
        tensor = None
    if tensor is None or tensor.shape != p.shape:
        raise LessonFailure(
            f'Keep self.state[p]["{name}"] as a tensor shaped like its parameter '
            f"({list(p.shape)}), one average per value: yours is "
            + (
                f"of shape {list(tensor.shape)}."
                if tensor is not None
                else f"a {type(value).__name__}."
            )
        )
    return tensor


def drive(learner, start, grads, frozen, lr, beta1, beta2, eps, weight_decay):
    params = [
        torch.nn.Parameter(row.clone(), requires_grad=not is_frozen)
        for row, is_frozen in zip(start, frozen)
    ]
    optimizer = learner.AdamW(
        params, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay
    )
    after = []
    for step_grads in grads:
        for p, g, is_frozen in zip(params, step_grads, frozen):
            p.grad = None if is_frozen else g.clone()
        optimizer.step()
        after.append(torch.stack([p.detach().clone() for p in params]))
        optimizer.zero_grad()
        for p in params:
            if p.grad is not None and bool((p.grad != 0).any()):
                raise LessonFailure(
                    "Make zero_grad clear every gradient (p.grad = None, or p.grad.zero_()): "
                    "after your zero_grad a gradient still holds the last step's values, "
                    "which the next backward pass would add to."
                )
    exp_avg, exp_avg_sq, steps = [], [], []
    for p in params:
        exp_avg.append(_average(_state(optimizer, p, "exp_avg"), p, "exp_avg"))
        exp_avg_sq.append(_average(_state(optimizer, p, "exp_avg_sq"), p, "exp_avg_sq"))
        t = _state(optimizer, p, "step")
        try:
            steps.append(0 if t is None else int(float(t)))
        except (TypeError, ValueError):
            raise LessonFailure(
                'Keep self.state[p]["step"] as a number, the steps this parameter has taken: '
                f"yours is a {type(t).__name__}."
            ) from None
    return {
        "params": torch.stack(after),
        "exp_avg": torch.stack(exp_avg),
        "exp_avg_sq": torch.stack(exp_avg_sq),
        "step": steps,
    }
