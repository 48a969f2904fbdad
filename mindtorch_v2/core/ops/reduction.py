"""Reductions: sum, prod, max, min, argmax, argmin, any, all, cumsum.

Primitives take `axis` as a sorted tuple of non-negative ints and `keepdims`;
the public functions normalise what users pass (None, negative, int or tuple).
"""
import builtins
from math import prod as _prod

import numpy as np

from .. import _numba, dtypes as dt
from ._family import move_to_front
from ..primitive import Primitive
from . import _family, _rows
from ._family import sum_to_shape  # public: sums a broadcast cotangent back to a shape
from .creation import asarray
from ._family import normalize_axes, normalize_axis
from .elementwise import cast, div, eq, mul
from .shape import _inverse_perm, broadcast_to, flip, pad_p, reshape, transpose

__all__ = [
    "sum_to_shape",     "sum_p", "prod_p", "max_p", "min_p", "any_p", "all_p", "argmax_p", "argmin_p", "cumsum_p", "sum", "prod", "count_nonzero",
    "max", "min", "any", "all", "argmax", "argmin", "cumsum", "amax", "amin",
]


def _reduced_shape(shape, axis, keepdims):
    if keepdims:
        return tuple(1 if i in axis else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axis)


def _check_axes(name, x, axis):
    _family.check_unique_axes(name, axis)
    for a in axis:
        if not 0 <= a < builtins.max(x.ndim, 1) or (x.ndim == 0 and a != 0):
            raise IndexError(f"{name}: axis {a} is out of range for an array of {x.ndim} dimensions")


def _reduce_meta(name, dtype_rule, nonempty=False):
    def meta(x, *, axis, keepdims):
        _check_axes(name, x, axis)
        if nonempty and x.dtype.category == dt.COMPLEX:  # max/min: complex numbers have no order
            raise TypeError(f"{name}: not supported for complex arrays (they have no order)")
        if nonempty and builtins.any(x.shape[a] == 0 for a in axis if a < x.ndim):
            raise ValueError(f"{name}: cannot reduce an empty array (shape {x.shape}) along axis {axis}")
        return _reduced_shape(x.shape, axis, keepdims), dtype_rule(x.dtype)
    return meta


def _np_axis(x, axis):
    """The numpy axis for a lowering: a 0-d array accepts axis 0 (as in torch), numpy does not."""
    return axis if x.ndim else None


def _sum_dtype(d):
    return dt.int64 if d.category < dt.FLOAT else d


def _expand_back(g, x, axis, keepdims):
    """g reshaped so it broadcasts against x (the reduced axes restored as size 1; a 0-d g, all axes reduced,
    broadcasts as it is)."""
    if not keepdims and g.shape:
        g = reshape(g, _reduced_shape(x.shape, axis, True))
    return g


def _sum_vjp(g, out, x, *, axis, keepdims):
    return broadcast_to(_expand_back(g, x, axis, keepdims), x.shape)


sum_p = Primitive("sum", _reduce_meta("sum", _sum_dtype), linear=True,
                  vjp=(_sum_vjp,))


def _reduce_batch(prim):
    """Batch axis first; the reduced axes shift by one (a 0-d value reduces over nothing); any other params
    (keepdims) pass as they are. Also softmax's and log_softmax's rule."""
    def rule(vals, bdims, *, axis, **params):
        x = move_to_front(vals[0], bdims[0])
        nd = len(x.shape) - 1
        return prim.bind(x, axis=tuple(a + 1 for a in axis if a < nd), **params), 0
    return rule


sum_p.batch = _reduce_batch(sum_p)


def _acc_dtype(x):
    """The numpy dtype a sum / prod / cumsum of x accumulates in: half-precision floats (float16, bfloat16,
    the float8s) in float32, as torch's cpu kernels do (a float16 running sum stalls at 2048, and NumPy has
    no bfloat16 kernels); ints and bool in int64."""
    d = dt.from_numpy(x.dtype)
    if d.category < dt.FLOAT:
        return np.int64
    return np.float32 if d.itemsize < 4 and dt.is_float(d) else x.dtype


def _narrow(out, x):
    """A result accumulated wide, back in x's dtype (float: the narrow float, inf past its range, as torch;
    int: int64 already)."""
    if out.dtype == x.dtype or x.dtype.kind in "biu":
        return out
    with np.errstate(over="ignore"):
        return np.asarray(out).astype(x.dtype)


