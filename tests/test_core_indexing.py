"""NumPy indexing (`getitem`), take / index_add / gather / scatter_add / scatter,
sort / argsort / topk: values against NumPy, errors, gradients."""
import numpy as np
import pytest

from mindtorch_v2 import core

XN = np.arange(60.0).reshape(3, 4, 5)
X = core.asarray(XN)
I = np.array


@pytest.mark.parametrize("key", [
    1, -1, (1, 2), (-1, -2, -3), slice(1, 3), (slice(None), 1), None, (None, 1, None),
    Ellipsis, (Ellipsis, 1), (1, Ellipsis, None), (None, Ellipsis, None),
    # integer arrays: one, two adjacent (placed in position), two non-adjacent (moved to the front)
    (I([0, 2]),), (I([-1, 0]),), (I([0, 2]), I([1, 3])), (slice(None), I([0, 2]), I([1, 3])),
    (I([0, 2]), slice(None), I([1, 3])), (I([[0], [2]]), slice(None), I([1, 3])),
    # an int among arrays counts as an advanced index
    (1, slice(None), I([1, 3])), (slice(None), 1, I([1, 3])), (I([0, 2]), 1), (0, I([1, 2]), I([1, 2])),
    (I([0, 1]), 0, I([1, 2])), (I(1), I([0, 1])),
    (I([[0, 1], [1, 2]]), I([0]), slice(None)), (slice(None), None, I([0, 1]), slice(None)),
    (I([0, 1]), None, I([0, 1])), (slice(None, None, -1), I([0, 1])), (I([], dtype=np.int64),),
    # with an Ellipsis (an index array is never compared with `==` while parsing the key)
    (I([0, 2]), Ellipsis), (Ellipsis, I([1, 3])), (I([0, 2]), Ellipsis, 1), (Ellipsis, I([[0], [1]]), I([1, 3])),
    # lists
    ([0, 1],), ([0, 1], [1, 2]), [2, 0, 2],
], ids=repr)
def test_getitem_matches_numpy(key):
    expected = XN[key]
    out = X[key]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_getitem_with_concrete_boolean_masks():
    np.testing.assert_array_equal(np.asarray(X[XN > 30]), XN[XN > 30])
    mask2 = XN[:, :, 0] > 20
    np.testing.assert_array_equal(np.asarray(X[mask2]), XN[mask2])
    np.testing.assert_array_equal(np.asarray(X[core.asarray(mask2)]), XN[mask2])
    m = [True, False, True, False]
    np.testing.assert_array_equal(np.asarray(X[:, m]), XN[:, m])


def test_getitem_with_array_indices_and_numpy_ints():
    assert X[core.asarray([0, 2])].shape == (2, 4, 5)
    assert X[core.asarray(1)].shape == (4, 5)
    assert X[np.int64(1)].shape == (4, 5)
    assert X[[]].shape == (0, 4, 5)


@pytest.mark.parametrize("key, words", [
    ((3,), "index 3 is out of bounds for axis 0 with size 3"),
    ((0, -5), "index -5 is out of bounds for axis 1 with size 4"),
    ((I([0, 3]),), "index 3 is out of bounds for axis 0"),
    ((slice(None), I([-5])), "index -5 is out of bounds for axis 1"),
    ((0, 0, 0, 0), "too many indices"),
    ((Ellipsis, Ellipsis), "single ellipsis"),
    ((I([0, 1, 2]), I([0, 1])), r"could not be broadcast together with shapes \(3,\) \(2,\)"),
])
def test_getitem_out_of_range_raises_index_error(key, words):
    with pytest.raises(IndexError, match=words):
        X[key]


def test_getitem_rejects_float_indices():
    with pytest.raises(TypeError, match="integer"):
        X[core.asarray([0.0, 1.0])]
    with pytest.raises(IndexError):
        X[1.0]


def test_getitem_gradients_accumulate_repeated_indices():
    g = core.grad(lambda v: core.sum(v[core.asarray([0, 0]), core.asarray([1, 1])]))(core.zeros((2, 3)))
    assert g.tolist() == [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]
    g = core.grad(lambda v: core.sum(v[np.array([True, False, True])]))(core.zeros(3))
    assert g.tolist() == [1.0, 0.0, 1.0]
    g = core.grad(lambda v: core.sum(v[1, ::2] * core.asarray([1.0, 2.0])))(core.zeros((2, 3)))
    assert g.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 2.0]]


