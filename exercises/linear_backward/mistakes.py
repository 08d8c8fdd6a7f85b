"""Known wrong answers to "Linear layer backward", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def transposed_dW(x, W, b, dY):
    # x.T @ dY, the weight gradient of a layer that computes x @ W (W as [D_in, D_out], the
    # layout of Karpathy's makemore part 4 and of CS231n's affine_backward), written for
    # torch.nn.Linear's W [D_out, D_in]. ARENA's backprop chapter has learners derive matmul's
    # two backward functions for this reason: the same product, with the operands swapped
    # and transposed. On a square layer the shapes agree and only the values differ.
    return dY @ W, x.T @ dY, dY.sum(0)


def db_mean(x, W, b, dY):
    # The bias gradient averaged over the rows: makemore part 4 has the reverse slip, the
    # 1/n of a mean loss forgotten in dlogits (`dlogits /= n`); averaging here applies the
    # 1/N a second time when dY already carries it.
    return dY @ W, dY.T @ x, dY.mean(0)


def db_not_summed(x, W, b, dY):
    # The gradient of a broadcast parameter not summed back to its shape: ARENA's backprop
    # chapter writes unbroadcast() for it, and minitorch's backward must reduce a gradient to
    # the shape of a broadcast input (its module 2). dY is returned as db.
    return dY @ W, dY.T @ x, dY


def ones_upstream(x, W, b, dY):
    # The gradients of Y.sum(): dY taken as all ones. A check that ends in
    # `forward(x).sum().backward()` (the usual quick test of a hand-written backward, and
    # micrograd's scalar-loss checks) has exactly this upstream gradient, so it cannot tell
    # these formulas from the right ones; the grader draws a non-uniform dY for this reason.
    ones = dY * 0 + 1
    return ones @ W, ones.T @ x, ones.sum(0)


def with_autograd(x, W, b, dY):
    # The right gradients the way the lesson's rule no-autograd forbids.
    import torch

    x, W, b = (t.detach().requires_grad_(True) for t in (x, W, b))
    Y = x @ W.T + b
    return torch.autograd.grad(Y, (x, W, b), dY)
