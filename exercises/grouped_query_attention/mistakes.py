"""Known wrong answers to "Grouped-query attention", one per watch-out."""

import torch
import torch.nn.functional as F


def _tensors(Q, K, V):
    return (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))


def tiled_instead_of_interleaved(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    group = q.shape[0] // k.shape[0]
    return F.scaled_dot_product_attention(q, k.repeat(group, 1, 1), v.repeat(group, 1, 1)).tolist()


def unasked_causal_mask(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    group = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()


def scores_not_scaled(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    group = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return (weights @ v).tolist()


def softmax_over_queries(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    group = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return (torch.softmax(scores, dim=-2) @ v).tolist()


def scores_divided_by(Q, K, V, divisor):
    """Grouped attention whose scores are divided by *divisor*; fitted by the grader."""
    q, k, v = _tensors(Q, K, V)
    group = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    weights = torch.softmax(q @ k.transpose(-2, -1) / divisor, dim=-1)
    return (weights @ v).tolist()
