"""Known wrong checkpoints for "Save and load a checkpoint", one per watch-out in
exercise.toml.

The lesson's entry is save_checkpoint, and the harness then calls load_checkpoint: each
mistake below is a save function that names the load function it goes with (the
_with_load decorator), and this module's load_checkpoint calls the one the last save named.
Sources, for facts only: PyTorch's tutorial "Saving and loading a general checkpoint"
(model and optimizer state dicts and the epoch in one dict), torch.nn.Module.load_state_dict's
documentation (its warning on assign=True), torch.load's weights_only default (True since
PyTorch 2.6), and Stanford CS336 assignment 1 (run_save_checkpoint and run_load_checkpoint,
tests/test_serialization.py: the restored optimizer state is compared with the original).
"""

import torch

_load = None


def _with_load(load):
    def pair(save):
        def run(model, optimizer, iteration, path):
            global _load
            _load = load
            return save(model, optimizer, iteration, path)

        run.__name__ = save.__name__
        return run

    return pair


def load_checkpoint(path, model, optimizer):
    return _load(path, model, optimizer)


def _save_all(model, optimizer, iteration, path):
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iteration": iteration},
        path,
    )


def _load_all(path, model, optimizer):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["iteration"]


def _load_model_only(path, model, optimizer):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    return checkpoint["iteration"]


@_with_load(_load_model_only)
def model_only(model, optimizer, iteration, path):
    # Only the model's weights (and the iteration) saved, as for inference: the tutorial's
    # "save/load state_dict (recommended)" recipe, where resuming training needs the
    # general checkpoint with optimizer.state_dict() too. The momentum buffers start again
    # from zero, so the first resumed steps differ from the run that never stopped.
    torch.save({"model": model.state_dict(), "iteration": iteration}, path)


def _load_no_return(path, model, optimizer):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])


@_with_load(_load_no_return)
def returns_nothing(model, optimizer, iteration, path):
    # The model and optimizer restored but the iteration not returned (CS336's
    # run_load_checkpoint returns it: the loop, the learning-rate schedule and the data
    # order go on from it), so the caller gets None.
    _save_all(model, optimizer, iteration, path)


def _load_assign(path, model, optimizer):
    checkpoint = torch.load(path, weights_only=True)
    model.load_state_dict(checkpoint["model"], assign=True)
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["iteration"]


@_with_load(_load_assign)
def assigned_after_optimizer(model, optimizer, iteration, path):
    # model.load_state_dict(..., assign=True) replaces the model's Parameter objects with
    # the loaded tensors; torch's documentation warns that the optimizer must then be
    # created after the call. This one was made before: it still holds the old parameters,
    # which no longer get gradients, so resumed training never changes the model.
    _save_all(model, optimizer, iteration, path)
