"""Known wrong answers to "Train byte-pair encoding", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


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


def _train(text, merges, choose, first_id=256):
    ids = list(text.encode("utf-8"))
    learned = []
    for step in range(merges):
        counts = _pair_counts(ids)
        if not counts:
            break
        pair = choose(counts)
        ids = _merge(ids, pair, first_id + step)
        learned.append(pair)
    return learned


def first_seen_wins_a_tie(text, merges):
    # max(counts, key=counts.get): a tie goes to the pair seen first in the text, as in
    # minbpe's training loop (karpathy/minbpe#93 walks through the tie of (256, 97) and
    # (97, 98) in its aaabdaaabac test, which minbpe breaks by first occurrence).
    return _train(text, merges, lambda counts: max(counts, key=counts.get))


def largest_wins_a_tie(text, merges):
    # A tie goes to the largest pair: the rule of Stanford CS336's assignment 1, which
    # prefers the lexicographically greater pair (stanford-cs336/assignment1-basics).
    return _train(text, merges, lambda counts: max(counts, key=lambda p: (counts[p], p)))


def counted_once(text, merges):
    # The pairs counted once, on the bytes, and the most frequent ones taken in turn, with
    # no recount after each merge: the question raised in soaxelbrooke/python-bpe#20 about
    # counting everything in one shot. Merged tokens never pair up again.
    counts = _pair_counts(list(text.encode("utf-8")))
    ranked = sorted(counts, key=lambda p: (-counts[p], p))
    return ranked[:merges]


def ids_after_a_special_token(text, merges):
    # New ids numbered from 257: a special token such as <|endoftext|> added to the vocabulary
    # before training takes 256, and the merges get len(vocab) onwards, as in rasbt's
    # BPETokenizerSimple (rasbt/LLMs-from-scratch, ch02/05_bpe-from-scratch). This lesson has
    # no special tokens.
    def smallest_of_most(counts):
        most = max(counts.values())
        return min(p for p, n in counts.items() if n == most)

    return _train(text, merges, smallest_of_most, first_id=257)
