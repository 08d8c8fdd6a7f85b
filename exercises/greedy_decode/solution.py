"""Greedy decoding: your solution goes here.

Check it with:  pytest exercises/greedy_decode
"""

import torch  # noqa: F401  (you will need it)
from course_lib import gpt_forward  # noqa: F401  (the gpt_forward lesson's answer)


def solve(prompt, n, weights, config):
    """Generate n tokens after prompt with the tiny GPT, greedily.

    prompt: a list of at least one token id (ints below config["vocab_size"]).
    n: how many new tokens to generate (0 or more).
    weights: the tiny GPT's state dict (a dict name -> float32 tensor).
    config: its config, a dict with block_size, vocab_size, n_layer, n_head, n_embd, eps.
    gpt_forward(idx, weights, config) turns int64 ids [B, T], T at most block_size, into
    logits [B, T, V].
    Return the n new token ids, a list of ints (the prompt not included).
    """
    raise NotImplementedError
