"""The identity matrix, by broadcasting: your solution goes here.

Check it with:  pytest exercises/eye
"""

import torch  # noqa: F401  (you will need it)


def solve(n):
    """Return the n x n identity matrix, without a loop and without torch.eye.

    n: an int, 1 or more.
    Return an int64 tensor of shape [n, n]: 1 where the row equals the column, else 0.
    """
    raise NotImplementedError