def _reduce_args(e):
    """jit: (axis, keepdims) of a reduction equation as its lowering passes them to a ufunc's reduce (_np_axis
    worked out once from the aval)."""
    return (e.params["axis"] if e.invars[0].shape else None), e.params["keepdims"]


def _sum_as_reduce(e):
    """jit: np.add.reduce for these avals, where no narrowing follows (np.sum's own call, minus its dispatch);
    over short rows, _rows' loop where the array comes C-ordered."""
    x = e.invars[0]
    acc = _acc_dtype(np.empty(0, x.dtype.np))
    if acc != x.dtype.np and dt.is_float(x.dtype):
        return None
    axis, keepdims = _reduce_args(e)
    rows = _short_rows(x.shape, e.params["axis"]) if acc in _ROW_SUM_DTYPES else None
    if rows is not None and _numba.available():
        shape = _reduced_shape(x.shape, e.params["axis"], keepdims)
        return lambda x: (_summed_rows(x, *rows, shape) if x.flags.c_contiguous and _rows.ready(rows[0])
                          else np.add.reduce(x, axis=axis, dtype=acc, keepdims=keepdims))
    return lambda x: np.add.reduce(x, axis=axis, dtype=acc, keepdims=keepdims)


# NumPy sums a C-ordered array's trailing axes one row at a time, a call per row: over rows of up to 128 (its
# pairwise block) that costs more than the additions, (1024, 32) float32 45 us against 15 us for _rows' compiled
# loop, which adds in NumPy's order (the same bits). Longer rows NumPy sums faster; fewer than 4 are one call.
_ROW_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_SHORT_ROW = 128
_MIN_ROWS = 4


def _short_rows(shape, axis):
    """(rows, n) when a sum over `axis` (sorted) of this shape is one over its trailing axes, in at least
    _MIN_ROWS rows of 1 to _SHORT_ROW elements; else None."""
    k, nd = len(axis), len(shape)
    if not k or k > nd or axis[0] != nd - k or axis[-1] != nd - 1:
        return None
    n = _prod(shape[nd - k:])
    rows = _prod(shape[:nd - k])
    return (rows, n) if 1 <= n <= _SHORT_ROW and rows >= _MIN_ROWS else None


def _summed_rows(x, rows, n, shape):
    out = np.empty(rows, x.dtype)
    _rows.row_sums()(x.reshape(-1), n, out)
    return out.reshape(shape)


@sum_p.def_impl("cpu")
@_family.specialized(_sum_as_reduce)
def _sum_cpu(x, *, axis, keepdims):
    if x.dtype in _ROW_SUM_DTYPES and x.flags.c_contiguous:
        rows = _short_rows(x.shape, axis)
        if rows is not None and _rows.ready(rows[0]):
            return _summed_rows(x, *rows, _reduced_shape(x.shape, axis, keepdims))
    # (np.add.reduce is np.sum's own call, without its Python dispatch: ~2 us a call)
    return _narrow(np.add.reduce(x, axis=_np_axis(x, axis), dtype=_acc_dtype(x), keepdims=keepdims), x)


def _shift(x, k, reverse):
    """x moved k places along its last axis (towards the end; the start when reverse), 1 in the gap."""
    pw = ((0, 0),) * (x.ndim - 1) + (((-k, k) if reverse else (k, -k)),)
    return pad_p.bind(x, pad_width=pw, value=1)


def _exclusive_cumprod(x, reverse):
    """Product of the elements before each position on the last axis (after it, when reverse).
    A Hillis-Steele scan of log2(n) shifted multiplies: no division, so exact with zeros, and
    made of mul and pad only, so differentiable to any order (as JAX's tree-shaped reduce_prod)."""
    p = _shift(x, 1, reverse)
    k = 1
    while k < x.shape[-1]:
        p = mul(p, _shift(p, k, reverse))
        k *= 2
    return p