# ---------------------------------------------------------------------------
# take / index_add


@pytest.mark.parametrize("indices, axis", [([2, 0, -1], 1), ([[1, 0], [2, 2]], 0), ([1, 11], None), ([3], -1)])
def test_take_matches_numpy(indices, axis):
    x = np.arange(12.0).reshape(3, 4)
    out = core.take(core.asarray(x), indices, axis)
    expected = np.take(x, indices, axis=axis)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_take_out_of_bounds_raises():
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        core.take(core.zeros((3, 4)), [4], 1)


@pytest.mark.parametrize("axis", [0, 1])
def test_index_add_matches_numpy_add_at(axis):
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([0, 0, 2, -1])[: 3 if axis == 0 else 4]
    upd_shape = (len(idx), 4) if axis == 0 else (3, len(idx))
    upd = np.arange(1.0, 1.0 + np.prod(upd_shape)).reshape(upd_shape)
    expected = x.copy()
    np.add.at(expected, (slice(None),) * axis + (idx,), upd)
    out = core.index_add(core.asarray(x), idx, core.asarray(upd), axis)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_index_add_one_dimensional_and_integer():
    assert core.index_add(core.asarray([1.0, 2.0, 3.0]), [-1, -1, 0], core.asarray([5.0, 5.0, 1.0])).tolist() == [2.0, 2.0, 13.0]
    assert core.index_add(core.asarray([1, 2, 3]), [0, 0], core.asarray([5, 5])).tolist() == [11, 2, 3]


def test_take_and_index_add_gradients():
    g = core.grad(lambda v: core.sum(core.take(v, core.asarray([0, 0, 2]))))(core.zeros(3))
    assert g.tolist() == [2.0, 0.0, 1.0]
    gx, gu = core.grad(lambda v, u: core.sum(core.index_add(v, core.asarray([1, 1]), u) * core.asarray([1.0, 2.0, 3.0])),
                       argnums=(0, 1))(core.zeros(3), core.asarray([5.0, 6.0]))
    assert gx.tolist() == [1.0, 2.0, 3.0] and gu.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------
# gather / scatter_add / scatter (torch semantics)


def _torch_gather(x, axis, idx):
    out = np.empty(idx.shape, x.dtype)
    for pos in np.ndindex(*idx.shape):
        src = list(pos)
        src[axis] = idx[pos]
        out[pos] = x[tuple(src)]
    return out


def _torch_scatter(x, axis, idx, upd, add):
    out = x.copy()
    for pos in np.ndindex(*idx.shape):
        dst = list(pos)
        dst[axis] = idx[pos]
        out[tuple(dst)] = out[tuple(dst)] + upd[pos] if add else upd[pos]
    return out


@pytest.mark.parametrize("axis, idx", [
    (1, [[0, 0], [1, 0], [3, 2]]), (0, [[0, 1, 2, 0]]), (1, [[-1], [0], [1]]), (0, [[2, 2], [0, 1]]),
])
def test_gather_matches_torch_definition(axis, idx):
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array(idx)
    out = core.gather(core.asarray(x), axis, core.asarray(idx))
    np.testing.assert_array_equal(np.asarray(out), _torch_gather(x, axis, idx % x.shape[axis]))
    if axis == 1 and (idx >= 0).all():
        np.testing.assert_array_equal(np.asarray(core.take_along_axis(core.asarray(x), idx, axis)),
                                      np.take_along_axis(x, idx, axis))


