"""Known-correct alternatives to reference.py for "Combine attention heads".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch


def einsum_by_hand(Q, K, V):
    """Attention written out with einsum, scores scaled by √width, softmax over the keys."""
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    scores = torch.einsum("htw,hsw->hts", q, k) / math.sqrt(q.shape[-1])
    out = torch.einsum("hts,hsw->thw", torch.softmax(scores, dim=-1), v)
    return out.reshape(q.shape[1], -1).tolist()


def in_float32(Q, K, V):
    """The reference's computation in float32, torch's default dtype: what most learners write."""
    q, k, v = (torch.tensor(x, dtype=torch.float32) for x in (Q, K, V))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return out.transpose(0, 1).reshape(q.shape[1], -1).tolist()


def heads_one_by_one(Q, K, V):
    """A loop over the heads and tokens, joined with torch.cat: no reshape at all."""
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    heads = [
        torch.softmax(q[h] @ k[h].T / math.sqrt(q.shape[-1]), dim=-1) @ v[h]
        for h in range(q.shape[0])
    ]
    return torch.cat(heads, dim=-1).tolist()
