"""The author's answer to "Linear as an nn.Module"."""

import math

import torch


class Linear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        # 1. The weight as torch stores it, [out_features, in_features], wrapped in
        #    nn.Parameter so that parameters() and state_dict() list it under its name.
        self.weight = torch.nn.Parameter(torch.empty(out_features, in_features))
        # 2. The bias, [out_features], only when asked for; otherwise None, as nn.Linear has
        #    it, so the state dict holds the weight alone.
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        # 3. The initial values of nn.Linear: uniform in [-1/sqrt(in), 1/sqrt(in)], so each
        #    output's size does not grow with the number of inputs it sums.
        bound = 1.0 / math.sqrt(in_features)
        torch.nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        # 4. x [..., in] times the transpose of the weight gives [..., out]; the bias, when
        #    there is one, broadcasts over every leading axis.
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        return y
