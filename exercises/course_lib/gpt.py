"""Chapters 5 to 8, solved: the parts of the tiny GPT as plain functions over a dict of tensors.

    from course_lib.gpt import gpt_forward
    logits = gpt_forward(idx, weights, config)     # [B, T] int64 ids -> [B, T, V] float32

The weights are a state dict in GPT-2's names and nn.Linear's layout ([out, in]; not GPT-2's
Conv1D, which stores [in, out]): wte.weight [V, C], wpe.weight [block_size, C], and for each
block i the keys h.{i}.ln_1.*, h.{i}.attn.c_attn.* ([3C, C], q then k then v), h.{i}.attn.c_proj.*,
h.{i}.ln_2.*, h.{i}.mlp.c_fc.* ([4C, C]), h.{i}.mlp.c_proj.* ([C, 4C]); then ln_f.*. The output
head is wte itself (weight tying): there is no lm_head key. config is the tiny GPT's
tiny_gpt.json as a dict (n_layer, n_head, n_embd, block_size, eps, chars, ...).

A block is pre-norm (x + attn(ln_1(x)), then x + mlp(ln_2(x))), attention is causal and scaled
by 1/sqrt(head_dim), GELU is the tanh form GPT-2 was trained with. Each function takes the
state dict of its own part, its names without the prefix (``sub(weights, "h.0.attn.")``).
"""

import json
import math
import struct

import torch


def sub(weights, prefix):
    """The entries of *weights* whose names start with *prefix*, the prefix removed."""
    return {k[len(prefix) :]: v for k, v in weights.items() if k.startswith(prefix)}


def layer_norm(x, weight, bias, eps=1e-5):
    """Normalize the last axis of x to mean 0 and variance 1 (the biased variance, eps inside
    the square root), then scale by weight and shift by bias."""
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def gelu(x):
    """GELU, the tanh approximation GPT-2 uses: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def mlp(x, weights):
    """The MLP of a block: c_fc (C -> 4C), GELU, c_proj (4C -> C); weights holds c_fc.weight,
    c_fc.bias, c_proj.weight, c_proj.bias."""
    h = gelu(x @ weights["c_fc.weight"].T + weights["c_fc.bias"])
    return h @ weights["c_proj.weight"].T + weights["c_proj.bias"]


def causal_self_attention(x, weights, n_head):
    """Causal multi-head self-attention of x [B, T, C]: c_attn makes q, k, v (in that order
    along the last axis), n_head heads of C / n_head each, scores scaled by 1/sqrt(head_dim),
    each position sees itself and the ones before it; c_proj mixes the heads back."""
    B, T, C = x.shape
    qkv = x @ weights["c_attn.weight"].T + weights["c_attn.bias"]
    q, k, v = qkv.split(C, dim=-1)
    head = C // n_head
    # [B, T, C] -> [B, n_head, T, head]: each head attends on its own.
    q, k, v = (t.view(B, T, n_head, head).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(head)
    future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    y = torch.softmax(scores, dim=-1) @ v
    y = y.transpose(1, 2).contiguous().view(B, T, C)
    return y @ weights["c_proj.weight"].T + weights["c_proj.bias"]


def block(x, weights, n_head, eps=1e-5):
    """One pre-norm transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x)); weights holds
    the block's keys without the h.{i}. prefix (ln_1.weight, attn.c_attn.weight, ...)."""
    h = layer_norm(x, weights["ln_1.weight"], weights["ln_1.bias"], eps)
    x = x + causal_self_attention(h, sub(weights, "attn."), n_head)
    h = layer_norm(x, weights["ln_2.weight"], weights["ln_2.bias"], eps)
    return x + mlp(h, sub(weights, "mlp."))


def gpt_forward(idx, weights, config):
    """The logits [B, T, V] (float32) of the GPT with state dict *weights* for the token ids
    idx [B, T] (int64, T at most config["block_size"])."""
    T = idx.shape[1]
    if idx.shape[1] > config["block_size"]:
        # nanoGPT asserts the same: past block_size there is no position embedding to add.
        raise ValueError(
            f"Crop the ids to their last block_size = {config['block_size']} tokens before "
            f"calling gpt_forward (idx[:, -block_size:]): these have T = {T}, and the model "
            f"has position embeddings for {config['block_size']} positions only."
        )
    x = weights["wte.weight"][idx] + weights["wpe.weight"][torch.arange(T, device=idx.device)]
    for i in range(config["n_layer"]):
        x = block(x, sub(weights, f"h.{i}."), config["n_head"], config["eps"])
    x = layer_norm(x, weights["ln_f.weight"], weights["ln_f.bias"], config["eps"])
    # Weight tying: the output head is the token table.
    return x @ weights["wte.weight"].T


def load_config(path):
    """The config of a tiny GPT, its .json file as a dict."""
    with open(path, encoding="utf-8") as file:
        return json.load(file)


_DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64}


def load_weights(path):
    """The tensors of a safetensors file as a dict name -> tensor, read without the safetensors
    package: an 8-byte little-endian header length, a JSON header (name -> dtype, shape, byte
    offsets into the data), then the raw little-endian bytes."""
    with open(path, "rb") as file:
        data = file.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    body = bytearray(data[8 + length :])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        flat = torch.frombuffer(body[start:end], dtype=_DTYPES[entry["dtype"]])
        tensors[name] = flat.reshape(entry["shape"]).clone()
    return tensors
