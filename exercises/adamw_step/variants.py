"""Known-correct alternatives to reference.py for "AdamW, step by step".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
torch.optim.AdamW's first step imports torch._dynamo in the process (5-10 s a case): check
this file with --lesson-preload=torch,torch._dynamo.
"""

import math

import torch


class TorchAdamW(torch.optim.AdamW):
    """torch.optim.AdamW itself (its state's step is a float tensor)."""


class FusedStepSize:
    """torch's own arithmetic: the corrections folded into a step size and the denominator,
    with torch.optim-style state made at the first step."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def step(self):
        beta1, beta2 = self.betas
        with torch.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                state = self.state.setdefault(
                    p,
                    {"step": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)},
                )
                state["step"] += 1
                t = state["step"]
                p.mul_(1 - self.lr * self.weight_decay)
                state["exp_avg"].lerp_(p.grad, 1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                step_size = self.lr / (1 - beta1**t)
                denom = (state["exp_avg_sq"].sqrt() / math.sqrt(1 - beta2**t)).add_(self.eps)
                p.addcdiv_(state["exp_avg"], denom, value=-step_size)

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()


class InFloat64:
    """The state kept in float64 and the update computed there, written back to float32."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad.double()
            state = self.state.get(p)
            if state is None:
                zeros = torch.zeros_like(g)
                state = self.state[p] = {"step": 0, "exp_avg": zeros, "exp_avg_sq": zeros.clone()}
            state["step"] += 1
            t = state["step"]
            x = p.detach().double() * (1 - self.lr * self.weight_decay)
            state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * g
            state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * g * g
            m_hat = state["exp_avg"] / (1 - beta1**t)
            v_hat = state["exp_avg_sq"] / (1 - beta2**t)
            x = x - self.lr * m_hat / (v_hat.sqrt() + self.eps)
            with torch.no_grad():
                p.copy_(x.float())

    def zero_grad(self):
        for p in self.params:
            p.grad = None
