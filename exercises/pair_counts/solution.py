"""Count adjacent pairs: your solution goes here.

Check it with:  pytest exercises/pair_counts
"""


def solve(ids):
    """Count the pairs of neighbouring ids.

    ids: a list of ints (token ids).
    Return a dict {(a, b): n}: for every id a directly followed by an id b, the tuple
    (a, b) maps to the number of positions where that happens ({} for fewer than two ids).
    """
    raise NotImplementedError
