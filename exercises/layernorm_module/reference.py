"""The author's answer to "LayerNorm as an nn.Module"."""

import torch


class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        # 1. eps is kept for forward: the lesson passes its own, and 1e-5 is torch's default.
        self.eps = eps
        # 2. The learned scale and shift, [C] each, as nn.Parameter under torch's names; they
        #    start as ones and zeros, so a new norm only normalises.
        self.weight = torch.nn.Parameter(torch.ones(normalized_shape))
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        # 3. The mean and the biased variance of each vector over its last axis (divided by
        #    C, not C - 1), kept as [..., 1] to broadcast back against x.
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        # 4. Normalise with eps inside the square root, into a new tensor: x itself is left
        #    as it was, since a block adds it back to the norm's output.
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        # 5. Scale and shift each feature by the learned weight and bias.
        return x_hat * self.weight + self.bias
