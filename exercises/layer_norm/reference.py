"""The author's answer to "Layer norm"."""

import torch


def solve(x, gamma, beta, eps):
    # 1. The mean of each vector, over its last axis (the C features of one token): [..., 1].
    mean = x.mean(dim=-1, keepdim=True)
    # 2. The biased variance over the same axis: the mean squared distance from the mean,
    #    divided by C, not C - 1 (correction=0; torch.var divides by C - 1 unless told).
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    # 3. Normalise: subtract the mean, divide by the square root of variance plus eps, eps
    #    inside the root, so a constant vector divides by sqrt(eps) and never by zero.
    x_hat = (x - mean) / torch.sqrt(var + eps)
    # 4. Scale and shift each feature: gamma and beta [C] broadcast over every vector.
    return x_hat * gamma + beta
