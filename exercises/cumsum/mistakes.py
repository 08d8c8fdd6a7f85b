"""Known wrong answers to "The cumulative sum, from a triangle", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch
from course_lib import triu


def triangle_times_a(a):
    # The product the other way round: triu(n) @ a sums each row of the triangle, a[k] to
    # a[n - 1], a reverse cumulative sum. srush/Tensor-Puzzles#7, on the cumsum puzzle: the
    # maintainer's advice is to find "a special vector or matrix" and multiply, and which
    # side of the product a goes on decides the direction; NVIDIA/TensorRT-Incubator#164
    # writes cumsum as x.T @ triu(ones) for the same reason.
    return triu(len(a)) @ a


def before_each_entry(a):
    # An exclusive scan: the triangle without its diagonal (rows < columns) adds a[0] to
    # a[k - 1]. Tensor-Puzzles' cumsum spec sets out[i] = total + a[i] before adding a[i] to
    # the total, so a[i] is counted in its own entry.
    strict = (torch.arange(len(a))[:, None] < torch.arange(len(a))).long()
    return a @ strict


def total_everywhere(a):
    # A matrix of all ones in place of the triangle: every entry is the whole sum, the
    # Tensor-Puzzles "sum" puzzle's answer (a @ ones) broadcast over the positions.
    return a @ torch.ones(len(a), len(a), dtype=torch.int64)


def with_torch_cumsum(a):
    # The right answer the way the lesson's rule no-cumsum forbids.
    return torch.cumsum(a, dim=0)


def with_a_loop(a):
    # The right answer the way the lesson's rule no-loop forbids: a running total, entry by
    # entry.
    out = a.clone()
    for k in range(1, len(a)):
        out[k] = out[k - 1] + a[k]
    return out
