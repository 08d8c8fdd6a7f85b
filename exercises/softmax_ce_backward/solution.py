"""Softmax and cross-entropy backward: your solution goes here.

Check it with:  pytest exercises/softmax_ce_backward
"""

import torch  # noqa: F401  (you will need it)


def solve(logits, targets):
    """Return dlogits, the gradient of F.cross_entropy(logits, targets) (the mean over the
    examples) with respect to logits.

    logits:  float64 tensor [N, C], one score per class for each example.
    targets: int64 tensor [N], each example's right class.
    Return a float64 tensor [N, C].
    """
    raise NotImplementedError
