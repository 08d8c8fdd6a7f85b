"""Known wrong answers to "A pre-norm residual block", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake. Every one
changes the reference's block in one place.
"""

import math

import torch


def _norm(x, w, name):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _linear(x, w, name):
    return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]


def _heads(t, n_head):
    B, T, C = t.shape
    return t.view(B, T, n_head, C // n_head).transpose(1, 2)


def _attend(q, k, v, causal=True):
    B, H, T, d = q.shape
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    if causal:
        future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    return (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, H * d)


def _attn(h, w, n_head, causal=True):
    q, k, v = _linear(h, w, "attn.c_attn").split(h.shape[-1], dim=-1)
    out = _attend(_heads(q, n_head), _heads(k, n_head), _heads(v, n_head), causal)
    return _linear(out, w, "attn.c_proj")


def _mlp(h, w):
    g = _linear(h, w, "mlp.c_fc")
    g = 0.5 * g * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (g + 0.044715 * g**3)))
    return _linear(g, w, "mlp.c_proj")


def post_norm(x, weights, n_head):
    # The original Transformer's order, LayerNorm(x + sublayer(x)): the norm after the add
    # (nn.TransformerEncoderLayer's default, norm_first=False). GPT-2 moved the norm to each
    # sublayer's input; tensorflow/models#9789 and facebookresearch/detr#93 ask which one a
    # code base uses, and NVIDIA-NeMo#4350 fixed a post-LN path that kept the pre-norm residual.
    y = _norm(x + _attn(x, weights, n_head), weights, "ln_1")
    return _norm(y + _mlp(y, weights), weights, "ln_2")


def shared_layer_norm(x, weights, n_head):
    # ln_1 before the MLP too, so ln_2's weights are never used: allenai/OLMo#222 ("Sequential
    # Olmo block should not have shared layernorm", self.norm where self.norm2 was meant) and
    # ml-explore/mlx#1636 (ln1 used where ln2 belonged in TransformerDecoderLayer).
    y = x + _attn(_norm(x, weights, "ln_1"), weights, n_head)
    return y + _mlp(_norm(y, weights, "ln_1"), weights)


def residual_from_normed(x, weights, n_head):
    # x = norm(x); x = x + attn(x): the residual carries the normalised copy instead of the
    # stream itself. Howuhh/faster-trajectory-transformer#3 ("pre-norm bug in transformer
    # block": norm_x + attn(norm_x) where minGPT has x + attn(norm(x))), lbcb-sci/RiNALMo#9
    # and tracel-ai/burn#1054 fixed this.
    h = _norm(x, weights, "ln_1")
    y = h + _attn(h, weights, n_head)
    h = _norm(y, weights, "ln_2")
    return h + _mlp(h, weights)


def no_residual_around_attention(x, weights, n_head):
    # The attention's output replaces the stream instead of being added to it.
    y = _attn(_norm(x, weights, "ln_1"), weights, n_head)
    return y + _mlp(_norm(y, weights, "ln_2"), weights)


def no_residual_around_mlp(x, weights, n_head):
    # The MLP's output replaces the stream instead of being added to it.
    y = x + _attn(_norm(x, weights, "ln_1"), weights, n_head)
    return _mlp(_norm(y, weights, "ln_2"), weights)


def no_causal_mask(x, weights, n_head):
    # Attention without the mask: each token also reads the tokens after it, which a language
    # model never has when it generates (nanoGPT's bias buffer, tril, is this mask).
    y = x + _attn(_norm(x, weights, "ln_1"), weights, n_head, causal=False)
    return y + _mlp(_norm(y, weights, "ln_2"), weights)


def qkv_split_per_head(x, weights, n_head):
    # c_attn's output read as each head's q, k and v side by side ([B, T, n_head, 3d]), as
    # Megatron lays out its fused QKV; GPT-2's is all of q, then all of k, then all of v.
    # BlackSamorez/tensor_parallel#103 ("GPT-2 combines attention weights as QQQKKKVVV") and
    # hpcaitech/ColossalAI#870 fixed loaders that split GPT-2's c_attn the other way.
    h = _norm(x, weights, "ln_1")
    B, T, C = h.shape
    qkv = _linear(h, weights, "attn.c_attn").view(B, T, n_head, 3 * (C // n_head))
    q, k, v = (t.transpose(1, 2) for t in qkv.split(C // n_head, dim=-1))
    y = x + _linear(_attend(q, k, v), weights, "attn.c_proj")
    return y + _mlp(_norm(y, weights, "ln_2"), weights)
