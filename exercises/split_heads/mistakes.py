"""Known wrong answers to "Split into attention heads", one per watch-out."""

import torch


def _x(X):
    return torch.tensor(X, dtype=torch.float64)


def reshape_straight_to_heads(X, heads):
    x = _x(X)
    time = x.shape[0]
    return x.reshape(heads, time, -1).tolist()


def heads_as_last_axis(X, heads):
    x = _x(X)
    time = x.shape[0]
    return x.reshape(time, -1, heads).permute(2, 0, 1).tolist()


def no_transpose(X, heads):
    x = _x(X)
    time = x.shape[0]
    return x.reshape(time, heads, -1).tolist()
