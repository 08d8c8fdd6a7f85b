"""Known-correct alternatives to reference.py for "Linear layer backward".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch


def with_einsum(x, W, b, dY):
    """The three sums written as einsum, index by index."""
    dx = torch.einsum("no,oi->ni", dY, W)
    dW = torch.einsum("no,ni->oi", dY, x)
    db = torch.einsum("no->o", dY)
    return dx, dW, db


def row_by_row(x, W, b, dY):
    """A loop over the rows, adding each row's outer product into dW and db."""
    dW = torch.zeros_like(W)
    db = torch.zeros_like(b)
    rows = []
    for n in range(x.shape[0]):
        rows.append(W.T @ dY[n])
        dW += torch.outer(dY[n], x[n])
        db += dY[n]
    return torch.stack(rows), dW, db


def with_matmul_of_transposes(x, W, b, dY):
    """dW as the transpose of x.T @ dY, which is the same product."""
    return dY @ W, (x.T @ dY).T, dY.sum(dim=0)
