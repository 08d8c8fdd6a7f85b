"""Known-correct alternatives to reference.py for "Count a GPT's parameters".

``pytest --lesson-check`` requires each to pass every case: a right answer a learner might
write must never fail. (A variant that builds the modules with torch on the meta device and
counts model.parameters() agrees on every typed case, but its first call can take 10 s on a
loaded machine, longer than a case may run; the count was checked against it once.)
"""


def per_layer_table(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    """Each layer's shape written out, products summed, the shared lm_head left out."""
    C = n_embd
    b = 1 if bias else 0
    shapes = [(C, 3 * C), (C, C), (C, 4 * C), (4 * C, C)]
    block = sum(i * o + b * o for i, o in shapes) + 2 * (C + b * C)
    return vocab_size * C + block_size * C + n_layer * block + C + b * C


def state_dict_shapes(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    """The shapes of nanoGPT's state dict, name by name, lm_head.weight skipped as wte's."""
    C = n_embd
    shapes = {"transformer.wte.weight": (vocab_size, C), "transformer.wpe.weight": (block_size, C)}
    layers = {
        "ln_1": [(C,)],
        "attn.c_attn": [(3 * C, C), (3 * C,)],
        "attn.c_proj": [(C, C), (C,)],
        "ln_2": [(C,)],
        "mlp.c_fc": [(4 * C, C), (4 * C,)],
        "mlp.c_proj": [(C, 4 * C), (C,)],
    }
    for layer in range(n_layer):
        for name, parts in layers.items():
            for part, shape in zip(("weight", "bias"), parts):
                shapes[f"transformer.h.{layer}.{name}.{part}"] = shape
            if bias and name.startswith("ln"):
                shapes[f"transformer.h.{layer}.{name}.bias"] = (C,)
    shapes["transformer.ln_f.weight"] = (C,)
    if bias:
        shapes["transformer.ln_f.bias"] = (C,)
    count = 0
    for name, shape in shapes.items():
        if name.endswith(".bias") and not bias:
            continue
        size = 1
        for n in shape:
            size *= n
        count += size
    return count
