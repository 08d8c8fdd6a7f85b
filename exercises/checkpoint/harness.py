"""How the checkpoint lesson drives your save_checkpoint and load_checkpoint (author code; it
holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. The harness
builds a small model (Linear(3, width), Tanh, Linear(width, 2), weights drawn from the
case's seed)
and an SGD optimizer with momentum, trains steps_before steps on a fixed set of batches,
calls save_checkpoint(model, optimizer, steps_before, path) with a path in the case's own
working folder, and trains the original model on (so the file must hold a copy, not the live
tensors). The saved file must load with torch.load(path, weights_only=True). Then it builds a
fresh model with other weights and a fresh optimizer, calls
load_checkpoint(path, model, optimizer), and trains steps_after more steps from there. Before
loading, it saves a second checkpoint of the moved-on model elsewhere and gives the first
file another name: what load_checkpoint restores must come from the file it is given. The
observables are the iteration load_checkpoint returns, the fresh model's parameters and the
fresh optimizer's momentum buffers right after loading, and the losses of the resumed steps,
which equal those of a run that never stopped.

The optimizer is the lesson's own MomentumSGD: it steps as torch.optim.SGD(params, lr,
momentum) does and its state_dict() and load_state_dict() have torch.optim's layout, so
your code is the same for both. (Every torch.optim optimizer imports torch._dynamo when it
is made, some seconds a case.)
"""

import os
import shutil
import tempfile

import torch

from pytest_lessons.harness import LessonFailure


class MomentumSGD:
    """SGD with momentum: buf = momentum * buf + grad (buf = grad at the first step), then
    p -= lr * buf. state_dict() is {"state": {index: {"momentum_buffer": tensor}},
    "param_groups": [{"lr", "momentum", "params": [indices]}]}, as torch.optim.SGD's is."""

    def __init__(self, params, lr, momentum):
        self.params = list(params)
        self.param_groups = [{"params": self.params, "lr": lr, "momentum": momentum}]
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        group = self.param_groups[0]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state.setdefault(p, {})
            buf = state.get("momentum_buffer")
            if buf is None:
                state["momentum_buffer"] = p.grad.clone()
            else:
                buf.mul_(group["momentum"]).add_(p.grad)
            p.add_(state["momentum_buffer"], alpha=-group["lr"])

    def state_dict(self):
        group = self.param_groups[0]
        index = {id(p): i for i, p in enumerate(group["params"])}
        return {
            "state": {
                index[id(p)]: {"momentum_buffer": s["momentum_buffer"]}
                for p, s in self.state.items()
                if "momentum_buffer" in s
            },
            "param_groups": [
                {
                    "lr": group["lr"],
                    "momentum": group["momentum"],
                    "params": list(range(len(group["params"]))),
                }
            ],
        }

    def load_state_dict(self, state_dict):
        wrong = LessonFailure(
            "Pass optimizer.load_state_dict the dict that optimizer.state_dict() gave when "
            "you saved: it holds the optimizer's state by parameter number and its "
            "hyper-parameters, and what your code passed is not that dict."
        )
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise wrong
        groups, states = state_dict["param_groups"], state_dict["state"]
        if not isinstance(groups, list) or len(groups) != 1 or not isinstance(states, dict):
            raise wrong
        group = self.param_groups[0]
        params = group["params"]
        saved = groups[0]
        if not isinstance(saved, dict) or len(saved.get("params", ())) != len(params):
            raise wrong
        group["lr"] = saved.get("lr", group["lr"])
        group["momentum"] = saved.get("momentum", group["momentum"])
        self.state = {}
        for i, s in states.items():
            buf = s.get("momentum_buffer") if isinstance(s, dict) else None
            if not isinstance(i, int) or not 0 <= i < len(params) or buf is None:
                raise wrong
            if not isinstance(buf, torch.Tensor) or buf.shape != params[i].shape:
                raise wrong
            self.state[params[i]] = {"momentum_buffer": buf.detach().clone()}


