"""Known-correct alternatives to reference.py for "Rotary position embeddings (RoPE)".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch


def complex_numbers(x, positions, theta):
    """Meta's LLaMA way: each pair as a complex number, multiplied by e^(i * angle)."""
    D = x.shape[-1]
    freqs = 1.0 / (theta ** (torch.arange(0, D, 2).float() / D))
    angles = torch.outer(positions.float(), freqs)
    rotation = torch.polar(torch.ones_like(angles), angles)
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * rotation).flatten(-2)


def in_float32_with_repeat_interleave(x, positions, theta):
    """cos and sin tables [T, D] with each frequency repeated in place, all in float32."""
    D = x.shape[-1]
    freqs = theta ** (-torch.arange(0, D, 2, dtype=torch.float32) / D)
    angles = (positions.float()[:, None] * freqs[None, :]).repeat_interleave(2, dim=-1)
    swapped = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * torch.cos(angles) + swapped * torch.sin(angles)


def rotation_matrices(x, positions, theta):
    """A [T, D, D] block-diagonal rotation matrix per token, applied with einsum."""
    D = x.shape[-1]
    T = positions.shape[0]
    R = torch.zeros(T, D, D, dtype=torch.float64)
    for t in range(T):
        for i in range(D // 2):
            angle = torch.tensor(float(positions[t]) * theta ** (-2.0 * i / D))
            c, s = torch.cos(angle), torch.sin(angle)
            R[t, 2 * i, 2 * i], R[t, 2 * i, 2 * i + 1] = c, -s
            R[t, 2 * i + 1, 2 * i], R[t, 2 * i + 1, 2 * i + 1] = s, c
    return torch.einsum("tij,htj->hti", R, x.double()).float()
