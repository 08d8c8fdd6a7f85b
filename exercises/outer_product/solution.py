"""The outer product, by broadcasting: your solution goes here.

Check it with:  pytest exercises/outer_product
"""


def solve(a, b):
    """Return the outer product of a and b, without a loop.

    a: an int64 tensor of shape [i]; b: an int64 tensor of shape [j].
    Return an int64 tensor of shape [i, j] whose entry [r, c] is a[r] * b[c].
    """
    raise NotImplementedError
