"""Rotary position embeddings (RoPE): your solution goes here.

Check it with:  pytest exercises/rope
"""

import torch  # noqa: F401  (you will need it)


def solve(x, positions, theta):
    """Rotate each pair of neighbouring features of x by an angle set by the token's position.

    x: a float32 tensor [heads, T, D] of queries or keys (D even).
    positions: an int64 tensor [T], the position of each of the T tokens.
    theta: a float, the base of the frequencies (10000.0 in most models).
    Return a float32 tensor [heads, T, D].
    """
    raise NotImplementedError
