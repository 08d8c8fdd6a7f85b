"""Linear as an nn.Module: your solution goes here.

Check it with:  pytest exercises/linear_module
"""

import math  # noqa: F401  (you may need it)

import torch


class Linear(torch.nn.Module):
    """y = x @ weight.T + bias, with nn.Linear's parameters.

    weight: an nn.Parameter [out_features, in_features]; bias: an nn.Parameter
    [out_features], or None when bias=False. Both start uniform in
    [-1/sqrt(in_features), 1/sqrt(in_features)].
    """

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        raise NotImplementedError

    def forward(self, x):
        """x: a float32 tensor [..., in_features]. Return a float32 tensor [..., out_features]."""
        raise NotImplementedError
