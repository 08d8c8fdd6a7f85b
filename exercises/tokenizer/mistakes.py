"""Known wrong tokenizers for "A tokenizer class", one per watch-out in exercise.toml.

Each class stands in for the learner's Tokenizer (the harness builds it with the same
arguments) and makes that one mistake; the grader compares a failing answer with what the
harness gets from it to name the mistake. Sources, for facts only: karpathy/minbpe
(minbpe/basic.py and minbpe/regex.py: encode, decode, special tokens) and Stanford CS336
assignment 1 (stanford-cs336/assignment1-basics, tests/test_tokenizer.py).
"""

import re


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


class _Right:
    """The right tokenizer, which each mistake changes in one place."""

    def __init__(self, vocab, merges, special_tokens):
        self.vocab = [bytes(token) for token in vocab]
        self.ranks = {(a, b): 256 + i for i, (a, b) in enumerate(merges)}
        self.special = {text: len(self.vocab) + i for i, text in enumerate(special_tokens)}
        self.special_bytes = {i: text.encode("utf-8") for text, i in self.special.items()}
        self.split = self._pattern(sorted(self.special, key=len, reverse=True))

    @staticmethod
    def _pattern(texts):
        pattern = "|".join(re.escape(text) for text in texts)
        return re.compile(f"({pattern})") if pattern else None

    def _choose(self, ids):
        pair = min(set(zip(ids, ids[1:])), key=lambda p: self.ranks.get(p, float("inf")))
        return pair if pair in self.ranks else None

    def _encode_ordinary(self, text):
        ids = list(text.encode("utf-8"))
        while len(ids) >= 2:
            pair = self._choose(ids)
            if pair is None:
                break
            ids = _merge(ids, pair, self.ranks[pair])
        return ids

    def encode(self, text):
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
        data = b"".join(self.special_bytes.get(i) or self.vocab[i] for i in ids)
        return data.decode("utf-8", errors="replace")


class SpecialsNotSplit(_Right):
    # encode treats a special token as ordinary text: its bytes are merged like any others,
    # so "<|endoftext|>" becomes a dozen ids instead of one. minbpe's RegexTokenizer keeps
    # encode_ordinary (no special tokens) apart from encode, which splits on the allowed
    # special tokens first; CS336's test_roundtrip_unicode_string_with_special_tokens and
    # test_unicode_string_with_special_tokens_matches_tiktoken expect each as its one id.
    def encode(self, text):
        return self._encode_ordinary(text)


class ShorterSpecialFirst(_Right):
    # The special tokens are tried in the order given, so where one starts with another
    # ("<|endoftext|>" and "<|endoftext|><|endoftext|>") the shorter matches first and the
    # longer is never found. CS336's test_overlapping_special_tokens checks exactly this: the
    # longer token must come out as its one id; sorting the alternatives longest first does it.
    def __init__(self, vocab, merges, special_tokens):
        super().__init__(vocab, merges, special_tokens)
        self.split = self._pattern(list(self.special))


class MostFrequentPair(_Right):
    # encode merges the pair that is most frequent in the text being encoded, as training
    # does, instead of the earliest-learned merge. minbpe's encode picks
    # min(stats, key=lambda p: self.merges.get(p, float("inf"))): the lowest merge index, so
    # encoding replays training's order; by count, "créé" merges é before "r\xc3".
    def _choose(self, ids):
        counts = {}
        for pair in zip(ids, ids[1:]):
            if pair in self.ranks:
                counts[pair] = counts.get(pair, 0) + 1
        if not counts:
            return None
        return max(counts, key=lambda p: (counts[p], -self.ranks[p]))


class EachTokenDecoded(_Right):
    # decode turns each token into text on its own and joins the pieces: a character whose
    # bytes span two tokens becomes two U+FFFD. minbpe's decode joins every token's bytes
    # first and decodes once, with errors="replace" (the decode lesson's watch-out too).
    def decode(self, ids):
        return "".join(
            (self.special_bytes.get(i) or self.vocab[i]).decode("utf-8", errors="replace")
            for i in ids
        )
