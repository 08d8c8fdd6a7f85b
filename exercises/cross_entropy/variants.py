"""Known-correct alternatives to reference.py for "A numerically stable cross-entropy".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch
import torch.nn.functional as F


def torch_cross_entropy(logits, targets, ignore_index):
    """PyTorch's own loss, which the task asks learners not to call: the yardstick."""
    return F.cross_entropy(logits, targets, ignore_index=ignore_index)


def torch_logsumexp(logits, targets, ignore_index):
    """torch.logsumexp for the log-sum-exp, a masked sum divided by the kept count."""
    keep = targets != ignore_index
    safe = torch.where(keep, targets, torch.zeros_like(targets))
    losses = torch.logsumexp(logits, dim=-1) - logits.gather(1, safe.unsqueeze(1)).squeeze(1)
    return (losses * keep).sum() / keep.sum()


def in_float64(logits, targets, ignore_index):
    """The same steps in float64, cast back to float32."""
    x = logits.double()
    m = x.max(dim=-1, keepdim=True).values
    lse = m.squeeze(1) + (x - m).exp().sum(dim=-1).log()
    keep = targets != ignore_index
    kept = x[keep]
    losses = lse[keep] - kept[torch.arange(kept.shape[0]), targets[keep]]
    return losses.mean().float()
