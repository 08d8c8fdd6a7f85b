"""The author's answer to "Count adjacent pairs"."""


def solve(ids):
    counts = {}
    # 1. Each id with its right neighbour, one tuple per position (none for fewer than two).
    for pair in zip(ids, ids[1:]):
        # 2. One more for this pair at this position; runs are counted at every position.
        counts[pair] = counts.get(pair, 0) + 1
    # 3. The pairs that occur, with their counts.
    return counts
