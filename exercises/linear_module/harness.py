"""How the Linear lesson drives your Linear (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. It builds
your Linear(in_features, out_features, bias=has_bias) from the shape of the case's weight,
checks what torch would (an nn.Module; weight and bias as nn.Parameter, in state_dict() under
torch's names and shapes; no bias when bias=False; initial values at random, on nn.Linear's
scale: within the range the task states),
loads the case's weight (and bias) with a strict load_state_dict, calls it on x and returns
what forward returned. x must be as it was after the call.
"""

import math

import torch

from pytest_lessons.harness import (
    LessonFailure,
    check_initial,
    check_parameters,
    load_strict,
    snapshot,
    unchanged,
)

#: The initial values the lesson accepts, in units of 1/sqrt(in_features): every value within
#: ±6, the weight's standard deviation from 0.2 to 2. nn.Linear draws both uniformly within
#: ±1 (a standard deviation of 0.58); xavier_uniform_, kaiming_normal_ and
#: randn / sqrt(in_features) are inside the range too.
WITHIN = 6.0
SPREAD = (0.2, 2.0)


def _initial_values(layer, in_features):
    # Every parameter that starts out of range is told in one failure: told only of the
    # weight, a learner who fixed it would hear of the bias on the next run.
    scale = math.sqrt(in_features)
    found = []
    for name, _ in layer.named_parameters():
        try:
            check_initial(
                layer,
                name,
                "Linear",
                within=WITHIN,
                spread=SPREAD if name == "weight" else None,
                scale=scale,
                scale_words="sqrt(in_features)",
                random=name == "weight",
            )
        except LessonFailure as failure:
            found.append(failure)
    if len(found) == 1:
        raise found[0]
    if found:
        raise LessonFailure(" Also: ".join(str(f) for f in found), check=found[0].check)


def drive(learner, x, weight, bias, has_bias):
    out_features, in_features = weight.shape
    layer = learner.Linear(in_features, out_features, bias=has_bias)
    if not isinstance(layer, torch.nn.Module):
        raise LessonFailure(
            "Make Linear a subclass of torch.nn.Module (class Linear(torch.nn.Module), with "
            f"super().__init__() first): yours is a {type(layer).__name__}.",
            check="not-a-module",
        )
    names = ["weight", "bias"] if has_bias else ["weight"]
    if not has_bias and getattr(layer, "bias", None) is not None:
        raise LessonFailure(
            "With bias=False, set self.bias = None (or self.register_parameter('bias', None)): "
            "your Linear still has a bias, and nn.Linear(..., bias=False) has only a weight, "
            "so the weights saved from one do not load into yours.",
            check="bias-kept",
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
            "do not load into it.",
            check="weight-in-out",
        )
    # Each name as nn.Parameter (a plain tensor or a buffer named, all at once), then their
    # names and shapes.
    shapes = {name: shapes[name] for name in names}
    check_parameters(layer, shapes, "Linear", parameters=True)
    _initial_values(layer, in_features)
    state = {"weight": weight, "bias": bias} if has_bias else {"weight": weight}
    load_strict(layer, state, "Linear")
    before = snapshot(x)
    with torch.no_grad():
        y = layer(x)
    unchanged(before, x, "x", "your forward")
    return y