def _prod_vjp(g, out, x, *, axis, keepdims):
    # d prod / d x_i = the product of the others = (product before i) * (product after i)
    g = _expand_back(g, x, axis, keepdims)
    axis = tuple(a for a in axis if a < x.ndim)  # a 0-d x may come with axis (0,)
    rest = tuple(i for i in range(x.ndim) if i not in axis)
    perm = rest + axis
    n = 1
    for a in axis:
        n *= x.shape[a]
    xt = reshape(transpose(x, perm), tuple(x.shape[i] for i in rest) + (n,))
    others = mul(_exclusive_cumprod(xt, False), _exclusive_cumprod(xt, True))
    others = transpose(reshape(others, tuple(x.shape[i] for i in perm)), _inverse_perm(perm))
    return mul(broadcast_to(g, x.shape), others)


prod_p = Primitive("prod", _reduce_meta("prod", _sum_dtype), vjp=(_prod_vjp,), vjp_reads=(0,))


prod_p.batch = _reduce_batch(prod_p)


@prod_p.def_impl("cpu")
def _prod_cpu(x, *, axis, keepdims):
    return _narrow(np.prod(x, axis=_np_axis(x, axis), keepdims=keepdims, dtype=_acc_dtype(x)), x)


def _extremum_weights(out, x, axis, keepdims):
    """Where x attains the extremum, 1 / (number of ties); 0 elsewhere (PyTorch's amax rule)."""
    hit = cast(eq(x, _expand_back(out, x, axis, keepdims)), x.dtype)
    return div(hit, sum_p.bind(hit, axis=axis, keepdims=True))


def _extremum(name, ufunc):
    def vjp(g, out, x, *, axis, keepdims):
        return mul(_expand_back(g, x, axis, keepdims), _extremum_weights(out, x, axis, keepdims))

    def jvp(ts, out, x, *, axis, keepdims):
        w = _extremum_weights(out, x, axis, keepdims)
        return sum_p.bind(mul(ts[0], w), axis=axis, keepdims=keepdims)

    prim = Primitive(name, _reduce_meta(name, lambda d: d, nonempty=True),
                     vjp=(vjp,), vjp_reads=(0, "out"), jvp=jvp)
    prim.batch = _reduce_batch(prim)
    def as_reduce(e):  # jit: the ufunc's reduce for these avals, minus np.max's Python dispatch
        axis, keepdims = _reduce_args(e)
        return lambda x: ufunc.reduce(x, axis=axis, keepdims=keepdims)

    prim.def_impl("cpu")(_family.specialized(as_reduce)(
        lambda x, *, axis, keepdims: ufunc.reduce(x, axis=_np_axis(x, axis), keepdims=keepdims)))
    return prim


max_p = _extremum("max", np.maximum)
min_p = _extremum("min", np.minimum)

any_p = Primitive("any", _reduce_meta("any", lambda d: dt.bool_))
any_p.batch = _reduce_batch(any_p)
any_p.def_impl("cpu")(lambda x, *, axis, keepdims: np.any(x, axis=_np_axis(x, axis), keepdims=keepdims))
all_p = Primitive("all", _reduce_meta("all", lambda d: dt.bool_))
all_p.batch = _reduce_batch(all_p)
all_p.def_impl("cpu")(lambda x, *, axis, keepdims: np.all(x, axis=_np_axis(x, axis), keepdims=keepdims))


def _arg_meta(name):
    def meta(x, *, axis, keepdims):
        if x.dtype.category == dt.COMPLEX:
            raise TypeError(f"{name}: not supported for complex arrays (they have no order)")
        if axis is None:
            if x.size == 0:
                raise ValueError(f"{name}: cannot take {name} of an empty array (shape {x.shape})")
            return ((1,) * x.ndim if keepdims else ()), dt.int64
        _check_axes(name, x, (axis,))
        if x.ndim and x.shape[axis] == 0:
            raise ValueError(f"{name}: cannot take {name} over the empty axis {axis} (shape {x.shape})")
        return _reduced_shape(x.shape, (axis,), keepdims), dt.int64
    return meta


def _arg_batch(prim):
    """axis=None means the flattened array: flatten per batch element, reduce axis 1."""
    def rule(vals, bdims, *, axis, keepdims):
        x = move_to_front(vals[0], bdims[0])
        b, logical = x.shape[0], tuple(x.shape[1:])
        if axis is None:
            out = prim.bind(reshape(x, (b, -1)), axis=1, keepdims=False)
            return (reshape(out, (b,) + (1,) * len(logical)) if keepdims else out), 0
        if not logical:
            return prim.bind(reshape(x, (b, 1)), axis=1, keepdims=False), 0
        return prim.bind(x, axis=axis + 1, keepdims=keepdims), 0
    return rule


