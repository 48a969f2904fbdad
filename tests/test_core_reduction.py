"""Reductions and reduction composites against NumPy, with their gradients."""
import math

import numpy as np
import pytest

from mindtorch_v2 import core

XN = np.arange(24.0).reshape(2, 3, 4) * np.array([1.0, -1.0, 0.5, 2.0])
X = core.asarray(XN)  # float64
AXES = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2), ()]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    ref = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any, "all": np.all}[name]
    out = getattr(core, name)(X, axis, keepdims)
    expected = ref(XN, axis=axis, keepdims=keepdims)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected)


def test_reduction_axis_errors():
    with pytest.raises(IndexError, match="sum: axis 3 is out of range"):
        core.sum(X, 3)
    with pytest.raises(IndexError, match="out of range"):
        core.max(X, -4)
    with pytest.raises(ValueError, match="repeated axis"):
        core.sum(X, (0, -3))
    with pytest.raises(ValueError, match="empty"):
        core.max(core.zeros((0, 3)))


def test_reduction_dtypes():
    assert core.sum(core.asarray([1, 2], core.int8)).dtype is core.int64
    assert core.prod(core.asarray([True, False])).dtype is core.int64
    assert core.max(core.asarray([1, 5, 2])).dtype is core.int64
    assert core.any(core.asarray([0.0, 1.0])).dtype is core.bool_
    assert core.sum(core.asarray([1, 2]), dtype=core.float64).dtype is core.float64


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_match_numpy(name, axis, keepdims):
    data = np.array([[1.0, 3.0, 3.0, 0.0], [5.0, -1.0, 5.0, -1.0], [2.0, 2.0, 2.0, 2.0]])
    out = getattr(core, name)(core.asarray(data), axis, keepdims)
    expected = getattr(np, name)(data, axis=axis, keepdims=keepdims)
    assert out.dtype is core.int64
    assert out.shape == np.shape(expected)
    np.testing.assert_array_equal(np.asarray(out), expected)  # first occurrence on ties


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_matches_numpy(axis):
    data = np.arange(12).reshape(3, 4)
    out = core.cumsum(core.asarray(data), axis)
    np.testing.assert_array_equal(np.asarray(out), np.cumsum(data, axis=axis))
    assert core.cumsum(core.asarray([True, True, False])).tolist() == [1, 2, 2]
    assert core.cumsum(core.asarray([True])).dtype is core.int64


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_var_std_match_numpy(axis, keepdims):
    np.testing.assert_allclose(np.asarray(core.mean(X, axis, keepdims)), np.mean(XN, axis=axis, keepdims=keepdims))
    for ddof in (0, 1):
        np.testing.assert_allclose(np.asarray(core.var(X, axis, ddof, keepdims)),
                                   np.var(XN, axis=axis, ddof=ddof, keepdims=keepdims))
        np.testing.assert_allclose(np.asarray(core.std(X, axis, ddof, keepdims)),
                                   np.std(XN, axis=axis, ddof=ddof, keepdims=keepdims))


def test_mean_of_ints_and_bools_is_default_float():
    assert core.mean(core.asarray([1, 2])).dtype is core.float32
    assert core.mean(core.asarray([1, 2])).item() == 1.5
    assert core.mean(core.asarray([True, False])).item() == 0.5


def _np_logsumexp(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_logsumexp_matches_numpy(axis):
    np.testing.assert_allclose(np.asarray(core.logsumexp(X, axis)), _np_logsumexp(XN, axis))
    np.testing.assert_allclose(np.asarray(core.logsumexp(X, axis, keepdims=True)),
                               _np_logsumexp(XN, axis, keepdims=True))


def test_logsumexp_is_stable():
    out = core.logsumexp(core.asarray([1000.0, 1000.0]))
    assert out.item() == pytest.approx(1000 + math.log(2))
    with np.errstate(divide="ignore"):
        assert core.logsumexp(core.asarray([-np.inf, -np.inf])).item() == -np.inf


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax_match_numpy(axis):
    data = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 500.0]])
    e = np.exp(data - data.max(axis=axis, keepdims=True))
    ref = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(np.asarray(core.softmax(core.asarray(data), axis)), ref, atol=1e-12)
    np.testing.assert_allclose(np.asarray(core.log_softmax(core.asarray(data), axis)),
                               data - _np_logsumexp(data, axis, keepdims=True), atol=1e-12)
    assert core.softmax(core.asarray([1, 2])).dtype is core.float32


@pytest.mark.parametrize("ord_", [None, 1, 2, math.inf, -math.inf, 0, 3])
@pytest.mark.parametrize("axis", [None, 1])
def test_norm_matches_numpy(ord_, axis):
    data = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])
    if axis is None:
        expected = np.linalg.norm(data.ravel(), ord_)
    else:
        expected = np.linalg.norm(data, ord_, axis=axis)
    np.testing.assert_allclose(np.asarray(core.norm(core.asarray(data), ord_, axis)), expected)


def test_norm_rejects_unknown_ord():
    with pytest.raises(ValueError, match="ord"):
        core.norm(core.asarray([1.0]), "nuc")


def test_clamp_matches_numpy_clip():
    data = np.array([-2.0, -1.0, 0.5, 1.0, 3.0])
    np.testing.assert_array_equal(np.asarray(core.clamp(core.asarray(data), -1.0, 1.0)), np.clip(data, -1, 1))
    assert core.clamp(core.asarray(data), min=0.0).tolist() == [0.0, 0.0, 0.5, 1.0, 3.0]
    assert core.clamp(core.asarray(data), max=0.0).tolist() == [-2.0, -1.0, 0.0, 0.0, 0.0]
    lo, hi = core.asarray([0.0] * 5), core.asarray([1.0, 1.0, 1.0, 0.5, 2.0])
    np.testing.assert_array_equal(np.asarray(core.clamp(core.asarray(data), lo, hi)), np.clip(data, 0, [1, 1, 1, 0.5, 2]))
    assert core.clamp(core.asarray([-2, 0, 3]), -1, 1).dtype is core.int64
    with pytest.raises(ValueError, match="at least one"):
        core.clamp(core.asarray([1.0]))


