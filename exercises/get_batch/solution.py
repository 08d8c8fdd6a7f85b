"""A random batch of training windows: your solution goes here.

Check it with:  pytest exercises/get_batch
"""

import torch  # noqa: F401  (you will need it)


def solve(data, B, T, g):
    """Cut B random windows of T tokens out of data, with their next-token targets.

    data: a 1-D int64 tensor of token ids (the whole training text, tokenized).
    B, T: how many windows, and how many tokens each.
    g: a torch.Generator; draw the starts with torch.randint(len(data) - T, (B,), generator=g).
    Return (x, y), two int64 tensors [B, T]: x[b] the window from start b, y[b] the same
    window one token later.
    """
    raise NotImplementedError
