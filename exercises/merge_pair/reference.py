"""The author's answer to "Merge one pair"."""


def solve(ids, pair, new_id):
    a, b = pair
    merged = []
    i = 0
    # 1. Read left to right, one position at a time, up to and including the last id.
    while i < len(ids):
        # 2. An occurrence starts here when this id is a and a next id exists and is b.
        if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
            merged.append(new_id)
            # 3. Both ids are used up: continue after the pair, so occurrences never overlap.
            i += 2
        else:
            # 4. Any other id, the last one too, is kept as it is.
            merged.append(ids[i])
            i += 1
    return merged
