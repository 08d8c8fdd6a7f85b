"""Known-correct alternatives to reference.py for "GELU as a custom autograd Function".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch


class _SavesCdf(torch.autograd.Function):
    """Saves Phi(x) in forward so that backward does not compute the erf again."""

    @staticmethod
    def forward(ctx, x):
        cdf = 0.5 * (1 + torch.erf(x * (1 / math.sqrt(2))))
        ctx.save_for_backward(x, cdf)
        return x * cdf

    @staticmethod
    def backward(ctx, grad_output):
        x, cdf = ctx.saved_tensors
        pdf = torch.exp(-(x**2) / 2) * (1 / math.sqrt(2 * math.pi))
        return grad_output * cdf + grad_output * x * pdf


class _Ndtr(torch.autograd.Function):
    """Phi from torch.special.ndtr, phi from torch.distributions' Normal."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.special.ndtr(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        normal = torch.distributions.Normal(torch.zeros((), dtype=x.dtype), 1.0)
        return grad_output * (torch.special.ndtr(x) + x * normal.log_prob(x).exp())


def saves_cdf(x):
    """Phi(x) saved for the backward."""
    return _SavesCdf.apply(x)


def with_ndtr(x):
    """torch.special.ndtr for Phi."""
    return _Ndtr.apply(x)


def builtin_gelu(x):
    """torch's own GELU and its autograd: the grade cannot tell it from a custom Function."""
    return torch.nn.functional.gelu(x)
