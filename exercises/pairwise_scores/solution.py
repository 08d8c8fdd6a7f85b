"""Pairwise squared distances, vectorised: your solution goes here.

Check it with:  pytest exercises/pairwise_scores
"""

import torch  # noqa: F401  (you will need it)


def solve(x, y):
    """Return the [n, m] tensor of squared distances between the rows of x and of y.

    x: a float64 tensor [n, d]; y: a float64 tensor [m, d].
    Entry [i, j] is ((x[i] - y[j]) ** 2).sum(), computed for every pair at once: no Python
    loop, and no [n, m, d] tensor of differences.
    """
    raise NotImplementedError
