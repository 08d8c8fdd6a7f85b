"""Known wrong answers to "Softmax and cross-entropy backward", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def without_one_over_n(logits, targets):
    # The 1/n of the mean forgotten: Karpathy's makemore part 4 ("Becoming a backprop
    # ninja") ends its fused cross-entropy backward with `dlogits /= n`, and the exercise's
    # comparison with autograd is what catches a version without it.
    d = logits.softmax(1)
    d[torch.arange(logits.shape[0]), targets] -= 1
    return d


def softmax_only(logits, targets):
    # The one-hot term left out: the gradient of the normaliser alone.
    return logits.softmax(1) / logits.shape[0]


def dlogprobs_only(logits, targets):
    # Stopped one step early: makemore part 4 goes loss -> logprobs -> probs -> ... -> logits,
    # and its first step, dlogprobs, is -1/n at the targets and 0 elsewhere.
    d = torch.zeros_like(logits)
    d[torch.arange(logits.shape[0]), targets] = -1.0 / logits.shape[0]
    return d


def softmax_over_examples(logits, targets):
    # softmax(dim=0), over the batch axis: the slip makemore part 1 shows with
    # P / P.sum(1) without keepdim=True, which broadcasts the sums the wrong way and
    # normalises the columns instead of the rows.
    d = logits.softmax(0)
    d[torch.arange(logits.shape[0]), targets] -= 1
    return d / logits.shape[0]


def with_autograd(logits, targets):
    # The right gradient the way the lesson's rule no-autograd forbids.
    import torch.nn.functional as F

    logits = logits.detach().requires_grad_(True)
    F.cross_entropy(logits, targets).backward()
    return logits.grad
