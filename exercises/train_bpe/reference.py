"""The author's answer to "Train byte-pair encoding"."""


def _pair_counts(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def _merge(ids, pair, new_id):
    merged, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def solve(text, merges):
    # 1. Start from the text's UTF-8 bytes: ids 0 to 255.
    ids = list(text.encode("utf-8"))
    learned = []
    for step in range(merges):
        # 2. Count the pairs of the ids as they are now, after the merges so far.
        counts = _pair_counts(ids)
        if not counts:
            break  # fewer than two ids are left: nothing more to merge
        # 3. The most frequent pair; among equally frequent ones, the smallest tuple.
        most = max(counts.values())
        pair = min(p for p, n in counts.items() if n == most)
        # 4. Give it the next new id, 256 + step, and merge it everywhere.
        ids = _merge(ids, pair, 256 + step)
        learned.append(pair)
    # 5. The merges in the order they were learned: the i-th got the id 256 + i.
    return learned
