"""Decode token ids: your solution goes here.

Check it with:  pytest exercises/decode
"""


def solve(ids, vocab):
    """Turn token ids back into text.

    ids: a list of ints (token ids).
    vocab: the course's vocabulary, a list: vocab[i] is the list of byte values of token i
           (bytes(vocab[i]) is that token's bytes).
    Return a str: the bytes of the tokens, joined in order, decoded as UTF-8 with
    errors="replace", so a byte sequence that is not valid UTF-8 becomes U+FFFD.
    """
    raise NotImplementedError
