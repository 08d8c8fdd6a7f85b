"""How the attention-module lesson drives your CausalSelfAttention (author code; it holds
no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. It builds
CausalSelfAttention(C, n_head), with C the width of x, checks that its state dict holds
exactly c_attn's and c_proj's weight and bias, of nn.Linear's shapes, loads the case's
weights into it strictly (the names GPT-2 uses), calls it on x once and checks that x is as it
was. y, the module's output, is the case's observable.
"""

import torch

from pytest_lessons.harness import LessonFailure, load_strict, snapshot, unchanged

NAMES = ("c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias")


def drive(learner, x, n_head, c_attn_weight, c_attn_bias, c_proj_weight, c_proj_bias):
    state = dict(zip(NAMES, (c_attn_weight, c_attn_bias, c_proj_weight, c_proj_bias)))
    module = learner.CausalSelfAttention(x.shape[-1], n_head)
    named_buffers = getattr(module, "named_buffers", None)
    saved = module.state_dict() if callable(getattr(module, "state_dict", None)) else {}
    for name, _ in named_buffers() if callable(named_buffers) else ():
        if name in saved and name not in state:
            raise LessonFailure(
                f"Register `{name}` with register_buffer(..., persistent=False), or build the "
                "mask inside forward: a saved buffer is part of the state dict, and the "
                "lesson's weights hold only c_attn and c_proj, so a strict load refuses it."
            )
    load_strict(module, state, "CausalSelfAttention")
    before = snapshot(x)
    y = module(x)
    unchanged(before, x, "x", "your forward")
    if isinstance(y, torch.Tensor):
        y = y.detach()
    return {"y": y}
