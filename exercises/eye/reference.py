"""The author's answer to "The identity matrix, by broadcasting"."""

import torch


def solve(n):
    # 1. The row numbers as a column [n, 1].
    rows = torch.arange(n)[:, None]
    # 2. Against the column numbers (a row): True where the row equals the column.
    same = rows == torch.arange(n)
    # 3. The booleans as int64 ones and zeros.
    return same.long()
