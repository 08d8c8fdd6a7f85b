"""Known wrong answers to "Merge one pair", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def step_of_one(ids, pair, new_id):
    # After a match the index moves on by 1, not 2, so the pair's second id is read again:
    # kept as a token of its own, or merged once more inside a run. minbpe's merge() moves
    # on by 2 after a match (karpathy/minbpe base.py), and pull request #35 there spells out
    # when a scan may move on by 1 and when by 2.
    merged = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
        else:
            merged.append(ids[i])
        i += 1
    return merged


def last_id_dropped(ids, pair, new_id):
    # The loop stops where the last pair starts, while i < len(ids) - 1, so an id left over
    # at the end is never copied. minbpe's merge() runs to len(ids) and checks
    # i < len(ids) - 1 inside (karpathy/minbpe base.py); pull request #7 there discusses
    # exactly this bounds check at the end of the list.
    merged = []
    i = 0
    while i < len(ids) - 1:
        if ids[i] == pair[0] and ids[i + 1] == pair[1]:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def joined_text_replaced(ids, pair, new_id):
    # The ids written out as text and the pair replaced with str.replace: the pattern "1 2"
    # also matches the end of "11 2". Sennrich, Haddow and Birch's reference code for BPE
    # (Neural Machine Translation of Rare Words with Subword Units, 2016, Algorithm 1)
    # guards its replacement with (?<!\S) and (?!\S) for exactly this reason.
    text = " ".join(map(str, ids))
    text = text.replace(f"{pair[0]} {pair[1]}", str(new_id))
    return [int(t) for t in text.split()]


def pair_compared_as_tuple(ids, pair, new_id):
    # The pair compared as a tuple, (ids[i], ids[i + 1]) == pair: right where pair is a
    # tuple, as get_stats' keys are (public minbpe ports write merge() this way), but here
    # pair arrives as a list, and a tuple never equals a list, so nothing is merged.
    merged = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged
