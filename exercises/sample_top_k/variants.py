"""Other right answers to "Temperature and top-k sampling": each must pass every case."""

import torch


def sort_descending(logits, k, temperature, g):
    """The threshold from a descending sort (nanoGPT's generate reads it from topk)."""
    scaled = logits / temperature
    kth = torch.sort(scaled, dim=-1, descending=True).values[:, k - 1 : k]
    probs = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)
    return probs, torch.multinomial(probs, 1, generator=g)


def scatter_top_k(logits, k, temperature, g):
    """Only the top k scattered into a row of -inf: no threshold compared."""
    scaled = logits / temperature
    top = torch.topk(scaled, k, dim=-1)
    kept = torch.full_like(scaled, float("-inf")).scatter(-1, top.indices, top.values)
    probs = torch.softmax(kept, dim=-1)
    return probs, torch.multinomial(probs, 1, generator=g)


def in_float64(logits, k, temperature, g):
    """The softmax in float64, cast back to float32 before the draw."""
    scaled = logits.double() / temperature
    kth = torch.topk(scaled, k, dim=-1).values[:, -1:]
    probs = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1).float()
    return probs, torch.multinomial(probs, 1, generator=g)
