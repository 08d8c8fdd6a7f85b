"""Layer norm backward: your solution goes here.

Check it with:  pytest exercises/layernorm_backward
"""

import torch  # noqa: F401  (you may need it)

EPS = 1e-5


def solve(x, gamma, beta, dY):
    """Return the gradients of y = gamma * (x - mean) / sqrt(var + EPS) + beta (mean and the
    biased var over each row of x): (dx, dgamma, dbeta).

    x:     float64 tensor [N, D].
    gamma: float64 tensor [D], the scale; beta: float64 tensor [D], the shift.
    dY:    float64 tensor [N, D], the gradient of the loss with respect to y.
    Return dx [N, D], dgamma [D] and dbeta [D], in that order.
    """
    raise NotImplementedError