# ---------------------------------------------------------------------------
# gradients


def test_max_gradient_splits_ties_evenly():
    g = core.grad(lambda v: core.max(v))(core.asarray([1.0, 3.0, 3.0, 2.0]))
    assert g.tolist() == [0.0, 0.5, 0.5, 0.0]
    g = core.grad(lambda v: core.sum(core.max(v, 1)))(core.asarray([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]))
    np.testing.assert_allclose(np.asarray(g), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    g = core.grad(lambda v: core.min(v))(core.asarray([1.0, 1.0, 3.0]))
    assert g.tolist() == [0.5, 0.5, 0.0]


def test_max_gradient_with_keepdims_and_negative_axis():
    g = core.grad(lambda v: core.sum(core.max(v, -1, keepdims=True) * core.asarray([[1.0], [10.0]])))(
        core.asarray([[1.0, 4.0], [7.0, 7.0]]))
    assert g.tolist() == [[0.0, 1.0], [5.0, 5.0]]


@pytest.mark.parametrize("data, expected", [
    ([2.0, 3.0, 4.0], [12.0, 8.0, 6.0]),
    ([2.0, 0.0, 4.0], [0.0, 8.0, 0.0]),
    ([0.0, 0.0, 4.0], [0.0, 0.0, 0.0]),
])
def test_prod_gradient_is_exact_with_zeros(data, expected):
    g = core.grad(lambda v: core.prod(v))(core.asarray(data))
    assert g.tolist() == expected


def test_prod_gradient_along_an_axis():
    g = core.grad(lambda v: core.sum(core.prod(v, 1)))(core.asarray([[2.0, 0.0, 4.0], [1.0, 2.0, 3.0]]))
    assert g.tolist() == [[0.0, 8.0, 0.0], [6.0, 3.0, 2.0]]


def test_sum_and_mean_gradients():
    g = core.grad(lambda v: core.sum(core.sum(v, 0) * core.asarray([1.0, 2.0])))(core.zeros((3, 2)))
    assert g.tolist() == [[1.0, 2.0]] * 3
    assert core.grad(lambda v: core.mean(v))(core.zeros(4)).tolist() == [0.25] * 4


def test_cumsum_gradient_is_reversed_cumsum():
    g = core.grad(lambda v: core.sum(core.cumsum(v) * core.asarray([1.0, 2.0, 3.0])))(core.zeros(3))
    assert g.tolist() == [6.0, 5.0, 3.0]


def test_var_gradient():
    x = np.array([1.0, 2.0, 4.0])
    g = core.grad(lambda v: core.var(v, ddof=1))(core.asarray(x))
    np.testing.assert_allclose(np.asarray(g), 2 * (x - x.mean()) / (len(x) - 1))


def test_composite_gradients_at_special_points():
    assert core.grad(lambda v: core.norm(v))(core.asarray([0.0, 0.0])).tolist() == [0.0, 0.0]
    np.testing.assert_allclose(np.asarray(core.grad(lambda v: core.norm(v))(core.asarray([3.0, -4.0]))), [0.6, -0.8])
    g = core.grad(lambda v: core.sum(core.clamp(v, 0.0, 1.0)))(core.asarray([-1.0, 0.0, 0.5, 1.0, 2.0]))
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert core.grad(lambda v: core.logsumexp(v))(core.asarray([0.0, 0.0])).tolist() == [0.5, 0.5]
    assert core.grad(lambda v: core.softmax(v)[0])(core.asarray([0.0, 0.0])).tolist() == [0.25, -0.25]
    g = core.grad(lambda v: core.norm(v, math.inf))(core.asarray([1.0, -3.0, 3.0]))
    assert g.tolist() == [0.0, -0.5, 0.5]


def test_zero_dim_inputs_accept_axis_0_and_minus_1_like_torch():
    s = core.asarray(2.0)
    for fn in (core.sum, core.prod, core.max, core.min, core.mean, core.logsumexp):
        for axis in (0, -1, None):
            out = fn(s, axis)
            assert out.shape == () and out.item() == pytest.approx(2.0)
    assert core.argmax(s, -1).item() == 0
    assert core.cumsum(s, 0).item() == 2.0
    assert core.softmax(s).item() == 1.0
    assert core.var(s).item() == 0.0
    # the primitives themselves, bound with axis (0,) on a 0-d array
    from mindtorch_v2.core.ops import reduction as R
    for prim in (R.sum_p, R.prod_p, R.max_p, R.min_p, R.any_p, R.all_p):
        for keepdims in (False, True):
            assert prim.bind(s, axis=(0,), keepdims=keepdims).shape == ()
    assert core.grad(lambda v: R.prod_p.bind(v, axis=(0,), keepdims=False))(s).item() == 1.0


def test_prod_second_derivative_is_exact_with_zeros():
    # f = x0 x1 x2: the Hessian is [[0, x2, x1], [x2, 0, x0], [x1, x0, 0]], zeros in x or not
    h = core.hessian(lambda v: core.prod(v))(core.asarray([0.0, 0.0, 3.0]))
    assert h.tolist() == [[0.0, 3.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    g = core.grad(lambda v: core.sum(core.prod(v, (0, 2), keepdims=True)))(core.asarray(x))
    np.testing.assert_allclose(np.asarray(g), np.prod(x, axis=(0, 2), keepdims=True) / x, rtol=1e-10)
