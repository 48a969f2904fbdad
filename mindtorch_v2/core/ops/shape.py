"""Shape and view primitives: reshape, broadcast_to, transpose, squeeze,
expand_dims, concatenate, pad, slice / slice_scatter, flip, and the two view
primitives the eager layer lowers every view and in-place write to:
as_strided and as_strided_scatter (strides and offset in elements of the
base's row-major layout).
"""
import builtins

import numpy as np

from ._family import all_front, move_to_front, shift_axes
from ..primitive import Primitive, VariadicVJP
from .. import dtypes as dt
from . import _family
from ._family import normalize_axes, normalize_axis, sum_to_shape

__all__ = [
    "broadcast_shapes",     "reshape_p", "reshape", "broadcast_to_p", "broadcast_to", "broadcast_arrays", "transpose_p", "transpose",
    "permute_dims", "swapaxes", "moveaxis", "squeeze_p", "squeeze", "expand_dims_p", "expand_dims",
    "concatenate_p", "concatenate", "concat", "stack", "pad_p", "pad", "slice_p", "slice_scatter_p", "slice_axis",
    "static_slice", "flip_p", "flip", "ravel", "bitcast_p", "bitcast",
]

_as_strided_np = np.lib.stride_tricks.as_strided


_prod = _family.prod


def _operand(x):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = _family.asarray(x)
    return x


# ---------------------------------------------------------------------------
# reshape


def _reshape_meta(x, *, shape):
    if _prod(shape) != x.size:
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} (size {x.size}) into shape {shape}")
    return shape, x.dtype


reshape_p = Primitive("reshape", _reshape_meta, linear=True,
                      vjp=(lambda g, out, x, *, shape: reshape_p.bind(g, shape=x.shape),))
reshape_p.batch = lambda vals, bdims, *, shape: (
    reshape_p.bind(move_to_front(vals[0], bdims[0]), shape=(vals[0].shape[bdims[0]],) + shape), 0)
def _method_reshape(shape):
    return lambda x: x.reshape(shape)


def _method_transpose(perm):
    return lambda x: x.transpose(perm)


# reshape, squeeze and expand_dims are one ndarray.reshape to the result's shape (a view where NumPy's helper
# gives one: unit axes added or dropped never copy)
_as_reshape = _family.specialized(lambda e: _method_reshape(e.outvars[0].shape))


reshape_p.def_impl("cpu")(_as_reshape(lambda x, *, shape: np.reshape(x, shape)))


def _resolve_shape(shape, size, name="reshape"):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError(f"{name}: only one dimension can be -1, got {shape}")
    if builtins.any(s < -1 for s in shape):
        raise ValueError(f"{name}: invalid shape {shape}")
    if unknown:
        known = _prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"{name}: cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    return shape


def reshape(x, shape, *, copy=None):
    """x with a new shape of the same size (one dimension may be -1). Arrays are immutable, so `copy`
    (the standard's keyword) changes nothing observable: the result never aliases anything writable."""
    x = _operand(x)
    shape = _resolve_shape(shape, _prod(x.shape))
    if shape == x.shape:
        return x
    return reshape_p.bind(x, shape=shape)


# ---------------------------------------------------------------------------
# broadcast_to


def _broadcast_to_meta(x, *, shape):
    lead = len(shape) - x.ndim
    if lead < 0 or builtins.any(s != 1 and s != shape[i + lead] for i, s in enumerate(x.shape)):
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    return shape, x.dtype


broadcast_to_p = Primitive("broadcast_to", _broadcast_to_meta, linear=True,
                           vjp=(lambda g, out, x, *, shape: sum_to_shape(g, x.shape),))
def _broadcast_to_batch(vals, bdims, *, shape):
    x = move_to_front(vals[0], bdims[0])
    b, logical = x.shape[0], tuple(x.shape[1:])
    x = reshape_p.bind(x, shape=(b,) + (1,) * (len(shape) - len(logical)) + logical)
    return broadcast_to_p.bind(x, shape=(b,) + shape), 0


broadcast_to_p.batch = _broadcast_to_batch
broadcast_to_p.def_impl("cpu")(lambda x, *, shape: np.broadcast_to(x, shape))


