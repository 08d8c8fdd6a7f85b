"""Known-correct alternatives to reference.py for "Layer norm".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch
import torch.nn.functional as F


def functional_layer_norm(x, gamma, beta, eps):
    """torch.nn.functional.layer_norm over the last axis, as nanoGPT's LayerNorm calls it."""
    return F.layer_norm(x, gamma.shape, gamma, beta, eps)


def var_mean_and_rsqrt(x, gamma, beta, eps):
    """torch.var_mean with correction=0 and torch.rsqrt: one pass for both statistics."""
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return (x - mean) * torch.rsqrt(var + eps) * gamma + beta


def in_float64(x, gamma, beta, eps):
    """The reference's steps in float64, cast back to float32 at the end."""
    x64 = x.double()
    mean = x64.mean(dim=-1, keepdim=True)
    var = ((x64 - mean) ** 2).mean(dim=-1, keepdim=True)
    out = (x64 - mean) / torch.sqrt(var + eps) * gamma.double() + beta.double()
    return out.float()


def nn_layer_norm_module(x, gamma, beta, eps):
    """An nn.LayerNorm module whose weight and bias are gamma and beta."""
    norm = torch.nn.LayerNorm(gamma.shape[0], eps=eps)
    with torch.no_grad():
        norm.weight.copy_(gamma)
        norm.bias.copy_(beta)
        return norm(x)
