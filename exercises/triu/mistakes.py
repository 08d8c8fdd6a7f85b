"""Known wrong answers to "The upper triangle, by broadcasting", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def lower_triangle(n):
    # The comparison turned round, >= for <=: Tensor-Puzzles' triu spec keeps out[i][j] = 1
    # "if i <= j", and its figures draw rows down and columns across; with the axes read the
    # other way the triangle flips. The same tril/triu mix-up as karpathy/nanoGPT#170, whose
    # causal mask is torch.tril.
    return (torch.arange(n)[:, None] >= torch.arange(n)).long()


def diagonal_left_out(n):
    # A strict comparison: r < c drops the diagonal, torch.triu(..., diagonal=1), the blocked
    # triangle of a causal mask (masked_fill with triu(diagonal=1), as the causal_mask
    # lesson's watch-outs cite). Tensor-Puzzles' spec includes i == j.
    return (torch.arange(n)[:, None] < torch.arange(n)).long()


def booleans(n):
    # The comparison returned as it is, a bool tensor: srush/Tensor-Puzzles#9, where the
    # maintainer multiplies a comparison by 1 to make numbers of it.
    return torch.arange(n)[:, None] <= torch.arange(n)


def with_torch_triu(n):
    # The right answer the way the lesson's rule no-triu forbids.
    return torch.triu(torch.ones(n, n, dtype=torch.int64))


def with_a_loop(n):
    # The right answer the way the lesson's rule no-loop forbids: entry by entry.
    out = torch.zeros(n, n, dtype=torch.int64)
    for r in range(n):
        out[r, r:] = 1
    return out
