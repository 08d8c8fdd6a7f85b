"""The most frequent pair: your solution goes here.

Check it with:  pytest exercises/top_pair
"""


def solve(ids):
    """Return the pair of neighbouring ids that occurs most often.

    ids: a list of ints (token ids).
    Return a tuple (a, b): the pair of an id a directly followed by an id b that occurs at
    the most positions; when several pairs share the highest count, the smallest of them
    in Python's tuple order. Return None when ids has fewer than two ids.
    """
    raise NotImplementedError
