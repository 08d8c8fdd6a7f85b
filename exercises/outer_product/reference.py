"""The author's answer to "The outer product, by broadcasting"."""


def solve(a, b):
    # 1. a as a column [i, 1]: its values run down the rows.
    column = a[:, None]
    # 2. b as a row [1, j]: its values run along the columns.
    row = b[None, :]
    # 3. Broadcasting stretches both to [i, j]; the product stays int64.
    return column * row
