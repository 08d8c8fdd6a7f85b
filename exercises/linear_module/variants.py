"""Known-correct alternatives to reference.py for "Linear as an nn.Module".

Each class stands in for the learner's Linear; ``pytest --lesson-check`` requires each to pass
every case: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch
import torch.nn.functional as F


class FunctionalLinear(torch.nn.Module):
    """torch's own initialisation (kaiming_uniform_ with a=sqrt(5)) and F.linear, as
    nn.Linear's reset_parameters and forward are written."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features))
        self.bias = torch.nn.Parameter(torch.empty(out_features)) if bias else None
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(in_features)
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class EinsumLinear(torch.nn.Module):
    """torch.rand scaled into the range, and einsum over the input features (ARENA's way)."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight = torch.nn.Parameter(bound * (2 * torch.rand(out_features, in_features) - 1))
        if bias:
            self.bias = torch.nn.Parameter(bound * (2 * torch.rand(out_features) - 1))
        else:
            self.bias = None

    def forward(self, x):
        y = torch.einsum("...i,oi->...o", x, self.weight)
        return y if self.bias is None else y + self.bias


class ZeroBias(torch.nn.Module):
    """The bias starting at zero (inside the range), the weight uniform, addmm-free matmul."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        weight = torch.empty(out_features, in_features).uniform_(-bound, bound)
        self.weight = torch.nn.Parameter(weight)
        if bias:
            self.bias = torch.nn.Parameter(torch.zeros(out_features))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = torch.matmul(x, self.weight.transpose(0, 1))
        if self.bias is not None:
            y += self.bias
        return y


class XavierLinear(torch.nn.Module):
    """Glorot's initialisation (xavier_uniform_) and a zero bias: another common start, inside
    the range the lesson states, though not nn.Linear's own."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features))
        torch.nn.init.xavier_uniform_(self.weight)
        self.bias = torch.nn.Parameter(torch.zeros(out_features)) if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


class NormalLinear(torch.nn.Module):
    """A normal start with a standard deviation of 1/sqrt(in_features) (LeCun's), for both
    the weight and the bias."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        scale = 1 / math.sqrt(in_features)
        self.weight = torch.nn.Parameter(torch.randn(out_features, in_features) * scale)
        self.bias = torch.nn.Parameter(torch.randn(out_features) * scale) if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias
