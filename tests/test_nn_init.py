"""torch.nn.init: gains, fans, the bounds / standard deviations of each initializer (PyTorch's formulas),
in-place no_grad behaviour on parameters, reproducibility under manual_seed, and the default inits of
the layers."""
import math

import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn as nn
import mindtorch_v2.nn.functional as F
from mindtorch_v2.nn import init


def N(t):
    return np.asarray(t.detach())


def test_calculate_gain_table():
    assert init.calculate_gain("linear") == 1
    assert init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope foo not a valid number"):
        init.calculate_gain("leaky_relu", "foo")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(torch.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(torch.empty(8, 4, 3, 2)) == (24, 48)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
        init._calculate_fan_in_and_fan_out(torch.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of fan_in, fan_out"):
        init.kaiming_uniform_(torch.empty(3, 3), mode="fan_avg")


def test_initializers_work_in_place_on_parameters_without_recording():
    p = nn.Parameter(torch.zeros(50, 40))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.trunc_normal_, init.orthogonal_, init.zeros_, init.ones_, init.eye_):
        out = fn(p)
        assert out is p, fn.__name__
        assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert init.constant_(p, 0.3) is p
    np.testing.assert_allclose(N(p), 0.3, rtol=1e-6)


def test_uniform_normal_constant_statistics():
    torch.manual_seed(0)
    t = torch.empty(200, 300)
    v = N(init.uniform_(t, -2.0, 3.0))
    assert v.min() >= -2.0 and v.max() <= 3.0 and abs(v.mean() - 0.5) < 0.03
    v = N(init.normal_(t, 1.5, 0.5))
    assert abs(v.mean() - 1.5) < 0.01 and abs(v.std() - 0.5) < 0.01
    assert N(init.zeros_(t)).sum() == 0 and N(init.ones_(t)).mean() == 1
    np.testing.assert_array_equal(N(init.eye_(torch.empty(3, 4))), np.eye(3, 4))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(torch.empty(2, 2, 2))


def test_xavier_and_kaiming_bounds_and_stds():
    torch.manual_seed(1)
    w = torch.empty(300, 200)
    a = 1.5 * math.sqrt(6 / 500)
    v = N(init.xavier_uniform_(w, gain=1.5))
    assert np.abs(v).max() <= a and np.abs(v).max() > 0.99 * a
    v = N(init.xavier_normal_(w, gain=2.0))
    assert abs(v.std() - 2.0 * math.sqrt(2 / 500)) < 0.002
    v = N(init.kaiming_uniform_(w, a=0, nonlinearity="relu"))
    bound = math.sqrt(2) * math.sqrt(3 / 200)
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.99 * bound
    v = N(init.kaiming_uniform_(w, a=math.sqrt(5)))  # the Linear default: bound 1/sqrt(fan_in)
    assert np.abs(v).max() <= 1 / math.sqrt(200) and np.abs(v).max() > 0.99 / math.sqrt(200)
    v = N(init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))
    assert abs(v.std() - math.sqrt(2 / 300)) < 0.001
    conv = torch.empty(16, 8, 3, 3)
    v = N(init.kaiming_normal_(conv))
    assert abs(v.std() - math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(72)) < 0.01
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(torch.empty(0, 3))


def test_trunc_normal_stays_in_range():
    torch.manual_seed(2)
    v = N(init.trunc_normal_(torch.empty(100, 100), mean=0.5, std=1.0, a=-0.5, b=1.0))
    assert v.min() >= -0.5 and v.max() <= 1.0
    assert len(np.unique(v)) > 9000  # a continuous draw, not clamped onto the bounds
    v = N(init.trunc_normal_(torch.empty(200, 100), std=0.02))
    assert abs(v.std() - 0.02) < 0.001 and np.abs(v).max() <= 2.0


def test_orthogonal_rows_or_columns_are_orthonormal():
    torch.manual_seed(3)
    w = N(init.orthogonal_(torch.empty(4, 7)))
    np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-5)
    w = N(init.orthogonal_(torch.empty(7, 4), gain=2.0))
    np.testing.assert_allclose(w.T @ w, 4 * np.eye(4), atol=1e-5)
    w = N(init.orthogonal_(torch.empty(6, 2, 3)))
    flat = w.reshape(6, 6)
    np.testing.assert_allclose(flat @ flat.T, np.eye(6), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(torch.empty(3))


def test_dirac_makes_an_identity_convolution():
    w = init.dirac_(torch.empty(3, 3, 3, 3))
    x = torch.randn(2, 3, 5, 5)
    np.testing.assert_allclose(N(F.conv2d(x, w, padding=1)), N(x), rtol=1e-6)


def test_inits_are_reproducible_under_manual_seed():
    torch.manual_seed(42)
    a = nn.Linear(5, 4)
    torch.manual_seed(42)
    b = nn.Linear(5, 4)
    np.testing.assert_array_equal(N(a.weight), N(b.weight))
    np.testing.assert_array_equal(N(a.bias), N(b.bias))
    g = torch.Generator().manual_seed(7)
    x = N(init.normal_(torch.empty(3), generator=g))
    g.manual_seed(7)
    np.testing.assert_array_equal(x, N(init.normal_(torch.empty(3), generator=g)))


def test_default_layer_inits():
    torch.manual_seed(0)
    conv = nn.Conv2d(4, 64, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert np.abs(N(conv.weight)).max() <= bound and np.abs(N(conv.weight)).max() > 0.98 * bound
    assert np.abs(N(conv.bias)).max() <= bound
    emb = nn.Embedding(400, 50)
    assert abs(N(emb.weight).std() - 1) < 0.02 and abs(N(emb.weight).mean()) < 0.02
    bn = nn.BatchNorm2d(5)
    assert N(bn.weight).tolist() == [1.0] * 5 and N(bn.bias).tolist() == [0.0] * 5
    assert N(bn.running_var).tolist() == [1.0] * 5 and int(bn.num_batches_tracked) == 0
    gn = nn.GroupNorm(1, 3)
    assert N(gn.weight).tolist() == [1.0] * 3
    lin = nn.Linear(3, 2)
    before = N(lin.weight).copy()
    lin.reset_parameters()
    assert not np.array_equal(before, N(lin.weight))
    assert nn.Linear(3, 2, dtype=torch.float64).weight.dtype is torch.float64
