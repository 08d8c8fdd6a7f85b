"""The author's answer to "Bigram counts and probabilities"."""

import torch


def solve(names):
    # 1. Give every character its token: "." is 0, a to z are 1 to 26.
    stoi = {c: i + 1 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}
    stoi["."] = 0
    # 2. Count the pairs of "." + name + "." for each name (split() leaves out empty lines),
    #    so the start and the end of each name are counted too.
    counts = torch.zeros((27, 27), dtype=torch.int64)
    for name in names.split():
        chars = "." + name + "."
        for a, b in zip(chars, chars[1:]):
            counts[stoi[a], stoi[b]] += 1
    # 3. Smooth: add 1 to every count, so no pair has probability 0.
    P = (counts + 1).float()
    # 4. Divide each row by its own sum: [27, 1] broadcasts along each row.
    probs = P / P.sum(1, keepdim=True)
    return counts, probs
