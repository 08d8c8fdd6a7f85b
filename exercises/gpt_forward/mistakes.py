"""Known wrong answers to "The whole GPT, forward", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake. They share one
forward pass, _forward, whose switches each turn one step the way the mistake writes it.
"""

import math

import torch
import torch.nn.functional as F


def _layer_norm(x, weights, name, eps):
    return F.layer_norm(x, x.shape[-1:], weights[name + ".weight"], weights[name + ".bias"], eps)


def _linear(x, weights, name):
    return F.linear(x, weights[name + ".weight"], weights[name + ".bias"])


def _forward(
    idx,
    weights,
    config,
    *,
    pre_norm=True,
    final_norm=True,
    positions="0..T-1",
    causal=True,
    divisor="head",
    gelu="tanh",
    qkv_layout="three blocks",
):
    B, T = idx.shape
    C, n_head, eps = config["n_embd"], config["n_head"], config["eps"]
    head = C // n_head
    x = weights["wte.weight"][idx]
    if positions == "0..T-1":
        x = x + weights["wpe.weight"][:T]
    elif positions == "1..T":
        x = x + weights["wpe.weight"][1 : T + 1]
    scale = math.sqrt(head) if divisor == "head" else math.sqrt(C)

    def attention(h, p):
        qkv = _linear(h, weights, p + "attn.c_attn")
        if qkv_layout == "three blocks":
            q, k, v = (t.view(B, T, n_head, head).transpose(1, 2) for t in qkv.split(C, dim=-1))
        else:  # per head: [q_h, k_h, v_h] side by side for each head h
            q, k, v = qkv.view(B, T, n_head, 3 * head).transpose(1, 2).split(head, dim=-1)
        scores = q @ k.transpose(-2, -1) / scale
        if causal:
            scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        y = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        return _linear(y, weights, p + "attn.c_proj")

    def mlp(h, p):
        h = _linear(h, weights, p + "mlp.c_fc")
        h = F.gelu(h, approximate="tanh") if gelu == "tanh" else F.gelu(h)
        return _linear(h, weights, p + "mlp.c_proj")

    for i in range(config["n_layer"]):
        p = f"h.{i}."
        if pre_norm:
            x = x + attention(_layer_norm(x, weights, p + "ln_1", eps), p)
            x = x + mlp(_layer_norm(x, weights, p + "ln_2", eps), p)
        else:
            x = _layer_norm(x + attention(x, p), weights, p + "ln_1", eps)
            x = _layer_norm(x + mlp(x, p), weights, p + "ln_2", eps)
    if final_norm:
        x = _layer_norm(x, weights, "ln_f", eps)
    return x @ weights["wte.weight"].T


def post_norm(idx, weights, config):
    # The original Transformer's order, LayerNorm(x + sublayer(x)), where GPT-2 moved the norm
    # to each sub-block's input: karpathy/minGPT#33 asked whether minGPT's pre-norm was a
    # mistake and minGPT#52 proposed the post-norm change (the GPT-2 paper's sentence on the
    # move answered it); karpathy/ng-video-lecture#22 proposed the same for the lecture's GPT,
    # and Modalities/modalities#136 reverted an accidental switch of its GPT-2 away from pre-norm.
    return _forward(idx, weights, config, pre_norm=False)


def no_final_layer_norm(idx, weights, config):
    # The blocks straight into the head: GPT-2 added a layer norm after the last block (its
    # paper, quoted in karpathy/minGPT#33; nanoGPT's ln_f), which a port of the original
    # Transformer leaves out; NVIDIA/NeMo#2197 added the missing final norm to its pre-norm
    # transformer, and tinygrad/tinygrad#247 proposed removing the one before the output layer.
    return _forward(idx, weights, config, final_norm=False)


def no_position_embeddings(idx, weights, config):
    # The token rows alone: ml-explore/mlx-lm#93 fixed a GPT-2 that skipped wpe whenever the
    # input was one token long (`if hidden_states.shape[1] > 1:`), so cached generation ran
    # without positions.
    return _forward(idx, weights, config, positions="none")


def positions_from_one(idx, weights, config):
    # Positions 1 .. T: torch.arange(1, T + 1), as PrimeIntellect-ai/prime-rl#1545's review
    # found in a fallback of its position ids; microsoft/onnxruntime#12156 fixed GPT-2 beam
    # search whose positions ran one ahead. With T = block_size, row block_size does not exist
    # and the sum fails to broadcast, as the code it tells of would.
    return _forward(idx, weights, config, positions="1..T")


def no_causal_mask(idx, weights, config):
    # Every position attends to the whole sequence, later tokens included:
    # facebookresearch/xformers#103 skipped the causal mask when no other mask was passed,
    # rasbt/LLMs-from-scratch#1062 fixed an inverted boolean mask given to
    # scaled_dot_product_attention, karpathy/nanoGPT#331 reports a custom causal path whose
    # loss fell where it should not.
    return _forward(idx, weights, config, causal=False)


def scaled_by_model_width(idx, weights, config):
    # Scores divided by sqrt(C), the model width, instead of sqrt(C / n_head), one head's:
    # FareedKhan-dev/train-llm-from-scratch#3 and Graylab/DL4Proteins-notebooks#12 (whose
    # `q @ k.transpose(-2, -1) * C**-0.5` came from a single-head version) fixed exactly this.
    return _forward(idx, weights, config, divisor="width")


def erf_gelu(idx, weights, config):
    # nn.GELU() / F.gelu's default, the exact GELU with erf, where GPT-2 was trained with the
    # tanh form: karpathy/nanoGPT#274 matched nanoGPT's new_gelu to
    # nn.GELU(approximate="tanh"), and microsoft/onnxruntime#2270 saw the two drift apart over
    # GPT-2's layers. Per value they differ by at most 4.7e-4; through two blocks the logits
    # move by about 14 to 50 times the tolerance on these cases.
    return _forward(idx, weights, config, gelu="erf")


def qkv_interleaved_per_head(idx, weights, config):
    # c_attn's output read as [q, k, v] of head 0, then of head 1, ...: the fused layout of
    # Megatron-LM's checkpoints (ai-dynamo/modelexpress#650 spells out that its Q, K and V rows
    # interleave per group), which transformers' convert_megatron_gpt2_checkpoint.py
    # reorders (fix_query_key_value_ordering) for GPT-2; NVIDIA/apex#1131 asks the same
    # view(..., heads, 3, head_dim)-versus-(3, heads, head_dim) question. GPT-2's c_attn is
    # three blocks of C columns: all of q, then all of k, then all of v.
    return _forward(idx, weights, config, qkv_layout="per head")


def softmax_at_the_end(idx, weights, config):
    # Probabilities instead of logits: a softmax after the head, which a loss that takes
    # logits (F.cross_entropy) then applies again; bowang-lab/Transformer-GCN-QA#32 and
    # tflearn/tflearn#562 removed exactly such a second softmax.
    return _forward(idx, weights, config).softmax(dim=-1)
