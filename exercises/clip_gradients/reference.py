"""The author's answer to "Clip gradients by their global norm"."""

import torch


def solve(parameters, max_norm):
    # 1. Only the parameters that have a gradient take part: a frozen one's .grad is None.
    grads = [p.grad for p in parameters if p.grad is not None]
    # 2. The global L2 norm: the square root of the sum of every gradient's squared entries,
    #    over all parameters together (the norm of the per-tensor norms).
    total = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)) if grads else torch.tensor(0.0)
    total = float(total)
    # 3. Clip only when the total is over max_norm: scale every gradient by the same factor,
    #    max_norm / (total + 1e-6); the epsilon keeps the division safe.
    if total > max_norm:
        scale = max_norm / (total + 1e-6)
        # 4. In place, so that the optimizer, which reads p.grad, sees the clipped values.
        for g in grads:
            g.mul_(scale)
    # 5. Return the total norm from before clipping: what a training log records.
    return total
