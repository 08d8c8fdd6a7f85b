"""The author's answer to "Decode token ids"."""


def solve(ids, vocab):
    # 1. Each id's bytes: vocab[i] is a list of byte values, and bytes() of it makes bytes.
    # 2. Join the bytes of all tokens first: a character may begin in one token and end in
    #    the next, so only the whole sequence is UTF-8.
    data = b"".join(bytes(vocab[i]) for i in ids)
    # 3. Decode once; a sequence that is not valid UTF-8 becomes U+FFFD instead of raising.
    return data.decode("utf-8", errors="replace")
