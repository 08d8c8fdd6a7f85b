"""Known-correct alternatives to reference.py for "Warm-up and cosine learning rate".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch


def lerp_with_min_and_max(it, max_lr, min_lr, warmup, cycle):
    """The decay as a blend of the two rates, its progress clamped to [0, 1] with min and max."""
    if it < warmup:
        return it / warmup * max_lr
    progress = 1.0 if it >= cycle else min(max((it - warmup) / (cycle - warmup), 0.0), 1.0)
    weight = (math.cos(math.pi * progress) + 1.0) / 2.0
    return weight * max_lr + (1.0 - weight) * min_lr


def torch_float32(it, max_lr, min_lr, warmup, cycle):
    """The reference's steps with float32 torch tensors, the answer read with .item()."""
    if it < warmup:
        return (torch.tensor(max_lr) * it / warmup).item()
    if it >= cycle:
        return float(min_lr)
    progress = torch.tensor((it - warmup) / (cycle - warmup))
    factor = 0.5 * (1.0 + torch.cos(torch.pi * progress))
    return (min_lr + factor * (max_lr - min_lr)).item()


def squared_cosine_of_half_the_angle(it, max_lr, min_lr, warmup, cycle):
    """The factor 0.5 * (1 + cos(pi * p)) written as cos(pi * p / 2) ** 2, the same number."""
    if it < warmup:
        return max_lr * (it / warmup)
    if it >= cycle:
        return min_lr
    p = (it - warmup) / (cycle - warmup)
    return min_lr + math.cos(math.pi * p / 2) ** 2 * (max_lr - min_lr)
