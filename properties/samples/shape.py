"""Samples for the shape/view family: reshape, broadcast_to, transpose, squeeze,
expand_dims, concatenate, pad, slice, slice_scatter, flip, as_strided, as_strided_scatter.

All of these are linear, so every float64 sample is differentiable; one draw in
three uses another dtype to exercise the meta rule on it.
"""
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import ALL_DTYPES, any_array, axes_subset, floats, shapes, sides, size_of


@st.composite
def _operand(draw, shape, dtypes=ALL_DTYPES):
    """(array, differentiable): float64 in [-3, 3] two times in three, else any dtype."""
    if draw(st.integers(0, 2)) == 2:
        return draw(any_array(shape, dtypes)), False
    return draw(floats(shape, -3, 3)), True


def _unary_sample(x_diff, params):
    x, diff = x_diff
    return Sample((x,), params, diff=(0,) if diff else ())


def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def _same_size_shape(draw, size):
    if size == 0:
        ndim = draw(st.integers(1, 3))
        dims = [draw(st.integers(0, 3)) for _ in range(ndim)]
        dims[draw(st.integers(0, ndim - 1))] = 0
        return tuple(dims)
    ndim = draw(st.integers(0 if size == 1 else 1, 4))
    dims = [1] * ndim
    for p in _prime_factors(size):
        dims[draw(st.integers(0, ndim - 1))] *= p
    return tuple(dims)


@st.composite
def _reshape(draw):
    shape = draw(shapes(min_side=0))
    new = draw(_same_size_shape(size_of(shape)))
    return _unary_sample(draw(_operand(shape)), {"shape": new})


register(core.reshape_p, _reshape(), linear=True)


@st.composite
def _broadcast_to(draw):
    target = draw(shapes(min_side=0, max_dims=4))
    nd = draw(st.integers(0, len(target)))
    src = tuple(1 if draw(st.booleans()) else s for s in target[len(target) - nd:])
    return _unary_sample(draw(_operand(src)), {"shape": target})


register(core.broadcast_to_p, _broadcast_to(), linear=True)


@st.composite
def _transpose(draw):
    shape = draw(shapes(min_side=0, max_dims=4))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    return _unary_sample(draw(_operand(shape)), {"perm": perm})


register(core.transpose_p, _transpose(), linear=True)


@st.composite
def _squeeze(draw):
    shape = draw(shapes(min_side=0, max_side=3, max_dims=4))
    ones = [i for i, s in enumerate(shape) if s == 1]
    axis = tuple(sorted(draw(st.lists(st.sampled_from(ones), unique=True)))) if ones else ()
    return _unary_sample(draw(_operand(shape)), {"axis": axis})


register(core.squeeze_p, _squeeze(), linear=True)


@st.composite
def _expand_dims(draw):
    shape = draw(shapes(min_side=0))
    k = draw(st.integers(0, 2))
    axis = tuple(sorted(draw(st.permutations(range(len(shape) + k)))[:k]))
    return _unary_sample(draw(_operand(shape)), {"axis": axis})


register(core.expand_dims_p, _expand_dims(), linear=True)


@st.composite
def _concatenate(draw):
    base = draw(shapes(min_dims=1, min_side=0, max_size=8))
    axis = draw(st.integers(0, len(base) - 1))
    n = draw(st.integers(1, 3))
    parts = [base[:axis] + (draw(sides(3)),) + base[axis + 1:] for _ in range(n)]
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from(ALL_DTYPES))
        return Sample(tuple(draw(any_array(p, (dtype,))) for p in parts), {"axis": axis})
    return Sample(tuple(draw(floats(p, -3, 3)) for p in parts), {"axis": axis}, diff=tuple(range(n)))


register(core.concatenate_p, _concatenate(), linear=True)


@st.composite
def _pad(draw):
    """Widths in [-size - 2, 2] per side with a non-negative result: negative widths crop after the
    positive ones are added, so a crop may eat the other side's padding (the meta rule allows it)."""
    shape = draw(shapes(min_side=0, max_size=8))
    widths = []
    for s in shape:
        lo = draw(st.integers(-s - 2, 2))
        hi = draw(st.integers(max(-s - 2, -s - lo), 2))
        widths.append((lo, hi))
    x, diff = draw(_operand(shape))
    if x.dtype.kind == "b":
        value = draw(st.booleans())
    elif x.dtype.kind in "iu":
        value = draw(st.integers(0, 5))
    else:
        value = draw(st.floats(-2, 2))
    return Sample((x,), {"pad_width": tuple(widths), "value": value}, diff=(0,) if diff else ())


