"""Core scans against NumPy: cumprod (exact gradients with zeros, any order), cummax/cummin indices,
logcumsumexp (stable), cumulative_sum/prod, half-precision accumulation; transforms over them."""
import numpy as np
import pytest

from mindtorch_v2 import core


def _np(a):
    return np.asarray(a)


def test_cumprod_matches_numpy_and_integers_give_int64():
    x = np.random.default_rng(0).uniform(-2, 2, (3, 5))
    for axis in (0, 1, -1):
        np.testing.assert_allclose(_np(core.cumprod(core.asarray(x), axis)), np.cumprod(x, axis), rtol=1e-12)
    i = core.asarray(np.array([1, 2, 3], np.int8))
    out = core.cumprod(i, 0)
    assert out.dtype is core.int64 and _np(out).tolist() == [1, 2, 6]
    np.testing.assert_allclose(_np(core.cumprod(core.asarray(x))), np.cumprod(x))  # axis=None: flattened


def test_cumprod_gradient_is_exact_with_zeros_and_second_order():
    x = np.array([1.5, 0.0, 2.0, 0.0, -1.0])
    g = core.grad(lambda t: core.sum(core.cumprod(t, 0)))(core.asarray(x))
    # d/dx_i sum_j prod_{k<=j} x_k, by hand
    want = [sum(np.prod(np.delete(x[:j + 1], i)) for j in range(i, 5)) for i in range(5)]
    np.testing.assert_allclose(_np(g), want)
    h = core.hessian(lambda t: core.sum(core.cumprod(t, 0)))(core.asarray(x[:3]))
    assert _np(h).shape == (3, 3)
    np.testing.assert_allclose(_np(h)[0, 1], 1 + x[2])  # d2/dx0dx1 of x0 + x0x1 + x0x1x2


def test_cummax_cummin_take_the_latest_tie_and_keep_nan():
    x = core.asarray(np.array([1., 3., 3., 2., 3., 0.]))
    v, i = core.cummax(x, 0)
    assert _np(v).tolist() == [1, 3, 3, 3, 3, 3] and _np(i).tolist() == [0, 1, 2, 2, 4, 4]
    v, i = core.cummin(core.asarray(np.array([2., 1., 1., np.nan, 0., np.nan])), 0)
    assert _np(i).tolist() == [0, 1, 2, 3, 3, 5] and np.isnan(_np(v)[3:]).all()


def test_cummax_gradient_goes_to_the_index_and_vmap_matches_slices():
    x = np.random.default_rng(1).normal(size=(4, 6))
    g = core.grad(lambda t: core.sum(core.cummax(t, 1)[0]))(core.asarray(x))
    idx = _np(core.cummax(core.asarray(x), 1)[1])
    want = np.zeros_like(x)
    for r in range(4):
        np.add.at(want[r], idx[r], 1.0)
    np.testing.assert_allclose(_np(g), want)
    batched = core.vmap(lambda t: core.cummin(t, 0)[1])(core.asarray(x))
    np.testing.assert_array_equal(_np(batched), np.stack([_np(core.cummin(core.asarray(r), 0)[1]) for r in x]))


def test_logcumsumexp_is_stable_and_matches_numpy():
    x = np.random.default_rng(2).normal(size=(3, 7)) * 5
    np.testing.assert_allclose(_np(core.logcumsumexp(core.asarray(x), 1)), np.logaddexp.accumulate(x, 1), rtol=1e-12)
    y = np.array([-1000., 0., -np.inf, 1000.])
    np.testing.assert_allclose(_np(core.logcumsumexp(core.asarray(y), 0)), [-1000., 0., 0., 1000.])
    g = core.grad(lambda t: core.sum(core.logcumsumexp(t, 0)))(core.asarray(np.array([1., 1., 1.])))
    np.testing.assert_allclose(_np(g), [1 + 1 / 2 + 1 / 3, 1 / 2 + 1 / 3, 1 / 3])
    with pytest.raises(TypeError, match="logcumsumexp"):
        core.logcumsumexp(core.asarray(np.array([1, 2])), 0)


def test_cumulative_sum_and_prod_include_initial():
    x = core.asarray(np.array([[1, 2, 3], [4, 5, 6]]))
    assert _np(core.cumulative_sum(x, axis=1, include_initial=True)).tolist() == [[0, 1, 3, 6], [0, 4, 9, 15]]
    assert _np(core.cumulative_prod(x, axis=0, include_initial=True)).tolist() == [[1, 1, 1], [1, 2, 3], [4, 10, 18]]
    with pytest.raises(ValueError, match="axis"):
        core.cumulative_sum(x)


def test_half_precision_scans_and_sums_accumulate_in_float32():
    x = core.asarray(np.full(3000, 0.1, np.float16))
    assert _np(core.sum(x)) == np.float16(np.sum(np.full(3000, 0.1, np.float16), dtype=np.float32))
    assert _np(core.cumsum(x, 0))[-1] == _np(core.sum(x))
    assert core.sum(x).dtype is core.float16
    b = core.cast(core.asarray(np.ones(1000, np.float32)), core.bfloat16)
    assert float(core.sum(b)) == 1000.0 and core.sum(b).dtype is core.bfloat16
    assert float(core.cumsum(b, 0)[999]) == 1000.0


def test_scans_run_on_meta():
    m = core.zeros((3, 4), device=core.meta)
    assert core.cumprod(m, 1).shape == (3, 4)
    assert core.cummax(m, 0)[1].dtype is core.int64
    assert core.logcumsumexp(m, 1).shape == (3, 4)
