"""Core statistics against NumPy: nansum/nanmean, median/quantile (jax.numpy semantics, all methods),
the lower median, kthvalue and mode with their indices, histc and bincount; gradients and transforms."""
import numpy as np
import pytest

from mindtorch_v2 import core

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _np(a):
    return np.asarray(a)


def test_nansum_nanmean_ignore_nan_and_their_gradient_is_zero_there():
    x = np.array([[1., np.nan, 2.], [np.nan, np.nan, 3.]])
    np.testing.assert_allclose(_np(core.nansum(core.asarray(x), 1)), np.nansum(x, 1))
    np.testing.assert_allclose(_np(core.nanmean(core.asarray(x), 0)), [1., np.nan, 2.5], equal_nan=True)
    g = core.grad(lambda t: core.nansum(t))(core.asarray(x))
    np.testing.assert_array_equal(_np(g), ~np.isnan(x))


@pytest.mark.parametrize("method", METHODS)
def test_quantile_matches_numpy(method):
    x = np.random.default_rng(3).normal(size=(4, 7))
    q = np.array([0.0, 0.2, 0.5, 0.75, 1.0])
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got = core.quantile(core.asarray(x), core.asarray(q), axis, method, keepdims)
            np.testing.assert_allclose(_np(got), np.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
                                       rtol=1e-12)
    y = x.copy()
    y[0, ::2] = np.nan
    np.testing.assert_allclose(_np(core.nanquantile(core.asarray(y), 0.3, 1, method)),
                               np.nanquantile(y, 0.3, axis=1, method=method), rtol=1e-12)
    assert np.isnan(_np(core.quantile(core.asarray(y), 0.3, 1, method))[0])


def test_median_is_numpys_and_median_low_is_torchs():
    x = np.array([[4., 1., 3., 2.], [0., 5., 5., 1.]])
    np.testing.assert_allclose(_np(core.median(core.asarray(x), 1)), np.median(x, 1))
    v, i = core.median_low(core.asarray(x), 1)
    assert _np(v).tolist() == [2., 1.] and _np(i).tolist() == [3, 3]
    v, i = core.nanmedian_low(core.asarray(np.array([1., np.nan, 2., 5.])), 0)
    assert float(v) == 2. and int(i) == 2


def test_quantile_gradient_flows_through_the_interpolation_weights():
    x = np.array([3., 1., 4., 2.])
    g = core.grad(lambda t: core.quantile(t, 0.5))(core.asarray(x))  # rank 1.5: half to 2 (index 3), half to 3
    np.testing.assert_allclose(_np(g), [0.5, 0., 0., 0.5])
    g = core.grad(lambda t: core.kthvalue(t, 2)[0])(core.asarray(x))
    np.testing.assert_allclose(_np(g), [0., 0., 0., 1.])


def test_kthvalue_and_mode_indices():
    x = core.asarray(np.array([[3., 1., 2.], [1., 1., 0.]]))
    v, i = core.kthvalue(x, 2, 1)
    assert _np(v).tolist() == [2., 1.] and _np(i).tolist() == [2, 0]
    v, i = core.mode(core.asarray(np.array([1, 2, 2, 3, 3, 1, 5])), 0)
    assert int(v) == 1 and int(i) == 5  # equally frequent: the smallest value, its last index
    with pytest.raises(ValueError, match="k=4"):
        core.kthvalue(x, 4, 1)


def test_mode_vmap_matches_slices():
    x = np.random.default_rng(4).integers(0, 3, size=(5, 6))
    v, i = core.vmap(lambda t: core.mode(t, 0))(core.asarray(x))
    for r in range(5):
        rv, ri = core.mode(core.asarray(x[r]), 0)
        assert int(v[r]) == int(rv) and int(i[r]) == int(ri)


def test_histc_and_bincount_match_numpy():
    x = np.random.default_rng(5).uniform(-1, 2, size=200)
    got = core.histc(core.asarray(x), 10, 0, 1)
    want = np.histogram(x, bins=10, range=(0, 1))[0]
    np.testing.assert_array_equal(_np(got), want)
    i = np.array([0, 3, 3, 1, 7])
    assert _np(core.bincount(core.asarray(i))).tolist() == np.bincount(i).tolist()
    w = np.array([0.5, 1., 2., 3., 4.])
    np.testing.assert_allclose(_np(core.bincount(core.asarray(i), core.asarray(w), minlength=10)),
                               np.bincount(i, w, minlength=10))
    assert _np(core.bincount(core.asarray(i), length=4)).tolist() == [1, 1, 0, 2]  # 7 dropped
    with pytest.raises(TypeError, match="bincount"):
        core.bincount(core.asarray(np.array([1.5])))
