"""Known-correct alternatives to reference.py for "Pick each target's log-probability".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch
import torch.nn.functional as F


def gather_squeezed(logprobs, targets):
    """torch.gather along dim 1 with an [N, 1] index, then the index's axis dropped."""
    return torch.gather(logprobs, 1, targets.unsqueeze(1)).squeeze(1)


def take_along_dim(logprobs, targets):
    """torch.take_along_dim, NumPy's take_along_axis: the same pick as gather."""
    return torch.take_along_dim(logprobs, targets[:, None], dim=1)[:, 0]


def one_hot_sum(logprobs, targets):
    """A one-hot mask of the targets times logprobs, summed over the vocabulary: every other
    entry adds a zero, so the sum is the picked value exactly."""
    mask = F.one_hot(targets, logprobs.shape[1]).to(logprobs.dtype)
    return (logprobs * mask).sum(dim=1)


def flat_index(logprobs, targets):
    """The [N, V] table read as one row of N * V values: row i, column t is entry i * V + t."""
    rows = torch.arange(len(targets))
    return logprobs.reshape(-1)[rows * logprobs.shape[1] + targets]
