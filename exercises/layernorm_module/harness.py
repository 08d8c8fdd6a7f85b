"""How the LayerNorm lesson drives your LayerNorm (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. It builds
your LayerNorm(C, eps=eps) for x's last axis (LayerNorm(C) when the case's eps is 1e-5, the
default), checks what torch would (an nn.Module; weight and bias as nn.Parameter of shape [C]
in state_dict(); the initial values of nn.LayerNorm, ones and zeros), loads the case's weight
and bias with a strict load_state_dict, calls it on x and returns what forward returned. x
must be as it was after the call: a block adds it back to the norm's output.
"""

import torch

from pytest_lessons.harness import LessonFailure, check_parameters, load_strict, snapshot, unchanged

DEFAULT_EPS = 1e-5


def _initial_values(norm):
    # Every parameter that starts wrong is named in one failure: told only of the weight, a
    # learner who fixed it would hear of the bias on the next run.
    wrong = []
    for name, start, words in (("weight", 1.0, "ones"), ("bias", 0.0, "zeros")):
        value = getattr(norm, name).detach()
        if not bool((value == start).all()):
            shown = [round(v, 4) for v in value.flatten()[:4].tolist()]
            more = "..." if value.numel() > 4 else ""
            wrong.append((name, words, f"{shown}{more}"))
    if not wrong:
        return
    starts = " and ".join(f"`{name}` as {words}" for name, words, _ in wrong)
    calls = " and ".join(f"torch.{words}(normalized_shape)" for _, words, _ in wrong)
    yours = "; ".join(f"`{name}` starts as {shown}" for name, _, shown in wrong)
    raise LessonFailure(
        f"Start {starts}, {calls}, as nn.LayerNorm does: a new norm then only normalises, and "
        f"training learns the scale and shift from there. Yours: {yours}.",
        check="initial-values",
    )


def drive(learner, x, weight, bias, eps):
    width = x.shape[-1]
    # The default eps is part of the signature torch's LayerNorm has: rely on it where it
    # is the case's eps.
    norm = learner.LayerNorm(width) if eps == DEFAULT_EPS else learner.LayerNorm(width, eps=eps)
    if not isinstance(norm, torch.nn.Module):
        raise LessonFailure(
            "Make LayerNorm a subclass of torch.nn.Module (class LayerNorm(torch.nn.Module), "
            f"with super().__init__() first): yours is a {type(norm).__name__}.",
            check="not-a-module",
        )
    # weight and bias as nn.Parameter (a plain tensor or a buffer named, both at once), then
    # their names and shapes.
    check_parameters(norm, {"weight": [width], "bias": [width]}, "LayerNorm", parameters=True)
    _initial_values(norm)
    load_strict(norm, {"weight": weight, "bias": bias}, "LayerNorm")
    before = snapshot(x)
    with torch.no_grad():
        y = norm(x)
    unchanged(before, x, "x", "your forward")
    return y