def broadcast_to(x, shape):
    """x broadcast to `shape` (NumPy rules)."""
    x = _operand(x)
    shape = tuple(int(s) for s in shape)
    if shape == x.shape:
        return x
    return broadcast_to_p.bind(x, shape=shape)


def broadcast_arrays(*xs):
    shape = _family.broadcast_shapes("broadcast_arrays", *[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


# ---------------------------------------------------------------------------
# transpose


def _transpose_meta(x, *, perm):
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {perm} are not a permutation of {x.ndim} dimensions")
    return tuple(x.shape[p] for p in perm), x.dtype


def _inverse_perm(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


transpose_p = Primitive("transpose", _transpose_meta, linear=True,
                        vjp=(lambda g, out, x, *, perm: transpose_p.bind(g, perm=_inverse_perm(perm)),))
transpose_p.batch = lambda vals, bdims, *, perm: (
    transpose_p.bind(move_to_front(vals[0], bdims[0]), perm=(0,) + shift_axes(perm)), 0)
transpose_p.def_impl("cpu")(_family.specialized(lambda e: _method_transpose(e.params["perm"]))(
    lambda x, *, perm: np.transpose(x, perm)))


def transpose(x, axes=None):
    """x with its axes permuted (reversed when axes is None)."""
    x = _operand(x)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    if len(axes) != x.ndim:
        raise ValueError(f"transpose: axes {tuple(axes)} do not match an array of {x.ndim} dimensions")
    perm = tuple(normalize_axis(a, x.ndim, "transpose") for a in axes)
    if perm == tuple(range(x.ndim)):
        return x
    return transpose_p.bind(x, perm=perm)


permute_dims = transpose


def swapaxes(x, a, b):
    perm = list(range(x.ndim))
    a, b = normalize_axis(a, x.ndim, "swapaxes"), normalize_axis(b, x.ndim, "swapaxes")
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination):
    """x with the axes `source` (an int or a tuple) moved to the positions `destination`, the others
    keeping their order."""
    src = tuple(normalize_axis(a, x.ndim, "moveaxis") for a in (source if isinstance(source, (tuple, list)) else (source,)))
    dst = tuple(normalize_axis(a, x.ndim, "moveaxis")
                for a in (destination if isinstance(destination, (tuple, list)) else (destination,)))
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must have the same length")
    _family.check_unique_axes("moveaxis", src)
    _family.check_unique_axes("moveaxis", dst)
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(x, perm)


# ---------------------------------------------------------------------------
# squeeze / expand_dims


def _squeeze_meta(x, *, axis):
    _family.check_unique_axes("squeeze", axis)
    for a in axis:
        if not 0 <= a < x.ndim:
            raise IndexError(f"squeeze: axis {a} is out of range for an array of {x.ndim} dimensions")
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: cannot squeeze axis {a} of size {x.shape[a]} (shape {x.shape})")
    return tuple(s for i, s in enumerate(x.shape) if i not in axis), x.dtype


squeeze_p = Primitive("squeeze", _squeeze_meta, linear=True,
                      vjp=(lambda g, out, x, *, axis: reshape_p.bind(g, shape=x.shape),))
squeeze_p.batch = lambda vals, bdims, *, axis: (
    squeeze_p.bind(move_to_front(vals[0], bdims[0]), axis=shift_axes(axis)), 0)
squeeze_p.def_impl("cpu")(_as_reshape(lambda x, *, axis: np.squeeze(x, axis)))


def squeeze(x, axis=None):
    """x without the given size-1 axes (all size-1 axes when None)."""
    x = _operand(x)
    if axis is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
    if not axes:
        return x
    return squeeze_p.bind(x, axis=axes)


def _expand_dims_meta(x, *, axis):
    _family.check_unique_axes("expand_dims", axis)
    nd = x.ndim + len(axis)
    shape = list(x.shape)
    for a in axis:
        if not 0 <= a < nd:
            raise IndexError(f"expand_dims: axis {a} is out of range for the result's {nd} dimensions")
        shape.insert(a, 1)
    return tuple(shape), x.dtype


expand_dims_p = Primitive("expand_dims", _expand_dims_meta, linear=True,
                          vjp=(lambda g, out, x, *, axis: reshape_p.bind(g, shape=x.shape),))
expand_dims_p.batch = lambda vals, bdims, *, axis: (
    expand_dims_p.bind(move_to_front(vals[0], bdims[0]), axis=shift_axes(axis)), 0)
expand_dims_p.def_impl("cpu")(_as_reshape(lambda x, *, axis: np.expand_dims(x, axis)))


def expand_dims(x, axis):
    """x with new size-1 axes at the given positions of the result."""
    x = _operand(x)
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    nd = x.ndim + len(axis)
    return expand_dims_p.bind(x, axis=normalize_axes(axis, nd, "expand_dims"))


# ---------------------------------------------------------------------------
# concatenate


def _concatenate_meta(*xs, axis):
    if not xs:
        raise ValueError("concatenate: expected at least one array")
    d = _family.same_dtype("concatenate", *xs)
    first = xs[0].shape
    if not 0 <= axis < len(first):
        raise IndexError(f"concatenate: axis {axis} is out of range for arrays of {len(first)} dimensions")
    for x in xs[1:]:
        if len(x.shape) != len(first) or builtins.any(
                a != b for i, (a, b) in enumerate(zip(first, x.shape)) if i != axis):
            raise ValueError(f"concatenate: shapes {first} and {x.shape} differ outside axis {axis}")
    size = builtins.sum(x.shape[axis] for x in xs)
    return first[:axis] + (size,) + first[axis + 1:], d


def _concat_part(i):
    def vjp(g, out, *xs, axis):
        start = builtins.sum(x.shape[axis] for x in xs[:i])
        return slice_axis(g, axis, start, start + xs[i].shape[axis])
    return vjp


concatenate_p = Primitive("concatenate", _concatenate_meta, linear=True,
                          vjp=VariadicVJP(_concat_part))
concatenate_p.batch = lambda vals, bdims, *, axis: (
    concatenate_p.bind(*all_front(vals, bdims)[0], axis=axis + 1), 0)
concatenate_p.def_impl("cpu")(lambda *xs, axis: np.concatenate(xs, axis=axis))


def concatenate(arrays, axis=0):
    """Join arrays along an existing axis (dtypes promoted)."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concatenate: expected at least one array")
    arrays = _family.promote("concatenate", *arrays)
    if arrays[0].ndim == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, arrays[0].ndim, "concatenate")
    if len(arrays) == 1:
        return arrays[0]
    return concatenate_p.bind(*arrays, axis=axis)


def concat(arrays, /, *, axis=0):
    """The Array API's concat: join arrays along `axis`; with axis=None the flattened arrays."""
    if axis is None:
        return concatenate([ravel(_operand(a)) for a in arrays], 0)
    return concatenate(arrays, axis)


def stack(arrays, axis=0):
    """Join arrays along a new axis."""
    arrays = [_operand(a) for a in arrays]
    if not arrays:
        raise ValueError("stack: expected at least one array")
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            raise ValueError(f"stack: all arrays must have the same shape, got {shape} and {a.shape}")
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


_zeros_aval = _family.zeros_like


# ---------------------------------------------------------------------------
# pad (constant value)


def _pad_meta(x, *, pad_width, value):
    if len(pad_width) != x.ndim:
        raise ValueError(f"pad: pad_width has {len(pad_width)} entries for an array of {x.ndim} dimensions")
    shape = []
    for s, (lo, hi) in zip(x.shape, pad_width):
        if s + lo + hi < 0:
            raise ValueError(f"pad: padding {(lo, hi)} makes a negative size from {s}")
        shape.append(s + lo + hi)
    return tuple(shape), x.dtype


def _negated(pad_width):
    return tuple((-lo, -hi) for lo, hi in pad_width)


# pad is linear; its transpose is the opposite pad (crop what was added, zero-fill what was cropped)
pad_p = Primitive("pad", _pad_meta, linear=True,
                  vjp=(lambda g, out, x, *, pad_width, value: pad_p.bind(g, pad_width=_negated(pad_width), value=0),),
                  # affine in x, not linear (the pad value): the tangent pads with 0
                  jvp=lambda ts, out, x, *, pad_width, value: pad_p.bind(ts[0], pad_width=pad_width, value=0))


pad_p.batch = lambda vals, bdims, *, pad_width, value: (
    pad_p.bind(move_to_front(vals[0], bdims[0]), pad_width=((0, 0),) + pad_width, value=value), 0)


@pad_p.def_impl("cpu")
def _pad_cpu(x, *, pad_width, value):
    # add the positive padding first, then crop the negative: the result has size s + lo + hi
    grow = tuple((builtins.max(lo, 0), builtins.max(hi, 0)) for lo, hi in pad_width)
    if builtins.any(lo or hi for lo, hi in grow):
        x = np.pad(x, grow, mode="constant", constant_values=value)
    if builtins.any(lo < 0 or hi < 0 for lo, hi in pad_width):
        x = x[tuple(slice(builtins.max(-lo, 0), n - builtins.max(-hi, 0)) for n, (lo, hi) in zip(x.shape, pad_width))]
    return x


def pad(x, pad_width, value=0):
    """x padded with a constant: pad_width is ((lo, hi), ...) per axis, or one int / pair for all."""
    x = _operand(x)
    if isinstance(pad_width, (int, np.integer)):
        pad_width = ((pad_width, pad_width),) * x.ndim
    pad_width = tuple(pad_width)
    if len(pad_width) == 2 and builtins.all(isinstance(p, (int, np.integer)) for p in pad_width):
        pad_width = (tuple(pad_width),) * x.ndim
    pad_width = tuple((int(lo), int(hi)) for lo, hi in pad_width)
    return pad_p.bind(x, pad_width=pad_width, value=value)


# ---------------------------------------------------------------------------
# static slices with positive steps; negative steps are a flip of a positive slice


def _slice_shape(shape, starts, stops, steps, name):
    if not (len(starts) == len(stops) == len(steps) == len(shape)):
        raise ValueError(f"{name}: expected {len(shape)} starts/stops/steps for shape {shape}")
    out = []
    for s, a, b, c in zip(shape, starts, stops, steps):
        if c <= 0:
            raise ValueError(f"{name}: steps must be positive, got {c}")
        if not 0 <= a <= s or not a <= b <= s:
            raise IndexError(f"{name}: slice {a}:{b} is out of range for a dimension of size {s}")
        out.append(len(range(a, b, c)))
    return tuple(out)


def _slice_meta(x, *, starts, stops, steps):
    return _slice_shape(x.shape, starts, stops, steps, "slice"), x.dtype


def _slices(starts, stops, steps):
    return tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps))


