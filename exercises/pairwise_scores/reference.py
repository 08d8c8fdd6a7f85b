"""The author's answer to "Pairwise squared distances, vectorised"."""


def solve(x, y):
    # |x_i - y_j|² = |x_i|² + |y_j|² - 2 x_i · y_j: two terms of one index each, and a
    # matrix product for the third.
    # The squared lengths, shaped to broadcast: x's as a column [n, 1], y's as a row [1, m].
    x_sq = (x**2).sum(dim=1, keepdim=True)
    y_sq = (y**2).sum(dim=1)[None, :]
    # Every pair's dot product in one call: [n, d] @ [d, m] = [n, m].
    dots = x @ y.T
    # [n, 1] + [1, m] broadcasts to [n, m]; no tensor holds more than n × m values.
    return x_sq + y_sq - 2 * dots
