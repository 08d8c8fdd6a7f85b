"""Known wrong answers to "Top-p (nucleus) sampling", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake. Sources, for
facts only: Holtzman et al. 2019 (nucleus sampling), huggingface/transformers'
TopPLogitsWarper (an ascending sort; removed where the cumulative probability is
<= 1 - top_p; min_tokens_to_keep), and the bug reports named at each function.
"""

import torch


def _draw(probs, g):
    return probs, torch.multinomial(probs, 1, generator=g)


def _nucleus(probs, p):
    """The right filter, unnormalised, for the mistakes that go wrong elsewhere."""
    if p >= 1.0:
        return probs
    ordered = torch.sort(probs, dim=-1, descending=True).values
    kept = (ordered.cumsum(dim=-1) - ordered) < p
    kept[:, 0] = True
    threshold = ordered.masked_fill(~kept, float("inf")).min(dim=-1, keepdim=True).values
    return probs.masked_fill(probs < threshold, 0.0)


def _renormalised(probs):
    return probs / probs.sum(dim=-1, keepdim=True)


def drops_crossing_token(logits, p, temperature, g):
    # Kept while the cumulative probability, this token's included, is <= p: the token that
    # crosses p is dropped, so the nucleus holds less than p (the top token forced back in).
    # thu-nics/C2C#21 ("Keep the token that crosses top_p"), fishaudio/fish-speech#1171 (the
    # removal mask not shifted right by one), hw-native-sys/pypto-lib#160's review of
    # `keep = cumulative <= top_p; keep[0] = True`.
    probs = torch.softmax(logits / temperature, dim=-1)
    ordered, order = torch.sort(probs, dim=-1, descending=True)
    kept = ordered.cumsum(dim=-1) <= p
    kept[:, 0] = True
    mask = torch.zeros_like(kept).scatter(-1, order, kept)
    return _draw(_renormalised(probs.masked_fill(~mask, 0.0)), g)


def not_renormalised(logits, p, temperature, g):
    # The filtered probabilities returned as they are, summing to less than 1. The draw is
    # still right (torch.multinomial normalises its weights), the probabilities are not:
    # facebookresearch/fairseq#882 ("we need to re-normalize to make it a valid probability
    # distribution").
    return _draw(_nucleus(torch.softmax(logits / temperature, dim=-1), p), g)


def sorted_ascending(logits, p, temperature, g):
    # The probabilities sorted smallest first, the rest written for a descending sort: the
    # least likely tokens are summed and kept. HF's TopPLogitsWarper sorts ascending on
    # purpose and removes from the bottom; aburkov/theLMbook#18 kept the wrong end of its
    # sort, and ml-explore/mlx-examples#602 found its order right only by a second bug.
    probs = torch.softmax(logits / temperature, dim=-1)
    ordered, order = torch.sort(probs, dim=-1)
    kept = (ordered.cumsum(dim=-1) - ordered) < p
    kept[:, 0] = True
    mask = torch.zeros_like(kept).scatter(-1, order, kept)
    return _draw(_renormalised(probs.masked_fill(~mask, 0.0)), g)


def temperature_after_filtering(logits, p, temperature, g):
    # The nucleus chosen from the untempered softmax, the temperature applied to what is
    # kept: the set of tokens ignores the temperature. Blaizzy/mlx-audio#732 and
    # fishaudio/fish-speech#1150 moved the division before the top-p filter;
    # huggingface/transformers#8686 moved TemperatureLogitsWarper before top-p and top-k.
    keep = _nucleus(torch.softmax(logits, dim=-1), p) > 0
    scaled = (logits / temperature).masked_fill(~keep, float("-inf"))
    return _draw(torch.softmax(scaled, dim=-1), g)


def p_one_keeps_top_only(logits, p, temperature, g):
    # The cut-off read as the first sorted token whose cumulative probability is above p,
    # found with argmax: at p = 1.0 no sum is above 1, argmax gives 0, and only the top
    # token is kept, greedy decoding. BlinkDL/ChatRWKV#170 fixed this: at top_p = 1 its
    # np.argmax(cumulative_probs > top_p) was 0, so the top token was always chosen.
    probs = torch.softmax(logits / temperature, dim=-1)
    ordered = torch.sort(probs, dim=-1, descending=True).values
    first = torch.argmax((ordered.cumsum(dim=-1) > p).int(), dim=-1, keepdim=True)
    cutoff = ordered.gather(-1, first)
    return _draw(_renormalised(probs.masked_fill(probs < cutoff, 0.0)), g)


def ties_cut_by_sort(logits, p, temperature, g):
    # The nucleus cut at a position of the sorted order, so of two tokens tied at the edge
    # one is kept and one dropped, whichever the sort put first: huggingface/transformers'
    # TopPLogitsWarper keeps by sort position (NVIDIA/TensorRT-LLM#8132's review asked for a
    # stable sort for two samplers to agree on ties). The lesson keeps ties together.
    probs = torch.softmax(logits / temperature, dim=-1)
    ordered, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    kept = (ordered.cumsum(dim=-1) - ordered) < p
    kept[:, 0] = True
    mask = torch.zeros_like(kept).scatter(-1, order, kept)
    return _draw(_renormalised(probs.masked_fill(~mask, 0.0)), g)


def ties_cut_like_hf(logits, p, temperature, g):
    # huggingface/transformers' TopPLogitsWarper as it is: sorted smallest first, a token
    # removed while the cumulative probability up to it is <= 1 - top_p, the last
    # min_tokens_to_keep = 1 always kept. It agrees with the lesson's rule except at a tie
    # on the edge, where it keeps the tied token the ascending sort put last.
    scaled = logits / temperature
    ordered, order = torch.sort(scaled, dim=-1, stable=True)
    removed = ordered.softmax(dim=-1).cumsum(dim=-1) <= 1 - p
    removed[:, -1:] = False
    mask = removed.scatter(-1, order, removed)
    return _draw(torch.softmax(scaled.masked_fill(mask, float("-inf")), dim=-1), g)