def _slice_vjp(g, out, x, *, starts, stops, steps):
    return slice_scatter_p.bind(_zeros_aval(x), g, starts=starts, stops=stops, steps=steps)


slice_p = Primitive("slice", _slice_meta, linear=True, vjp=(_slice_vjp,))
def _slice_params(b, starts, stops, steps):
    return {"starts": (0,) + starts, "stops": (b,) + stops, "steps": (1,) + steps}


slice_p.batch = lambda vals, bdims, *, starts, stops, steps: (slice_p.bind(
    move_to_front(vals[0], bdims[0]), **_slice_params(vals[0].shape[bdims[0]], starts, stops, steps)), 0)
slice_p.def_impl("cpu")(lambda x, *, starts, stops, steps: x[_slices(starts, stops, steps)])


def _slice_scatter_meta(x, src, *, starts, stops, steps):
    shape = _slice_shape(x.shape, starts, stops, steps, "slice_scatter")
    if src.shape != shape:
        raise ValueError(f"slice_scatter: source shape {src.shape} does not match the slice shape {shape}")
    _family.same_dtype("slice_scatter", x, src)
    return x.shape, x.dtype


slice_scatter_p = Primitive(
    "slice_scatter", _slice_scatter_meta, linear=True,
    vjp=(lambda g, out, x, src, **p: slice_scatter_p.bind(g, _zeros_aval(src), **p),
         lambda g, out, x, src, **p: slice_p.bind(g, **p)))


