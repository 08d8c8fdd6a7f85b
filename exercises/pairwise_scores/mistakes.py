"""Known wrong answers to "Pairwise squared distances, vectorised", one per watch-out.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The first three return the right values with too much work: the budget case catches
them, and the grader names the one whose counted work is nearest the learner's.
"""

import torch


def two_loops(x, y):
    # The task's own loop, kept: CS231n assignment 1 (k-nearest neighbours) has learners
    # write compute_distances_two_loops first, then one loop, then none; Tensor-Puzzles
    # (srush/Tensor-Puzzles) forbids loops in its puzzles for the same reason.
    D = torch.zeros(len(x), len(y), dtype=torch.float64)
    for i in range(len(x)):
        for j in range(len(y)):
            D[i, j] = ((x[i] - y[j]) ** 2).sum()
    return D


def one_loop(x, y):
    # CS231n's compute_distances_one_loop: one row of x against all of y per step, the
    # half-way form many learners stop at.
    D = torch.zeros(len(x), len(y), dtype=torch.float64)
    for i in range(len(x)):
        D[i] = ((x[i] - y) ** 2).sum(dim=1)
    return D


def difference_cube(x, y):
    # The broadcast difference, an [n, m, d] intermediate: the memory blow-up that
    # scikit-learn's euclidean_distances avoids by the dot-product expansion (its docstring
    # gives the formula dist(x, y) = sqrt(dot(x, x) - 2 * dot(x, y) + dot(y, y))).
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(dim=-1)


def missing_factor_two(x, y):
    # The cross term written once: the expansion has -2 x·y (CS231n's no-loop hint,
    # "express the l2 distance using matrix multiplication and two broadcast sums").
    return (x**2).sum(dim=1, keepdim=True) + (y**2).sum(dim=1)[None, :] - x @ y.T


def distances_not_squared(x, y):
    # torch.cdist computes the p-norm distance (PyTorch's documentation of torch.cdist), so
    # it returns the square root of what the lesson asks for.
    return torch.cdist(x, y)
