"""The author's answer to "Token and position embeddings"."""

import torch


def solve(idx, wte, wpe):
    T = idx.shape[1]
    # 1. Look up each token's row of the token table: [B, T] ids -> [B, T, C].
    tok = wte[idx]
    # 2. The position table's first T rows, one per position 0 .. T-1: [T, C].
    pos = wpe[torch.arange(T)]
    # 3. Add them: [T, C] broadcasts over the batch, so every sequence gets the same positions.
    return tok + pos
