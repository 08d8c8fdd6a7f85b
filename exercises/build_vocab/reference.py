"""The author's answer to "Build the vocabulary"."""


def solve(merges):
    # 1. Ids 0 to 255 are the single bytes: bytes([i]), a bytes object of length 1.
    vocab = {i: bytes([i]) for i in range(256)}
    # 2. The i-th merge got the id 256 + i; go in that order, so its parts are built first.
    for i, (a, b) in enumerate(merges):
        # 3. A merged token's bytes are its first part's bytes, then its second part's.
        vocab[256 + i] = vocab[a] + vocab[b]
    return vocab
