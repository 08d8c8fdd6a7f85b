"""Multi-head causal self-attention as a module: your solution goes here.

Check it with:  pytest exercises/attention_module
"""

import torch  # noqa: F401  (you will need it)
from torch import nn


class CausalSelfAttention(nn.Module):
    """The multi-head causal self-attention of a GPT block.

    n_embd: the width C of each token's vector; n_head: the number of heads (C % n_head == 0).
    Its parameters are c_attn (nn.Linear(C, 3 * C): q, k and v, in that order) and c_proj
    (nn.Linear(C, C)), nothing else in its state dict.
    """

    def __init__(self, n_embd, n_head):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        """Return y, a float32 tensor [B, T, C], for x [B, T, C]; leave x as it is."""
        raise NotImplementedError
