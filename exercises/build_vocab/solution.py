"""Build the vocabulary: your solution goes here.

Check it with:  pytest exercises/build_vocab
"""


def solve(merges):
    """Return the vocabulary of a byte-pair encoding: every token id's bytes.

    merges: a list of pairs [a, b], as train_bpe learns them; the i-th got the id 256 + i.
    Return a dict {id: bytes}: each id 0 to 255 maps to the single byte of that value, and
    each merge's id to its first part's bytes followed by its second part's.
    """
    raise NotImplementedError
