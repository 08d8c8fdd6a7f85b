"""Known-correct alternatives to reference.py for "Clip gradients by their global norm".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch


def torch_clip_grad_norm(parameters, max_norm):
    """torch.nn.utils.clip_grad_norm_, which skips None gradients and returns a tensor."""
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm)


def norm_of_norms_in_float32(parameters, max_norm):
    """The global norm as the norm of the per-tensor norms, all in float32, the scale clamped
    to 1 instead of an if."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(scale)
    return total


def flattened_in_float64(parameters, max_norm):
    """Every gradient flattened into one float64 vector, its norm taken once."""
    grads = [p.grad for p in parameters if p.grad is not None]
    flat = torch.cat([g.reshape(-1).double() for g in grads]) if grads else torch.zeros(0)
    total = flat.norm().item()
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return total