argmax_p = Primitive("argmax", _arg_meta("argmax"))
argmax_p.batch = _arg_batch(argmax_p)
argmax_p.def_impl("cpu")(lambda x, *, axis, keepdims: np.argmax(x, axis=axis, keepdims=keepdims))
argmin_p = Primitive("argmin", _arg_meta("argmin"))
argmin_p.batch = _arg_batch(argmin_p)
argmin_p.def_impl("cpu")(lambda x, *, axis, keepdims: np.argmin(x, axis=axis, keepdims=keepdims))


def _cumsum_meta(x, *, axis):
    _check_axes("cumsum", x, (axis,))
    return x.shape, _sum_dtype(x.dtype)


def _reverse_cumsum(g, axis):
    return flip(cumsum_p.bind(flip(g, axis), axis=axis), axis)


cumsum_p = Primitive("cumsum", _cumsum_meta, linear=True,
                     vjp=(lambda g, out, x, *, axis: _reverse_cumsum(g, axis),))


def _cumsum_batch(vals, bdims, *, axis):
    x = move_to_front(vals[0], bdims[0])
    if len(x.shape) == 1:  # a 0-d value: cumsum is a cast
        return cumsum_p.bind(reshape(x, (x.shape[0], 1)), axis=1)[:, 0], 0
    return cumsum_p.bind(x, axis=axis + 1), 0


cumsum_p.batch = _cumsum_batch


@cumsum_p.def_impl("cpu")
def _cumsum_cpu(x, *, axis):
    if x.ndim == 0:
        return x.astype(_sum_dtype(dt.from_numpy(x.dtype)).np)
    return _narrow(np.cumsum(x, axis=axis, dtype=_acc_dtype(x)), x)


# ---------------------------------------------------------------------------
# public functions


def _reduce(prim, x, axis, keepdims):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    return prim.bind(x, axis=normalize_axes(axis, x.ndim, prim.name), keepdims=bool(keepdims))


def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001
    """Sum over `axis` (all by default); bool/int inputs sum to int64, or in `dtype` if given."""
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    if dtype is None:
        if x.dtype.category != dt.INT or x.dtype.is_signed:  # (the common case: one bind, x checked once)
            return sum_p.bind(x, axis=normalize_axes(axis, x.ndim, "sum"), keepdims=bool(keepdims))
        dtype = dt.sum_dtype(x)
    if dtype is not None:
        dtype = dt.canonicalize(dtype)
        if x.dtype.category <= dtype.category:  # accumulate in dtype (ints in int64, which wraps alike)
            x = cast(x, dtype)
        return cast(_reduce(sum_p, x, axis, keepdims), dtype)
    return _reduce(sum_p, x, axis, keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    """Product over `axis` (all by default); bool/int inputs multiply in int64, or in `dtype` if given."""
    x = _family.as_operand(x)
    if dtype is None and _family.is_arraylike(x) and x.dtype.category == dt.INT and not x.dtype.is_signed:
        dtype = dt.sum_dtype(x)
    if dtype is not None:
        dtype = dt.canonicalize(dtype)
        return cast(_reduce(prod_p, cast(x, dtype), axis, keepdims), dtype)
    return _reduce(prod_p, x, axis, keepdims)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of nonzero entries over `axis` (int64)."""
    x = _family.as_operand(x)
    return sum(cast(x, dt.bool_), axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    """Maximum over `axis`; ties share the gradient equally."""
    return _reduce(max_p, x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(min_p, x, axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(any_p, x, axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(all_p, x, axis, keepdims)


def _arg(prim, x, axis, keepdims):
    x = _family.as_operand(x)
    if axis is not None:
        axis = normalize_axis(axis, x.ndim, prim.name)
    return prim.bind(x, axis=axis, keepdims=bool(keepdims))


def argmax(x, axis=None, keepdims=False):
    """Index of the first maximum along `axis` (of the flattened array when None)."""
    return _arg(argmax_p, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg(argmin_p, x, axis, keepdims)


def cumsum(x, axis=None):
    """Cumulative sum along `axis` (of the flattened array when None)."""
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    return cumsum_p.bind(x, axis=normalize_axis(axis, x.ndim, "cumsum"))


amax, amin = max, min
_family.provide(sum_p=sum_p)
