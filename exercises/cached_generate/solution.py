"""Generate with a KV cache: your solution goes here.

Check it with:  pytest exercises/cached_generate
"""

import torch  # noqa: F401  (you will need it)
from course_lib.gpt import layer_norm, mlp, sub  # noqa: F401  (the tiny GPT's parts)


def generate(weights, config, prompt, n):
    """Greedy decoding with a KV cache: return the n new token ids, a list of ints.

    weights: the GPT's state dict, name -> float32 tensor (course_lib/gpt.py lists the names).
    config: a dict with vocab_size, n_layer, n_head, n_embd, block_size and eps.
    prompt: the prompt's token ids, a list of ints (at least one); len(prompt) + n never
        exceeds block_size.
    n: how many tokens to generate, at least 1.
    """
    raise NotImplementedError
