"""The author's answer to "GELU and the MLP"."""

import math

import torch


def solve(x, W1, b1, W2, b2):
    # 1. The first layer, as nn.Linear computes it: weights stored [out, in], so x @ W1.T,
    #    plus the bias: [..., C] -> [..., H].
    h = x @ W1.T + b1
    # 2. GELU, the tanh form GPT-2 was trained with:
    #    0.5 * h * (1 + tanh(sqrt(2 / pi) * (h + 0.044715 * h**3))).
    g = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))
    # 3. The second layer back to the model width, with no activation after it:
    #    [..., H] -> [..., C].
    return g @ W2.T + b2
