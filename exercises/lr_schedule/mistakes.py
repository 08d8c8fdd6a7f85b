"""Known wrong answers to "Warm-up and cosine learning rate", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake. Every one keeps
the task's order of checks where it can, so that none divides by zero when warmup == cycle.
"""

import math


def _cosine(progress, max_lr, min_lr):
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (max_lr - min_lr)


def warmup_from_one(it, max_lr, min_lr, warmup, cycle):
    # build-nanogpt's train_gpt2.py warms up with max_lr * (it + 1) / warmup_steps: step 0
    # already gets max_lr / warmup, and max_lr is reached one step early (at it = warmup - 1).
    if it < warmup:
        return max_lr * (it + 1) / warmup
    if it >= cycle:
        return min_lr
    return _cosine((it - warmup) / (cycle - warmup), max_lr, min_lr)


def warmup_plus_one_over_plus_one(it, max_lr, min_lr, warmup, cycle):
    # nanoGPT's train.py since karpathy/nanoGPT#578 (for issue #443, a learning rate of 0 at
    # step 0): learning_rate * (it + 1) / (warmup_iters + 1). A fine schedule, but not this one.
    if it < warmup:
        return max_lr * (it + 1) / (warmup + 1)
    if it >= cycle:
        return min_lr
    return _cosine((it - warmup) / (cycle - warmup), max_lr, min_lr)


def decay_counted_from_zero(it, max_lr, min_lr, warmup, cycle):
    # The cosine's progress counted from step 0 (it / cycle) rather than from the end of the
    # warm-up, so the decay has already begun when the warm-up ends and the rate drops at
    # it = warmup: facebookresearch/fairchem#1967 fixed a cosine schedule that decayed during
    # its warm-up this way.
    if it < warmup:
        return max_lr * it / warmup
    if it >= cycle:
        return min_lr
    return _cosine(it / cycle, max_lr, min_lr)


def decay_over_whole_cycle(it, max_lr, min_lr, warmup, cycle):
    # The steps since the warm-up divided by the whole cycle, (it - warmup) / cycle, as
    # EleutherAI/gpt-neox's AnnealingLR computed it (discussed in gpt-neox#1008): the cosine
    # has not reached min_lr when the cycle ends, and the rate then jumps down to it.
    if it < warmup:
        return max_lr * it / warmup
    if it >= cycle:
        return min_lr
    return _cosine((it - warmup) / cycle, max_lr, min_lr)


def decay_to_zero_then_clamped(it, max_lr, min_lr, warmup, cycle):
    # A cosine from max_lr to 0, raised to min_lr only where it falls below it:
    # max(0.5 * max_lr * (1 + cos), min_lr), gpt-neox's schedule before gpt-neox#1008 (its
    # min_lr was used only in that max). The rate falls faster than from max_lr to min_lr.
    if it < warmup:
        return max_lr * it / warmup
    if it >= cycle:
        return min_lr
    progress = (it - warmup) / (cycle - warmup)
    return max(0.5 * max_lr * (1.0 + math.cos(math.pi * progress)), min_lr)


def cosine_past_the_cycle(it, max_lr, min_lr, warmup, cycle):
    # The cosine formula used after the cycle too, with no floor: past it = cycle the wave
    # climbs back towards max_lr. google-deepmind/optax#905 pointed out that the formula its
    # cosine_decay_schedule documented read this way.
    if it < warmup:
        return max_lr * it / warmup
    if cycle == warmup:
        return min_lr
    return _cosine((it - warmup) / (cycle - warmup), max_lr, min_lr)
