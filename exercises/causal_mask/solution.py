"""The causal mask: your solution goes here.

Check it with:  pytest exercises/causal_mask
"""

import torch  # noqa: F401  (you will need it)


def solve(T):
    """Return the causal mask for T tokens.

    T: an int, the number of tokens (1 or more).
    Return a torch tensor of dtype torch.bool and shape [T, T]: True at row i, column j
    where position i may attend to position j (j <= i), False where j > i.
    """
    raise NotImplementedError
