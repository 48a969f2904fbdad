"""core.searchsorted / digitize / isin and the unique family against NumPy; their behaviour under
transforms (searchsorted batches; unique needs size= there, as jnp.unique) and on meta arrays."""
import numpy as np
import pytest

from mindtorch_v2 import core

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(side):
    a = np.sort(RNG.integers(-3, 4, size=7)).astype(np.float64)
    v = RNG.integers(-4, 5, size=(3, 4)).astype(np.float64)
    np.testing.assert_array_equal(core.searchsorted(core.asarray(a), core.asarray(v), side), np.searchsorted(a, v, side))
    perm = RNG.permutation(7)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable")
    np.testing.assert_array_equal(core.searchsorted(shuffled, v, side, sorter=sorter),
                                  np.searchsorted(shuffled, v, side, sorter=sorter))


def test_searchsorted_batched_sequence_rows_and_int32_output():
    a = np.sort(RNG.normal(size=(2, 3, 5)), axis=-1)
    v = RNG.normal(size=(2, 3, 4))
    out = core.searchsorted(a, v, "right", dtype=core.int32)
    assert out.dtype is core.int32
    want = np.stack([[np.searchsorted(a[i, j], v[i, j], "right") for j in range(3)] for i in range(2)])
    np.testing.assert_array_equal(out, want)


def test_searchsorted_vmap_matches_per_slice():
    a = np.sort(RNG.normal(size=(3, 5)), axis=-1)
    v = RNG.normal(size=(3, 2, 2))
    out = core.vmap(lambda s, x: core.searchsorted(s, x))(core.asarray(a), core.asarray(v))
    np.testing.assert_array_equal(out, np.stack([np.searchsorted(a[i], v[i]) for i in range(3)]))
    out = core.vmap(lambda x: core.searchsorted(core.asarray(a[0]), x))(core.asarray(v))
    np.testing.assert_array_equal(out, np.searchsorted(a[0], v))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="at least one dimension"):
        core.searchsorted(core.asarray(1.0), core.asarray([1.0]))
    with pytest.raises(ValueError, match="leading dimensions"):
        core.searchsorted(core.zeros((2, 3)), core.zeros((3, 3)))
    with pytest.raises(ValueError, match="side"):
        core.searchsorted(core.zeros((3,)), core.zeros((3,)), "middle")
    with pytest.raises(ValueError, match="sorter"):
        core.searchsorted(core.zeros((3,)), core.zeros((3,)), sorter=[0, 1])


@pytest.mark.parametrize("right", [False, True])
def test_digitize_matches_numpy_for_increasing_and_decreasing_bins(right):
    x = RNG.integers(-1, 6, size=10).astype(np.float64)
    for bins in (np.array([0.0, 1, 3, 4]), np.array([4.0, 3, 1, 0])):
        np.testing.assert_array_equal(core.digitize(x, bins, right), np.digitize(x, bins, right))


@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_numpy(invert):
    x = RNG.integers(-3, 4, size=(3, 4))
    t = RNG.integers(-3, 4, size=5)
    np.testing.assert_array_equal(core.isin(x, t, invert=invert), np.isin(x, t, invert=invert))
    np.testing.assert_array_equal(core.isin(x, t[:0]), np.zeros((3, 4), bool))
    np.testing.assert_array_equal(core.isin(core.asarray([np.nan, 1.0]), [np.nan, 1.0]), [False, True])


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.bool_])
def test_unique_all_matches_numpy(dtype):
    x = RNG.integers(-2, 3, size=(4, 5)).astype(dtype)
    values, first, inverse, counts = core.unique_all(core.asarray(x))
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, w in zip((values, first, inverse, counts), want):
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), np.asarray(w).reshape(-1))
    assert inverse.shape == x.shape
    np.testing.assert_array_equal(core.unique_values(x), np.unique(x))
    np.testing.assert_array_equal(core.unique_counts(x)[1], want[3])
    np.testing.assert_array_equal(core.unique_inverse(x)[1], want[2].reshape(x.shape))


def test_unique_along_an_axis_matches_numpy():
    x = np.repeat(RNG.integers(0, 2, size=(3, 3)), 2, axis=0)[[0, 3, 1, 4, 2, 5]]
    for axis in (0, 1):
        values, first, inverse, counts = core.unique(x, True, True, True, axis=axis)
        want = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
        for got, w in zip((values, first, inverse, counts), want):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(w).reshape(np.asarray(got).shape))


def test_unique_size_pads_with_fill_value_and_cuts():
    x = core.asarray([3, 1, 3, 2])
    np.testing.assert_array_equal(core.unique(x, size=5, fill_value=-1), [1, 2, 3, -1, -1])
    np.testing.assert_array_equal(core.unique(x, size=5), [1, 2, 3, 1, 1])  # jnp's default: the minimum
    values, counts = core.unique(x, return_counts=True, size=2)
    np.testing.assert_array_equal(values, [1, 2])
    np.testing.assert_array_equal(counts, [1, 1])


def test_unique_under_transforms_needs_size():
    xs = core.asarray([[1, 1, 2], [3, 3, 3]])
    out, counts = core.vmap(lambda x: core.unique(x, return_counts=True, size=2, fill_value=0))(xs)
    np.testing.assert_array_equal(out, [[1, 2], [3, 0]])
    np.testing.assert_array_equal(counts, [[2, 1], [3, 0]])
    with pytest.raises(TypeError, match="size="):
        core.vmap(core.unique)(xs)
    with pytest.raises(ValueError, match="meta"):
        core.unique(core.zeros((3,), device="meta"))
    meta = core.unique(core.zeros((3,), device="meta"), size=2)
    assert meta.shape == (2,)


def test_unique_consecutive_matches_runs():
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    values, inverse, counts = core.unique_consecutive(x, True, True)
    np.testing.assert_array_equal(values, [1, 2, 3, 1, 2])
    np.testing.assert_array_equal(inverse, [0, 0, 1, 1, 2, 3, 3, 4])
    np.testing.assert_array_equal(counts, [2, 2, 1, 2, 1])
    rows = np.array([[1, 2], [1, 2], [0, 0], [1, 2]])
    np.testing.assert_array_equal(core.unique_consecutive(rows, axis=0), [[1, 2], [0, 0], [1, 2]])


def test_unique_of_empty_and_zero_d():
    np.testing.assert_array_equal(core.unique(np.zeros(0)), np.zeros(0))
    v, inv = core.unique(core.asarray(5), return_inverse=True)
    np.testing.assert_array_equal(v, [5])
    assert inv.shape == ()
