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


def split_by_heads(X, heads):
    # torch.split takes the size of each piece, TensorFlow's tf.split the number of pieces:
    # a port of tf.split(x, heads, axis=-1) cuts pieces of `heads` numbers, not `heads` pieces.
    x = _x(X)
    return torch.stack(torch.split(x, heads, dim=-1)).tolist()


def batched_transpose(X, heads):
    # Code written for a batch, x.view(B, T, heads, width).transpose(1, 2), used on X, which
    # has no batch dimension: the transpose swaps heads with width instead of time with heads.
    x = _x(X)
    time = x.shape[0]
    return x.reshape(time, heads, -1).transpose(1, 2).tolist()
