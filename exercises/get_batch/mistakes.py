"""Known wrong answers to "A random batch of training windows", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def last_start_left_out(data, B, T, g):
    # One start too few: karpathy/ng-video-lecture#56 proposes torch.randint(len(data) -
    # block_size - 1, ...) as a fix, but randint's high bound is already left out, so the
    # last window that fits (start len(data) - T - 1) is never drawn.
    ix = torch.randint(len(data) - T - 1, (B,), generator=g)
    x = torch.stack([data[i : i + T] for i in ix])
    y = torch.stack([data[i + 1 : i + 1 + T] for i in ix])
    return x, y


def targets_not_shifted(data, B, T, g):
    # The targets are the inputs themselves: Project-MONAI/GenerativeModels#314 trained a
    # transformer "to predict token N, given tokens 0-N inclusive" until the targets were
    # shifted by one; ayaka14732/bart-base-jax#6 found its model copying input to output.
    ix = torch.randint(len(data) - T, (B,), generator=g)
    x = torch.stack([data[i : i + T] for i in ix])
    return x, x.clone()


def windows_in_order(data, B, T, g):
    # Consecutive windows from the start, never random: the chunking of pytorch/examples'
    # word_language_model (get_batch(source, i) slices at a running index), used where a
    # random batch is asked for. A model trained on it sees the same few windows each step.
    x = torch.stack([data[i : i + T] for i in range(B)])
    y = torch.stack([data[i + 1 : i + 1 + T] for i in range(B)])
    return x, y
