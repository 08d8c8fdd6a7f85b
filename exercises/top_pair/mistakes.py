"""Known wrong answers to "The most frequent pair", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def _pair_counts(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def first_seen_wins_a_tie(ids):
    # max(counts, key=counts.get): a tie goes to the pair seen first, as in minbpe's
    # training loop (karpathy/minbpe base.py, `pair = max(stats, key=stats.get)`);
    # karpathy/minbpe#93 walks through such a tie in its aaabdaaabac test.
    counts = _pair_counts(ids)
    if not counts:
        return None
    return max(counts, key=counts.get)


def largest_wins_a_tie(ids):
    # A tie goes to the largest pair: the rule of Stanford CS336's assignment 1, which
    # prefers the lexicographically greater pair (stanford-cs336/assignment1-basics).
    counts = _pair_counts(ids)
    if not counts:
        return None
    return max(counts, key=lambda pair: (counts[pair], pair))


def runs_counted_without_overlap(ids):
    # Runs counted as a merge would replace them, skipping past each counted pair: the rule
    # proposed for minbpe's get_stats in karpathy/minbpe#51 ("counting pairs is inaccurate
    # for repeating tokens?"), which counts 2, not 3, pairs (7, 7) in 7 7 7 7. The pick
    # then goes to another pair (the pair_counts lesson's mistake, seen in its next step).
    counts = {}
    free_from = {}  # per pair: the first position a new occurrence may start at
    for i, pair in enumerate(zip(ids, ids[1:])):
        if i < free_from.get(pair, 0):
            continue
        counts[pair] = counts.get(pair, 0) + 1
        free_from[pair] = i + 2
    if not counts:
        return None
    most = max(counts.values())
    return min(pair for pair, n in counts.items() if n == most)
