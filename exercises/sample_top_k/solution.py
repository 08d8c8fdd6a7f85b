"""Temperature and top-k sampling: your solution goes here.

Check it with:  pytest exercises/sample_top_k
"""

import torch  # noqa: F401  (you will need it)


def solve(logits, k, temperature, g):
    """Sample one next token per row with temperature and top-k.

    logits: a float32 tensor [B, V], one row of scores over the vocabulary per sequence.
    k: how many of the highest-scoring tokens of each row may be drawn (1 <= k <= V).
    temperature: a float above 0; the logits are divided by it before the softmax.
    g: a torch.Generator; draw with torch.multinomial(probs, 1, generator=g).
    Return (probs, token): probs the float32 [B, V] probabilities you drew from (0 outside
    the top k), token the int64 [B, 1] tensor of drawn token ids.
    """
    raise NotImplementedError
