"""Known wrong answers to "Count a GPT's parameters", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def _count(vocab_size, block_size, n_layer, n_embd, bias, *, qkv_bias=True, norm_bias=None):
    C = n_embd
    norm_bias = bias if norm_bias is None else norm_bias
    matrices = 12 * C * C
    norms = 2 * C + (2 * C if norm_bias else 0)
    linear_biases = ((3 * C if qkv_bias else 0) + C + 4 * C + C) if bias else 0
    final_norm = C + (C if norm_bias else 0)
    return (vocab_size + block_size) * C + n_layer * (matrices + norms + linear_biases) + final_norm


def untied_output_layer(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    # lm_head counted as a matrix of its own: rasbt's LLMs-from-scratch chapter 4 counts
    # 163,009,536 parameters for its GPT-2 small, 124,412,160 once the output layer shares the
    # token embedding's weights, as GPT-2's does (and nanoGPT's: wte.weight = lm_head.weight).
    right = _count(vocab_size, block_size, n_layer, n_embd, bias)
    return right + vocab_size * n_embd


def without_position_embeddings(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    # nanoGPT's get_num_params(non_embedding=True), its default, subtracts wpe: the
    # "number of parameters: 123.65M" it prints for GPT-2 small, whose model has 124,439,808.
    right = _count(vocab_size, block_size, n_layer, n_embd, bias)
    return right - block_size * n_embd


def without_any_embeddings(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    # Both tables left out, as the "non-embedding" parameter counts of scaling-law papers
    # are; get_num_params's docstring explains why nanoGPT keeps the token table: tied, it is
    # also the output layer's weight.
    right = _count(vocab_size, block_size, n_layer, n_embd, bias)
    return right - (vocab_size + block_size) * n_embd


def layer_norm_bias_kept(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    # nn.LayerNorm's bias counted even with bias=False: nanoGPT writes its own LayerNorm
    # ("LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False"),
    # since nn.LayerNorm had no bias switch before torch 2.1.
    return _count(vocab_size, block_size, n_layer, n_embd, bias, norm_bias=True)


def no_qkv_bias(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    # The query, key and value projection without its bias while the other layers keep
    # theirs: rasbt's GPT_CONFIG_124M sets qkv_bias=False, which is why its tied count is
    # 124,412,160 and GPT-2's 124,439,808 (12 layers x 3 x 768 = 27,648 fewer).
    return _count(vocab_size, block_size, n_layer, n_embd, bias, qkv_bias=False)


def only_the_matrices(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    # The estimate 12 n_layer n_embd^2 (Kaplan et al.'s N, in scaling-law papers and nanoGPT's
    # transformer_sizing notebook) plus the embeddings: right within a percent for a big
    # model, but it leaves out every layer norm and bias, so it is no exact count.
    return (vocab_size + block_size) * n_embd + 12 * n_layer * n_embd * n_embd
