"""Known wrong answers to "Bigram counts and probabilities", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake. The facts come
from makemore (karpathy/nn-zero-to-hero, lecture 2, "the spelled-out intro to language
modeling"); the code is this course's.
"""

import torch

LETTERS = "abcdefghijklmnopqrstuvwxyz"
STOI = {".": 0, **{c: i + 1 for i, c in enumerate(LETTERS)}}


def _probs(counts):
    P = (counts + 1).float()
    return P / P.sum(1, keepdim=True)


def _count(words, wrap):
    counts = torch.zeros((27, 27), dtype=torch.int64)
    for word in words:
        chars = wrap(word)
        for a, b in zip(chars, chars[1:]):
            counts[STOI[a], STOI[b]] += 1
    return counts


def no_start_end(names):
    # Only the pairs inside each name. makemore's first table adds <S> and <E> (later one
    # "." token) because without them the model cannot tell which letters start or end a
    # name: its first row and column stay empty.
    counts = _count(names.split(), lambda word: word)
    return counts, _probs(counts)


def no_end_token(names):
    # A start token but no end token: the model can begin a name and never stop one (a
    # sampling loop that waits for token 0 runs on).
    counts = _count(names.split(), lambda word: "." + word)
    return counts, _probs(counts)


def empty_line_as_name(names):
    # The lines of the text by split("\n"): a file that ends with a newline gives a last,
    # empty line, counted as a name with the one pair (., .). makemore reads the file with
    # splitlines(), which leaves no such trailing line.
    counts = _count(names.split("\n"), lambda word: "." + word + ".")
    return counts, _probs(counts)


def not_smoothed(names):
    # The counts normalised as they are. makemore adds 1 to every count ("model smoothing")
    # because a pair never seen gets probability 0, and the loss of a name holding it is
    # infinite; a row with no counts divides 0 by 0 (nan).
    counts = _count(names.split(), lambda word: "." + word + ".")
    P = counts.float()
    return counts, P / P.sum(1, keepdim=True)


def sum_without_keepdim(names):
    # The row sums without keepdim=True: makemore works through this broadcasting bug. The
    # [27] sums broadcast as a row, so column j is divided by row j's sum.
    counts = _count(names.split(), lambda word: "." + word + ".")
    P = (counts + 1).float()
    return counts, P / P.sum(1)
