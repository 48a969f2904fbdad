"""torch.nn.functional (non-loss part) against NumPy implementations of PyTorch's documented formulas:
activations and their gradients (also at kinks and for huge inputs), linear / bilinear, conv and
pooling against naive loops, normalization, dropout, embedding, one_hot, pad, attention."""
import math

import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn.functional as F

RNG = np.random.default_rng(1234)


def T(a, requires_grad=False):
    """A float64 tensor from a numpy array (float64 keeps the comparisons tight)."""
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def N(t):
    return np.asarray(t.detach())


def randn(*shape):
    return RNG.standard_normal(shape)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar f(x) for a numpy array x."""
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


def check_grad(fn, x, atol=1e-6):
    """fn (tensor -> tensor): autograd of sum(fn(x) * w) equals central differences."""
    w = randn(*np.shape(fn(T(x)).detach()))
    xt = T(x, requires_grad=True)
    (fn(xt) * T(w)).sum().backward()
    num = numeric_grad(lambda a: float((fn(T(a)) * T(w)).sum()), x)
    np.testing.assert_allclose(N(xt.grad), num, atol=atol, rtol=1e-5)


# ---------------------------------------------------------------------------
# activations

def _erf(x):
    return np.vectorize(math.erf)(x)


ACTIVATIONS = [
    ("relu", lambda x: F.relu(x), lambda x: np.maximum(x, 0)),
    ("relu6", lambda x: F.relu6(x), lambda x: np.clip(x, 0, 6)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    ("elu", lambda x: F.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * (np.exp(x) - 1))),
    ("celu", lambda x: F.celu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * (np.exp(x / 2.0) - 1))),
    ("selu", lambda x: F.selu(x),
     lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))),
    ("gelu", lambda x: F.gelu(x), lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ("silu", lambda x: F.silu(x), lambda x: x / (1 + np.exp(-x))),
    ("mish", lambda x: F.mish(x), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=3.0),
     lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7)),
    ("sigmoid", lambda x: F.sigmoid(x), lambda x: 1 / (1 + np.exp(-x))),
    ("tanh", lambda x: F.tanh(x), np.tanh),
    ("logsigmoid", lambda x: F.logsigmoid(x), lambda x: -np.log1p(np.exp(-x))),
    ("hardswish", lambda x: F.hardswish(x), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hardsigmoid", lambda x: F.hardsigmoid(x), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    ("softsign", lambda x: F.softsign(x), lambda x: x / (1 + np.abs(x))),
    ("tanhshrink", lambda x: F.tanhshrink(x), lambda x: x - np.tanh(x)),
    ("softshrink", lambda x: F.softshrink(x, 0.3),
     lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0))),
]


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_values_and_gradients(name, fn, ref):
    x = randn(3, 5) * 2.5
    np.testing.assert_allclose(N(fn(T(x))), ref(x), rtol=1e-10, atol=1e-12)
    x = x[np.abs(np.abs(x) - 3) > 1e-2]  # keep away from the kinks of relu6 / hardswish / hardsigmoid ...
    x = x[np.all([np.abs(x - k) > 1e-3 for k in (0, -0.5, 0.7, 1.5, 6, -0.3, 0.3)], axis=0)]
    check_grad(fn, x)


def test_gradient_at_kinks_follows_pytorch():
    x = T([0.0, -1.0, 1.0, 6.0], requires_grad=True)
    F.relu(x).sum().backward()
    assert N(x.grad).tolist() == [0.0, 0.0, 1.0, 1.0]
    x.grad = None
    F.leaky_relu(x, 0.1).sum().backward()
    np.testing.assert_allclose(N(x.grad), [0.1, 0.1, 1.0, 1.0])
    x.grad = None
    F.relu6(x).sum().backward()  # hardtanh: the gradient passes strictly inside (min, max)
    assert N(x.grad).tolist() == [0.0, 0.0, 1.0, 0.0]


# d/dx at the boundaries, recorded from PyTorch 2.13 (float64; hardsigmoid's 1/6 is float32's there, from a
# float constant in its kernel, hence the rtol below). The same numbers from eager backward and from the
# transforms: both run the same rules.
BOUNDARY_GRADIENTS = [
    ("hardtanh", lambda x: F.hardtanh(x), [-2.0, -1.0, 0.0, 1.0, 2.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("hardtanh(-0.5, 0.7)", lambda x: F.hardtanh(x, -0.5, 0.7), [-1.0, -0.5, 0.1, 0.7, 1.0],
     [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("hardtanh(2, 3)", lambda x: F.hardtanh(x, 2.0, 3.0), [1.0, 2.0, 2.5, 3.0, 4.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("hardtanh inplace", lambda x: F.hardtanh(x * 1.0, inplace=True), [-2.0, -1.0, 0.0, 1.0, 2.0],
     [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("Hardtanh module", lambda x: torch.nn.Hardtanh(-0.5, 0.5)(x), [-1.0, -0.5, 0.0, 0.5, 1.0],
     [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("relu6", lambda x: F.relu6(x), [-1.0, 0.0, 3.0, 6.0, 7.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("relu6 inplace", lambda x: F.relu6(x * 1.0, inplace=True), [-1.0, 0.0, 3.0, 6.0, 7.0],
     [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("hardsigmoid", lambda x: F.hardsigmoid(x), [-4.0, -3.0, 0.0, 3.0, 4.0], [0.0, 0.0, 0.1666666716337204, 0.0, 0.0]),
    ("hardswish", lambda x: F.hardswish(x), [-4.0, -3.0, 0.0, 3.0, 4.0], [0.0, 0.0, 0.5, 1.0, 1.0]),
    ("hardswish inside", lambda x: F.hardswish(x), [1.0, -1.0, 2.9],
     [0.8333333333333333, 0.16666666666666669, 1.4666666666666668]),
    ("threshold", lambda x: F.threshold(x, 1.0, 5.0), [0.0, 1.0, 2.0], [0.0, 0.0, 1.0]),
    ("relu", lambda x: F.relu(x), [-1.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), [-1.0, 0.0, 1.0], [0.1, 0.1, 1.0]),
    ("rrelu eval", lambda x: F.rrelu(x), [-1.0, 0.0, 1.0], [0.22916666666666666, 0.22916666666666666, 1.0]),
    ("elu", lambda x: F.elu(x, 2.0), [-1.0, 0.0, 1.0], [0.7357588823428847, 2.0, 1.0]),
    ("celu", lambda x: F.celu(x, 2.0), [-1.0, 0.0, 1.0], [0.6065306597126334, 1.0, 1.0]),
    ("softplus threshold", lambda x: F.softplus(x, 2.0, 4.0), [1.9, 2.0, 2.1],
     [0.9781187290638695, 0.9820137900379085, 1.0]),
    ("softshrink", lambda x: F.softshrink(x, 0.5), [-0.5, 0.0, 0.5], [0.0, 0.0, 0.0]),
    ("hardshrink", lambda x: F.hardshrink(x, 0.5), [-0.5, 0.0, 0.5], [0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("fn,x,expected", [c[1:] for c in BOUNDARY_GRADIENTS], ids=[c[0] for c in BOUNDARY_GRADIENTS])
def test_gradient_at_boundaries_is_pytorchs_in_eager_and_under_transforms(fn, x, expected):
    xt = T(x, requires_grad=True)
    fn(xt).sum().backward()
    np.testing.assert_allclose(N(xt.grad), expected, rtol=1e-7, atol=0)
    grad = torch.func.grad(lambda v: fn(v).sum())(T(x))
    np.testing.assert_allclose(N(grad), expected, rtol=1e-7, atol=0)
    for jac in (torch.func.jacfwd, torch.func.jacrev):  # elementwise: the Jacobian is diagonal
        np.testing.assert_allclose(N(jac(fn)(T(x))), np.diag(expected), rtol=1e-7, atol=0)
    per_example = torch.func.vmap(torch.func.grad(lambda v: fn(v.reshape(1)).sum()))(T(x))
    np.testing.assert_allclose(N(per_example), expected, rtol=1e-7, atol=0)


def test_hardtanh_values_at_and_beyond_the_bounds():
    x = T([-2.0, -1.0, 0.5, 1.0, 2.0, np.nan, -np.inf, np.inf])
    np.testing.assert_array_equal(N(F.hardtanh(x)), [-1.0, -1.0, 0.5, 1.0, 1.0, np.nan, -1.0, 1.0])
    np.testing.assert_array_equal(N(F.relu6(x * 4.0)), [0.0, 0.0, 2.0, 4.0, 6.0, np.nan, 0.0, 6.0])
    np.testing.assert_array_equal(N(F.hardsigmoid(x * 3.0)), [0.0, 0.0, 0.75, 1.0, 1.0, np.nan, 0.0, 1.0])
    y = torch.tensor([-3.0, 0.25, 3.0])
    assert F.hardtanh(y).dtype is torch.float32 and F.hardsigmoid(y).dtype is torch.float32
    z = T([-3.0, 0.25, 3.0])
    F.hardtanh(z, inplace=True)
    np.testing.assert_array_equal(N(z), [-1.0, 0.25, 1.0])


def test_activations_have_finite_gradients_for_huge_inputs():
    for fn in (F.elu, F.softplus, F.mish, F.silu, F.selu, F.logsigmoid, F.celu):
        x = T([-1000.0, -50.0, 0.0, 50.0, 1000.0], requires_grad=True)
        y = fn(x)
        y.sum().backward()
        assert np.all(np.isfinite(N(y))), fn.__name__
        assert np.all(np.isfinite(N(x.grad))), fn.__name__
    np.testing.assert_allclose(N(F.softplus(T([1000.0, -1000.0]))), [1000.0, 0.0])
    np.testing.assert_allclose(N(F.logsigmoid(T([-1000.0, 1000.0]))), [-1000.0, 0.0])


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(T([1.0]), approximate="fast")


def test_prelu_per_channel_and_shared():
    x = randn(2, 3, 4)
    w = np.array([0.1, 0.2, 0.3])
    ref = np.where(x > 0, x, x * w[None, :, None])
    np.testing.assert_allclose(N(F.prelu(T(x), T(w))), ref)
    np.testing.assert_allclose(N(F.prelu(T(x), T([0.25]))), np.where(x > 0, x, 0.25 * x))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(T(x), T([0.1, 0.2]))


def test_inplace_activations_modify_the_input():
    x = T([-1.0, 2.0])
    y = F.relu(x, inplace=True)
    assert y is x and N(x).tolist() == [0.0, 2.0]
    x = T([-1.0, 2.0])
    F.leaky_relu(x, 0.5, inplace=True)
    assert N(x).tolist() == [-0.5, 2.0]


def test_softmax_log_softmax_and_implicit_dim_warning():
    x = randn(3, 4, 5)
    e = np.exp(x - x.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(N(F.softmax(T(x), dim=1)), sm)
    np.testing.assert_allclose(N(F.log_softmax(T(x), dim=1)), np.log(sm))
    np.testing.assert_allclose(N(F.softmin(T(x), dim=1)), N(F.softmax(T(-x), dim=1)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(T(x))  # 3-D: torch's legacy choice is dim 0
    np.testing.assert_allclose(N(out), np.exp(x) / np.exp(x).sum(0, keepdims=True))
    x32 = torch.randn(2, 3)
    assert F.softmax(x32, dim=-1, dtype=torch.float64).dtype is torch.float64


def test_glu_normalize_cosine_similarity_pairwise_distance():
    x = randn(4, 6)
    np.testing.assert_allclose(N(F.glu(T(x))), x[:, :3] / (1 + np.exp(-x[:, 3:])))
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(T(randn(2, 5)))
    np.testing.assert_allclose(N(F.normalize(T(x), dim=1)), x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_allclose(N(F.normalize(T(np.zeros((2, 3))))), np.zeros((2, 3)))
    np.testing.assert_allclose(N(F.normalize(T(x), p=1, dim=0)), x / np.abs(x).sum(0, keepdims=True))
    y = randn(4, 6)
    cos = (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
    np.testing.assert_allclose(N(F.cosine_similarity(T(x), T(y))), cos)
    np.testing.assert_allclose(N(F.pairwise_distance(T(x), T(y))), np.linalg.norm(x - y + 1e-6, axis=1))


def test_one_hot():
    out = F.one_hot(torch.tensor([0, 2, 1]))
    assert out.dtype is torch.int64
    assert N(out).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert tuple(F.one_hot(torch.tensor([[1], [3]]), num_classes=5).shape) == (2, 1, 5)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(torch.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(torch.tensor([-1]))
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(torch.tensor([1.0]))


# ---------------------------------------------------------------------------
# linear, conv, pooling


def test_linear_matches_numpy_and_backprops():
    x, w, b = randn(4, 3), randn(5, 3), randn(5)
    np.testing.assert_allclose(N(F.linear(T(x), T(w), T(b))), x @ w.T + b)
    np.testing.assert_allclose(N(F.linear(T(randn(2, 4, 3)), T(w))).shape, (2, 4, 5))
    np.testing.assert_allclose(N(F.linear(T(x[0]), T(w), T(b))), x[0] @ w.T + b)
    wt, bt = T(w, True), T(b, True)
    F.linear(T(x), wt, bt).sum().backward()
    np.testing.assert_allclose(N(wt.grad), np.ones((4, 5)).T @ x)
    np.testing.assert_allclose(N(bt.grad), np.full(5, 4.0))


def test_linear_shape_error_names_the_matrices():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(4x3 and 2x5\)"):
        F.linear(T(randn(4, 3)), T(randn(5, 2)))


def test_bilinear_matches_numpy():
    x1, x2, w, b = randn(4, 3), randn(4, 2), randn(5, 3, 2), randn(5)
    np.testing.assert_allclose(N(F.bilinear(T(x1), T(x2), T(w), T(b))),
                               np.einsum("ni,kij,nj->nk", x1, w, x2) + b)


def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c_in, hh, ww = xp.shape
    c_out, cg, kh, kw = w.shape
    oh = (hh - dh * (kh - 1) - 1) // sh + 1
    ow = (ww - dw * (kw - 1) - 1) // sw + 1
    og = c_out // groups
    y = np.zeros((n, c_out, oh, ow))
    for o in range(c_out):
        g = o // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                           j * sw:j * sw + dw * (kw - 1) + 1:dw]
                y[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b[None, :, None, None]
    return y


@pytest.mark.parametrize("stride,padding,dilation,groups", [
    ((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 2), (2, 1), (2, 1), 2), ((2, 2), (1, 1), (1, 1), 4)])
def test_conv2d_matches_a_numpy_loop(stride, padding, dilation, groups):
    x = randn(2, 4, 7, 8)
    w = randn(8, 4 // groups, 3, 2)
    b = randn(8)
    out = F.conv2d(T(x), T(w), T(b), stride=stride, padding=padding, dilation=dilation, groups=groups)
    np.testing.assert_allclose(N(out), conv2d_ref(x, w, b, stride, padding, dilation, groups), rtol=1e-10,
                               atol=1e-10)


def test_conv2d_gradients_match_finite_differences():
    x, w = randn(1, 2, 5, 4), randn(3, 2, 3, 3)
    check_grad(lambda t: F.conv2d(t, T(w), stride=2, padding=1), x)
    check_grad(lambda t: F.conv2d(T(x), t, padding=(1, 0)), w)


def test_conv2d_padding_same_and_valid():
    x, w = randn(1, 2, 6, 7), randn(3, 2, 4, 3)
    out = F.conv2d(T(x), T(w), padding="same")
    assert tuple(out.shape) == (1, 3, 6, 7)
    # torch pads an even kernel's extra row at the end: total 3 rows -> 1 before, 2 after
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2), (1, 1)))
    np.testing.assert_allclose(N(out), conv2d_ref(xp, w, None, (1, 1), (0, 0), (1, 1), 1), atol=1e-10)
    np.testing.assert_allclose(N(F.conv2d(T(x), T(w), padding="valid")), conv2d_ref(x, w, None, (1, 1), (0, 0),
                                                                                       (1, 1), 1), atol=1e-10)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(T(x), T(w), padding="same", stride=2)


def test_conv2d_unbatched_and_errors():
    x, w = randn(2, 5, 5), randn(3, 2, 3, 3)
    np.testing.assert_allclose(N(F.conv2d(T(x), T(w))), conv2d_ref(x[None], w, None, (1, 1), (0, 0), (1, 1), 1)[0],
                               atol=1e-10)
    with pytest.raises(RuntimeError, match=r"expected input\[1, 4, 5, 5\] to have 2 channels, but got 4 channels"):
        F.conv2d(T(randn(1, 4, 5, 5)), T(w))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to conv2d"):
        F.conv2d(T(randn(5, 5)), T(w))


def test_conv1d_matches_numpy():
    x, w, b = randn(2, 3, 9), randn(4, 3, 3), randn(4)
    out = F.conv1d(T(x), T(w), T(b), stride=2, padding=1, dilation=2)
    ref = conv2d_ref(x[:, :, None], w[:, :, None], b, (1, 2), (0, 1), (1, 2), 1)[:, :, 0]
    np.testing.assert_allclose(N(out), ref, atol=1e-10)


def pool_ref(x, k, s, p, op, pad_value):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=pad_value)
    oh = (xp.shape[2] - k) // s + 1
    ow = (xp.shape[3] - k) // s + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = op(xp[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return y


def test_max_pool2d_and_avg_pool2d_match_numpy():
    x = randn(2, 3, 7, 6)
    np.testing.assert_allclose(N(F.max_pool2d(T(x), 2)), pool_ref(x, 2, 2, 0, np.max, -np.inf))
    np.testing.assert_allclose(N(F.max_pool2d(T(x), 3, stride=2, padding=1)), pool_ref(x, 3, 2, 1, np.max, -np.inf))
    np.testing.assert_allclose(N(F.avg_pool2d(T(x), 2)), pool_ref(x, 2, 2, 0, np.mean, 0))
    np.testing.assert_allclose(N(F.avg_pool2d(T(x), 3, stride=2, padding=1)), pool_ref(x, 3, 2, 1, np.mean, 0))
    # count_include_pad=False divides by the number of real elements in each window
    ones = np.ones_like(x)
    counts = pool_ref(ones, 3, 2, 1, np.sum, 0)
    np.testing.assert_allclose(N(F.avg_pool2d(T(x), 3, 2, 1, count_include_pad=False)),
                               pool_ref(x, 3, 2, 1, np.sum, 0) / counts)
    np.testing.assert_allclose(N(F.avg_pool2d(T(x), 2, divisor_override=3)), pool_ref(x, 2, 2, 0, np.sum, 0) / 3)
    assert tuple(F.max_pool2d(T(x), 2, ceil_mode=True).shape) == (2, 3, 4, 3)


def test_max_pool2d_gradient_goes_to_the_maximum_and_indices():
    x = T([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0], [0.0, 0.0, 1.0, 2.0], [9.0, 1.0, 3.0, 3.5]]]],
          requires_grad=True)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert N(out).tolist() == [[[[5.0, 8.0], [9.0, 3.5]]]]
    assert N(idx).tolist() == [[[[1, 6], [12, 15]]]]
    assert idx.dtype is torch.int64
    out.sum().backward()
    expected = np.zeros((4, 4))
    for r, c in [(0, 1), (1, 2), (3, 0), (3, 3)]:
        expected[r, c] = 1
    np.testing.assert_allclose(N(x.grad)[0, 0], expected)


def test_pool_padding_larger_than_half_kernel_is_an_error():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(T(randn(1, 1, 5, 5)), 2, padding=2)


def test_adaptive_avg_pool2d_matches_torch_bins():
    x = randn(2, 3, 5, 7)

    def ref(x, oh, ow):
        out = np.zeros(x.shape[:2] + (oh, ow))
        for i in range(oh):
            h0, h1 = (i * x.shape[2]) // oh, -(-((i + 1) * x.shape[2]) // oh)
            for j in range(ow):
                w0, w1 = (j * x.shape[3]) // ow, -(-((j + 1) * x.shape[3]) // ow)
                out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
        return out
    np.testing.assert_allclose(N(F.adaptive_avg_pool2d(T(x), (3, 4))), ref(x, 3, 4))
    np.testing.assert_allclose(N(F.adaptive_avg_pool2d(T(x), 1)), x.mean(axis=(2, 3), keepdims=True))
    np.testing.assert_allclose(N(F.adaptive_avg_pool2d(T(x), (None, 2))), ref(x, 5, 2))
    check_grad(lambda t: F.adaptive_avg_pool2d(t, (2, 3)), randn(1, 1, 5, 4))
    np.testing.assert_allclose(N(F.adaptive_max_pool2d(T(x), 1)), x.max(axis=(2, 3), keepdims=True))


def test_pad_modes_match_numpy_pad():
    x = randn(1, 2, 4, 5)
    np.testing.assert_allclose(N(F.pad(T(x), (1, 2))), np.pad(x, ((0, 0), (0, 0), (0, 0), (1, 2))))
    np.testing.assert_allclose(N(F.pad(T(x), (1, 2, 3, 0), value=7.0)),
                               np.pad(x, ((0, 0), (0, 0), (3, 0), (1, 2)), constant_values=7.0))
    np.testing.assert_allclose(N(F.pad(T(x), (2, 1, 1, 3), mode="reflect")),
                               np.pad(x, ((0, 0), (0, 0), (1, 3), (2, 1)), mode="reflect"))
    np.testing.assert_allclose(N(F.pad(T(x), (2, 1, 1, 3), mode="replicate")),
                               np.pad(x, ((0, 0), (0, 0), (1, 3), (2, 1)), mode="edge"))
    np.testing.assert_allclose(N(F.pad(T(x), (2, 1, 1, 3), mode="circular")),
                               np.pad(x, ((0, 0), (0, 0), (1, 3), (2, 1)), mode="wrap"))
    np.testing.assert_allclose(N(F.pad(T(x), (-1, -2))), x[..., 1:-2])
    check_grad(lambda t: F.pad(t, (1, 2), mode="reflect"), randn(2, 4))
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(T(x), (1, 2, 3))
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(T(x[0]), (5, 5), mode="reflect")


# ---------------------------------------------------------------------------
# normalization


def test_layer_norm_matches_numpy_and_backprops():
    x, w, b = randn(3, 4, 5), randn(4, 5), randn(4, 5)
    mu = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(N(F.layer_norm(T(x), (4, 5), T(w), T(b))), ref, rtol=1e-10)
    check_grad(lambda t: F.layer_norm(t, (5,), T(w[0]), T(b[0])), x)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]"):
        F.layer_norm(T(x), (4,))


def test_group_norm_matches_numpy():
    x, w, b = randn(2, 6, 3, 2), randn(6), randn(6)
    g = x.reshape(2, 3, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    ref = ref * w[None, :, None, None] + b[None, :, None, None]
    np.testing.assert_allclose(N(F.group_norm(T(x), 3, T(w), T(b))), ref, rtol=1e-10)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups"):
        F.group_norm(T(x), 4)


def test_batch_norm_training_uses_batch_stats_and_updates_running_stats():
    x = randn(5, 3, 4)
    rm, rv = T(np.zeros(3)), T(np.ones(3))
    out = F.batch_norm(T(x), rm, rv, training=True, momentum=0.2)
    mu = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2))
    ref = (x - mu[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
    np.testing.assert_allclose(N(out), ref, rtol=1e-10)
    np.testing.assert_allclose(N(rm), 0.2 * mu)
    np.testing.assert_allclose(N(rv), 0.8 + 0.2 * x.var(axis=(0, 2), ddof=1))
    out = F.batch_norm(T(x), rm, rv, training=False)
    np.testing.assert_allclose(N(out), (x - N(rm)[None, :, None]) / np.sqrt(N(rv)[None, :, None] + 1e-5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(T(randn(1, 3)), None, None, training=True)


# ---------------------------------------------------------------------------
# dropout, embedding


def test_dropout_masks_and_scales():
    torch.manual_seed(0)
    x = torch.ones(200, 100)
    y = F.dropout(x, p=0.3)
    vals = N(y)
    assert np.all((vals == 0) | np.isclose(vals, 1 / 0.7, rtol=1e-6))
    assert abs((vals == 0).mean() - 0.3) < 0.02
    assert F.dropout(x, 0.3, training=False) is x
    assert N(F.dropout(x, 1.0)).sum() == 0
    torch.manual_seed(5)
    a = N(F.dropout(x, 0.5))
    torch.manual_seed(5)
    np.testing.assert_array_equal(a, N(F.dropout(x, 0.5)))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_dropout_gradient_is_the_scaled_mask():
    x = torch.randn(50, 20, requires_grad=True)
    y = F.dropout(x, 0.4)
    y.sum().backward()
    mask = N(y) != 0
    np.testing.assert_allclose(N(x.grad), mask / 0.6, rtol=1e-6)


def test_dropout2d_zeroes_whole_channels():
    torch.manual_seed(1)
    y = N(F.dropout2d(torch.ones(8, 16, 3, 3), 0.5))
    per_channel = y.reshape(8, 16, -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))


def test_embedding_lookup_padding_idx_and_errors():
    w = T(randn(6, 3), requires_grad=True)
    idx = torch.tensor([[0, 2, 2], [5, 0, 1]])
    out = F.embedding(idx, w, padding_idx=0)
    np.testing.assert_allclose(N(out), N(w)[N(idx)])
    out.sum().backward()
    counts = np.bincount(N(idx).ravel(), minlength=6).astype(float)
    counts[0] = 0  # the padding row gets no gradient
    np.testing.assert_allclose(N(w.grad), np.repeat(counts[:, None], 3, 1))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(torch.tensor([6]), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following"):
        F.embedding(torch.tensor([1.0]), w)


def test_embedding_max_norm_renormalizes_rows_in_place():
    w = T([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding(torch.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(N(out), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    np.testing.assert_allclose(N(w), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)


# ---------------------------------------------------------------------------
# attention and misc


def test_scaled_dot_product_attention_matches_numpy():
    q, k, v = randn(2, 3, 4, 8), randn(2, 3, 6, 8), randn(2, 3, 6, 5)

    def ref(mask=None):
        s = q @ k.swapaxes(-1, -2) / np.sqrt(8)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        a = np.exp(s - s.max(-1, keepdims=True))
        return (a / a.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(N(F.scaled_dot_product_attention(T(q), T(k), T(v))), ref(), rtol=1e-10)
    mask = RNG.random((4, 6)) > 0.3
    mask[:, 0] = True
    np.testing.assert_allclose(N(F.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=torch.tensor(mask))),
                               ref(mask), rtol=1e-10)
    float_mask = randn(4, 6)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(8) + float_mask
    a = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(N(F.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(float_mask))),
                               (a / a.sum(-1, keepdims=True)) @ v, rtol=1e-10)
    k2, v2 = T(randn(2, 3, 4, 8)), T(randn(2, 3, 4, 5))
    causal = np.tril(np.ones((4, 4), bool))
    k, v = N(k2), N(v2)
    np.testing.assert_allclose(N(F.scaled_dot_product_attention(T(q), k2, v2, is_causal=True)), ref(causal),
                               rtol=1e-10)


def test_unfold_matches_windows():
    x = randn(1, 2, 4, 5)
    out = N(F.unfold(T(x), (2, 3), padding=1, stride=2))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = []
    for i in range(0, xp.shape[2] - 2 + 1, 2):
        for j in range(0, xp.shape[3] - 3 + 1, 2):
            cols.append(xp[0, :, i:i + 2, j:j + 3].reshape(-1))
    np.testing.assert_allclose(out[0], np.stack(cols, 1))


def test_interpolate_nearest_and_pixel_shuffle():
    x = randn(1, 1, 2, 3)
    np.testing.assert_allclose(N(F.interpolate(T(x), scale_factor=2)), x.repeat(2, 2).repeat(2, 3))
    np.testing.assert_allclose(N(F.interpolate(T(x), size=(3, 3), mode="nearest-exact"))[0, 0],
                               x[0, 0][[0, 1, 1]][:, [0, 1, 2]])
    y = randn(1, 8, 2, 3)
    out = N(F.pixel_shuffle(T(y), 2))
    assert out.shape == (1, 2, 4, 6)
    assert out[0, 1, 1, 2] == y[0, 1 * 4 + 1 * 2 + 0, 0, 1]


def test_interpolate_linear_modes_match_torch_outputs():
    x = T(np.arange(4.0).reshape(1, 1, 4))
    np.testing.assert_allclose(N(F.interpolate(x, scale_factor=2, mode="linear"))[0, 0],
                               [0.0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0])
    np.testing.assert_allclose(N(F.interpolate(x, size=7, mode="linear", align_corners=True))[0, 0],
                               np.linspace(0, 3, 7))
    out = F.interpolate(T(np.arange(4.0).reshape(1, 1, 2, 2)), scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(N(out)[0, 0], [[0.0, 0.25, 0.75, 1.0], [0.5, 0.75, 1.25, 1.5],
                                              [1.5, 1.75, 2.25, 2.5], [2.0, 2.25, 2.75, 3.0]])
    check_grad(lambda t: F.interpolate(t, size=(3, 5), mode="bilinear"), randn(1, 1, 2, 4))
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x)


@pytest.mark.parametrize("dtype, name", [(torch.long, "Long"), (torch.bool, "Bool"), (torch.complex64, "ComplexFloat")])
def test_layer_norm_of_a_non_real_float_input_raises_pytorchs_error(dtype, name):
    with pytest.raises(NotImplementedError, match=f"\"LayerNormKernelImpl\" not implemented for '{name}'"):
        torch.nn.functional.layer_norm(torch.ones(2, 3, dtype=dtype), (3,))
