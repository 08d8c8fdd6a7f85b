"""Bigram counts and probabilities: your solution goes here.

Check it with:  pytest exercises/bigram_counts
"""

import torch  # noqa: F401  (you will need it)


def solve(names):
    """Count the character pairs of a names file, and make them probabilities.

    names: the text of the file, one name a line (a to z; empty lines are not names).
    Tokens: "." is 0 (the start and the end of a name), a to z are 1 to 26.
    Return counts, probs:
      counts: an int64 tensor [27, 27], counts[i, j] = how often token j follows token i
              in "." + name + ".", over all names;
      probs: a float32 tensor [27, 27], each row of counts + 1 divided by its sum.
    """
    raise NotImplementedError
