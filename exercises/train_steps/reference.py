"""The author's answer to "A few training steps of the tiny GPT"."""

import torch
import torch.nn.functional as F
from course_lib.gpt import gpt_forward


def train_step(params, config, batch, lr):
    # 1. The inputs are the first T tokens of each window and the targets the last T:
    #    position t's target is the token after it.
    x, y = batch[:, :-1], batch[:, 1:]
    # 2. The forward pass: the course library's gpt_forward gives the logits [B, T, V].
    logits = gpt_forward(x, params, config)
    # 3. The mean cross-entropy over all B * T positions: F.cross_entropy wants [N, V] scores
    #    and [N] targets, so flatten both.
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    # 4. backward() fills each parameter's .grad (a frozen parameter's stays None).
    loss.backward()
    with torch.no_grad():
        for p in params.values():
            if p.grad is None:
                continue
            # 5. The update, in place and outside autograd.
            p -= lr * p.grad
            # 6. Reset the gradients, or the next backward() adds to these.
            p.grad = None
    # 7. Return the loss of this step, from before the update, as a float.
    return loss.item()
