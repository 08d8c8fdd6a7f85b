"""Save and load a checkpoint: your solution goes here.

Check it with:  pytest exercises/checkpoint
"""

import torch  # noqa: F401  (you will need it)


def save_checkpoint(model, optimizer, iteration, path):
    """Write to *path* all that training needs to go on: the model's weights, the
    optimizer's state and the iteration (an int).

    model: a torch.nn.Module; optimizer: an optimizer with state_dict() and
    load_state_dict(), as torch.optim's have; path: a str.
    """
    raise NotImplementedError


def load_checkpoint(path, model, optimizer):
    """Restore the checkpoint at *path* into *model* and *optimizer* (made afresh, with
    other weights), and return the iteration it was saved at."""
    raise NotImplementedError
