"""How the training-steps lesson drives your train_step (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. Each tensor
of weights becomes a leaf parameter that requires a gradient (a frozen one's name is in
frozen: it does not, and its .grad stays None); then train_step(params, config, batch, lr) is
called once per batch, on the same params. The observables are the loss each call returned
and the position table wpe.weight after the last call.
"""

import torch

from pytest_lessons.harness import LessonFailure


def _loss(value, step):
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LessonFailure(
            "Return the step's loss as a float (loss.item(), or the one-element loss tensor): "
            f"train_step returned {type(value).__name__} at step {step + 1}."
        )
    return float(value)


def drive(learner, weights, config, batches, lr, frozen):
    params = {
        name: tensor.clone().requires_grad_(name not in frozen) for name, tensor in weights.items()
    }
    originals = dict(params)
    losses = []
    for step, batch in enumerate(batches):
        losses.append(_loss(learner.train_step(params, config, batch, lr), step))
        for name, tensor in params.items():
            if tensor is not originals[name]:
                raise LessonFailure(
                    f"Update each parameter in place (p -= lr * p.grad inside torch.no_grad()): "
                    f"after step {step + 1}, params[{name!r}] is a new tensor, so the next "
                    "step's backward() would not reach the parameter the model is made of."
                )
    return {"losses": losses, "wpe": params["wpe.weight"].detach()}
