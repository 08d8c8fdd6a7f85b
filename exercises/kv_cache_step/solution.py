"""One step with a KV cache: your solution goes here.

Check it with:  pytest exercises/kv_cache_step
"""

import torch  # noqa: F401  (you will need it)


def solve(q, k, v, K_cache, V_cache):
    """Add one new token to the caches and compute its attention output.

    q, k, v: the new token's query, key and value, nested lists of shape [heads, width].
    K_cache, V_cache: the earlier tokens' keys and values, shape [heads, past, width].
    Return three nested Python lists, in this order:
      out      [heads, width]           the new token's attention output
      k_cache  [heads, past + 1, width] the keys, the new token's last
      v_cache  [heads, past + 1, width] the values, the new token's last
    """
    raise NotImplementedError
