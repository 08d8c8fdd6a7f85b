"""Other right modules for "Multi-head causal self-attention as a module": each must pass
every case."""

import torch
from torch import nn
from torch.nn import functional as F


class FusedAttention(nn.Module):
    """torch's scaled_dot_product_attention with is_causal=True (nanoGPT's flash path)."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class EinsumWithMaskBuffer(nn.Module):
    """einsum for the scores, the mask a buffer left out of the state dict, masked with
    torch.finfo's lowest value instead of -inf."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.register_buffer("mask", torch.ones(64, 64).tril().bool(), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_head
        q, k, v = self.c_attn(x).view(B, T, 3, self.n_head, hd).unbind(dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * hd**-0.5
        scores = scores.masked_fill(~self.mask[:T, :T], torch.finfo(scores.dtype).min)
        y = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(dim=-1), v)
        return self.c_proj(y.reshape(B, T, C))


class InFloat64(nn.Module):
    """Everything in float64, cast back to float32 at the end."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_head
        qkv = F.linear(x.double(), self.c_attn.weight.double(), self.c_attn.bias.double())
        q, k, v = (t.view(B, T, self.n_head, hd).transpose(1, 2) for t in qkv.split(C, dim=2))
        scores = q @ k.transpose(-2, -1) / hd**0.5
        future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
        y = scores.masked_fill(future, float("-inf")).softmax(dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        out = F.linear(y, self.c_proj.weight.double(), self.c_proj.bias.double())
        return out.float()
