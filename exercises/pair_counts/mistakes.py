"""Known wrong answers to "Count adjacent pairs", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def non_overlapping(ids):
    # Runs counted as merge() would replace them, skipping past each counted pair: the
    # rule proposed for minbpe's get_stats in karpathy/minbpe#51 ("counting pairs is
    # inaccurate for repeating tokens?") and pull request #72, which count 2, not 4, pairs
    # (a, a) in aaaaa. This lesson counts every position, as get_stats does.
    counts = {}
    free_from = {}  # per pair: the first position a new occurrence may start at
    for i, pair in enumerate(zip(ids, ids[1:])):
        if i < free_from.get(pair, 0):
            continue  # overlaps the occurrence counted just before
        counts[pair] = counts.get(pair, 0) + 1
        free_from[pair] = i + 2
    return counts


def two_apart(ids):
    # A slice one too far: ids[2:] where ids[1:] is meant, pairing each id with the id two
    # places on (no public bug report found; a common slip with Python's slices).
    counts = {}
    for pair in zip(ids, ids[2:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def last_pair_missed(ids):
    # A loop bound one short, range(len(ids) - 2), that never reaches the last pair (an
    # off-by-one of the kind that made the Hugging Face BPE trainer skip its last batch of
    # words when counting pairs, huggingface/tokenizers#179).
    counts = {}
    for i in range(len(ids) - 2):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    return counts
