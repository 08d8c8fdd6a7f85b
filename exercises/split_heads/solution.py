"""Split into attention heads: your solution goes here.

Check it with:  pytest exercises/split_heads
"""

import torch  # noqa: F401  (you will need it)


def solve(X, heads):
    """Cut each token's row into heads and give every head its own block.

    X: nested list of shape [time, heads * width]; heads: the number of heads.
    Return a nested Python list of shape [heads, time, width]: block h holds, for every
    token, the h-th slice of width values of that token's row.
    """
    raise NotImplementedError
