"""The author's answer to "Layer norm backward"; forward() is the layer whose autograd gives
the expected gradients ([gradients] forward = "forward" in exercise.toml)."""

import torch.nn.functional as F

EPS = 1e-5


def forward(x, gamma, beta):
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps=EPS)


def solve(x, gamma, beta, dY):
    # 1. The forward's pieces: the row mean and biased variance, rstd and xhat.
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=False, keepdim=True)
    rstd = (var + EPS) ** -0.5
    xhat = (x - mean) * rstd
    # 2. gamma and beta are shared by every row: their gradients sum over the rows.
    dbeta = dY.sum(0)
    dgamma = (dY * xhat).sum(0)
    # 3. Through the scale.
    dxhat = dY * gamma
    # 4. Directly, through the mean and through the variance.
    dx = rstd * (dxhat - dxhat.mean(1, keepdim=True) - xhat * (dxhat * xhat).mean(1, keepdim=True))
    return dx, dgamma, dbeta
