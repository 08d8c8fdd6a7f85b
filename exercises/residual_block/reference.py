"""The author's answer to "A pre-norm residual block"."""

import math

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def linear(x, w, b):
    # nn.Linear's layout: w is [out, in], so x [..., in] multiplies its transpose.
    return x @ w.T + b


def attention(h, w, n_head):
    B, T, C = h.shape
    d = C // n_head
    # 2. One product gives q, k and v side by side, in that order: [B, T, 3C] -> 3 x [B, T, C].
    q, k, v = linear(h, w["attn.c_attn.weight"], w["attn.c_attn.bias"]).split(C, dim=-1)
    # 3. Each cut into n_head heads of width d: [B, T, C] -> [B, n_head, T, d].
    q, k, v = (t.view(B, T, n_head, d).transpose(1, 2) for t in (q, k, v))
    # 4. Scores scaled by 1/sqrt(d), the head's width; a token sees itself and the tokens
    #    before it, never after (the causal mask), then softmax over the keys.
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
    weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
    # 5. The heads' outputs joined back into one row per token, then the output projection.
    out = (weights @ v).transpose(1, 2).reshape(B, T, C)
    return linear(out, w["attn.c_proj.weight"], w["attn.c_proj.bias"])


def mlp(h, w):
    g = linear(h, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"])
    g = 0.5 * g * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g**3)))
    return linear(g, w["mlp.c_proj.weight"], w["mlp.c_proj.bias"])


def solve(x, weights, n_head):
    # 1. Pre-norm: the block normalises a copy of the residual stream with ln_1 for attention.
    h = layer_norm(x, weights["ln_1.weight"], weights["ln_1.bias"])
    # 6. The attention's output is added to x itself, not to the normalised copy.
    y = x + attention(h, weights, n_head)
    # 7. The same again for the MLP, with the block's second norm, ln_2: its own weights.
    h = layer_norm(y, weights["ln_2.weight"], weights["ln_2.bias"])
    # 8. Added to the stream as well, and nothing after: the next block normalises it itself.
    return y + mlp(h, weights)
