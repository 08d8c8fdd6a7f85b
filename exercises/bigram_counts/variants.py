"""Known-correct alternatives to reference.py for "Bigram counts and probabilities".

``pytest --lesson-check`` requires each to pass every case, and prints how close each comes to
the tolerance: a right answer a learner might write must never fail by rounding alone.
"""

import torch


def bincount_in_float64(names):
    """Pairs counted with torch.bincount on i * 27 + j; the probabilities in float64, cast."""
    tokens = {".": 0, **{c: i + 1 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}}
    flat = []
    for name in names.split():
        chars = "." + name + "."
        flat += [tokens[a] * 27 + tokens[b] for a, b in zip(chars, chars[1:])]
    counts = torch.bincount(torch.tensor(flat, dtype=torch.int64), minlength=27 * 27)
    counts = counts.reshape(27, 27)
    P = counts.double() + 1
    return counts, (P / P.sum(dim=1, keepdim=True)).float()


def normalize_rows(names):
    """A dict of pair counts first, then torch.nn.functional.normalize with p=1 by rows."""
    pairs = {}
    for name in names.splitlines():
        if not name:
            continue
        chars = [".", *name, "."]
        for pair in zip(chars, chars[1:]):
            pairs[pair] = pairs.get(pair, 0) + 1
    counts = torch.zeros(27, 27, dtype=torch.int64)
    for (a, b), n in pairs.items():
        i = 0 if a == "." else ord(a) - ord("a") + 1
        j = 0 if b == "." else ord(b) - ord("a") + 1
        counts[i, j] = n
    probs = torch.nn.functional.normalize((counts + 1).float(), p=1, dim=1)
    return counts, probs
