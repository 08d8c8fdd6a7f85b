"""Known wrong answers to "A few training steps of the tiny GPT", one per watch-out in
exercise.toml.

Each function takes train_step's arguments and does what a learner who makes that mistake
does; the harness calls it once per batch, as it calls a learner's train_step.
"""

import torch
import torch.nn.functional as F
from course_lib.gpt import gpt_forward


def _loss(params, config, batch):
    x, y = batch[:, :-1], batch[:, 1:]
    logits = gpt_forward(x, params, config)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def _update(params, lr):
    with torch.no_grad():
        for p in params.values():
            if p.grad is not None:
                p -= lr * p.grad


def gradients_never_reset(params, config, batch, lr):
    # No zero_grad: backward() accumulates into .grad, so step k applies the sum of the first
    # k gradients. pytorch/pytorch#47175 asks for a warning because the bug is so easy to
    # make; wenet-e2e/wekws#73 and meta-pytorch/torchforge#71 fixed it in real trainers.
    loss = _loss(params, config, batch)
    loss.backward()
    _update(params, lr)
    return loss.item()


def reset_before_update(params, config, batch, lr):
    # zero_grad between backward() and step(): the update sees zero gradients, so nothing
    # ever trains. The order of the three calls is what pytorch/tutorials#2693 and #2799
    # (and openpifpaf/openpifpaf#123's question) are about.
    loss = _loss(params, config, batch)
    loss.backward()
    for p in params.values():
        if p.grad is not None:
            p.grad.zero_()
    _update(params, lr)
    return loss.item()


def update_before_backward(params, config, batch, lr):
    # step() before backward(): each update uses the gradient the previous step left in
    # .grad (none at the first step), as in a loop written step(); zero_grad(); backward().
    # pytorch/tutorials#3676 fixed the order of these calls in the optimization tutorial.
    _update(params, lr)
    for p in params.values():
        p.grad = None
    loss = _loss(params, config, batch)
    loss.backward()
    return loss.item()


def targets_not_shifted(params, config, batch, lr):
    # Targets equal to the inputs: the loss of copying the current token.
    # huggingface/transformers#404 fixed GPT and GPT-2's language-modelling loss, which was
    # computed without shifting the logits against the labels.
    x = batch[:, :-1]
    logits = gpt_forward(x, params, config)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x.reshape(-1))
    loss.backward()
    _update(params, lr)
    for p in params.values():
        p.grad = None
    return loss.item()


def shifted_twice(params, config, batch, lr):
    # Targets already shifted, then shifted again (the model-side shift of HF's causal LMs
    # applied to pre-shifted labels): next-next-token prediction. huggingface/transformers#47395
    # fixed a double-shifted loss in GitForCausalLM; #44642 documents the trap for users.
    x, y = batch[:, :-1], batch[:, 1:]
    logits = gpt_forward(x, params, config)[:, :-1]
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[:, 1:].reshape(-1))
    loss.backward()
    _update(params, lr)
    for p in params.values():
        p.grad = None
    return loss.item()


def softmax_over_time(params, config, batch, lr):
    # A hand-written cross-entropy with log_softmax(dim=1), right for [N, V] scores and wrong
    # for [B, T, V]: it normalises over time. stanford-cs336/spring2024-assignment2-systems#4
    # changed its cross-entropy to dim=-1 so that [batch, seq, vocab] logits work.
    x, y = batch[:, :-1], batch[:, 1:]
    logits = gpt_forward(x, params, config)
    logp = torch.log_softmax(logits, dim=1)
    loss = -logp.gather(-1, y.unsqueeze(-1)).mean()
    loss.backward()
    _update(params, lr)
    for p in params.values():
        p.grad = None
    return loss.item()