@pytest.mark.parametrize("axis, idx", [(1, [[0, 0, 2], [1, 1, 1]]), (0, [[1, 0, 1], [1, 1, 0]]), (0, [[1, 0]])])
def test_scatter_add_and_scatter_match_torch_definition(axis, idx):
    x = np.zeros((2, 3))
    idx = np.array(idx)
    upd = np.arange(1.0, 1.0 + idx.size).reshape(idx.shape)
    out = core.scatter_add(core.asarray(x), axis, core.asarray(idx), core.asarray(upd))
    np.testing.assert_array_equal(np.asarray(out), _torch_scatter(x, axis, idx, upd, add=True))
    # scatter with unique targets per position (duplicates are unspecified in torch)
    uidx = np.array([[2], [0]]) if axis == 1 else np.array([[1, 0, 1]])
    uupd = np.arange(1.0, 1.0 + uidx.size).reshape(uidx.shape)
    out = core.scatter(core.asarray(x), axis, core.asarray(uidx), core.asarray(uupd))
    np.testing.assert_array_equal(np.asarray(out), _torch_scatter(x, axis, uidx, uupd, add=False))


def test_gather_scatter_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        core.gather(core.zeros((3, 4)), 1, core.asarray([[4]]))
    with pytest.raises(ValueError, match="dimensions"):
        core.gather(core.zeros((3, 4)), 1, core.asarray([0]))
    with pytest.raises(TypeError, match="integer"):
        core.gather(core.zeros((3, 4)), 1, core.asarray([[0.0]]))


def test_gather_scatter_gradients():
    g = core.grad(lambda v: core.sum(core.gather(v, 0, core.asarray([0, 0, 2]))))(core.zeros(3))
    assert g.tolist() == [2.0, 0.0, 1.0]
    gx, gu = core.grad(lambda v, u: core.sum(core.scatter(v, 0, core.asarray([1]), u) * core.asarray([1.0, 2.0, 3.0])),
                       argnums=(0, 1))(core.zeros(3), core.asarray([5.0]))
    assert gx.tolist() == [1.0, 0.0, 3.0] and gu.tolist() == [2.0]
    gx, gu = core.grad(lambda v, u: core.sum(core.scatter_add(v, 0, core.asarray([1, 1]), u) * core.asarray([1.0, 2.0, 3.0])),
                       argnums=(0, 1))(core.zeros(3), core.asarray([5.0, 6.0]))
    assert gx.tolist() == [1.0, 2.0, 3.0] and gu.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------
# sort / argsort / topk


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_matches_numpy_stable_sort(axis):
    x = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, 0.0, -1.0, 5.0], [3.0, 1.0, 2.0, 1.0]])
    values, indices = core.sort_with_indices(core.asarray(x), axis)
    np.testing.assert_array_equal(np.asarray(values), np.sort(x, axis=axis))
    np.testing.assert_array_equal(np.asarray(indices), np.argsort(x, axis=axis, kind="stable"))
    assert indices.dtype is core.int64
    np.testing.assert_array_equal(np.asarray(core.argsort(core.asarray(x), axis)), np.argsort(x, axis=axis, kind="stable"))


def test_descending_sort_is_stable():
    values, indices = core.sort_with_indices(core.asarray([1.0, 3.0, 1.0, 3.0, 2.0]), descending=True)
    assert values.tolist() == [3.0, 3.0, 2.0, 1.0, 1.0]
    assert indices.tolist() == [1, 3, 4, 0, 2]
    assert core.argsort(core.asarray([2, 1, 2, 1]), descending=True).tolist() == [0, 2, 1, 3]
    values = core.sort(core.asarray([3.0, np.nan, 1.0]), descending=True)
    assert np.isnan(values.tolist()[0])  # NaN sorts as the largest, as in torch


def test_topk_largest_and_smallest():
    values, indices = core.topk(core.asarray([1.0, 5.0, 3.0, 5.0]), 2)
    assert values.tolist() == [5.0, 5.0] and indices.tolist() == [1, 3]
    values, indices = core.topk(core.asarray([1.0, 5.0, 3.0, 5.0]), 2, largest=False)
    assert values.tolist() == [1.0, 3.0] and indices.tolist() == [0, 2]
    values, indices = core.topk(core.asarray([[1.0, 5.0, 3.0], [9.0, 0.0, 1.0]]), 1, axis=0)
    assert values.tolist() == [[9.0, 5.0, 3.0]] and indices.tolist() == [[1, 0, 0]]
    with pytest.raises(ValueError, match="k=3"):
        core.topk(core.asarray([1.0, 5.0]), 3)


