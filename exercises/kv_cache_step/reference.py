"""The author's answer to "One step with a KV cache"."""

import torch
import torch.nn.functional as F


def solve(q, k, v, K_cache, V_cache):
    def t(x):
        return torch.tensor(x, dtype=torch.float64)

    # The new token's query, key and value: [heads, width] -> [heads, 1, width].
    q_new, k_new, v_new = (t(x).unsqueeze(1) for x in (q, k, v))
    # Grow the caches along time (dimension 1) by the new token.
    keys = torch.cat([t(K_cache), k_new], dim=1)
    values = torch.cat([t(V_cache), v_new], dim=1)
    # The new token is the latest one: it may see every cached token and itself, no mask.
    out = F.scaled_dot_product_attention(q_new, keys, values).squeeze(1)
    return out.tolist(), keys.tolist(), values.tolist()
