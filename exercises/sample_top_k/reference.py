"""The author's answer to "Temperature and top-k sampling"."""

import torch


def solve(logits, k, temperature, g):
    # 1. Divide the logits by the temperature, before the softmax: below 1 it sharpens the
    #    distribution, above 1 it flattens it.
    scaled = logits / temperature
    # 2. The k-th largest scaled logit of each row, from torch.topk (largest first): [B, 1].
    kth = torch.topk(scaled, k, dim=-1).values[:, -1:]
    # 3. Every logit below it becomes -inf, so the softmax gives it probability 0.
    scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    # 4. The softmax over each row: the probabilities of the k kept tokens, summing to 1.
    probs = torch.softmax(scaled, dim=-1)
    # 5. One draw per row, in one batched call that uses the grader's generator: [B, 1].
    token = torch.multinomial(probs, 1, generator=g)
    return probs, token


def distribution(logits, k, temperature, g):
    """The exact probabilities of the tokens of the first row, for the statistical cases."""
    probs, _ = solve(logits, k, temperature, g)
    return probs[0].double().tolist()
