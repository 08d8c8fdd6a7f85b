"""How the cached-generation lesson drives your generate (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. model is
either the tiny GPT's state dict (the cases that read fixtures/tiny_gpt.safetensors) or, in
drawn cases, a seed: the harness then draws a small random GPT of the same layout from it,
with Python's own random numbers (the same on every platform). Either way your
generate(weights, config, prompt, n) gets the weights, a config dict and the prompt's ids, and
its n new token ids are the observable. In the work-budget cases everything drive() does is
counted, your generate's calls and this file's own few (the same for every answer).
"""

import random

import torch

from pytest_lessons.harness import LessonFailure, uncounted

#: The drawn models: 4 heads as the workshop's GPT, narrower, with room for 64 tokens.
DRAWN = {"vocab_size": 16, "n_layer": 2, "n_head": 4, "n_embd": 16, "block_size": 64, "eps": 1e-5}


def _drawn_gpt(seed):
    """A random GPT from *seed*. Its blocks' outputs are scaled up and the token table down,
    so that greedy decoding does not settle on repeating one token, as a random GPT with a
    tied head soon does (the token seen scores highest)."""
    rng = random.Random(seed)
    V, C, T = DRAWN["vocab_size"], DRAWN["n_embd"], DRAWN["block_size"]

    def table(rows, cols, std, mean=0.0):
        values = [[mean + rng.gauss(0.0, std) for _ in range(cols)] for _ in range(rows)]
        return torch.tensor(values, dtype=torch.float32)

    def row(cols, std, mean=0.0):
        return table(1, cols, std, mean)[0]

    weights = {"wte.weight": table(V, C, 0.3), "wpe.weight": table(T, C, 1.0)}
    for i in range(DRAWN["n_layer"]):
        p = f"h.{i}."
        weights.update(
            {
                p + "ln_1.weight": row(C, 0.1, 1.0),
                p + "ln_1.bias": row(C, 0.1),
                p + "attn.c_attn.weight": table(3 * C, C, C**-0.5),
                p + "attn.c_attn.bias": row(3 * C, 0.1),
                p + "attn.c_proj.weight": table(C, C, 3 * C**-0.5),
                p + "attn.c_proj.bias": row(C, 0.1),
                p + "ln_2.weight": row(C, 0.1, 1.0),
                p + "ln_2.bias": row(C, 0.1),
                p + "mlp.c_fc.weight": table(4 * C, C, C**-0.5),
                p + "mlp.c_fc.bias": row(4 * C, 0.1),
                p + "mlp.c_proj.weight": table(C, 4 * C, 3 * (4 * C) ** -0.5),
                p + "mlp.c_proj.bias": row(C, 0.1),
            }
        )
    weights["ln_f.weight"] = row(C, 0.1, 1.0)
    weights["ln_f.bias"] = row(C, 0.1)
    return weights, dict(DRAWN)


def _config_of(weights):
    """The config of a state dict in the tiny GPT's layout (its 4 heads, its eps)."""
    V, C = weights["wte.weight"].shape
    layers = sum(1 for name in weights if name.endswith(".ln_1.weight"))
    block = weights["wpe.weight"].shape[0]
    return {
        "vocab_size": V,
        "n_layer": layers,
        "n_head": 4,
        "n_embd": C,
        "block_size": block,
        "eps": 1e-5,
    }


def drive(learner, model, prompt, n):
    # Drawing the model is the lesson's set-up, not the learner's work: a work budget counts
    # only what generate does.
    with uncounted():
        if isinstance(model, dict):
            weights, config = model, _config_of(model)
        else:
            weights, config = _drawn_gpt(int(model))
    tokens = learner.generate(weights, config, list(prompt), n)
    if isinstance(tokens, torch.Tensor):
        tokens = tokens.reshape(-1).tolist()
    if not isinstance(tokens, (list, tuple)):
        raise LessonFailure(
            "Return the n new token ids as a list of ints (or a 1-D tensor): generate returned "
            f"{type(tokens).__name__}."
        )
    return list(tokens)
