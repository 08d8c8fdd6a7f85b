"""Known wrong answers to "Greedy decoding", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch
import torch.nn.functional as F
from course_lib import gpt_forward


def crop_keeps_first_tokens(prompt, n, weights, config):
    # The crop without its minus sign: idx[:, :block_size] keeps the first block_size tokens,
    # where nanoGPT's generate keeps the last (idx[:, -block_size:]). Once the sequence is
    # longer than the context, the model reads the same first 32 tokens at every step and the
    # new ones never reach it.
    block_size = config["block_size"]
    idx = torch.tensor([prompt])
    for _ in range(n):
        logits = gpt_forward(idx[:, :block_size], weights, config)
        idx = torch.cat([idx, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return idx[0, len(prompt) :].tolist()


def argmax_at_first_position(prompt, n, weights, config):
    # The prediction of position 0 (after the context's first token) instead of the last:
    # keras-team/keras-hub#1588 read logits[:, i, :] for the i-th step's token, where the
    # next token is always predicted at the last position, logits[:, -1, :].
    block_size = config["block_size"]
    idx = torch.tensor([prompt])
    for _ in range(n):
        logits = gpt_forward(idx[:, -block_size:], weights, config)
        idx = torch.cat([idx, logits[:, 0, :].argmax(dim=-1, keepdim=True)], dim=1)
    return idx[0, len(prompt) :].tolist()


def softmax_over_positions(prompt, n, weights, config):
    # F.softmax(logits, dim=1) written for [B, V] scores, applied to [B, T, V] logits before
    # the last position is taken: dim=1 is then the time axis, so each token's scores are
    # normalised across positions and the argmax of the last row changes. nanoGPT's generate
    # takes logits[:, -1, :] first, then softmax(dim=-1).
    block_size = config["block_size"]
    idx = torch.tensor([prompt])
    for _ in range(n):
        probs = F.softmax(gpt_forward(idx[:, -block_size:], weights, config), dim=1)
        idx = torch.cat([idx, probs[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return idx[0, len(prompt) :].tolist()


def context_not_updated(prompt, n, weights, config):
    # The forward pass run on the prompt at every step, the appended tokens never fed back:
    # xberg-io/xberg#1210's greedy loop re-read its first step's logits and emitted its first
    # token 128 times; keras-team/keras-hub#1588's loop did not give the model its own output.
    block_size = config["block_size"]
    context = torch.tensor([prompt])[:, -block_size:]
    new = []
    for _ in range(n):
        logits = gpt_forward(context, weights, config)
        new.append(int(logits[0, -1].argmax()))
    return new


def whole_sequence(prompt, n, weights, config):
    # The prompt and the new tokens, as nanoGPT's and HF's generate() return them: this
    # lesson asks for the n new ids only.
    block_size = config["block_size"]
    idx = torch.tensor([prompt])
    for _ in range(n):
        logits = gpt_forward(idx[:, -block_size:], weights, config)
        idx = torch.cat([idx, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return idx[0].tolist()
