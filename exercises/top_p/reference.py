"""The author's answer to "Top-p (nucleus) sampling"."""

import torch


def solve(logits, p, temperature, g):
    # 1. Divide the logits by the temperature first: the nucleus is chosen from the
    #    distribution that is sampled, so a hotter temperature keeps more tokens.
    probs = torch.softmax(logits / temperature, dim=-1)
    if p < 1.0:
        # 2. Each row's probabilities from the largest down, and for each the sum of those
        #    before it: a token is kept while that sum is still below p, so the token that
        #    crosses p is kept and the top token always is.
        ordered = torch.sort(probs, dim=-1, descending=True).values
        before = ordered.cumsum(dim=-1) - ordered
        kept = before < p
        kept[:, 0] = True
        # 3. The smallest kept probability is the row's threshold: every token at least as
        #    likely stays, so tokens tied with the last one kept stay together.
        threshold = ordered.masked_fill(~kept, float("inf")).min(dim=-1, keepdim=True).values
        probs = probs.masked_fill(probs < threshold, 0.0)
    # 4. p = 1.0 keeps every token: the filter is skipped (a float32 sum can round to 1.0
    #    before the last token). Renormalise what is kept so each row sums to 1.
    probs = probs / probs.sum(dim=-1, keepdim=True)
    # 5. One draw per row, in one batched call with the grader's generator: [B, 1].
    token = torch.multinomial(probs, 1, generator=g)
    return probs, token


def distribution(logits, p, temperature, g):
    """The exact probabilities of the tokens of the first row, for the statistical cases."""
    probs, _ = solve(logits, p, temperature, g)
    return probs[0].double().tolist()
