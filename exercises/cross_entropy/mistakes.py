"""Known wrong answers to "A numerically stable cross-entropy", one per watch-out in
exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake. The facts come
from Stanford CS336's assignment 1 (its cross-entropy must subtract the largest logit for
numerical stability, and average over the batch), makemore (karpathy/nn-zero-to-hero: exp of
large logits gives inf, which F.cross_entropy avoids by the same offset) and PyTorch's
CrossEntropyLoss documentation (with ignore_index, the mean is over the targets not
ignored); the code is this course's.
"""


def _kept_log_probs(logits, targets, ignore_index):
    shifted = logits - logits.max(dim=-1, keepdim=True).values
    log_probs = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
    keep = targets != ignore_index
    return log_probs[keep].gather(1, targets[keep].unsqueeze(1)).squeeze(1)


def naive_logsumexp(logits, targets, ignore_index):
    # log(sum(exp(x))) as written on paper: exp(1000) is inf in float32 (and in float64
    # past about 709), so scores in the thousands give a loss of inf or nan.
    log_probs = logits - logits.exp().sum(dim=-1, keepdim=True).log()
    keep = targets != ignore_index
    return -log_probs[keep].gather(1, targets[keep].unsqueeze(1)).mean()


def mean_over_ignored(logits, targets, ignore_index):
    # The ignored positions' losses set to 0, then the mean taken over all N positions: the
    # loss shrinks with the padding in the batch.
    picked = _kept_log_probs(logits, targets, ignore_index)
    return -picked.sum() / targets.shape[0]


def ignore_index_not_applied(logits, targets, ignore_index):
    # Every target scored, padding included. With ignore_index = -100 (PyTorch's default),
    # gather with index -100 raises: a learner's code that forgets the mask raises there
    # too, so the lesson's -100 cases show the exception, its 0-padding cases this mistake.
    shifted = logits - logits.max(dim=-1, keepdim=True).values
    log_probs = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
    return -log_probs.gather(1, targets.unsqueeze(1)).mean()


def sum_not_mean(logits, targets, ignore_index):
    # reduction="sum" where the mean is meant: the loss grows with the batch.
    picked = _kept_log_probs(logits, targets, ignore_index)
    return -picked.sum()
