"""The author's answer to "Causal attention"."""

import torch
import torch.nn.functional as F


def solve(Q, K, V):
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    # is_causal=True hides every later token: row t only attends to tokens 0..t.
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
