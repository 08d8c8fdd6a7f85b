"""The author's answer to "Softmax and cross-entropy backward"; forward() is the loss whose
autograd gives the expected dlogits ([gradients] forward = "forward" in exercise.toml)."""

import torch
import torch.nn.functional as F


def forward(logits, targets):
    return F.cross_entropy(logits, targets)


def solve(logits, targets):
    N = logits.shape[0]
    # 1. Softmax each row over its classes: for one example d(-log p[t])/dz = p - one_hot(t).
    dlogits = logits.softmax(dim=1)
    # 2. Subtract 1 at each row's target class (softmax returned a fresh tensor).
    dlogits[torch.arange(N), targets] -= 1
    # 3. Divide by N: the loss is the mean over the examples.
    return dlogits / N