def _model(generator, width):
    model = torch.nn.Sequential(
        torch.nn.Linear(3, width), torch.nn.Tanh(), torch.nn.Linear(width, 2)
    )
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.5)
    return model


def _train(model, optimizer, batches, first, count):
    losses = []
    for it in range(first, first + count):
        x, y = batches[it % len(batches)]
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


def _momentum(optimizer, model):
    state = optimizer.state_dict()["state"]
    return torch.cat(
        [
            (state[i]["momentum_buffer"] if i in state else torch.zeros_like(p)).reshape(-1)
            for i, p in enumerate(model.parameters())
        ]
    )


def _tensors(value):
    """Every tensor in a loaded checkpoint (dicts, lists and tuples, at any depth)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _holds_the_model(saved, model):
    """The file holds each of the model's parameters as they were when it was saved: a
    checkpoint that restores from anything but its file fails here."""
    tensors = list(_tensors(saved))
    for name, parameter in model.state_dict().items():
        if not any(t.shape == parameter.shape and torch.equal(t, parameter) for t in tensors):
            raise LessonFailure(
                'Save the model\'s state in the file: torch.save({"model": '
                f"model.state_dict(), ...}}, path). The file holds no tensor equal to {name} "
                "as it was when save_checkpoint was called, so no run can resume from it."
            )


def drive(learner, seed, width, steps_before, steps_after, lr, momentum):
    generator = torch.Generator().manual_seed(seed)
    batches = [
        (torch.randn(4, 3, generator=generator), torch.randn(4, 2, generator=generator))
        for _ in range(3)
    ]
    model = _model(generator, width)
    optimizer = MomentumSGD(model.parameters(), lr, momentum)
    _train(model, optimizer, batches, 0, steps_before)
    folder = tempfile.mkdtemp(prefix="checkpoint-")  # the case's own working folder
    try:
        path = os.path.join(folder, "checkpoint.pt")
        learner.save_checkpoint(model, optimizer, steps_before, path)
        if not os.path.isfile(path):
            raise LessonFailure(
                "Write the checkpoint to the path save_checkpoint is given, with "
                "torch.save(..., path): after your save_checkpoint there is no file there."
            )
        try:
            saved = torch.load(path, weights_only=True)
        except Exception as error:
            raise LessonFailure(
                "Save state dicts, not the model or optimizer objects: torch.save("
                '{"model": model.state_dict(), "optimizer": optimizer.state_dict(), ...}, '
                "path). torch.load(path, weights_only=True), torch's default since 2.6, "
                f"refuses your file ({type(error).__name__}): it loads only tensors and plain "
                "containers, because unpickling an object can run any code."
            ) from None
        _holds_the_model(saved, model)
        _train(model, optimizer, batches, steps_before, 2)  # the live model moves on
        # A later checkpoint of the moved-on model, then the first one under another name:
        # what load_checkpoint restores must come from the file it is given, not from the
        # last save remembered in memory or from a path it saw before.
        learner.save_checkpoint(
            model, optimizer, steps_before + 2, os.path.join(folder, "later.pt")
        )
        moved = os.path.join(folder, "resume-from.pt")
        os.replace(path, moved)
        fresh = _model(generator, width)
        fresh_optimizer = MomentumSGD(fresh.parameters(), lr, momentum)
        iteration = learner.load_checkpoint(moved, fresh, fresh_optimizer)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if isinstance(iteration, torch.Tensor) and iteration.numel() == 1:
        iteration = iteration.item()
    params = torch.cat([p.detach().reshape(-1) for p in fresh.parameters()]).clone()
    buffers = _momentum(fresh_optimizer, fresh).clone()
    losses = _train(fresh, fresh_optimizer, batches, steps_before, steps_after)
    return {
        "iteration": iteration,
        "params": params,
        "momentum": buffers,
        "losses": torch.stack(losses),
    }
