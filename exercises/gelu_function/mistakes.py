"""Known wrong answers to "GELU as a custom autograd Function", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns: its own Function, applied. The grader compares a failing answer with these to name
the mistake.
"""

import math

import torch


def _cdf(x):
    return 0.5 * (1 + torch.erf(x / math.sqrt(2)))


def _pdf(x):
    return torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


class _IgnoresGradOutput(torch.autograd.Function):
    # The local derivative returned without the chain rule's factor. A check with
    # y.sum().backward() passes it (every grad_output is 1); PyTorch's "Extending torch.autograd"
    # notes say backward must return grad_output times the derivative, and
    # torch.autograd.gradcheck exists to catch such backward functions.
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * _cdf(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return _cdf(x) + x * _pdf(x)


class _MissingProductTerm(torch.autograd.Function):
    # d(x * Phi(x)) / dx taken as Phi(x): the product rule's second term dropped, the slip
    # ARENA's backprop chapter guards against by having each backward function checked
    # against finite differences.
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * _cdf(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * _cdf(x)


class _Tanh(torch.autograd.Function):
    # GPT-2's own code and nanoGPT's early versions use the tanh approximation (nanoGPT's
    # NewGELU; Hendrycks and Gimpel's paper gives both); torch.nn.GELU() is exact unless
    # approximate="tanh". The backward here is the tanh formula's own derivative.
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        c = math.sqrt(2 / math.pi)
        return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * x**3)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        c = math.sqrt(2 / math.pi)
        t = torch.tanh(c * (x + 0.044715 * x**3))
        dt = (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)
        return grad_output * (0.5 * (1 + t) + 0.5 * x * dt)


class _Float32Forward(torch.autograd.Function):
    # A forward that computes in float32 (a habit from GPU code) with an exact float64
    # backward: the values pass, gradcheck does not. torch.autograd.gradcheck's docs warn it
    # is meant for double-precision inputs; minitorch's central_difference checks fail the
    # same way in low precision.
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        y = x.float()
        return (y * 0.5 * (1 + torch.erf(y / math.sqrt(2)))).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (_cdf(x) + x * _pdf(x))


def ignores_grad_output(x):
    return _IgnoresGradOutput.apply(x)


def missing_product_term(x):
    return _MissingProductTerm.apply(x)


def tanh_approximation(x):
    return _Tanh.apply(x)


def forward_in_float32(x):
    return _Float32Forward.apply(x)
