"""Known-correct alternatives to reference.py for "Softmax and cross-entropy backward".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch
import torch.nn.functional as F


def with_one_hot(logits, targets):
    """softmax minus F.one_hot, divided by N."""
    one_hot = F.one_hot(targets, logits.shape[1]).to(logits.dtype)
    return (logits.softmax(1) - one_hot) / logits.shape[0]


def exp_over_sum(logits, targets):
    """The softmax written out, the row maximum subtracted first for large logits."""
    shifted = logits - logits.max(1, keepdim=True).values
    p = shifted.exp() / shifted.exp().sum(1, keepdim=True)
    p = p.clone()
    p[torch.arange(logits.shape[0]), targets] -= 1
    return p / logits.shape[0]


def from_log_softmax(logits, targets):
    """exp of log_softmax, with the one-hot built by scatter."""
    p = logits.log_softmax(1).exp()
    one_hot = torch.zeros_like(p).scatter_(1, targets[:, None], 1.0)
    return (p - one_hot) / len(targets)
