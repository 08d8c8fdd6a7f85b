"""The author's answer to "Multi-head causal self-attention as a module"."""

import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        # 1. Two linear layers, named as GPT-2 names them: c_attn makes q, k and v at once
        #    (C -> 3C, in that order), c_proj mixes the heads' outputs back (C -> C).
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_head
        # 2. Split c_attn's output into q, k and v, C features each, in that order.
        q, k, v = self.c_attn(x).split(C, dim=2)
        # 3. Give each head its block of hd features: view as [B, T, n_head, hd] (heads
        #    outer, as the features are laid out), then move the heads before time.
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        # 4. Every head's scores, scaled by 1/sqrt(hd), the width of one head: [B, nh, T, T].
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        # 5. The causal mask before the softmax: a query at t sees the keys 0..t (the lower
        #    triangle, diagonal included); the rest become -inf and get weight 0.
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        # 6. Weighted sums of the values, then the heads side by side again: [B, T, C].
        y = (weights @ v).transpose(1, 2).contiguous().view(B, T, C)
        # 7. The output projection mixes the heads.
        return self.c_proj(y)
