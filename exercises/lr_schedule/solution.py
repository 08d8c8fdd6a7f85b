"""Warm-up and cosine learning rate: your solution goes here.

Check it with:  pytest exercises/lr_schedule
"""

import math  # noqa: F401  (you will need it)


def solve(it, max_lr, min_lr, warmup, cycle):
    """The learning rate at step *it* of a warm-up followed by a cosine decay.

    it, warmup, cycle: ints, with 0 <= warmup <= cycle.
    max_lr, min_lr: floats.
    Return a float.
    """
    raise NotImplementedError
