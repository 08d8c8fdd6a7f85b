"""Known wrong modules for "Multi-head causal self-attention as a module", one per watch-out
in exercise.toml.

Each class stands in for the learner's CausalSelfAttention (the harness builds it, loads the
case's weights into it and calls it) and makes that one mistake; the grader compares a failing
answer with what the harness gets from it to name the mistake. Sources, for facts only:
karpathy/nanoGPT and karpathy/minGPT (model.py: CausalSelfAttention, the names c_attn and
c_proj, q, k, v split in that order, the scale 1/sqrt(head size)), HF transformers'
GPT2Attention, and the bug reports named at each class.
"""

import math

import torch
from torch import nn


class _Right(nn.Module):
    """The right module, which each mistake changes in one place."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def qkv(self, x):
        return self.c_attn(x).split(x.shape[-1], dim=2)

    def heads(self, t):
        B, T, C = t.shape
        return t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def scale(self, C):
        return 1 / math.sqrt(C // self.n_head)

    def allowed(self, T):
        return torch.ones(T, T, dtype=torch.bool).tril()

    def attend(self, scores, T):
        scores = scores.masked_fill(~self.allowed(T), float("-inf"))
        return torch.softmax(scores, dim=-1)

    def project(self, y):
        return self.c_proj(y)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (self.heads(t) for t in self.qkv(x))
        weights = self.attend((q @ k.transpose(-2, -1)) * self.scale(C), T)
        return self.project((weights @ v).transpose(1, 2).contiguous().view(B, T, C))


class HeadsViewedFeaturesFirst(_Right):
    # The heads split with the view's last two sizes swapped, [B, T, hd, nh], then moved into
    # place with permute: it runs and has the right shape, but head h gets the features
    # h, h + nh, h + 2nh, ... instead of its own block of hd. The order of view() is the bug
    # harvardnlp/annotated-transformer#17, jadore801120/attention-is-all-you-need-pytorch#177
    # and reczoo/FuxiCTR#30 asked about; jsbaan/transformer-from-scratch#6 fixed its reverse
    # (the heads joined without the permute before the reshape).
    def heads(self, t):
        B, T, C = t.shape
        return t.view(B, T, C // self.n_head, self.n_head).permute(0, 3, 1, 2)


class KeysFirst(_Right):
    # c_attn's output read as k, q, v: the first C features taken for the keys. GPT-2's
    # checkpoints and nanoGPT's split(n_embd, dim=2) put q first, then k, then v
    # (BlackSamorez/tensor_parallel#103 split GPT-2's QQQ...KKK...VVV layout wrongly;
    # jsbaan/transformer-from-scratch#1 returned q, k, v and assigned q, v, k). With trained
    # weights the order is the weights', not a choice.
    def qkv(self, x):
        q, k, v = super().qkv(x)
        return k, q, v


class NoMask(_Right):
    # No causal mask: every token attends to the tokens after it too (NVIDIA/TransformerEngine
    # #1524 and facebookresearch/xformers#103 skipped it on one code path; paiml/entrenar#310
    # trained a causal LM without one).
    def attend(self, scores, T):
        return torch.softmax(scores, dim=-1)


class MaskAfterSoftmax(_Right):
    # The future zeroed after the softmax instead of set to -inf before it: each row's
    # weights no longer sum to 1 (huggingface/pytorch-image-models#2236 "The mask should be
    # applied before the softmax"; lucidrains/memory-compressed-attention#2).
    def attend(self, scores, T):
        return torch.softmax(scores, dim=-1).masked_fill(~self.allowed(T), 0.0)


class ScaledByWidth(_Right):
    # The scores divided by C, the whole width, instead of sqrt(head size): the softmax is
    # nearly flat.
    def scale(self, C):
        return 1 / C


class ScaledBySqrtWidth(_Right):
    # 1/sqrt(C), the full width, where GPT-2 divides by sqrt(C // n_head): Graylab/
    # DL4Proteins-notebooks#12 (C**-0.5 with C the embedding width), omihub777/ViT-CIFAR#11,
    # lucidrains/vit-pytorch#65, FareedKhan-dev/train-llm-from-scratch#3.
    def scale(self, C):
        return 1 / math.sqrt(C)


class NoOutputProjection(_Right):
    # c_proj defined (so the weights load) but never applied: the heads' outputs are
    # returned side by side unmixed (stevezheng23/sequence_labeling_tf#83 "missing
    # projection layer in multi-head attention"; kyegomez/VisionMamba#19 applied its
    # projection to the wrong variable).
    def project(self, y):
        return y


class UpperTriangle(_Right):
    # The mask's triangle flipped: triu where tril is meant, so each token sees itself and
    # the future and none of the past (pytorch/examples#649, a flipped mask in the
    # Transformer example; karpathy/nanoGPT#170 asked whether tril should be triu).
    def allowed(self, T):
        return torch.ones(T, T, dtype=torch.bool).triu()
