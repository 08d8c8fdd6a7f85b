"""Known wrong answers to "Causal attention", one per watch-out."""

import math

import torch
import torch.nn.functional as F


def _tensors(Q, K, V):
    return (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))


def _scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def no_mask(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    return F.scaled_dot_product_attention(q, k, v).tolist()


def diagonal_masked_too(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    time = q.shape[0]
    hidden = torch.triu(torch.ones(time, time, dtype=torch.bool))  # diagonal included
    weights = torch.softmax(_scores(q, k).masked_fill(hidden, float("-inf")), dim=-1)
    return (weights @ v).tolist()


def masked_after_softmax(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    time = q.shape[0]
    weights = torch.softmax(_scores(q, k), dim=-1)
    weights = weights * torch.tril(torch.ones(time, time, dtype=torch.float64))
    return (weights @ v).tolist()


def _causal(q, k, scores):
    time = q.shape[0]
    later = torch.triu(torch.ones(time, time, dtype=torch.bool), diagonal=1)
    return scores.masked_fill(later, float("-inf"))


def softmax_over_queries(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    weights = torch.softmax(_causal(q, k, _scores(q, k)), dim=-2)
    return (weights @ v).tolist()


def masked_with_zero(Q, K, V):
    q, k, v = _tensors(Q, K, V)
    time = q.shape[0]
    later = torch.triu(torch.ones(time, time, dtype=torch.bool), diagonal=1)
    weights = torch.softmax(_scores(q, k).masked_fill(later, 0.0), dim=-1)
    return (weights @ v).tolist()


def scores_divided_by(Q, K, V, divisor):
    """Causal attention whose scores are divided by *divisor*; fitted by the grader."""
    q, k, v = _tensors(Q, K, V)
    scores = _causal(q, k, q @ k.transpose(-2, -1) / divisor)
    return (torch.softmax(scores, dim=-1) @ v).tolist()
