"""Known-correct alternatives to reference.py for "The whole GPT, forward".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch
import torch.nn.functional as F


def functional_calls(idx, weights, config):
    """torch.nn.functional throughout: F.embedding, F.layer_norm, F.linear,
    F.scaled_dot_product_attention(is_causal=True), F.gelu(approximate="tanh")."""
    B, T = idx.shape
    C, H, eps = config["n_embd"], config["n_head"], config["eps"]
    w = weights

    def ln(x, name):
        return F.layer_norm(x, (C,), w[name + ".weight"], w[name + ".bias"], eps)

    def lin(x, name):
        return F.linear(x, w[name + ".weight"], w[name + ".bias"])

    x = F.embedding(idx, w["wte.weight"]) + F.embedding(torch.arange(T), w["wpe.weight"])
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        q, k, v = lin(ln(x, p + "ln_1"), p + "attn.c_attn").split(C, dim=-1)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + lin(y.transpose(1, 2).reshape(B, T, C), p + "attn.c_proj")
        h = F.gelu(lin(ln(x, p + "ln_2"), p + "mlp.c_fc"), approximate="tanh")
        x = x + lin(h, p + "mlp.c_proj")
    return F.linear(ln(x, "ln_f"), w["wte.weight"])


def in_float64(idx, weights, config):
    """The reference's steps in float64, with a loop over the heads and a tril mask, cast back
    to float32 at the end."""
    w = {k: v.double() for k, v in weights.items()}
    T = idx.shape[1]
    C, H, eps = config["n_embd"], config["n_head"], config["eps"]
    d = C // H

    def ln(x, name):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=False, keepdim=True)
        return (x - mu) / (var + eps).sqrt() * w[name + ".weight"] + w[name + ".bias"]

    keep = torch.tril(torch.ones(T, T)) == 1
    x = w["wte.weight"][idx] + w["wpe.weight"][:T]
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        qkv = ln(x, p + "ln_1") @ w[p + "attn.c_attn.weight"].T + w[p + "attn.c_attn.bias"]
        heads = []
        for j in range(H):
            q = qkv[..., j * d : (j + 1) * d]
            k = qkv[..., C + j * d : C + (j + 1) * d]
            v = qkv[..., 2 * C + j * d : 2 * C + (j + 1) * d]
            s = (q @ k.transpose(-2, -1)) * d**-0.5
            heads.append(s.masked_fill(~keep, float("-inf")).softmax(-1) @ v)
        y = torch.cat(heads, dim=-1)
        x = x + y @ w[p + "attn.c_proj.weight"].T + w[p + "attn.c_proj.bias"]
        h = ln(x, p + "ln_2") @ w[p + "mlp.c_fc.weight"].T + w[p + "mlp.c_fc.bias"]
        h = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
        x = x + h @ w[p + "mlp.c_proj.weight"].T + w[p + "mlp.c_proj.bias"]
    return (ln(x, "ln_f") @ w["wte.weight"].T).float()


def nn_modules(idx, weights, config):
    """nn.Embedding, nn.LayerNorm and nn.Linear modules loaded from the state dict, as a GPT
    class's __init__ and load_state_dict make them, run under torch.no_grad."""
    C, H, eps = config["n_embd"], config["n_head"], config["eps"]
    B, T = idx.shape

    def module(kind, name, *shape):
        m = kind(*shape, eps=eps) if kind is torch.nn.LayerNorm else kind(*shape)
        m.load_state_dict({k: weights[f"{name}.{k}"] for k in m.state_dict()})
        return m

    with torch.no_grad():
        wte = torch.nn.Embedding.from_pretrained(weights["wte.weight"])
        wpe = torch.nn.Embedding.from_pretrained(weights["wpe.weight"])
        x = wte(idx) + wpe(torch.arange(T))
        gelu = torch.nn.GELU(approximate="tanh")
        for i in range(config["n_layer"]):
            p = f"h.{i}."
            ln_1 = module(torch.nn.LayerNorm, p + "ln_1", C)
            c_attn = module(torch.nn.Linear, p + "attn.c_attn", C, 3 * C)
            c_proj = module(torch.nn.Linear, p + "attn.c_proj", C, C)
            ln_2 = module(torch.nn.LayerNorm, p + "ln_2", C)
            c_fc = module(torch.nn.Linear, p + "mlp.c_fc", C, 4 * C)
            mlp_proj = module(torch.nn.Linear, p + "mlp.c_proj", 4 * C, C)
            q, k, v = c_attn(ln_1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
            y = (att.softmax(dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + c_proj(y)
            x = x + mlp_proj(gelu(c_fc(ln_2(x))))
        ln_f = module(torch.nn.LayerNorm, "ln_f", C)
        return ln_f(x) @ wte.weight.T
