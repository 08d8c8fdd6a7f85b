"""Known wrong answers to "Temperature and top-k sampling", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def _top_k(scaled, k):
    kth = torch.topk(scaled, k, dim=-1).values[:, -1:]
    return scaled.masked_fill(scaled < kth, float("-inf"))


def temperature_after_softmax(logits, k, temperature, g):
    # The temperature applied to the probabilities instead of the logits, where it cancels
    # against the normalisation: google/gemma.cpp#981 ("the temperature flag is not taking
    # effect since it's applied to the exponentiated logits and cancels against the
    # normalization"); MoonshotAI/Kimi-Audio#161 moved its division before the softmax too.
    probs = torch.softmax(_top_k(logits, k), dim=-1) / temperature
    probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs, torch.multinomial(probs, 1, generator=g)


def top_k_sorted_ascending(logits, k, temperature, g):
    # The threshold read from a sort in ascending order, as if it were descending: the k-th
    # smallest logit, so all but the k - 1 smallest tokens are kept. RBLN-SW/vllm-rbln#58
    # ("the logit was sorted in ascending order, but the masking was written assuming that
    # the logit was sorted in descending order"); fluxions-ai/vui#32 read the wrong end of
    # an ascending top-k and collapsed sampling to greedy.
    scaled = logits / temperature
    kth = torch.sort(scaled, dim=-1).values[:, k - 1 : k]
    probs = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)
    return probs, torch.multinomial(probs, 1, generator=g)


def top_k_keeps_one_more(logits, k, temperature, g):
    # One token too many kept: kingoflolz/mesh-transformer-jax#164, whose mask compared the
    # rank with `> top_k` where `>= top_k` was meant, so top_k = 1 still left two tokens.
    scaled = logits / temperature
    keep = min(k + 1, scaled.shape[-1])
    probs = torch.softmax(_top_k(scaled, keep), dim=-1)
    return probs, torch.multinomial(probs, 1, generator=g)
