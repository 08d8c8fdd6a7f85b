"""Known-correct alternatives to reference.py for "GELU and the MLP".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch
import torch.nn.functional as F


def functional_linear_and_gelu(x, W1, b1, W2, b2):
    """F.linear for both layers and F.gelu(approximate="tanh"), as nanoGPT's MLP computes it."""
    return F.linear(F.gelu(F.linear(x, W1, b1), approximate="tanh"), W2, b2)


def nn_modules(x, W1, b1, W2, b2):
    """An nn.Sequential of Linear, GELU("tanh") and Linear, its weights copied in."""
    hidden, width = W1.shape
    mlp = torch.nn.Sequential(
        torch.nn.Linear(width, hidden),
        torch.nn.GELU(approximate="tanh"),
        torch.nn.Linear(hidden, width),
    )
    with torch.no_grad():
        mlp[0].weight.copy_(W1)
        mlp[0].bias.copy_(b1)
        mlp[2].weight.copy_(W2)
        mlp[2].bias.copy_(b2)
        return mlp(x)


def in_float64(x, W1, b1, W2, b2):
    """The reference's formula in float64, cast back to float32 at the end."""
    x, W1, b1, W2, b2 = (t.double() for t in (x, W1, b1, W2, b2))
    h = x @ W1.T + b1
    g = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h.pow(3))))
    return (g @ W2.T + b2).float()


def einsum_layers(x, W1, b1, W2, b2):
    """Both layers written with einsum over the feature axes."""
    h = torch.einsum("...c,hc->...h", x, W1) + b1
    return torch.einsum("...h,ch->...c", F.gelu(h, approximate="tanh"), W2) + b2
