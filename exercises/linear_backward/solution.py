"""Linear layer backward: your solution goes here.

Check it with:  pytest exercises/linear_backward
"""

import torch  # noqa: F401  (you may need it)


def solve(x, W, b, dY):
    """Return the gradients of a linear layer Y = x @ W.T + b: (dx, dW, db).

    x:  float64 tensor [N, D_in], the layer's input.
    W:  float64 tensor [D_out, D_in], its weight (torch.nn.Linear's layout).
    b:  float64 tensor [D_out], its bias.
    dY: float64 tensor [N, D_out], the gradient of the loss with respect to Y.
    Return dx [N, D_in], dW [D_out, D_in] and db [D_out], in that order.
    """
    raise NotImplementedError
