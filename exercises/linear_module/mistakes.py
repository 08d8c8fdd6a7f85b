"""Known wrong Linear classes for "Linear as an nn.Module", one per watch-out in exercise.toml.

Each class stands in for the learner's Linear (the harness builds it with the same arguments)
and makes that one mistake; the grader compares a failing answer with what the harness gets
from it to name the mistake. Facts from ARENA's chapter 0 tests (test_linear_parameters
compares named_parameters() names and shapes with nn.Linear's and asserts bias is None when
bias=False; test_linear_forward loads nn.Linear(512, 64)'s state dict, not square, into
yours). The last three are mistakes the harness itself stops, with words of its own (their
watch-outs name the harness's check, which the lesson check proves each gets).
"""

import math

import torch


class _Right(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        self.weight = torch.nn.Parameter(self._shape(in_features, out_features))
        torch.nn.init.uniform_(self.weight, -bound, bound)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        else:
            self.register_parameter("bias", None)

    @staticmethod
    def _shape(in_features, out_features):
        return torch.empty(out_features, in_features)

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


class WeightInOut(_Right):
    # The weight stored [in_features, out_features] and multiplied without a transpose,
    # x @ W, the layout of the maths (y = xW + b) and of GPT-2's original Conv1D (Hugging
    # Face's GPT2 keeps it; nanoGPT's from_pretrained transposes c_attn, c_proj and c_fc on
    # load for that reason). Its shapes fit only a square layer: there torch's [out, in]
    # weights load into it, and it computes x @ W where nn.Linear computes x @ W.T. Where the
    # layer is not square, the harness's shape check stops it first.
    @staticmethod
    def _shape(in_features, out_features):
        return torch.empty(in_features, out_features)

    def forward(self, x):
        y = x @ self.weight
        return y if self.bias is None else y + self.bias


class BiasNeverAdded(_Right):
    # The bias is a parameter, loaded and saved, but forward never adds it: a layer through
    # the origin. davidalbertonogueira/MLP#15 (a bias with a setter, a getter and file I/O,
    # never used) and deepakcrk/CNN_ForDummies#9 are this mistake.
    def forward(self, x):
        return x @ self.weight.T


class PlainTensorWeight(_Right):
    # The weight a plain tensor attribute, not an nn.Parameter: in neither parameters() nor
    # state_dict() (EleutherAI/gpt-neox#267's final linear layer, whose parameters were never
    # registered; shenweichen/DeepCTR-Torch#87).
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        weight = self.weight.detach().clone()
        del self.weight
        self.weight = weight


class BiasKeptWithoutBias(_Right):
    # bias=False ignored: a zero bias is still a parameter, so the state dict of an
    # nn.Linear(..., bias=False) does not load into it.
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, True)


class UnscaledInit(_Right):
    # torch.randn for the weight, not scaled by 1/sqrt(in_features): each output of a new
    # layer is then about sqrt(in_features) times larger than nn.Linear's.
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        with torch.no_grad():
            self.weight.copy_(torch.randn(out_features, in_features) * 1.5)
