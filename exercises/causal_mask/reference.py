"""The author's answer to "The causal mask"."""

import torch


def solve(T):
    # 1. A [T, T] matrix of True, boolean from the start.
    ones = torch.ones(T, T, dtype=torch.bool)
    # 2. Keep the diagonal and below: row i may attend to columns j <= i.
    return torch.tril(ones)
