"""A tokenizer class: your solution goes here.

Check it with:  pytest exercises/tokenizer
"""


class Tokenizer:
    """A byte-pair tokenizer with special tokens.

    vocab: the course's vocabulary, a list: vocab[i] is the list of byte values of token i.
    merges: the learned merges in order, each a list [a, b]; the i-th made token 256 + i.
    special_tokens: a list of strings; the i-th gets the id len(vocab) + i.
    """

    def __init__(self, vocab, merges, special_tokens):
        raise NotImplementedError

    def encode(self, text):
        """Return the list of token ids of text (a str); each special token is one id."""
        raise NotImplementedError

    def decode(self, ids):
        """Return the text of ids (a list of ints), decoded with errors="replace"."""
        raise NotImplementedError
