"""AdamW, step by step: your solution goes here.

Check it with:  pytest exercises/adamw_step
"""

import torch  # noqa: F401  (you will need it)


class AdamW:
    """AdamW as torch.optim.AdamW computes it, for a list of parameters.

    params: a list of torch.nn.Parameter; a frozen one's .grad is None at every step.
    lr, eps, weight_decay: floats; betas: a tuple (beta1, beta2).
    Keep each parameter's state in self.state[p], a dict with "step" (an int, 1 after the
    first step), "exp_avg" and "exp_avg_sq" (tensors shaped like p).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        raise NotImplementedError

    def step(self):
        """Update every parameter that has a gradient, in place, by one AdamW step."""
        raise NotImplementedError

    def zero_grad(self):
        """Clear every parameter's gradient (set it to None, or to zeros)."""
        raise NotImplementedError
