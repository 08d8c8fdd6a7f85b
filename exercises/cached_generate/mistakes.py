"""Known wrong answers to "Generate with a KV cache", one per watch-out in exercise.toml.

Each function takes generate's arguments and does what a learner who makes that mistake does.
All but the first are the cached loop of reference.py with one thing changed, written out here
(mistakes.py cannot import reference.py while grading).
"""

import math

import torch
from course_lib.gpt import gpt_forward, layer_norm, mlp, sub


def recompute_prefix(weights, config, prompt, n):
    # The loop without a cache: the whole sequence through the model for every new token,
    # as nanoGPT's and minGPT's generate do (karpathy/minGPT#95 asked for a cache;
    # karpathy/nanoGPT#76 measured GPT-2 sampling on a CPU at 81.6 s without one, 11.0 s with).
    # The right tokens, with work that grows with the square of the length.
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            logits = gpt_forward(torch.tensor([ids]), weights, config)
            ids.append(int(logits[0, -1].argmax()))
    return ids[len(prompt) :]


def _attention(x, w, n_head, cache, top_left, prefill_mask):
    B, T, C = x.shape
    head = C // n_head
    qkv = x @ w["c_attn.weight"].T + w["c_attn.bias"]
    q, k, v = (t.view(B, T, n_head, head).transpose(1, 2) for t in qkv.split(C, dim=-1))
    if cache:
        k = torch.cat([cache["k"], k], dim=2)
        v = torch.cat([cache["v"], v], dim=2)
    cache["k"], cache["v"] = k, v
    scores = q @ k.transpose(-2, -1) / math.sqrt(head)
    if T > 1 and prefill_mask:
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    if T == 1 and top_left:
        # A causal mask cut from the top-left corner: [1, past + 1], all but key 0 hidden.
        mask = torch.ones(T, k.shape[2], dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    y = torch.softmax(scores, dim=-1) @ v
    y = y.transpose(1, 2).reshape(B, T, C)
    return y @ w["c_proj.weight"].T + w["c_proj.bias"]


def _generate(
    weights, config, prompt, n, restart=False, top_left=False, prefill_mask=True, shared=False
):
    def forward(ids, start, caches):
        T = ids.shape[1]
        x = weights["wte.weight"][ids] + weights["wpe.weight"][start : start + T]
        for i, cache in enumerate(caches):
            w = sub(weights, f"h.{i}.")
            h = layer_norm(x, w["ln_1.weight"], w["ln_1.bias"], config["eps"])
            attn = sub(w, "attn.")
            x = x + _attention(h, attn, config["n_head"], cache, top_left, prefill_mask)
            h = layer_norm(x, w["ln_2.weight"], w["ln_2.bias"], config["eps"])
            x = x + mlp(h, sub(w, "mlp."))
        x = layer_norm(x, weights["ln_f.weight"], weights["ln_f.bias"], config["eps"])
        return x @ weights["wte.weight"].T

    with torch.no_grad():
        layers = config["n_layer"]
        # shared: one dict, n_layer times over
        caches = [{}] * layers if shared else [{} for _ in range(layers)]
        logits = forward(torch.tensor([prompt]), 0, caches)
        tokens = []
        for step in range(n):
            token = int(logits[0, -1].argmax())
            tokens.append(token)
            if step == n - 1:
                break
            position = 0 if restart else len(prompt) + step
            logits = forward(torch.tensor([[token]]), position, caches)
        return tokens


def positions_restart(weights, config, prompt, n):
    # The new token's position counted within the one-token input (arange(T) with T = 1), so
    # every new token gets wpe[0]. mlfoundations/open_lm#74 notes that with a cache the
    # positions must be offset by the cache's length; pytorch/torchchat#1462 and
    # skyzh/tiny-llm#46 fixed generations broken by a wrong start position.
    return _generate(weights, config, prompt, n, restart=True)


def mask_on_one_query(weights, config, prompt, n):
    # The causal mask kept for the one-token step, cut as the top-left [1, past + 1] corner of
    # a square mask, which lets the new token see only the first token: what
    # scaled_dot_product_attention(is_causal=True) does with one query and a longer cache
    # (pytorch/pytorch#144858; rasbt/LLMs-from-scratch#697 fixed the mask's shape with a cache).
    return _generate(weights, config, prompt, n, top_left=True)


def prefill_without_mask(weights, config, prompt, n):
    # The mask dropped whenever a cache is in use, the prompt's pass included: the prompt's
    # tokens see the ones after them, and the cache holds keys and values no uncached pass
    # would make. Mikyx-1/TinyLLM#18 fixed exactly this (the mask applied only when
    # cache is None).
    return _generate(weights, config, prompt, n, prefill_mask=False)


def one_cache_for_all_layers(weights, config, prompt, n):
    # caches = [{}] * n_layer: one dict, n_layer times over (Python's programming FAQ, "How do
    # I create a multidimensional list?", warns that * repeats references). Every layer
    # writes its keys and values into the same cache, so layer 0 attends over layer 1's.
    return _generate(weights, config, prompt, n, shared=True)
