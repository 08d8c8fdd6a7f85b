"""The author's answer to "The most frequent pair"."""


def solve(ids):
    # 1. Count every pair of neighbours, at every position, as pair_counts does.
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    # 2. Fewer than two ids hold no pair: there is nothing to pick.
    if not counts:
        return None
    # 3. The highest count, then the smallest pair in tuple order among those that have it.
    most = max(counts.values())
    return min(pair for pair, n in counts.items() if n == most)
