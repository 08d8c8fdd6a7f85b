"""Known-correct alternatives to reference.py for "LayerNorm as an nn.Module".

Each class stands in for the learner's LayerNorm; ``pytest --lesson-check`` requires each to
pass every case: a right answer a learner might write must never fail by rounding alone.
"""

import torch
import torch.nn.functional as F


class FunctionalLayerNorm(torch.nn.Module):
    """F.layer_norm over the last axis, as nanoGPT's LayerNorm calls it."""

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.normalized_shape = (normalized_shape,)
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(normalized_shape))
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class VarMeanRsqrt(torch.nn.Module):
    """torch.var_mean with correction=0 and torch.rsqrt, parameters from nn.init."""

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.empty(normalized_shape))
        self.bias = torch.nn.Parameter(torch.empty(normalized_shape))
        torch.nn.init.ones_(self.weight)
        torch.nn.init.zeros_(self.bias)

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class InFloat64(torch.nn.Module):
    """The reference's steps in float64, cast back to float32 at the end."""

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(normalized_shape))
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        x64 = x.double()
        mean = x64.mean(dim=-1, keepdim=True)
        var = ((x64 - mean) ** 2).mean(dim=-1, keepdim=True)
        out = (x64 - mean) / torch.sqrt(var + self.eps)
        return (out * self.weight.double() + self.bias.double()).float()
