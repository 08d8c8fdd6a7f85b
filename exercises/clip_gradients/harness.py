"""How the gradient-clipping lesson drives your solve (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. Row i of
grads is the gradient of parameter i, unless frozen[i] says that parameter is frozen: then it
does not require a gradient and its .grad is None (its row is not used and stays as it was).
Each parameter's .grad is a view of its row of grads, so what your solve writes into a .grad in
place lands in grads, which the grader reads back after the call (after = "updated"). The
norm solve returns is the other observable.
"""

import torch

from pytest_lessons.harness import LessonFailure


def drive(learner, grads, frozen, max_norm):
    parameters = []
    for row, is_frozen in zip(grads, frozen):
        parameter = torch.nn.Parameter(torch.zeros_like(row), requires_grad=not is_frozen)
        if not is_frozen:
            parameter.grad = row  # a view: an in-place change reaches grads
        parameters.append(parameter)
    norm = learner.solve(parameters, max_norm)
    if isinstance(norm, torch.Tensor) and norm.numel() == 1:
        norm = norm.item()
    if not isinstance(norm, (int, float)) or isinstance(norm, bool):
        raise LessonFailure(
            "Return the total norm of the gradients, before clipping, as a float (or a "
            f"one-element tensor): solve returned {type(norm).__name__}."
        )
    for parameter, is_frozen in zip(parameters, frozen):
        if is_frozen and parameter.grad is not None:
            raise LessonFailure(
                "Leave a frozen parameter's .grad as None: it has no gradient to clip, and "
                "your solve gave it one."
            )
    return {"norm": float(norm)}
