"""Grouped-query attention: your solution goes here.

Check it with:  pytest exercises/grouped_query_attention
"""

import torch  # noqa: F401  (you will need it)


def solve(Q, K, V):
    """Attention where a group of query heads shares one key/value head.

    Q: nested list of shape [query_heads, time, width].
    K, V: shape [kv_heads, time, width]; query_heads is a multiple of kv_heads.
    Query heads 0 .. g-1 use key/value head 0, the next g query heads use head 1, and so
    on, where g = query_heads // kv_heads. Use no mask.
    Return a nested Python list of shape [query_heads, time, width].
    """
    raise NotImplementedError
