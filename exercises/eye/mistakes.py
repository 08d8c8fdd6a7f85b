"""Known wrong answers to "The identity matrix, by broadcasting", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import torch


def booleans(n):
    # The comparison returned as it is: a bool tensor. srush/Tensor-Puzzles#9 (help with the
    # eye puzzle): solvers reach for where() or a Python list to get numbers out of the
    # comparison, and the maintainer's answer is to multiply it by 1 "to force type changes".
    return torch.arange(n)[:, None] == torch.arange(n)


def float_eye(n):
    # torch.eye (and torch.ones / torch.zeros) default to float32 unless given a dtype: the
    # values are right, the dtype is not. Tensor-Puzzles asks for the identity as TT["j", "j"]
    # built from arange, whose values are int64.
    # Written without torch.eye (the lesson's rule no-eye), the same float values.
    return (torch.arange(n)[:, None] == torch.arange(n)).float()


def not_equal(n):
    # The comparison the wrong way round: != (or 1 - eye) puts the ones off the diagonal, the
    # mask of every other position rather than the diagonal itself.
    return (torch.arange(n)[:, None] != torch.arange(n)).long()


def with_torch_eye(n):
    # The right answer the way the lesson's rule no-eye forbids.
    return torch.eye(n, dtype=torch.int64)


def with_a_loop(n):
    # The right answer the way the lesson's rule no-loop forbids: entry by entry.
    out = torch.zeros(n, n, dtype=torch.int64)
    for r in range(n):
        out[r, r] = 1
    return out