def _slice_scatter_batch(vals, bdims, *, starts, stops, steps):
    (x, src), b = all_front(vals, bdims)
    return slice_scatter_p.bind(x, src, **_slice_params(b, starts, stops, steps)), 0


slice_scatter_p.batch = _slice_scatter_batch


@slice_scatter_p.def_impl("cpu")
def _slice_scatter_cpu(x, src, *, starts, stops, steps):
    out = np.array(x, copy=True)
    out[_slices(starts, stops, steps)] = src
    return out


def slice_axis(x, axis, start, stop, step=1):
    """x[..., start:stop:step, ...] along one axis (python slice semantics, any step)."""
    x = _operand(x)
    axis = normalize_axis(axis, x.ndim, "slice")
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop, step)
    return static_slice(x, tuple(idx))


def static_slice(x, slices):
    """x[slices] for a tuple of python slices, one per leading axis (any steps)."""
    starts, stops, steps, flips = [], [], [], []
    for axis, size in enumerate(x.shape):
        sl = slices[axis] if axis < len(slices) else slice(None)
        a, b, c = sl.indices(size)
        if c < 0:
            # positions a, a+c, ... > b: take them ascending, then flip
            n = len(range(a, b, c))
            last = a + (n - 1) * c if n else 0
            a, b, c = (last, a + 1, -c) if n else (0, 0, 1)
            flips.append(axis)
        elif b < a:
            b = a
        starts.append(a)
        stops.append(b)
        steps.append(c)
    if tuple(starts) != (0,) * x.ndim or tuple(stops) != x.shape or builtins.any(c != 1 for c in steps):
        x = slice_p.bind(x, starts=tuple(starts), stops=tuple(stops), steps=tuple(steps))
    if flips:
        x = flip(x, tuple(flips))
    return x


