"""The author's answer to "Grouped-query attention"."""

import torch
import torch.nn.functional as F


def solve(Q, K, V):
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    group = q.shape[0] // k.shape[0]
    # Query heads 0..group-1 share key/value head 0, the next group shares head 1, ...:
    # repeat each key/value head `group` times in place.
    k = k.repeat_interleave(group, dim=0)
    v = v.repeat_interleave(group, dim=0)
    return F.scaled_dot_product_attention(q, k, v).tolist()
