"""Train byte-pair encoding: your solution goes here.

Check it with:  pytest exercises/train_bpe
"""


def solve(text, merges):
    """Learn up to `merges` BPE merges from text.

    text: a str; merges: how many merges to learn (an int, 0 or more).
    Start from the UTF-8 bytes of text. Each step counts the pairs of neighbouring ids,
    takes the most frequent pair (a tie goes to the smallest pair, as Python orders
    tuples), gives it the next new id (256, then 257, ...) and merges it everywhere.
    Stop early when fewer than two ids are left.
    Return the learned pairs in order, as a list of tuples (a, b).

    Your pair_counts and merge_pair solutions are the two halves: copy them into this
    file as helper functions.
    """
    raise NotImplementedError
