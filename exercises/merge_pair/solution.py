"""Merge one pair: your solution goes here.

Check it with:  pytest exercises/merge_pair
"""


def solve(ids, pair, new_id):
    """Replace every occurrence of pair in ids by new_id.

    ids: a list of ints (token ids); pair: a list of two ints [a, b]; new_id: an int.
    Return a new list of ints: read left to right, each a directly followed by b becomes
    new_id, and the scan goes on after that b, so occurrences never overlap. Every other id
    stays as it is.
    """
    raise NotImplementedError
