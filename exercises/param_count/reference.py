"""The author's answer to "Count a GPT's parameters"."""


def solve(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    C = n_embd
    # 1. The embeddings: a token table [vocab_size, C] and a position table [block_size, C].
    #    The output layer (lm_head) shares the token table's weights, so it adds nothing.
    embeddings = vocab_size * C + block_size * C
    # 2. The weight matrices of one block: attention's c_attn [3C, C] and c_proj [C, C], the
    #    MLP's c_fc [4C, C] and c_proj [C, 4C]: 12 C^2. The number of heads changes none of
    #    them: the heads split the same matrices.
    matrices = 3 * C * C + C * C + 4 * C * C + 4 * C * C
    # 3. Its two layer norms' weights, C each; with bias, also their biases (2C) and the four
    #    linear layers' biases (3C + C + 4C + C).
    norms = 2 * C
    biases = (2 * C + 3 * C + C + 4 * C + C) if bias else 0
    per_block = matrices + norms + biases
    # 4. The final layer norm, ln_f: a weight of C, and a bias of C when bias is on.
    final_norm = C + (C if bias else 0)
    # 5. In all: embeddings, n_layer blocks and the final norm. An exact int.
    return embeddings + n_layer * per_block + final_norm
