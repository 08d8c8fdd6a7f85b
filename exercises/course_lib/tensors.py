"""Chapter 1's broadcasting puzzles, solved: each is one comparison or product of two aranges
(or vectors) broadcast against each other, with no loop."""

import torch


def outer(a, b):
    """The outer product of int vectors a [i] and b [j]: out[i, j] = a[i] * b[j], int64 [i, j]."""
    return a[:, None] * b[None, :]


def eye(n):
    """The n x n identity matrix as int64: 1 where the row equals the column, 0 elsewhere."""
    rows = torch.arange(n)[:, None]
    return (rows == torch.arange(n)).long()


def triu(n):
    """The n x n upper triangle of ones as int64: 1 where the row is at most the column."""
    rows = torch.arange(n)[:, None]
    return (rows <= torch.arange(n)).long()
