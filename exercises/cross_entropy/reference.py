"""The author's answer to "A numerically stable cross-entropy"."""


def solve(logits, targets, ignore_index):
    # 1. Subtract each row's largest score: softmax is unchanged, and exp() sees at most 0.
    shifted = logits - logits.max(dim=-1, keepdim=True).values
    # 2. log-softmax: the shifted scores minus the log of the sum of their exp (a sum that
    #    holds exp(0) = 1, so its log is finite).
    log_probs = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
    # 3. Keep the positions whose target is not ignored.
    keep = targets != ignore_index
    # 4. Pick each kept position's log-probability of its target.
    picked = log_probs[keep].gather(1, targets[keep].unsqueeze(1)).squeeze(1)
    # 5. Minus their mean, over the kept positions only.
    return -picked.mean()