# ---------------------------------------------------------------------------
# flip


def _flip_meta(x, *, axis):
    _family.check_unique_axes("flip", axis)
    for a in axis:
        if not 0 <= a < x.ndim:
            raise IndexError(f"flip: axis {a} is out of range for an array of {x.ndim} dimensions")
    return x.shape, x.dtype


flip_p = Primitive("flip", _flip_meta, linear=True,
                   vjp=(lambda g, out, x, *, axis: flip_p.bind(g, axis=axis),))
flip_p.batch = lambda vals, bdims, *, axis: (flip_p.bind(move_to_front(vals[0], bdims[0]),
                                                                axis=shift_axes(axis)), 0)
flip_p.def_impl("cpu")(lambda x, *, axis: np.flip(x, axis))


def flip(x, axis=None):
    """x reversed along `axis` (all axes when None)."""
    x = _operand(x)
    axes = normalize_axes(axis, x.ndim, "flip")
    if not axes:
        return x
    return flip_p.bind(x, axis=axes)


def broadcast_shapes(*shapes):
    """The shape that arrays of these shapes broadcast to (NumPy's rules), or ValueError."""
    return _family.broadcast_shapes("broadcast_shapes", *[tuple(s) for s in shapes])


def ravel(x):
    return reshape(x, (-1,))


_family.provide(reshape=reshape, broadcast_to=broadcast_to, expand_dims=expand_dims, transpose_p=transpose_p)


# ---------------------------------------------------------------------------
# bitcast: the same bytes read as another dtype (torch's Tensor.view(dtype), lax.bitcast_convert_type).
# A wider dtype consumes the last axis (its size must divide), a narrower one multiplies it. Bits are not
# numbers: no derivative.


def _bitcast_meta(x, *, dtype):
    old, new = x.dtype.itemsize, dtype.itemsize
    if old == new:
        return x.shape, dtype
    if not x.shape:
        raise ValueError(f"bitcast: a 0-d array of {x.dtype.name} cannot be viewed as {dtype.name} "
                         "(different element sizes)")
    last = x.shape[-1]
    if new > old and last * old % new:
        raise ValueError(f"bitcast: the last axis ({last}) must be divisible by {new // old} to view "
                         f"{x.dtype.name} as {dtype.name}")
    return x.shape[:-1] + (last * old // new,), dtype


def _bitcast_batch(vals, bdims, *, dtype):
    return bitcast_p.bind(move_to_front(vals[0], bdims[0]), dtype=dtype), 0


bitcast_p = Primitive("bitcast", _bitcast_meta)
bitcast_p.batch = _bitcast_batch
bitcast_p.narrow_native = True  # bytes, not values: bfloat16 stays bfloat16
bitcast_p.def_impl("cpu")(lambda x, *, dtype: (x if x.flags.c_contiguous else x.copy()).view(dtype.np))


def bitcast(x, dtype):
    """x's bytes as `dtype` (the last axis rescaled by the ratio of the element sizes)."""
    return bitcast_p.bind(x, dtype=dt.canonicalize(dtype))
