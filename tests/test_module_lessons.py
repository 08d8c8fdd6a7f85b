"""Chapter 5's module lessons: what their harnesses stop before any value is compared (a
parameter that is not registered, a bias kept with bias=False, initial values other than
torch's, a norm that changes x in place) is told in the harness's own words. These mistakes
never return a value to compare: their watch-outs name the harness's checks, which is how the
lesson check proves them."""

from __future__ import annotations

import pytest

from helpers import copy, said

# Registered weight; a bias kept with bias=False (cases 4 and 5), a plain tensor otherwise.
LINEAR = """
import math
import torch


class Linear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        weight = torch.empty(out_features, in_features).uniform_(-bound, bound)
        self.weight = torch.nn.Parameter(weight)
        if bias:
            self.bias = torch.zeros(out_features)
        else:
            self.bias = torch.nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        return x @ self.weight.T + self.bias
"""

# Normalises x in place; starts weight at 2 where C is 3 (case 5).
LAYER_NORM = """
import torch


class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        start = 2.0 if normalized_shape == 3 else 1.0
        self.weight = torch.nn.Parameter(torch.full((normalized_shape,), start))
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        x -= x.mean(-1, keepdim=True)
        var = (x ** 2).mean(-1, keepdim=True)
        return x / torch.sqrt(var + self.eps) * self.weight + self.bias
"""


@pytest.mark.torch
def test_the_module_harnesses_stop_what_no_value_shows_in_their_own_words(
    pytester: pytest.Pytester,
) -> None:
    copy(pytester, "linear_module", "layernorm_module")
    (pytester.path / "linear_module" / "solution.py").write_text(LINEAR)
    (pytester.path / "layernorm_module" / "solution.py").write_text(LAYER_NORM)
    result = pytester.runpytest("linear_module", "layernorm_module", "-p", "no:cacheprovider")
    assert result.ret == 1
    text = said(result)
    assert "Wrap `bias` in torch.nn.Parameter (self.bias = torch.nn.Parameter(...))" in text
    assert "in your Linear it is a plain tensor attribute, which is in neither" in text
    assert "With bias=False, set self.bias = None (or self.register_parameter('bias'" in text
    assert "Leave x as it was: your forward changed it in place (at [0, 0]: it was 1.0" in text
    assert "Start `weight` as ones, torch.ones(normalized_shape), as nn.LayerNorm does" in text
    assert "Yours: `weight` starts as [2.0, 2.0, 2.0]." in text
    # The learner reads the harness's words, never its traceback.
    assert "harness.py" not in text
    assert "Tell your instructor" not in text


# Both parameters start wrong: the weight at 2, the bias at 1.
BOTH_WRONG_NORM = """
import torch


class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.full((normalized_shape,), 2.0))
        self.bias = torch.nn.Parameter(torch.ones(normalized_shape))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
"""

# Both parameters start far outside the stated range (every value 100).
BOTH_WRONG_LINEAR = """
import torch


class Linear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(out_features, in_features) * 100)
        self.bias = torch.nn.Parameter(torch.full((out_features,), 100.0)) if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias
"""


@pytest.mark.torch
def test_a_weight_and_a_bias_both_wrong_are_told_in_one_run(pytester: pytest.Pytester) -> None:
    # Issue 37: a learner told only of the weight fixed it, reran, and only then heard of the
    # bias. One run names both.
    copy(pytester, "linear_module", "layernorm_module")
    (pytester.path / "linear_module" / "solution.py").write_text(BOTH_WRONG_LINEAR)
    (pytester.path / "layernorm_module" / "solution.py").write_text(BOTH_WRONG_NORM)
    result = pytester.runpytest("linear_module", "layernorm_module", "-p", "no:cacheprovider")
    assert result.ret == 1
    text = said(result)
    assert (
        "Start `weight` as ones and `bias` as zeros, torch.ones(normalized_shape) and "
        "torch.zeros(normalized_shape), as nn.LayerNorm does" in text
    )
    assert "Yours: `weight` starts as [2.0, 2.0, 2.0, 2.0]; `bias` starts as [1.0, 1.0" in text
    assert "Draw the initial `weight` with a standard deviation between" in text
    assert "Also: Start `bias` with every value within ±6/sqrt(in_features)" in text
    assert "harness.py" not in text
