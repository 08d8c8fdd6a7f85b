"""The author's answer to "Generate with a KV cache"."""

import math

import torch
from course_lib.gpt import layer_norm, mlp, sub


def _attention(x, w, n_head, cache):
    """Attention of the new tokens x [1, T, C] over the cached ones and themselves; the new
    keys and values are appended to *cache* (a dict holding k and v [1, heads, past, head])."""
    B, T, C = x.shape
    head = C // n_head
    qkv = x @ w["c_attn.weight"].T + w["c_attn.bias"]
    q, k, v = (t.view(B, T, n_head, head).transpose(1, 2) for t in qkv.split(C, dim=-1))
    if cache:
        # 4. The new keys and values go at the end of the cache, along time (axis 2).
        k = torch.cat([cache["k"], k], dim=2)
        v = torch.cat([cache["v"], v], dim=2)
    cache["k"], cache["v"] = k, v
    scores = q @ k.transpose(-2, -1) / math.sqrt(head)
    if T > 1:
        # 2. The prompt's tokens see only themselves and the tokens before them: causal.
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    # 5. One new token needs no mask: it may see every cached token, and itself.
    y = torch.softmax(scores, dim=-1) @ v
    y = y.transpose(1, 2).reshape(B, T, C)
    return y @ w["c_proj.weight"].T + w["c_proj.bias"]


def _forward(ids, start, weights, config, caches):
    """The logits [1, T, V] of tokens ids [1, T] at positions start, start + 1, ...; each
    layer's keys and values join its own cache."""
    T = ids.shape[1]
    # 3. The new tokens' positions go on from the cache's length, not from 0.
    x = weights["wte.weight"][ids] + weights["wpe.weight"][start : start + T]
    for i, cache in enumerate(caches):
        w = sub(weights, f"h.{i}.")
        h = layer_norm(x, w["ln_1.weight"], w["ln_1.bias"], config["eps"])
        x = x + _attention(h, sub(w, "attn."), config["n_head"], cache)
        h = layer_norm(x, w["ln_2.weight"], w["ln_2.bias"], config["eps"])
        x = x + mlp(h, sub(w, "mlp."))
    x = layer_norm(x, weights["ln_f.weight"], weights["ln_f.bias"], config["eps"])
    return x @ weights["wte.weight"].T


def generate(weights, config, prompt, n):
    with torch.no_grad():
        # 1. One cache per layer, each its own dict.
        caches = [{} for _ in range(config["n_layer"])]
        # 2. The prompt once, through every layer: its keys and values fill the caches.
        logits = _forward(torch.tensor([prompt]), 0, weights, config, caches)
        tokens = []
        for step in range(n):
            token = int(logits[0, -1].argmax())
            tokens.append(token)
            if step == n - 1:
                break
            # 3-5. Then one token at a time: only the newest goes through the model.
            position = len(prompt) + step
            logits = _forward(torch.tensor([[token]]), position, weights, config, caches)
        return tokens
