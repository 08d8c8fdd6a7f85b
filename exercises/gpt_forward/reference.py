"""The author's answer to "The whole GPT, forward"."""

import math

import torch


def _layer_norm(x, w, b, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def solve(idx, weights, config):
    B, T = idx.shape
    C, n_head, eps = config["n_embd"], config["n_head"], config["eps"]
    head = C // n_head
    # 1. The input: each token's row of wte plus its position's row of wpe (positions 0 .. T-1).
    x = weights["wte.weight"][idx] + weights["wpe.weight"][torch.arange(T)]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        # 2. Attention on the normed input, added to the residual stream (pre-norm):
        #    c_attn makes q, k, v, C columns each, in that order.
        h = _layer_norm(x, weights[p + "ln_1.weight"], weights[p + "ln_1.bias"], eps)
        qkv = h @ weights[p + "attn.c_attn.weight"].T + weights[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(C, dim=-1)
        # 3. Heads: [B, T, C] -> [B, n_head, T, head]; scores scaled by 1/sqrt(head), the
        #    future masked to -inf before the softmax; the heads put back side by side.
        q, k, v = (t.view(B, T, n_head, head).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head)
        att = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ weights[p + "attn.c_proj.weight"].T + weights[p + "attn.c_proj.bias"]
        # 4. The MLP on the normed stream, added to it: c_fc, GELU (tanh form), c_proj.
        h = _layer_norm(x, weights[p + "ln_2.weight"], weights[p + "ln_2.bias"], eps)
        h = h @ weights[p + "mlp.c_fc.weight"].T + weights[p + "mlp.c_fc.bias"]
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))
        x = x + h @ weights[p + "mlp.c_proj.weight"].T + weights[p + "mlp.c_proj.bias"]
    # 5. The final layer norm, then the head tied to the token table: logits = x @ wte.T.
    x = _layer_norm(x, weights["ln_f.weight"], weights["ln_f.bias"], eps)
    return x @ weights["wte.weight"].T
