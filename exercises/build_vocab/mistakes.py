"""Known wrong answers to "Build the vocabulary", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def _bytes_vocab():
    return {i: bytes([i]) for i in range(256)}


def bytes_of_an_int(merges):
    # bytes(n) for the byte n: in Python 3 bytes(97) is 97 zero bytes, not b"a" (the Python
    # docs: given an int, "a zero-filled bytes object of the given length"; Stack Overflow
    # 21017698, "Converting int to bytes in Python 3", where bytes(3) + b"\r\n" surprises,
    # and discuss.python.org/t/5058, where bytes(1) gives b"\x00"). The parts' ids are
    # made into bytes directly instead of looked up in the vocabulary.
    vocab = _bytes_vocab()
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = bytes(a) + bytes(b)
    return vocab


def parts_swapped(merges):
    # The second part's bytes before the first's: the pair (a, b) is a followed by b, and
    # the token reads vocab[a] + vocab[b] (karpathy/minbpe base.py, `vocab[p0] + vocab[p1]`;
    # no public bug report found for the swap).
    vocab = _bytes_vocab()
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = vocab[b] + vocab[a]
    return vocab


def merges_without_bytes(merges):
    # Only the merged tokens, without the 256 single bytes they are built on: decode then
    # fails on any id below 256. minbpe's _build_vocab starts from the 256 bytes
    # (karpathy/minbpe base.py); the bytes are built here to look the parts up, and then
    # left out of the answer.
    vocab = _bytes_vocab()
    merged = {}
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = merged[256 + i] = vocab[a] + vocab[b]
    return merged
