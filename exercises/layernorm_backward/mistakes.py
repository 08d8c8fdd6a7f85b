"""Known wrong answers to "Layer norm backward", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch

EPS = 1e-5


def _pieces(x, unbiased=False):
    mean = x.mean(1, keepdim=True)
    var = x.var(1, unbiased=unbiased, keepdim=True)
    rstd = (var + EPS) ** -0.5
    return rstd, (x - mean) * rstd


def without_mean_terms(x, gamma, beta, dY):
    # The mean and variance treated as constants: only dxhat * rstd. Karpathy's makemore
    # part 4 derives batch norm's backward by hand because the shortcut misses exactly the
    # gradient through the mean and the variance (its dbnmeani and dbnvar steps).
    rstd, xhat = _pieces(x)
    return dY * gamma * rstd, (dY * xhat).sum(0), dY.sum(0)


def sums_not_means(x, gamma, beta, dY):
    # The 1/D of the row's mean and variance forgotten in the two correction terms.
    rstd, xhat = _pieces(x)
    dxhat = dY * gamma
    dx = rstd * (dxhat - dxhat.sum(1, keepdim=True) - xhat * (dxhat * xhat).sum(1, keepdim=True))
    return dx, (dY * xhat).sum(0), dY.sum(0)


def unbiased_variance(x, gamma, beta, dY):
    # Bessel's correction (divide by D - 1): makemore part 4 normalises its batch norm with
    # the unbiased variance, 1/(n-1), and discusses the train/test mismatch it makes, while
    # torch.nn.LayerNorm and BatchNorm's normalisation use the biased one. torch.var's default
    # is unbiased. Autograd of that layer gives this mistake's gradients exactly.
    # By hand (the lesson's rule no-autograd): the chain rule through the unbiased variance.
    D = x.shape[1]
    centred = x - x.mean(1, keepdim=True)
    rstd = (centred.pow(2).sum(1, keepdim=True) / (D - 1) + EPS) ** -0.5
    xhat = centred * rstd
    dxhat = dY * gamma
    dx = rstd * (dxhat - dxhat.mean(1, keepdim=True)) - rstd**3 * centred * (dxhat * centred).sum(
        1, keepdim=True
    ) / (D - 1)
    return dx, (dY * xhat).sum(0), dY.sum(0)


def dgamma_from_x(x, gamma, beta, dY):
    # dgamma from the raw input: y = gamma * x read for y = gamma * xhat.
    rstd, xhat = _pieces(x)
    dxhat = dY * gamma
    dx = rstd * (dxhat - dxhat.mean(1, keepdim=True) - xhat * (dxhat * xhat).mean(1, keepdim=True))
    return dx, (dY * x).sum(0), dY.sum(0)


def with_autograd(x, gamma, beta, dY):
    # The right gradients the way the lesson's rule no-autograd forbids.
    import torch.nn.functional as F

    x, gamma, beta = (t.detach().requires_grad_(True) for t in (x, gamma, beta))
    Y = F.layer_norm(x, x.shape[-1:], gamma, beta, eps=1e-5)
    return torch.autograd.grad(Y, (x, gamma, beta), dY)
