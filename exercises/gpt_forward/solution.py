"""The whole GPT, forward: your solution goes here.

Check it with:  pytest exercises/gpt_forward
"""

import math  # noqa: F401  (you may need it)

import torch  # noqa: F401  (you will need it)


def solve(idx, weights, config):
    """Return the logits of the tiny GPT for the token ids idx.

    idx: an int64 tensor of token ids, shape [B, T], T at most config["block_size"].
    weights: the state dict, a dict name -> float32 tensor, in GPT-2's names and nn.Linear's
        [out, in] layout: wte.weight [V, C], wpe.weight [block_size, C], for each block i
        h.{i}.ln_1.weight/bias, h.{i}.attn.c_attn.weight [3C, C]/bias (q, k, v in that
        order), h.{i}.attn.c_proj.weight/bias, h.{i}.ln_2.weight/bias,
        h.{i}.mlp.c_fc.weight [4C, C]/bias, h.{i}.mlp.c_proj.weight [C, 4C]/bias; then
        ln_f.weight/bias. No lm_head: the head is wte.weight.
    config: a dict with n_layer, n_head, n_embd, block_size, vocab_size, eps (and more).
    Return a float32 tensor [B, T, V].
    """
    raise NotImplementedError
