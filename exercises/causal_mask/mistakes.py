"""Known wrong answers to "The causal mask", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def true_where_masked(T):
    # The other convention: True where attention is blocked, as masked_fill(mask, -inf) and
    # nn.MultiheadAttention / nn.Transformer read a boolean mask (pytorch/pytorch#120668
    # documents that it is the opposite of scaled_dot_product_attention's attn_mask). Passed
    # to scaled_dot_product_attention it lets every token see the future: rasbt/LLMs-from-
    # scratch#1061, "the attn_mask is torch.triu(...).bool() ... I think we need ~attn_mask".
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def diagonal_excluded(T):
    # The edge one step too low: the token cannot attend to itself, and the first row has
    # nothing to attend to (a softmax of all -inf is NaN). pbloem/former#10 (an offset of 0
    # for the blocked triangle "will create a row of all -inf, which gives a complete row of
    # NaNs"); RVC-Boss/GPT-SoVITS#965 (a causal mask whose diagonal setting leaves out the
    # current position).
    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)


def upper_triangle(T):
    # tril and triu swapped: karpathy/nanoGPT#170 asks "you use tril(). Shouldn't it be
    # triu()?" about the mask buffer (`torch.tril(torch.ones(block_size, block_size))`,
    # then masked_fill(bias == 0, -inf)); taken literally, the mask keeps the future.
    return torch.triu(torch.ones(T, T, dtype=torch.bool))


def float_mask(T):
    # The right triangle as float32 ones and zeros, nanoGPT's buffer as written. PyTorch
    # adds a float attn_mask to the scores rather than masking with it: pytorch/pytorch#21518
    # (`attn_mask = torch.tril(torch.ones((8,8)))` passed to nn.MultiheadAttention "to
    # enforce causality" did not).
    return torch.tril(torch.ones(T, T))
