"""Known wrong answers to "Clip gradients by their global norm", one per watch-out in
exercise.toml.

Each function takes solve's arguments (the parameters and max_norm) and does what a learner
who makes that mistake does, returning the norm such a learner returns. The harness reads the
gradients back after the call, as it does for a learner.
"""

import math


def _grads(parameters):
    return [p.grad for p in parameters if p.grad is not None]


def _total(grads):
    return math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))


def per_tensor_norm(parameters, max_norm):
    # Each gradient clipped by its own norm, as Keras's optimizer option clipnorm does (its
    # global_clipnorm is the global one) and tf.clip_by_norm against tf.clip_by_global_norm;
    # magenta/magenta#1025 switched its default from the per-tensor kind to the global one.
    # Every tensor ends up under max_norm, but together they are not, and the direction of the
    # whole update changes.
    grads = _grads(parameters)
    total = _total(grads)
    for g in grads:
        own = _total([g])
        if own > max_norm:
            g.mul_(max_norm / (own + 1e-6))
    return total


def clipped_copy(parameters, max_norm):
    # The scaled gradient bound to a new tensor (g = g * scale, or p.grad = p.grad * scale):
    # torch's in-place operations end in an underscore, which is why clip_grad_norm became
    # clip_grad_norm_ in PyTorch 0.4; without one, the caller's gradient is never touched.
    grads = _grads(parameters)
    total = _total(grads)
    if total > max_norm:
        for g in grads:
            g = g * (max_norm / (total + 1e-6))  # the mistake: a new tensor
    return total


def no_epsilon(parameters, max_norm):
    # The scale max_norm / total, with no epsilon: optax's clip_by_global_norm divides by the
    # norm itself. Nearly the same while the norm is large; for small gradients it differs,
    # and an all-zero gradient clipped by another rule would divide by zero.
    grads = _grads(parameters)
    total = _total(grads)
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / total)
    return total


def clip_always(parameters, max_norm):
    # Every gradient scaled by max_norm / (total + 1e-6) whatever the total: small gradients
    # are scaled up to max_norm. DingfanChen/GS-WGAN#5 found this and pointed to the missing
    # clamp(max=1.0); pytorch/pytorch#151554 notes torch's documented formula omits that clamp.
    grads = _grads(parameters)
    total = _total(grads)
    for g in grads:
        g.mul_(max_norm / (total + 1e-6))
    return total


def norm_after_clipping(parameters, max_norm):
    # The norm measured again after clipping (about max_norm whenever it clips), the
    # misreading radixark/miles#2132 corrected in a docstring and verl-project/verl#2282's
    # report asked about: torch's clip_grad_norm_ returns the total from before clipping.
    grads = _grads(parameters)
    total = _total(grads)
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return _total(grads)
