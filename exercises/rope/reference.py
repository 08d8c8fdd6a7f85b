"""The author's answer to "Rotary position embeddings (RoPE)"."""

import torch


def solve(x, positions, theta):
    D = x.shape[-1]
    # 1. One frequency per pair of features: pair i (features 2i and 2i+1) turns at
    #    theta ** (-2i / D), from 1 for pair 0 down to nearly 1 / theta for the last pair.
    i = torch.arange(D // 2, dtype=torch.float64)
    freqs = theta ** (-2.0 * i / D)
    # 2. Each token's angle for each pair: its position times the pair's frequency, [T, D/2]
    #    (in float64, so that large positions lose no precision).
    angles = positions.to(torch.float64)[:, None] * freqs[None, :]
    cos, sin = torch.cos(angles), torch.sin(angles)
    # 3. The pairs are neighbours: even features a = x[..., 0::2], odd ones b = x[..., 1::2].
    a, b = x[..., 0::2].double(), x[..., 1::2].double()
    # 4. Rotate each pair (a, b) by its angle: (a cos - b sin, a sin + b cos); the [T, D/2]
    #    angles broadcast over the heads.
    rotated_a = a * cos - b * sin
    rotated_b = a * sin + b * cos
    # 5. Put each rotated pair back in its place, 2i and 2i+1, and return float32, x's dtype.
    out = torch.stack((rotated_a, rotated_b), dim=-1).flatten(-2)
    return out.to(x.dtype)
