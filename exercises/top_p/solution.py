"""Top-p (nucleus) sampling: your solution goes here.

Check it with:  pytest exercises/top_p
"""

import torch  # noqa: F401  (you will need it)


def solve(logits, p, temperature, g):
    """Filter each row to its nucleus of probability p, then sample one token per row.

    logits: a float32 tensor [B, V], one row of scores over the vocabulary per sequence.
    p: a float, 0 < p <= 1: the probability the kept tokens must reach together.
    temperature: a float above 0; the logits are divided by it before anything else.
    g: a torch.Generator; draw with torch.multinomial(probs, 1, generator=g).
    Return (probs, token): probs the float32 [B, V] probabilities you drew from (0 outside
    the nucleus, each row summing to 1), token the int64 [B, 1] tensor of drawn token ids.
    """
    raise NotImplementedError
