"""Count a GPT's parameters: your solution goes here.

Check it with:  pytest exercises/param_count
"""


def solve(vocab_size, block_size, n_layer, n_head, n_embd, bias):
    """The number of parameters of a nanoGPT-style GPT with this configuration.

    vocab_size, block_size, n_layer, n_head, n_embd: ints.
    bias: a bool, whether the linear layers and layer norms have biases.
    The output layer shares the token embedding's weights (weight tying).
    Return an int.
    """
    raise NotImplementedError
