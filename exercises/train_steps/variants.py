"""Known-correct alternatives to reference.py for "A few training steps of the tiny GPT".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch
import torch.nn.functional as F
from course_lib.gpt import gpt_forward


def _own_forward(idx, w, config):
    """The tiny GPT written with torch's own layers: F.layer_norm, scaled_dot_product_attention
    with is_causal, F.gelu(approximate="tanh"), F.linear."""
    B, T = idx.shape
    C, H, eps = config["n_embd"], config["n_head"], config["eps"]
    x = w["wte.weight"][idx] + w["wpe.weight"][:T]
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        h = F.layer_norm(x, (C,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = F.linear(h, w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"])
        q, k, v = (t.reshape(B, T, H, C // H).transpose(1, 2) for t in qkv.split(C, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(B, T, C)
        x = x + F.linear(y, w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"])
        h = F.layer_norm(x, (C,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        h = F.linear(h, w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"])
        h = F.gelu(h, approximate="tanh")
        x = x + F.linear(h, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
    x = F.layer_norm(x, (C,), w["ln_f.weight"], w["ln_f.bias"], eps)
    return x @ w["wte.weight"].T


def own_forward_classes_on_axis_1(params, config, batch, lr):
    """Its own forward with torch's layers; cross_entropy on [B, V, T] logits (the classes on
    axis 1, as torch's K-dimensional form takes them); gradients reset with zero_()."""
    x, y = batch[:, :-1], batch[:, 1:]
    loss = F.cross_entropy(_own_forward(x, params, config).transpose(1, 2), y)
    loss.backward()
    with torch.no_grad():
        for p in params.values():
            if p.grad is not None:
                p.add_(p.grad, alpha=-lr)
                p.grad.zero_()
    return loss


def reset_first_by_hand(params, config, batch, lr):
    """Gradients reset at the start of the step; the loss written by hand (logsumexp minus
    the target's score); the update as p.sub_(lr * p.grad)."""
    for p in params.values():
        p.grad = None
    x, y = batch[:, :-1], batch[:, 1:]
    logits = gpt_forward(x, params, config)
    picked = logits.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    loss = (torch.logsumexp(logits, dim=-1) - picked).mean()
    loss.backward()
    with torch.no_grad():
        for p in params.values():
            if p.requires_grad:
                p.sub_(lr * p.grad)
    return float(loss)


def sum_over_count(params, config, batch, lr):
    """The summed cross-entropy divided by the number of positions, math.prod of the shape."""
    x, y = batch[:, :-1], batch[:, 1:]
    logits = gpt_forward(x, params, config)
    total = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum")
    loss = total / math.prod(y.shape)
    loss.backward()
    with torch.no_grad():
        for p in params.values():
            if p.grad is not None:
                p -= lr * p.grad
                p.grad = None
    return loss.item()


def torch_optim_sgd(params, config, batch, lr):
    """torch.optim.SGD (no momentum, so a new optimizer each step is the same one), with
    zero_grad() first, as nanoGPT's loop orders the calls."""
    optimizer = torch.optim.SGD(list(params.values()), lr=lr)
    optimizer.zero_grad(set_to_none=True)
    x, y = batch[:, :-1], batch[:, 1:]
    logits = gpt_forward(x, params, config)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
