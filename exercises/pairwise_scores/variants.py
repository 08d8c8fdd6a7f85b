"""Known-correct alternatives to the reference: each must pass every case, the work budget's
included."""

import torch


def cdist_squared(x, y):
    # torch.cdist's Euclidean distance, squared back.
    return torch.cdist(x, y) ** 2


def einsum_expansion(x, y):
    # The same expansion with einsum for the squared lengths and the dot products.
    x_sq = torch.einsum("nd,nd->n", x, x)[:, None]
    y_sq = torch.einsum("md,md->m", y, y)[None, :]
    return x_sq + y_sq - 2 * torch.einsum("nd,md->nm", x, y)
