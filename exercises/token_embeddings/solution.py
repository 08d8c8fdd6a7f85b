"""Token and position embeddings: your solution goes here.

Check it with:  pytest exercises/token_embeddings
"""

import torch  # noqa: F401  (you will need it)


def solve(idx, wte, wpe):
    """Return the input embeddings of a GPT: each token's vector plus its position's vector.

    idx: an int64 tensor of token ids, shape [B, T] (B sequences of T tokens).
    wte: the token embedding table, a float32 tensor [V, C] (row v is token v's vector).
    wpe: the position embedding table, a float32 tensor [P, C] (row t is position t's
         vector), with P >= T.
    Return a float32 tensor [B, T, C]: at [b, t], wte[idx[b, t]] + wpe[t].
    """
    raise NotImplementedError
