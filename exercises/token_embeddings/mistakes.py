"""Known wrong answers to "Token and position embeddings", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def positions_from_token_ids(idx, wte, wpe):
    # The position table looked up with the token ids, as if it were a second token table:
    # facebookresearch/fairseq#1559 asks why `embed + self.embed_positions(src_tokens)` is
    # given the tokens and not the positions; huggingface/transformers#471 copies the
    # position rows through the token table. It runs only while every id is below P = 16,
    # so the cases keep their ids below 16: a mistake function must answer every case.
    return wte[idx] + wpe[idx]


def positions_along_batch(idx, wte, wpe):
    # Positions counted along the batch axis: torch.arange(idx.shape[0]) (B) where nanoGPT
    # writes `b, t = idx.size()` and `torch.arange(0, t)`. wpe[:B] then fails to broadcast
    # against [B, T, C] unless B is 1; unsqueezed to [B, 1, C] to make it broadcast, it adds
    # position b's vector to every token of sequence b, which is the answer given here (for
    # B = 1 the two agree).
    return wte[idx] + wpe[torch.arange(idx.shape[0])].unsqueeze(1)


def no_positions(idx, wte, wpe):
    # The token vectors alone: ml-explore/mlx-lm#93 fixed a GPT-2 that skipped the position
    # embeddings for single-token inputs (`if hidden_states.shape[1] > 1:`), so generation
    # with a cache ran without them.
    return wte[idx]


def in_float64(idx, wte, wpe):
    # The one-hot matmul done in float64 for accuracy and returned without casting back.
    one_hot = torch.nn.functional.one_hot(idx, wte.shape[0]).double()
    return one_hot @ wte.double() + wpe[: idx.shape[1]].double()
