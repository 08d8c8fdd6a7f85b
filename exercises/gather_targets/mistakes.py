"""Known wrong answers to "Pick each target's log-probability", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def columns_only(logprobs, targets):
    # The column index alone: logprobs[:, targets] picks every target's column for every
    # row, [N, N]. karpathy/nn-zero-to-hero's makemore lectures index with both,
    # logprobs[range(n), Yb], and the comment in the backprop notebook spells the sum out
    # as logprobs[0, Yb[0]] + logprobs[1, Yb[1]] + ...: one pair per row.
    return logprobs[:, targets]


def gather_not_squeezed(logprobs, targets):
    # gather's output has its index's shape: with targets[:, None] ([N, 1]) the answer is
    # [N, 1]. huggingface/trl#1061 shows the usual code, gather(..., labels.unsqueeze(2))
    # followed by .squeeze(-1); leaving out the squeeze is the bug.
    return torch.gather(logprobs, 1, targets[:, None])


def negated(logprobs, targets):
    # The sign of the loss carried into the pick: nn-zero-to-hero writes the loss as
    # -logprobs[range(n), Yb].mean(), and copying it up to the mean keeps the minus.
    return -logprobs[torch.arange(len(targets)), targets]


def loss_instead(logprobs, targets):
    # The whole of nn-zero-to-hero's line, -logprobs[range(n), Yb].mean(): the loss, one
    # number, where the lesson asks for the N values it averages.
    return -logprobs[torch.arange(len(targets)), targets].mean()