def test_sort_and_topk_gradients_route_to_the_source_positions():
    g = core.grad(lambda v: core.sum(core.sort(v) * core.asarray([1.0, 2.0, 3.0])))(core.asarray([3.0, 1.0, 2.0]))
    assert g.tolist() == [3.0, 1.0, 2.0]
    g = core.grad(lambda v: core.sum(core.topk(v, 2)[0]))(core.asarray([3.0, 1.0, 2.0]))
    assert g.tolist() == [1.0, 0.0, 1.0]


def _random_key(rng):
    parts = []
    for _ in range(rng.randint(0, 5)):
        t = rng.random()
        if t < 0.2:
            parts.append(rng.randint(-2, 1))
        elif t < 0.45:
            parts.append(slice(rng.choice([None, -3, -1, 0, 1, 2]), rng.choice([None, -1, 0, 2, 4]),
                               rng.choice([None, 1, 2, -1, -2])))
        elif t < 0.55:
            parts.append(None)
        elif t < 0.62:
            parts.append(Ellipsis)
        else:
            parts.append(np.array(rng.choice([[0, 1], [[1], [0]], [-1, 0, 1], [1]])))
    return tuple(parts)


def _zero_width_ellipsis_among_arrays(key, ndim):
    # NumPy counts even an empty `...` as separating advanced indices; torch and jax do not (nor do we)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    return (any(k is Ellipsis for k in key) and consumed == ndim
            and any(isinstance(k, np.ndarray) for k in key))


def test_random_mixed_keys_match_numpy():
    import random
    rng = random.Random(0)
    xn = np.arange(120.0).reshape(2, 3, 4, 5)
    x = core.asarray(xn)
    checked = 0
    for _ in range(400):
        key = _random_key(rng)
        if _zero_width_ellipsis_among_arrays(key, xn.ndim):
            continue
        try:
            expected = xn[key]
        except IndexError:
            with pytest.raises(IndexError):
                x[key]
            continue
        out = x[key]
        assert out.shape == expected.shape, key
        np.testing.assert_array_equal(np.asarray(out), expected, err_msg=repr(key))
        checked += 1
    assert checked > 200


def test_zero_dim_sort_topk_gather_scatter_like_torch():
    s = core.asarray(2.0)
    values, indices = core.topk(s, 1)
    assert values.item() == 2.0 and indices.item() == 0
    values, indices = core.sort_with_indices(s)
    assert values.item() == 2.0 and indices.item() == 0
    assert core.gather(s, 0, core.asarray(0)).item() == 2.0
    assert core.scatter_add(s, 0, core.asarray(0), core.asarray(3.0)).item() == 5.0
    assert core.scatter(s, 0, core.asarray(-1), core.asarray(3.0)).item() == 3.0
    assert core.grad(lambda v: core.gather(v, 0, core.asarray(0)) * 3.0)(s).item() == 3.0
    with pytest.raises(IndexError, match="out of bounds"):
        core.gather(s, 0, core.asarray(1))
    with pytest.raises(ValueError, match="k=2"):
        core.topk(s, 2)


@pytest.mark.parametrize("shape,m,axis", [((128, 64), 256, 0), ((10, 3, 5), 400, 0), ((5, 40, 3), 300, 1)])
def test_index_add_rows_loop_and_sorted_sum_give_add_at_numbers(shape, m, axis, monkeypatch):
    # an embedding's gradient: duplicates summed in float64 in index order, then added to x with one rounding
    from mindtorch_v2.core.ops import indexing
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(-shape[axis], shape[axis], m)
    upd_shape = list(shape)
    upd_shape[axis] = m
    upd = (rng.standard_normal(upd_shape) * 10.0 ** rng.integers(-8, 8, upd_shape)).astype(np.float32)
    acc = np.zeros(shape, np.float64)
    np.add.at(acc, (slice(None),) * axis + (idx % shape[axis],), upd)
    want = (x + acc).astype(np.float32)
    got = indexing._index_add_cpu(x, idx, upd, axis=axis)  # the numba loop where installed
    assert got.tobytes() == want.tobytes()
    monkeypatch.setattr(indexing, "_add_rows_kernel", lambda: None)
    assert indexing._index_add_cpu(x, idx, upd, axis=axis).tobytes() == want.tobytes()  # the sorted sum
