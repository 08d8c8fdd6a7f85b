"""The author's answer to "AdamW, step by step"."""

import torch


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        # 1. Keep the parameters and the hyper-parameters; each parameter's state starts empty
        #    and is made at its first step, in self.state[p], as torch.optim keeps it.
        self.params = list(params)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.weight_decay = weight_decay
        self.state = {}

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            # 2. A parameter without a gradient (a frozen one) is skipped: no decay, no state.
            if p.grad is None:
                continue
            g = p.grad
            if p not in self.state:
                self.state[p] = {
                    "step": 0,
                    "exp_avg": torch.zeros_like(p),
                    "exp_avg_sq": torch.zeros_like(p),
                }
            state = self.state[p]
            # 3. Count the step first: t is 1 at the first step, so 1 - beta ** t is never 0.
            state["step"] += 1
            t = state["step"]
            # 4. Decoupled weight decay: shrink the parameter itself by lr * weight_decay,
            #    before the update and apart from the gradient (not added to it, as L2 is).
            p.mul_(1 - self.lr * self.weight_decay)
            # 5. The moving averages of the gradient and of its square.
            state["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
            state["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
            # 6. Bias correction: both averages start at 0, so divide by 1 - beta ** t.
            m_hat = state["exp_avg"] / (1 - beta1**t)
            v_hat = state["exp_avg_sq"] / (1 - beta2**t)
            # 7. The update, with eps added after the square root.
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        # 8. Forget the gradients, as torch.optim's zero_grad does by default.
        for p in self.params:
            p.grad = None
