"""Samples for the indexing family: take, index_add, gather, scatter_add, scatter, sort.

Index arrays are int64 or int32 and in range (negative ones wrap, as NumPy's);
`scatter` gets indices that are distinct along the axis for every line, since with
duplicates the surviving write (and so the derivative) is an implementation detail.
`sort` gets distinct values for its derivative samples.
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import ALL_DTYPES, any_array, floats, ints, separated, shapes, sides, size_of

_INDEX_DTYPES = (np.int64, np.int32)


@st.composite
def _values(draw, shape, dtype=None):
    """(array, differentiable): float64 unless `dtype` names another dtype."""
    if dtype is None:
        return draw(floats(shape, -3, 3)), True
    return draw(any_array(shape, (dtype,))), False


@st.composite
def _maybe_dtype(draw):
    """None (float64, differentiable) two times in three, else another dtype for the meta rule."""
    if draw(st.integers(0, 2)) == 2:
        return draw(st.sampled_from(ALL_DTYPES))
    return None


@st.composite
def _indices(draw, shape, size, negative=True):
    """An index array of `shape` with entries valid for an axis of `size` (negative ones wrap)."""
    dtype = draw(st.sampled_from(_INDEX_DTYPES))
    if size_of(shape) == 0:
        return np.zeros(shape, dtype)
    assert size > 0
    return draw(ints(shape, dtype, -size if negative else 0, size - 1))


@st.composite
def _take_like(draw, with_updates):
    x_shape = draw(shapes(min_dims=1, min_side=0, max_size=12))
    axis = draw(st.integers(0, len(x_shape) - 1))
    idx_shape = draw(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3, max_size=6))
    if x_shape[axis] == 0 and size_of(idx_shape) != 0:
        idx_shape = (0,) + idx_shape[1:] if idx_shape else (0,)
    idx = draw(_indices(idx_shape, x_shape[axis]))
    dtype = draw(_maybe_dtype())
    x, diff = draw(_values(x_shape, dtype))
    if not with_updates:
        return Sample((x, idx), {"axis": axis}, diff=(0,) if diff else ())
    u_shape = x_shape[:axis] + idx_shape + x_shape[axis + 1:]
    u, _ = draw(_values(u_shape, dtype))
    return Sample((x, idx, u), {"axis": axis}, diff=(0, 2) if diff else ())


register(core.take_p, _take_like(False), linear=True)
register(core.index_add_p, _take_like(True), linear=True)


@st.composite
def _gather_geometry(draw):
    """(x shape, index shape, axis): same ndim; the index is no larger off the axis."""
    if draw(st.integers(0, 9)) == 9:
        return (), (), 0  # 0-d input and index (the index must then be 0)
    x_shape = draw(shapes(min_dims=1, min_side=1, max_size=12))
    axis = draw(st.integers(0, len(x_shape) - 1))
    idx_shape = tuple(draw(sides(3)) if d == axis else draw(sides(s))
                      for d, s in enumerate(x_shape))
    return x_shape, idx_shape, axis


@st.composite
def _gather_like(draw, with_updates):
    x_shape, idx_shape, axis = draw(_gather_geometry())
    if x_shape:
        idx = draw(_indices(idx_shape, x_shape[axis]))
    else:
        idx = np.zeros((), draw(st.sampled_from(_INDEX_DTYPES)))
    dtype = draw(_maybe_dtype())
    x, diff = draw(_values(x_shape, dtype))
    if not with_updates:
        return Sample((x, idx), {"axis": axis}, diff=(0,) if diff else ())
    u, _ = draw(_values(idx_shape, dtype))
    return Sample((x, idx, u), {"axis": axis}, diff=(0, 2) if diff else ())


register(core.gather_p, _gather_like(False), linear=True)
register(core.scatter_add_p, _gather_like(True), linear=True)


@st.composite
def _scatter(draw):
    x_shape, idx_shape, axis = draw(_gather_geometry())
    dtype = draw(_maybe_dtype())
    x, diff = draw(_values(x_shape, dtype))
    if x_shape:
        # distinct along the axis: the first k entries of a random permutation of each line
        n, k = x_shape[axis], min(idx_shape[axis], x_shape[axis])
        idx_shape = idx_shape[:axis] + (k,) + idx_shape[axis + 1:]
        keys_shape = idx_shape[:axis] + (n,) + idx_shape[axis + 1:]
        keys = draw(hnp.arrays(np.float64, keys_shape, elements=st.floats(0, 1)))
        order = np.argsort(keys, axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis).astype(draw(st.sampled_from(_INDEX_DTYPES)))
    else:
        idx = np.zeros((), np.int64)
    u, _ = draw(_values(idx_shape, dtype))
    return Sample((x, idx, u), {"axis": axis}, diff=(0, 2) if diff else ())


register(core.scatter_p, _scatter(), linear=True)


@st.composite
def _sort(draw):
    shape = draw(shapes(min_dims=0, min_side=0))
    params = {"axis": draw(st.integers(0, max(len(shape) - 1, 0))), "descending": draw(st.booleans())}
    if draw(st.integers(0, 2)) == 2:  # ties: the stable order is still defined
        dtypes = tuple(d for d in ALL_DTYPES if d is not np.bool_)
        return Sample((draw(any_array(shape, dtypes, -2, 2)),), params)
    return Sample((draw(separated(shape)),), params, diff=(0,))


register(core.sort_p, _sort())


@st.composite
def _check_index(draw):
    """In-range index values (the op is their identity; out of range it raises, tested in tests/)."""
    shape = draw(shapes(min_side=0))
    size = draw(st.integers(1, 6))
    idx = draw(_indices(shape, size, negative=False))
    return Sample((idx,), {"lo": 0, "hi": size, "error": draw(st.sampled_from(("IndexError", "RuntimeError"))),
                           "message": "index {} is out of bounds"})


register(core.check_index_p, _check_index())
