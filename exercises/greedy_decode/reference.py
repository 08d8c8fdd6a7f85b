"""The author's answer to "Greedy decoding"."""

import torch
from course_lib import gpt_forward


def solve(prompt, n, weights, config):
    block_size = config["block_size"]
    idx = torch.tensor([prompt])
    for _ in range(n):
        # 1. Crop the context to its last block_size tokens: the model has no position after.
        context = idx[:, -block_size:]
        # 2. The logits of every position, [1, T, V], from the course library's forward pass.
        logits = gpt_forward(context, weights, config)
        # 3. The next token: the argmax over the vocabulary at the last position only.
        next_id = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        # 4. Append it, so the next step sees it.
        idx = torch.cat([idx, next_id], dim=1)
    # 5. The n new ids, after the prompt, as ints.
    return idx[0, len(prompt) :].tolist()