register(core.pad_p, _pad(), linear=True)


@st.composite
def _slice_params(draw, shape):
    starts, stops, steps = [], [], []
    for s in shape:
        a = draw(st.integers(0, s))
        starts.append(a)
        stops.append(s - draw(st.integers(0, s - a)))  # shrinks towards the full slice
        steps.append(draw(st.integers(1, 3)))
    return {"starts": tuple(starts), "stops": tuple(stops), "steps": tuple(steps)}


def _slice_shape(p):
    return tuple(len(range(a, b, c)) for a, b, c in zip(p["starts"], p["stops"], p["steps"]))


@st.composite
def _slice(draw):
    shape = draw(shapes(min_side=0))
    return _unary_sample(draw(_operand(shape)), draw(_slice_params(shape)))


register(core.slice_p, _slice(), linear=True)


@st.composite
def _slice_scatter(draw):
    shape = draw(shapes(min_side=0))
    params = draw(_slice_params(shape))
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from(ALL_DTYPES))
        return Sample((draw(any_array(shape, (dtype,))), draw(any_array(_slice_shape(params), (dtype,)))), params)
    return Sample((draw(floats(shape, -3, 3)), draw(floats(_slice_shape(params), -3, 3))), params, diff=(0, 1))


register(core.slice_scatter_p, _slice_scatter(), linear=True)


@st.composite
def _flip(draw):
    shape = draw(shapes(min_side=0))
    return _unary_sample(draw(_operand(shape)), {"axis": draw(axes_subset(len(shape)))})


register(core.flip_p, _flip(), linear=True)


# ---------------------------------------------------------------------------
# as_strided / as_strided_scatter: views that stay inside the base


@st.composite
def _view_any(draw, n):
    """(shape, strides, offset) of a view into n row-major elements; views may overlap (stride 0)."""
    if n == 0 or draw(st.integers(0, 9)) == 9:  # an empty view: any geometry, no element is read
        k = draw(st.integers(1, 3))
        shape = [draw(st.integers(0, 3)) for _ in range(k)]
        shape[draw(st.integers(0, k - 1))] = 0
        return tuple(shape), tuple(draw(st.integers(0, 3)) for _ in range(k)), draw(st.integers(0, max(n - 1, 0)))
    budget = n - 1
    shape, strides = [], []
    for _ in range(draw(st.integers(0, 3))):
        side = draw(st.integers(1, 3))
        stride = draw(st.integers(0, 3 if side == 1 else min(3, budget // (side - 1))))
        budget -= (side - 1) * stride
        shape.append(side)
        strides.append(stride)
    return tuple(shape), tuple(strides), draw(st.integers(0, budget))


@st.composite
def _view_disjoint(draw, n):
    """A view whose elements are distinct base elements (a strided block, axes permuted)."""
    extent = 1  # the block spans `extent` consecutive base positions
    dims = []
    for i in range(draw(st.integers(0, 3))):
        stride = draw(st.integers(1, 2)) if i == 0 else extent + draw(st.integers(0, 1))
        side = draw(st.integers(1, 3))
        if (side - 1) * stride + extent > n:
            side = 1
        extent = (side - 1) * stride + extent
        dims.append((side, stride))
    dims = draw(st.permutations(dims))
    return tuple(d[0] for d in dims), tuple(d[1] for d in dims), draw(st.integers(0, n - extent))


@st.composite
def _as_strided(draw):
    base_shape = draw(shapes(min_side=0))
    shape, strides, offset = draw(_view_any(size_of(base_shape)))
    return _unary_sample(draw(_operand(base_shape)), {"shape": shape, "strides": strides, "offset": offset})


register(core.as_strided_p, _as_strided(), linear=True)


@st.composite
def _as_strided_scatter(draw):
    # the scatter writes every view element once: overlapping views have no single result
    base_shape = draw(shapes(min_side=1))
    shape, strides, offset = draw(_view_disjoint(size_of(base_shape)))
    params = {"shape": shape, "strides": strides, "offset": offset}
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from(ALL_DTYPES))
        return Sample((draw(any_array(base_shape, (dtype,))), draw(any_array(shape, (dtype,)))), params)
    return Sample((draw(floats(base_shape, -3, 3)), draw(floats(shape, -3, 3))), params, diff=(0, 1))


register(core.as_strided_scatter_p, _as_strided_scatter(), linear=True)
