"""Known wrong answers to "The outer product, by broadcasting", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def b_outer_a(a, b):
    # The None on the wrong input: Tensor-Puzzles' own broadcasting figure pairs arange(4)
    # with arange(5)[:, None], the second vector as the column, and copying that pattern puts
    # b down the rows. The result is [j, i], the transpose of the outer product (its spec,
    # out[i][j] = a[i] * b[j], fixes which vector gives the rows).
    return b[:, None] * a[None, :]


def through_float_ones(a, b):
    # Stretching a by hand with torch.ones, whose default dtype is float32: an int64 tensor
    # times a float32 one promotes to float32 (torch's type promotion), so the answer has the
    # right values and the wrong dtype. Tensor-Puzzles' rules ban torch.ones for this kind
    # of detour: broadcasting does the stretching.
    return a[:, None] * torch.ones(len(b)) * b[None, :]


def broadcast_sum(a, b):
    # The broadcasting example every tutorial starts from is a sum: Tensor-Puzzles draws
    # "a + b" for a row and a column before its first puzzle. Kept as +, it gives the right
    # shape and the wrong values.
    return a[:, None] + b[None, :]


def with_torch_outer(a, b):
    # The right answer the way the lesson's rule no-outer forbids.
    return torch.outer(a, b)


def with_a_loop(a, b):
    # The right answer the way the lesson's rule no-loop forbids: entry by entry.
    out = torch.zeros(len(a), len(b), dtype=torch.int64)
    for r in range(len(a)):
        out[r] = a[r] * b
    return out
