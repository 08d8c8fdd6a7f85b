"""The author's answer to "A tokenizer class"."""

import re


def merge(ids, pair, new_id):
    """Every occurrence of pair in ids, left to right and never overlapping, as new_id."""
    merged, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


class Tokenizer:
    def __init__(self, vocab, merges, special_tokens):
        # 1. Each token's bytes, by id; the i-th merge made token 256 + i.
        self.vocab = [bytes(token) for token in vocab]
        self.ranks = {(a, b): 256 + i for i, (a, b) in enumerate(merges)}
        # 2. The special tokens come after the vocabulary, in the order given.
        self.special = {text: len(self.vocab) + i for i, text in enumerate(special_tokens)}
        self.special_bytes = {i: text.encode("utf-8") for text, i in self.special.items()}
        # 3. A pattern that finds them in a text, the longest first: where one special token
        #    starts with another, the shorter one must not match first and split the longer.
        longest_first = sorted(self.special, key=len, reverse=True)
        pattern = "|".join(re.escape(text) for text in longest_first)
        self.split = re.compile(f"({pattern})") if pattern else None

    def _encode_ordinary(self, text):
        # 4. Plain text: its UTF-8 bytes, then the merges, always the earliest-learned
        #    (lowest id) pair present first, as training made them, until none applies.
        ids = list(text.encode("utf-8"))
        while len(ids) >= 2:
            pairs = set(zip(ids, ids[1:]))
            pair = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if pair not in self.ranks:
                break
            ids = merge(ids, pair, self.ranks[pair])
        return ids

    def encode(self, text):
        # 5. Cut the text at each special token, which becomes its one id; the text between
        #    is encoded on its own, so no merge crosses a special token.
        if self.split is None:
            return self._encode_ordinary(text)
        ids = []
        for part in self.split.split(text):
            if part in self.special:
                ids.append(self.special[part])
            elif part:
                ids.extend(self._encode_ordinary(part))
        return ids

    def decode(self, ids):
        # 6. Join the bytes of every token (a special token's are its text's UTF-8), then
        #    decode once: a character may start in one token and end in the next.
        data = b"".join(self.special_bytes.get(i) or self.vocab[i] for i in ids)
        return data.decode("utf-8", errors="replace")
