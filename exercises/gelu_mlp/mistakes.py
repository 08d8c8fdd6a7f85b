"""Known wrong answers to "GELU and the MLP", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import math

import torch
import torch.nn.functional as F


def _first_layer(x, W1, b1):
    return x @ W1.T + b1


def erf_gelu(x, W1, b1, W2, b2):
    # The exact GELU, x * Phi(x) with erf: F.gelu's and nn.GELU's default
    # (approximate="none"). GPT-2 was trained with the tanh form; nanoGPT kept its own
    # new_gelu until karpathy/nanoGPT#274 showed nn.GELU(approximate="tanh") matches it,
    # onnxruntime#2270 saw the two drift apart over GPT-2's 12 layers, and
    # kyutai-labs/pocket-tts#278 fixed a model served with erf but trained with tanh. The two
    # differ by at most 4.7e-4 (at |h| = 2.7), by under 2e-5 where |h| < 0.5.
    return F.gelu(_first_layer(x, W1, b1)) @ W2.T + b2


def gelu_without_x(x, W1, b1, W2, b2):
    # The tanh factor without the leading h: 0.5 * (1 + tanh(...)), a smooth step in [0, 1]
    # instead of GELU. tensorflow/tfjs#8224's gelu_new was written this way until its review
    # found the missing `* x`.
    h = _first_layer(x, W1, b1)
    g = 0.5 * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h**3)))
    return g @ W2.T + b2


def sigmoid_gelu(x, W1, b1, W2, b2):
    # The sigmoid approximation h * sigmoid(1.702 h) (Hugging Face's QuickGELU, CLIP's
    # activation), another approximation from the GELU paper; ml-explore/mlx#744 corrected its
    # constant from 1.773 to 1.702. Off from the tanh form by up to about 0.02.
    h = _first_layer(x, W1, b1)
    return (h * torch.sigmoid(1.702 * h)) @ W2.T + b2


def relu_instead(x, W1, b1, W2, b2):
    # ReLU, the original Transformer's activation, where GPT's MLP uses GELU (nanoGPT forks
    # carry a use_relu switch for it); negative pre-activations then give exactly 0.
    return torch.relu(_first_layer(x, W1, b1)) @ W2.T + b2


def gelu_after_output(x, W1, b1, W2, b2):
    # GELU after the second layer as well, as an nn.Sequential that ends in an activation
    # makes it: the block's output must stay linear, since it is added to the residual
    # stream, which needs negative values as much as positive ones.
    h = _first_layer(x, W1, b1)
    g = F.gelu(h, approximate="tanh")
    return F.gelu(g @ W2.T + b2, approximate="tanh")
