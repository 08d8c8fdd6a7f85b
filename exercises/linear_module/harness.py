"""How the Linear lesson drives your Linear (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. It builds
your Linear(in_features, out_features, bias=has_bias) from the shape of the case's weight,
checks what torch would (an nn.Module; weight and bias as nn.Parameter, in state_dict() under
torch's names and shapes; no bias when bias=False; the initial values in nn.Linear's range),
loads the case's weight (and bias) with a strict load_state_dict, calls it on x and returns
what forward returned. x must be as it was after the call.
"""

import math

import torch

from pytest_lessons.harness import LessonFailure, check_parameters, load_strict, snapshot, unchanged


def _registered(layer, names):
    parameters = dict(layer.named_parameters())
    buffers = dict(layer.named_buffers())
    for name in names:
        if name in parameters:
            continue
        value = getattr(layer, name, None)
        if name in buffers:
            kind = "a buffer (register_buffer), which an optimizer never trains"
        elif isinstance(value, torch.Tensor):
            kind = (
                "a plain tensor attribute, which is in neither parameters() nor state_dict(): "
                "an optimizer never updates it and load_state_dict never fills it"
            )
        else:
            continue  # check_parameters names what is missing
        raise LessonFailure(
            f"Wrap `{name}` in torch.nn.Parameter (self.{name} = torch.nn.Parameter(...)): "
            f"in your Linear it is {kind}."
        )


def _initial_values(layer, in_features):
    bound = 1.0 / math.sqrt(in_features)
    for name, value in layer.named_parameters():
        value = value.detach()
        if not torch.isfinite(value).all():
            raise LessonFailure(
                f"Give `{name}` initial values, for example with torch.nn.init.uniform_: your "
                "Linear's holds NaN or infinity (torch.empty leaves whatever memory held)."
            )
        if value.abs().max().item() > bound * (1 + 1e-6):
            raise LessonFailure(
                f"Draw the initial `{name}` uniformly between -1/sqrt(in_features) and "
                f"1/sqrt(in_features) (here ±{bound:.4g}), as nn.Linear does: yours reaches "
                f"{value.abs().max().item():.4g}, so each output starts larger the more inputs "
                "it sums."
            )
    weight = layer.weight.detach()
    if weight.numel() > 1 and bool((weight == weight.flatten()[0]).all()):
        raise LessonFailure(
            "Draw the initial weight at random, between -1/sqrt(in_features) and "
            "1/sqrt(in_features): every entry of yours is the same, so every output gets the "
            "same gradient and they never become different."
        )


def drive(learner, x, weight, bias, has_bias):
    out_features, in_features = weight.shape
    layer = learner.Linear(in_features, out_features, bias=has_bias)
    if not isinstance(layer, torch.nn.Module):
        raise LessonFailure(
            "Make Linear a subclass of torch.nn.Module (class Linear(torch.nn.Module), with "
            f"super().__init__() first): yours is a {type(layer).__name__}."
        )
    names = ["weight", "bias"] if has_bias else ["weight"]
    _registered(layer, names)
    if not has_bias and getattr(layer, "bias", None) is not None:
        raise LessonFailure(
            "With bias=False, set self.bias = None (or self.register_parameter('bias', None)): "
            "your Linear still has a bias, and nn.Linear(..., bias=False) has only a weight, "
            "so the weights saved from one do not load into yours."
        )
    shapes = {"weight": [out_features, in_features], "bias": [out_features]}
    stored = getattr(layer, "weight", None)
    transposed = isinstance(stored, torch.Tensor) and list(stored.shape) == [
        in_features,
        out_features,
    ]
    if in_features != out_features and transposed:
        raise LessonFailure(
            f"Store weight as [out_features, in_features], here {shapes['weight']}, and "
            "multiply by its transpose, x @ self.weight.T: yours is [in_features, "
            f"out_features], {[in_features, out_features]}, so the weights of an nn.Linear "
            "do not load into it."
        )
    check_parameters(layer, {name: shapes[name] for name in names}, "Linear")
    _initial_values(layer, in_features)
    state = {"weight": weight, "bias": bias} if has_bias else {"weight": weight}
    load_strict(layer, state, "Linear")
    before = snapshot(x)
    with torch.no_grad():
        y = layer(x)
    unchanged(before, x, "x", "your forward")
    return y
