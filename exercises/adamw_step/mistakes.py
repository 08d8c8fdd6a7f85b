"""Known wrong optimizers for "AdamW, step by step", one per watch-out in exercise.toml.

Each class stands in for the learner's AdamW (the harness builds it with the same arguments
and steps it the same way) and makes that one mistake. Sources, for facts only: PyTorch's
torch.optim.AdamW documentation (its algorithm box) and torch/optim/adamw.py; Loshchilov &
Hutter, "Decoupled Weight Decay Regularization" (arXiv:1711.05101); Kingma & Ba, "Adam"
(arXiv:1412.6980, Algorithm 1 and the end of its section 2); Stanford CS336 assignment 1
(its AdamW algorithm and test_adamw, which compares with torch.optim.AdamW); ARENA 3.0
chapter 0 part 3, optimization (its AdamW test steps torch's and the learner's side by side).
"""

import torch


class _Right:
    """The right AdamW, which each mistake changes in one place."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}

    def _grad(self, p):
        return p.grad

    def _decay(self, p):
        p.mul_(1 - self.lr * self.weight_decay)

    def _corrections(self, t):
        beta1, beta2 = self.betas
        return 1 - beta1**t, 1 - beta2**t

    def _update(self, p, m, v, t):
        c1, c2 = self._corrections(t)
        p.sub_(self.lr * (m / c1) / ((v / c2).sqrt() + self.eps))

    def _count(self, state):
        state["step"] += 1
        return state["step"]

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            state = self.state.setdefault(
                p, {"step": 0, "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
            )
            t = self._count(state)
            g = self._grad(p)
            self._decay(p)
            state["exp_avg"].mul_(beta1).add_(g, alpha=1 - beta1)
            state["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
            self._update(p, state["exp_avg"], state["exp_avg_sq"], t)

    def zero_grad(self):
        for p in self.params:
            p.grad = None


class L2Penalty(_Right):
    # Weight decay added to the gradient, as torch.optim.Adam's weight_decay does (an L2
    # penalty; pytorch/pytorch#38767 and #48793 asked why its documentation called it
    # decoupled), so the decay term goes through the moving averages and is divided by
    # sqrt(v): Loshchilov & Hutter's point, and why AdamW exists (google-deepmind/optax#417).
    def _grad(self, p):
        return p.grad + self.weight_decay * p

    def _decay(self, p):
        pass


class NoBiasCorrection(_Right):
    # The averages used as they are, without dividing by 1 - beta ** t: early steps are
    # far too small in m and too small in v (keras-team/keras#10129 added the correction to
    # a Keras Adam that had none; Kingma & Ba, section 3).
    def _corrections(self, t):
        return 1.0, 1.0


class ZeroBasedStep(_Right):
    # The step counted from 0 and incremented after its use, so the first step's correction
    # is 1 - beta ** 0 = 0 and the update is inf / inf = NaN: deeplearning4j/nd4j#1227
    # ("t should start from 1. The first alphat will be NaN if t start from 0") and
    # tracel-ai/burn#834 (AdamW NaN, "because we start at time 0").
    def _count(self, state):
        t = state["step"]
        state["step"] += 1
        return t


class EpsInsideSqrt(_Right):
    # eps added to v before the square root, sqrt(v_hat + eps): FluxML/Flux.jl#448 moved it
    # out to match the papers and torch; Keras's RMSprop had it inside (keras-team/keras#435).
    def _update(self, p, m, v, t):
        c1, c2 = self._corrections(t)
        p.sub_(self.lr * (m / c1) / ((v / c2 + self.eps).sqrt()))


class EpsAfterStepSize(_Right):
    # The "more efficient" form at the end of Kingma & Ba's section 2, also CS336's AdamW
    # algorithm: step size lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t) and m / (sqrt(v) +
    # eps), so eps is added to the uncorrected sqrt(v) (keras-team/keras#17391 found
    # Keras's Adam does this). The same while eps is negligible; torch's adds eps to
    # sqrt(v_hat), and small gradients show the difference.
    def _update(self, p, m, v, t):
        c1, c2 = self._corrections(t)
        p.sub_(self.lr * (c2**0.5 / c1) * m / (v.sqrt() + self.eps))


class DecayAfterUpdate(_Right):
    # The decay applied to the parameter after the Adam update instead of before it: the
    # order of CS336's AdamW algorithm (its last line, theta -= lr * lambda * theta), where
    # torch.optim.AdamW decays first. The two differ by lr**2 * weight_decay * update: they
    # part only at a large learning rate and decay.
    def _decay(self, p):
        pass

    def _update(self, p, m, v, t):
        super()._update(p, m, v, t)
        p.mul_(1 - self.lr * self.weight_decay)


class DecayWithoutLr(_Right):
    # p -= weight_decay * p, the learning rate left out of the decay: the review of
    # pytorch/pytorch#4429 ("This new formulation is not multiplying it by the learning
    # rate") and a comment on pytorch/pytorch#3740 asking why AdamW's decay is multiplied by
    # lr. torch multiplies by lr (Loshchilov & Hutter multiply by the schedule multiplier).
    def _decay(self, p):
        p.mul_(1 - self.weight_decay)
