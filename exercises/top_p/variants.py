"""Other right answers to "Top-p (nucleus) sampling": each must pass every case."""

import torch


def ascending_like_hf(logits, p, temperature, g):
    """HF's way round: sorted smallest first, a token removed while the mass up to it is
    <= 1 - p; then ties with the smallest kept probability kept too, and -inf logits
    through a softmax instead of dividing by the sum."""
    scaled = logits / temperature
    probs = torch.softmax(scaled, dim=-1)
    if p >= 1.0:
        return probs, torch.multinomial(probs, 1, generator=g)
    ordered = torch.sort(probs, dim=-1).values
    removed = ordered.cumsum(dim=-1) <= 1 - p
    removed[:, -1] = False
    threshold = ordered.masked_fill(removed, float("inf")).min(dim=-1, keepdim=True).values
    probs = torch.softmax(scaled.masked_fill(probs < threshold, float("-inf")), dim=-1)
    return probs, torch.multinomial(probs, 1, generator=g)


def loop_per_row(logits, p, temperature, g):
    """Row by row in plain Python over the sorted probabilities, in float64; one batched
    draw at the end."""
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    rows = []
    for row in probs:
        values = sorted(row.tolist(), reverse=True)
        total, last = 0.0, values[0]
        for value in values:
            if total >= p and p < 1.0:
                break
            total, last = total + value, value
        kept = torch.where(row >= last, row, torch.zeros_like(row)) if p < 1.0 else row
        rows.append(kept / kept.sum())
    probs = torch.stack(rows).float()
    return probs, torch.multinomial(probs, 1, generator=g)
