"""Shape and view ops against NumPy: reshape, broadcast_to, transpose, squeeze /
expand_dims, concatenate / stack, pad, slicing, flip, as_strided and
as_strided_scatter (with their gradients)."""
import numpy as np
import pytest

from mindtorch_v2 import core

XN = np.arange(24.0).reshape(2, 3, 4)
X = core.asarray(XN)
_np_strided = np.lib.stride_tricks.as_strided


def same(a, b):
    a = np.asarray(a)
    assert a.shape == np.shape(b)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", [(-1,), (4, -1), (-1, 2, 3), (24,), (2, 12), (1, 24, 1)])
def test_reshape_matches_numpy(shape):
    same(core.reshape(X, shape), XN.reshape(shape))


def test_reshape_errors_and_methods():
    with pytest.raises(ValueError, match="reshape"):
        core.reshape(X, (5, -1))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(5, 5\)"):
        core.reshape(X, (5, 5))
    with pytest.raises(ValueError, match="only one"):
        core.reshape(X, (-1, -1))
    same(X.reshape(6, 4), XN.reshape(6, 4))
    same(X.reshape((6, -1)), XN.reshape(6, -1))
    same(X.ravel(), XN.ravel())


def test_broadcast_to_matches_numpy():
    same(core.broadcast_to(core.asarray([1.0, 2.0]), (3, 2)), np.broadcast_to([1.0, 2.0], (3, 2)))
    same(core.broadcast_to(core.asarray([[1.0], [2.0]]), (2, 2, 3)), np.broadcast_to([[1.0], [2.0]], (2, 2, 3)))
    with pytest.raises(ValueError, match=r"cannot broadcast shape \(2,\) to \(3, 3\)"):
        core.broadcast_to(core.asarray([1.0, 2.0]), (3, 3))


def test_broadcast_to_gradient_sums_back():
    g = core.grad(lambda v: core.sum(core.broadcast_to(v, (4, 2, 3)) * 2.0))(core.zeros((2, 1)))
    assert g.tolist() == [[24.0], [24.0]]


@pytest.mark.parametrize("axes", [None, (2, 0, 1), (-1, 0, 1), (0, 1, 2), (1, 0, 2)])
def test_transpose_matches_numpy(axes):
    same(core.transpose(X, axes), np.transpose(XN, axes))


def test_transpose_family():
    same(X.T, XN.T)
    same(X.mT, np.swapaxes(XN, -1, -2))
    same(core.swapaxes(X, 0, -1), np.swapaxes(XN, 0, -1))
    same(core.moveaxis(X, 0, -1), np.moveaxis(XN, 0, -1))
    same(core.moveaxis(X, 2, 0), np.moveaxis(XN, 2, 0))
    with pytest.raises(ValueError, match="permutation"):
        core.transpose(X, (0, 0, 1))
    g = core.grad(lambda v: core.sum(core.transpose(v, (2, 0, 1)) * core.asarray(np.arange(24.0).reshape(4, 2, 3))))(X)
    same(g, np.transpose(np.arange(24.0).reshape(4, 2, 3), (1, 2, 0)))


def test_squeeze_and_expand_dims_match_numpy():
    z = np.zeros((1, 2, 1))
    same(core.squeeze(core.asarray(z)), np.squeeze(z))
    same(core.squeeze(core.asarray(z), -1), np.squeeze(z, -1))
    same(core.squeeze(core.asarray(z), (0, 2)), np.squeeze(z, (0, 2)))
    same(core.expand_dims(X, 0), np.expand_dims(XN, 0))
    same(core.expand_dims(X, -1), np.expand_dims(XN, -1))
    same(core.expand_dims(X, (0, -1)), np.expand_dims(XN, (0, -1)))
    same(core.expand_dims(X, (1, 3)), np.expand_dims(XN, (1, 3)))
    with pytest.raises(ValueError, match="cannot squeeze axis 1 of size 2"):
        core.squeeze(core.asarray(z), 1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_and_stack_match_numpy(axis):
    a, b = np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)
    same(core.concatenate([core.asarray(a), core.asarray(b)], axis), np.concatenate([a, b], axis))
    same(core.stack([core.asarray(a), core.asarray(b)], axis), np.stack([a, b], axis))


def test_concatenate_promotes_and_checks_shapes():
    out = core.concatenate([core.asarray([1, 2]), core.asarray([1.5])])
    assert out.dtype is core.float32 and out.tolist() == [1.0, 2.0, 1.5]
    with pytest.raises(ValueError, match=r"\(1, 2\) and \(1, 3\)"):
        core.concatenate([core.zeros((1, 2)), core.zeros((1, 3))], 0)
    with pytest.raises(ValueError, match="same shape"):
        core.stack([core.zeros((2,)), core.zeros((3,))])


def test_concatenate_gradient_splits_back():
    ga, gb = core.grad(lambda a, b: core.sum(core.concatenate([a, b], 1) * core.asarray([[1.0, 2.0, 3.0]])),
                       argnums=(0, 1))(core.zeros((1, 1)), core.zeros((1, 2)))
    assert ga.tolist() == [[1.0]] and gb.tolist() == [[2.0, 3.0]]


@pytest.mark.parametrize("pad_width", [1, (1, 2), ((0, 1), (2, 0)), ((1, 1), (0, 0))])
def test_pad_matches_numpy(pad_width):
    a = np.arange(6).reshape(2, 3)
    same(core.pad(core.asarray(a), pad_width, value=9), np.pad(a, pad_width, constant_values=9))


