"""Known-correct alternatives to reference.py for "Layer norm backward".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

EPS = 1e-5


def step_by_step(x, gamma, beta, dY):
    """Back through each step of the forward, as makemore part 4 does for batch norm."""
    D = x.shape[1]
    mean = x.sum(1, keepdim=True) / D
    xc = x - mean
    var = (xc**2).sum(1, keepdim=True) / D
    rstd = 1 / (var + EPS).sqrt()
    xhat = xc * rstd
    dxhat = dY * gamma
    drstd = (dxhat * xc).sum(1, keepdim=True)
    dvar = drstd * -0.5 * (var + EPS) ** -1.5
    dxc = dxhat * rstd + dvar * 2 * xc / D
    dx = dxc - dxc.sum(1, keepdim=True) / D
    return dx, (dY * xhat).sum(0), dY.sum(0)


def one_line(x, gamma, beta, dY):
    """The closed form with D written out: (D dxhat - sum dxhat - xhat sum(dxhat xhat)) / D."""
    D = x.shape[1]
    var = x.var(1, correction=0, keepdim=True)
    rstd = (var + EPS).rsqrt()
    xhat = (x - x.mean(1, keepdim=True)) * rstd
    dxhat = dY * gamma
    dx = (
        rstd
        / D
        * (D * dxhat - dxhat.sum(1, keepdim=True) - xhat * (dxhat * xhat).sum(1, keepdim=True))
    )
    return dx, (dY * xhat).sum(0), dY.sum(0)
