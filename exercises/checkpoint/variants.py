"""Known-correct alternatives to reference.py for "Save and load a checkpoint".

``pytest --lesson-check`` requires each to pass every case. The lesson's entry is
save_checkpoint and the harness then calls load_checkpoint, so each variant is a save
function that names the load function it goes with (the _with_load decorator);
load_checkpoint (bound here by assignment, so it is not taken for a variant) calls the one
the last save named.
"""

import copy
import io
import pathlib

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


def _dispatch(path, model, optimizer):
    return _load(path, model, optimizer)


load_checkpoint = _dispatch


def _load_named(path, model, optimizer):
    checkpoint = torch.load(pathlib.Path(path), map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"], strict=True)
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return int(checkpoint["epoch"])


@_with_load(_load_named)
def tutorial_names(model, optimizer, iteration, path):
    """The keys of PyTorch's "general checkpoint" tutorial, a pathlib path and map_location."""
    torch.save(
        {
            "epoch": iteration,
            "model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(),
        },
        pathlib.Path(path),
    )


def _load_from_file_object(path, model, optimizer):
    with open(path, "rb") as f:
        model_state, optimizer_state, iteration = torch.load(
            io.BytesIO(f.read()), weights_only=True
        )
    model.load_state_dict(model_state)
    optimizer.load_state_dict(optimizer_state)
    return torch.tensor(iteration)


@_with_load(_load_from_file_object)
def tuple_through_file_objects(model, optimizer, iteration, path):
    """A tuple written through an open file, deep copies of the state dicts, and the
    iteration returned as a one-element tensor."""
    with open(path, "wb") as f:
        torch.save(
            (copy.deepcopy(model.state_dict()), copy.deepcopy(optimizer.state_dict()), iteration),
            f,
        )