def test_pad_negative_crops_and_gradient_unpads():
    same(core.pad(core.asarray([1, 2, 3, 4]), ((-1, 1),)), [2, 3, 4, 0])
    g = core.grad(lambda v: core.sum(core.pad(v, 1, value=3.0) * 2.0))(core.asarray([1.0, 2.0]))
    assert g.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("key", [
    (slice(None), slice(None, None, 2), slice(1, None, 3)),
    (slice(None, None, -1),),
    (slice(None, None, -1), slice(None, None, -2), slice(-1, 0, -2)),
    (slice(None), slice(0, 2, -1)),
    (slice(None), slice(5, 10)),
    (slice(-100, 100, -1),),
    (slice(None), slice(-2, None), slice(-3, -1)),
    (slice(1, None, 5), slice(None), slice(3, 0, -1)),
])
def test_slicing_with_steps_matches_numpy(key):
    same(X[key], XN[key])


def test_slice_gradient_with_negative_step():
    g = core.grad(lambda v: core.sum(v[::-2] * core.asarray([1.0, 10.0])))(core.asarray([1.0, 2.0, 3.0, 4.0]))
    assert g.tolist() == [0.0, 10.0, 0.0, 1.0]


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_flip_matches_numpy(axis):
    same(core.flip(X, axis), np.flip(XN, axis))


# ---------------------------------------------------------------------------
# as_strided / as_strided_scatter: views of the flattened base


@pytest.mark.parametrize("shape, strides, offset", [
    ((3, 3), (1, 1), 2),        # overlapping sliding windows
    ((2, 3), (0, 2), 1),        # stride 0: a repeated row
    ((2, 2), (3, 1), 1),
    ((5,), (2,), 0),
    ((2, 2, 2), (4, 2, 1), 1),
    ((), (), 7),
])
def test_as_strided_matches_numpy(shape, strides, offset):
    base = np.arange(10.0)
    expected = _np_strided(base[offset:], shape, tuple(8 * s for s in strides))
    same(core.as_strided(core.asarray(base), shape, strides, offset), expected)


def test_as_strided_reads_a_multi_dimensional_base_row_major():
    same(core.as_strided(X, (2, 2), (12, 1), 1), [[1.0, 2.0], [13.0, 14.0]])
    same(core.as_strided(core.transpose(X, (2, 1, 0)), (3,), (1,), 0), np.transpose(XN, (2, 1, 0)).ravel()[:3])


def test_as_strided_out_of_bounds_raises():
    with pytest.raises(ValueError, match="reaches element 10"):
        core.as_strided(core.zeros(10), (2, 3), (5, 2), 1)
    with pytest.raises(ValueError, match="different lengths"):
        core.as_strided(core.zeros(10), (2, 3), (1,), 0)


@pytest.mark.parametrize("shape, strides, offset", [((2, 2), (3, 1), 1), ((3,), (3,), 0), ((2, 2), (1, 4), 2)])
def test_as_strided_scatter_matches_numpy_writes(shape, strides, offset):
    base = np.arange(10.0)
    src = -np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    expected = base.copy()
    _np_strided(expected[offset:], shape, tuple(8 * s for s in strides))[...] = src
    out = core.as_strided_scatter(core.asarray(base), core.asarray(src), shape, strides, offset)
    same(out, expected)
    same(core.asarray(base), np.arange(10.0))  # the input base is unchanged


def test_as_strided_scatter_casts_and_broadcasts_src():
    out = core.as_strided_scatter(core.zeros(4, dtype=core.float64), core.asarray(7), (2,), (2,), 0)
    assert out.dtype is core.float64 and out.tolist() == [7.0, 0.0, 7.0, 0.0]


def test_as_strided_gradient_accumulates_overlaps():
    g = core.grad(lambda v: core.sum(core.as_strided(v, (3, 3), (1, 1))))(core.zeros(5))
    assert g.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]
    g = core.grad(lambda v: core.sum(core.as_strided(v, (4,), (0,), 2)))(core.zeros(5))
    assert g.tolist() == [0.0, 0.0, 4.0, 0.0, 0.0]
    w = core.asarray([[1.0, 10.0, 100.0], [1000.0, 10000.0, 100000.0]])
    g = core.grad(lambda v: core.sum(core.as_strided(v, (2, 3), (0, 2), 1) * w))(core.zeros((2, 3)))
    assert g.tolist() == [[0.0, 1001.0, 0.0], [10010.0, 0.0, 100100.0]]


def test_as_strided_scatter_gradients():
    (gb, gs) = core.vjp(lambda base, src: core.as_strided_scatter(base, src, (2,), (2,), 1),
                        core.zeros(5), core.asarray([1.0, 2.0]))[1](core.asarray([10.0, 11.0, 12.0, 13.0, 14.0]))
    assert gb.tolist() == [10.0, 0.0, 12.0, 0.0, 14.0]  # the overwritten region gets nothing
    assert gs.tolist() == [11.0, 13.0]


def test_as_strided_jvp_is_the_same_view_of_the_tangent():
    _, t = core.jvp(lambda v: core.as_strided(v, (2, 2), (1, 1)), (core.zeros(3),), (core.asarray([1.0, 2.0, 3.0]),))
    assert t.tolist() == [[1.0, 2.0], [2.0, 3.0]]


def test_pad_with_negative_widths_beyond_the_size_and_its_gradient():
    # grow first, then crop: size s + lo + hi, as jax.lax.pad
    same(core.pad(core.asarray([1, 2]), ((-3, 2),)), [0])
    g = core.grad(lambda v: core.sum(core.pad(v, ((-1, 2),)) * core.asarray([1.0, 2.0, 3.0, 4.0, 5.0])))(core.zeros(4))
    assert g.tolist() == [0.0, 1.0, 2.0, 3.0]
    pad_p = core.pad_p
    assert pad_p.bind(core.asarray(3.0), pad_width=(), value=0.0).item() == 3.0  # 0-d: nothing to pad
