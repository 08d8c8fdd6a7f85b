"""Known wrong LayerNorm classes for "LayerNorm as an nn.Module", one per watch-out in
exercise.toml.

Each class stands in for the learner's LayerNorm (the harness builds it with the same
arguments) and makes that one mistake; the grader compares a failing answer with what the
harness gets from it to name the mistake. The last three are mistakes the harness itself
stops, with words of its own (their watch-outs name the harness's check, which the lesson
check proves each gets): plain tensors instead of nn.Parameter, initial values other than
ones and zeros, and a forward that normalises x in place (x -= mean), which changes the
residual stream a block adds back.
"""

import torch


class _Right(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(normalized_shape))
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def _stats(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        return mean, ((x - mean) ** 2).mean(dim=-1, keepdim=True)

    def forward(self, x):
        mean, var = self._stats(x)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class EpsOutsideSqrt(_Right):
    # eps added to the standard deviation, sqrt(var) + eps. ARENA's LayerNorm test runs with
    # eps = 0.1 to catch it ("Is your epsilon inside the sqrt?"); pyg-team/pytorch_geometric
    # #2917 moved its layer_norm from `var.sqrt() + eps` to `(var + eps).sqrt()`.
    def forward(self, x):
        mean, var = self._stats(x)
        return (x - mean) / (torch.sqrt(var) + self.eps) * self.weight + self.bias


class UnbiasedVariance(_Right):
    # x.var(-1) with torch's default correction, dividing by C - 1: nn.LayerNorm's variance
    # is the biased one. LBANN/lbann#2024 changed its LayerNorm from the unbiased estimate to
    # match PyTorch; the Annotated Transformer's x.std(-1) is the same slip.
    def _stats(self, x):
        return x.mean(dim=-1, keepdim=True), x.var(dim=-1, keepdim=True)


class EpsIgnored(_Right):
    # The constructor takes eps but forward uses a constant of its own, 1e-5. tensorflow
    # /tensorflow#58863 fixed a fused LayerNorm that dropped the epsilon attribute ("incorrect
    # results if user sets epsilon different than the default"); VeriSilicon/TIM-VX#589 one
    # whose eps was always 0; NVIDIA/TensorRT-Incubator#63 added eps to a LayerNorm's
    # constructor, which had none.
    def forward(self, x):
        mean, var = self._stats(x)
        return (x - mean) / torch.sqrt(var + 1e-5) * self.weight + self.bias


class OverAllButBatch(_Right):
    # Statistics over every axis but the first, as nn.LayerNorm(x.shape[1:]) takes them: for
    # a [B, T, C] batch each token then depends on the other tokens of its sequence.
    # reczoo/FuxiCTR#23 is this bug (nn.LayerNorm([num_fields, embedding_dim]) normalising the
    # last two axes where the paper normalises each field); Stack Overflow 66289517 ("Layer
    # Normalization in pytorch?") asks which axes nn.LayerNorm uses.
    def _stats(self, x):
        dims = tuple(range(1, x.dim())) if x.dim() > 1 else (-1,)
        mean = x.mean(dim=dims, keepdim=True)
        return mean, ((x - mean) ** 2).mean(dim=dims, keepdim=True)


class PlainTensors(_Right):
    # weight and bias as plain tensor attributes: in neither parameters() nor state_dict(),
    # so an optimizer never trains them and load_state_dict never fills them.
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__(normalized_shape, eps)
        del self.weight, self.bias
        self.weight = torch.ones(normalized_shape)
        self.bias = torch.zeros(normalized_shape)


class RandomStart(_Right):
    # weight drawn at random, as a Linear's is: a new norm then scales each feature by chance.
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__(normalized_shape, eps)
        with torch.no_grad():
            self.weight.uniform_(-1.0, 1.0)


class NormalisesInPlace(_Right):
    # x -= mean: the caller's x changes, and a block adds that changed x back.
    def forward(self, x):
        mean, var = self._stats(x)
        x -= mean
        return x / torch.sqrt(var + self.eps) * self.weight + self.bias
