"""Known wrong answers to "Rotary position embeddings (RoPE)", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def _angles(positions, freqs):
    return positions.to(torch.float64)[:, None] * freqs[None, :]


def _freqs(D, theta):
    return theta ** (-2.0 * torch.arange(D // 2, dtype=torch.float64) / D)


def _rotate_neighbours(x, angles):
    cos, sin = torch.cos(angles), torch.sin(angles)
    a, b = x[..., 0::2].double(), x[..., 1::2].double()
    out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    return out.to(x.dtype)


def halves_paired(x, positions, theta):
    # GPT-NeoX's layout, the rotate_half of Hugging Face's LLaMA: feature i paired with
    # feature i + D/2. huggingface/transformers#25199 asks why it differs from Meta's
    # interleaved pairs (Hugging Face permutes the weights when it converts them), and
    # karpathy/nanochat#264 reports a model that mixed the two conventions.
    D = x.shape[-1]
    angles = _angles(positions, _freqs(D, theta))
    cos, sin = torch.cos(angles), torch.sin(angles)
    a, b = x[..., : D // 2].double(), x[..., D // 2 :].double()
    out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)


def frequencies_tiled(x, positions, theta):
    # Neighbouring pairs, but the angles laid out as torch.cat((freqs, freqs)) (the halves
    # layout) instead of each frequency repeated twice in place: the two features of a pair
    # then turn at different speeds. raiyanyahya/how-to-train-your-gpt#7 and
    # facebookresearch/vjepa2#15 fixed it with repeat_interleave.
    D = x.shape[-1]
    angles = _angles(positions, _freqs(D, theta))
    angles = torch.cat((angles, angles), dim=-1)  # [T, D], freq i at i and i + D/2
    x64 = x.double()
    swapped = torch.stack((-x64[..., 1::2], x64[..., 0::2]), dim=-1).flatten(-2)
    return (x64 * torch.cos(angles) + swapped * torch.sin(angles)).to(x.dtype)


def rotation_reversed(x, positions, theta):
    # Each pair turned by minus its angle, (a cos + b sin, -a sin + b cos): the transpose of
    # the rotation matrix. karpathy/nanochat#489 found nanochat written this way (kept as its
    # own convention there); trymirai/lalamo#268's flipped sine term was caught by its CI.
    D = x.shape[-1]
    return _rotate_neighbours(x, -_angles(positions, _freqs(D, theta)))


def odd_exponent(x, positions, theta):
    # theta ** (-(2i + 1) / D) for pair i: the (2k - 1) / d exponent that
    # stanford-cs336/assignment1-basics#22 found in its handout, where the paper has
    # 2(k - 1) / d (k counted from 1).
    D = x.shape[-1]
    i = torch.arange(D // 2, dtype=torch.float64)
    return _rotate_neighbours(x, _angles(positions, theta ** (-(2.0 * i + 1.0) / D)))


def exponent_halved(x, positions, theta):
    # theta ** (-i / D): torch.arange(D // 2) / D, without the 2, as the change proposed in
    # rasbt/LLMs-from-scratch#410 would have made it (its tests against Hugging Face's RoPE
    # failed with it). The frequencies fall only to 1 / sqrt(theta).
    D = x.shape[-1]
    i = torch.arange(D // 2, dtype=torch.float64)
    return _rotate_neighbours(x, _angles(positions, theta ** (-i / D)))


def positions_from_arange(x, positions, theta):
    # The positions 0 .. T - 1 in place of the ones given: right for a whole sequence, wrong
    # for the tokens after a KV cache, whose positions start later. pytorch/executorch#2010
    # fixed a cached branch that sliced its rotary tables from 0 instead of start_pos.
    D = x.shape[-1]
    T = x.shape[-2]
    return _rotate_neighbours(x, _angles(torch.arange(T), _freqs(D, theta)))
