"""The author's answer to "A random batch of training windows"."""

import torch


def solve(data, B, T, g):
    # 1. B start positions, drawn with the grader's generator. A window and its targets take
    #    T + 1 tokens, so a start goes from 0 to len(data) - T - 1: randint's high bound,
    #    len(data) - T, is left out.
    ix = torch.randint(len(data) - T, (B,), generator=g)
    # 2. x: the T tokens from each start, stacked into [B, T].
    x = torch.stack([data[i : i + T] for i in ix])
    # 3. y: the same windows one token later, so y[b, t] is the token after x[b, t].
    y = torch.stack([data[i + 1 : i + 1 + T] for i in ix])
    return x, y


def distribution(data, B, T, g):
    """How likely each token is at x's first position: every start is equally likely, so a
    token's chance is its share of the len(data) - T starts (the statistical case has T = 1
    and distinct tokens, so it is the start's own chance)."""
    starts = len(data) - T
    chances = {}
    for i in range(starts):
        token = int(data[i])
        chances[token] = chances.get(token, 0.0) + 1.0 / starts
    return chances
