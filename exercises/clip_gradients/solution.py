"""Clip gradients by their global norm: your solution goes here.

Check it with:  pytest exercises/clip_gradients
"""

import torch  # noqa: F401  (you will need it)


def solve(parameters, max_norm):
    """Clip the gradients of *parameters* in place so that their global L2 norm is at most
    *max_norm*, and return the total norm from before clipping, as a float.

    parameters: a list of torch.nn.Parameter; a frozen one's .grad is None.
    max_norm: a float > 0.
    """
    raise NotImplementedError
