"""Known-correct alternatives to reference.py for "Token and position embeddings".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch
import torch.nn.functional as F


def functional_embedding(idx, wte, wpe):
    """torch.nn.functional.embedding for both lookups, the positions from torch.arange."""
    positions = torch.arange(idx.shape[1])
    return F.embedding(idx, wte) + F.embedding(positions, wpe)


def one_hot_matmul_in_float64(idx, wte, wpe):
    """A lookup written as a one-hot matrix product, in float64, cast back to float32."""
    one_hot = F.one_hot(idx, wte.shape[0]).double()
    out = one_hot @ wte.double() + wpe[: idx.shape[1]].double()
    return out.to(torch.float32)


def nn_embedding_modules(idx, wte, wpe):
    """nn.Embedding modules built from the tables, as a GPT's __init__ makes them."""
    tok = torch.nn.Embedding.from_pretrained(wte)
    pos = torch.nn.Embedding.from_pretrained(wpe)
    with torch.no_grad():
        return tok(idx) + pos(torch.arange(idx.shape[1])).unsqueeze(0)
