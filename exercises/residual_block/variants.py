"""Known-correct alternatives to reference.py for "A pre-norm residual block".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import math

import torch
import torch.nn.functional as F


def functional(x, weights, n_head):
    """F.layer_norm, F.linear, F.scaled_dot_product_attention(is_causal=True) and
    F.gelu(approximate="tanh"), as nanoGPT's Block computes it."""
    w = weights
    B, T, C = x.shape

    def heads(t):
        return t.view(B, T, n_head, C // n_head).transpose(1, 2)

    h = F.layer_norm(x, (C,), w["ln_1.weight"], w["ln_1.bias"])
    q, k, v = F.linear(h, w["attn.c_attn.weight"], w["attn.c_attn.bias"]).split(C, dim=2)
    a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
    a = a.transpose(1, 2).contiguous().view(B, T, C)
    y = x + F.linear(a, w["attn.c_proj.weight"], w["attn.c_proj.bias"])
    h = F.layer_norm(y, (C,), w["ln_2.weight"], w["ln_2.bias"])
    g = F.gelu(F.linear(h, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"]), approximate="tanh")
    return y + F.linear(g, w["mlp.c_proj.weight"], w["mlp.c_proj.bias"])


class _Attention(torch.nn.Module):
    def __init__(self, width, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = torch.nn.Linear(width, 3 * width)
        self.c_proj = torch.nn.Linear(width, width)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
        att = F.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))


class _Block(torch.nn.Module):
    def __init__(self, width, n_head):
        super().__init__()
        self.ln_1 = torch.nn.LayerNorm(width)
        self.attn = _Attention(width, n_head)
        self.ln_2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.ModuleDict(
            {"c_fc": torch.nn.Linear(width, 4 * width), "c_proj": torch.nn.Linear(4 * width, width)}
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        h = F.gelu(self.mlp["c_fc"](self.ln_2(x)), approximate="tanh")
        return x + self.mlp["c_proj"](h)


def nn_block_from_state_dict(x, weights, n_head):
    """minGPT's Block as nn.Modules, the state dict loaded with load_state_dict(strict=True)."""
    block = _Block(x.shape[-1], n_head)
    block.load_state_dict(weights, strict=True)
    with torch.no_grad():
        return block(x)


def loop_over_heads(x, weights, n_head):
    """Each head's attention on its own slice of q, k and v, the heads concatenated."""
    w = weights
    T, C = x.shape[1], x.shape[2]
    d = C // n_head

    def norm(t, name):
        mean = t.mean(-1, keepdim=True)
        var = t.var(-1, keepdim=True, correction=0)
        return (t - mean) / torch.sqrt(var + 1e-5) * w[name + ".weight"] + w[name + ".bias"]

    h = norm(x, "ln_1")
    qkv = h @ w["attn.c_attn.weight"].T + w["attn.c_attn.bias"]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    outs = []
    for i in range(n_head):
        q = qkv[..., i * d : (i + 1) * d]
        k = qkv[..., C + i * d : C + (i + 1) * d]
        v = qkv[..., 2 * C + i * d : 2 * C + (i + 1) * d]
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        outs.append(torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) @ v)
    a = torch.cat(outs, dim=-1) @ w["attn.c_proj.weight"].T + w["attn.c_proj.bias"]
    y = x + a
    g = norm(y, "ln_2") @ w["mlp.c_fc.weight"].T + w["mlp.c_fc.bias"]
    g = F.gelu(g, approximate="tanh")
    return y + g @ w["mlp.c_proj.weight"].T + w["mlp.c_proj.bias"]


def in_float64(x, weights, n_head):
    """The functional block in float64, cast back to float32 at the end."""
    return functional(x.double(), {k: v.double() for k, v in weights.items()}, n_head).float()
