"""GELU and the MLP: your solution goes here.

Check it with:  pytest exercises/gelu_mlp
"""

import math  # noqa: F401  (you may need it)

import torch  # noqa: F401  (you will need it)


def solve(x, W1, b1, W2, b2):
    """The MLP of a GPT block: a linear layer, the tanh GELU, a second linear layer.

    x: a float32 tensor [..., C] (C features last).
    W1: float32 [H, C] and b1: [H], the first layer, stored as nn.Linear stores them.
    W2: float32 [C, H] and b2: [C], the second layer.
    Return a float32 tensor [..., C].
    """
    raise NotImplementedError
