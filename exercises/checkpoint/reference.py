"""The author's answer to "Save and load a checkpoint"."""

import torch


def save_checkpoint(model, optimizer, iteration, path):
    # 1. One dict holds all that training needs to go on: the model's weights, the
    #    optimizer's state (its momentum buffers) and the iteration. State dicts, not the
    #    objects: torch.load(weights_only=True) reads tensors and plain containers only.
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "iteration": iteration,
    }
    # 2. torch.save writes it now, so later training does not change the file.
    torch.save(checkpoint, path)


def load_checkpoint(path, model, optimizer):
    # 3. Read the dict back, safely: weights_only=True (torch's default since 2.6).
    checkpoint = torch.load(path, weights_only=True)
    # 4. Copy the weights into the model you are given (in place: the optimizer holds these
    #    very parameters), then the optimizer's state into the optimizer you are given.
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    # 5. Return the iteration, so the training loop goes on counting from it.
    return checkpoint["iteration"]
