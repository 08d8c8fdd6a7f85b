"""A few training steps of the tiny GPT: your solution goes here.

Check it with:  pytest exercises/train_steps
"""

import torch  # noqa: F401  (you will need it)
import torch.nn.functional as F  # noqa: F401
from course_lib.gpt import gpt_forward  # noqa: F401  ([B, T] ids -> [B, T, V] logits)


def train_step(params, config, batch, lr):
    """One step of plain gradient descent on *batch*; return this step's loss as a float.

    params: the GPT's state dict, name -> float32 leaf tensor with requires_grad=True (a frozen
        one's .grad stays None). Update them in place.
    config: the tiny GPT's settings, a dict (n_layer, n_head, n_embd, block_size, eps, ...).
    batch: int64 tensor [B, T + 1] of token ids; the inputs are batch[:, :-1], the targets
        batch[:, 1:].
    lr: the learning rate, a float.
    """
    raise NotImplementedError
