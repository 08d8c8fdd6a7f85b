"""Known wrong answers to "Layer norm", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def eps_outside_sqrt(x, gamma, beta, eps):
    # Epsilon added to the standard deviation instead of the variance. ARENA's transformer
    # tests run LayerNorm with eps = 0.1 for this reason ("LayerNorm: Is your epsilon
    # inside the sqrt?"); pyg-team/pytorch_geometric#2917 moved `var.sqrt() + eps` to
    # `(var + eps).sqrt()` in its layer_norm.
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, correction=0)
    return (x - mean) / (torch.sqrt(var) + eps) * gamma + beta


def unbiased_variance(x, gamma, beta, eps):
    # torch.var's default divides by C - 1 (Bessel's correction); nn.LayerNorm's variance is
    # the biased one (its documentation says so). LBANN/lbann#2024 changed its LayerNorm from
    # the unbiased estimate to match PyTorch.
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * gamma + beta


def std_plus_eps(x, gamma, beta, eps):
    # The Annotated Transformer's LayerNorm: `(x - mean) / (x.std(-1) + eps)`, both mistakes
    # at once (torch.std is unbiased by default, and eps sits outside the root). It was copied
    # into codertimo/BERT-pytorch (issue #30 asks why it differs from nn.LayerNorm) and posted
    # in pytorch/pytorch#1959.
    mean = x.mean(dim=-1, keepdim=True)
    return (x - mean) / (x.std(dim=-1, keepdim=True) + eps) * gamma + beta


def over_all_but_batch(x, gamma, beta, eps):
    # Statistics over every axis after the first, as nn.LayerNorm(x.shape[1:]) computes them:
    # for a [B, T, C] batch that mixes the tokens of a sequence. The question "Layer
    # Normalization in pytorch?" (Stack Overflow 66289517, cited in datawhalechina/happy-llm#58)
    # is about exactly this choice; a GPT normalises each token's C features on their own.
    dims = tuple(range(1, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, correction=0)
    return (x - mean) / torch.sqrt(var + eps) * gamma + beta


def rms_norm(x, gamma, beta, eps):
    # RMSNorm (LLaMA's and T5's norm, the RMSNorm class beside LayerNorm in nanoGPT forks):
    # no mean subtracted, the root of the mean square in place of the standard deviation.
    # It is a different layer; GPT-2's blocks use LayerNorm.
    rms = torch.sqrt((x**2).mean(dim=-1, keepdim=True) + eps)
    return x / rms * gamma + beta
