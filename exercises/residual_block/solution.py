"""A pre-norm residual block: your solution goes here.

Check it with:  pytest exercises/residual_block
"""

import math  # noqa: F401  (you may need it)

import torch  # noqa: F401  (you will need it)


def solve(x, weights, n_head):
    """One pre-norm GPT block: y = x + attn(ln_1(x)); then y + mlp(ln_2(y)).

    x: a float32 tensor [B, T, C].
    weights: a dict name -> float32 tensor, one block's state dict in nn.Linear's layout
        ([out, in]) under GPT-2's names (ln_1.weight, attn.c_attn.weight, ...; see the task).
    n_head: the number of attention heads (C is divisible by it).
    Return a float32 tensor [B, T, C].
    """
    raise NotImplementedError
