"""Known wrong answers to "Combine attention heads", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import math

import torch
import torch.nn.functional as F


def _tensors(Q, K, V):
    return (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))


def reshape_without_transpose(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    out = F.scaled_dot_product_attention(q, k, v)
    return out.reshape(q.shape[1], -1).tolist()


def with_causal_mask(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return out.transpose(0, 1).reshape(q.shape[1], -1).tolist()


def scores_not_scaled(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return (weights @ v).transpose(0, 1).reshape(q.shape[1], -1).tolist()


def softmax_over_queries(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-2)
    return (weights @ v).transpose(0, 1).reshape(q.shape[1], -1).tolist()


def scores_divided_by(Q, K, V, divisor):
    """Attention whose scores are divided by *divisor* instead of √width; the grader fits the
    divisor to the learner's answer (watch-out "wrong-scale")."""
    q, k, v = _tensors(Q, K, V)
    weights = torch.softmax(q @ k.transpose(-2, -1) / divisor, dim=-1)
    return (weights @ v).transpose(0, 1).reshape(q.shape[1], -1).tolist()
