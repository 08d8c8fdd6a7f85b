"""The author's answer to "Warm-up and cosine learning rate"."""

import math


def solve(it, max_lr, min_lr, warmup, cycle):
    # 1. Warm-up: while it < warmup, climb in a straight line from 0 at it = 0 towards max_lr
    #    (it / warmup of the way there).
    if it < warmup:
        return max_lr * it / warmup
    # 2. After the cycle, from it = cycle on: stay at min_lr. Checked before the cosine, so a
    #    schedule with warmup == cycle never divides by cycle - warmup = 0.
    if it >= cycle:
        return min_lr
    # 3. In between, the fraction of the decay done, counted from the end of the warm-up:
    #    0 at it = warmup, nearly 1 just before it = cycle.
    progress = (it - warmup) / (cycle - warmup)
    # 4. Half a cosine wave from max_lr down to min_lr: the factor 0.5 * (1 + cos(pi * p))
    #    falls from 1 to 0 as p goes from 0 to 1.
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (max_lr - min_lr)
