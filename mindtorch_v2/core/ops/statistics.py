"""Statistics over an axis: nansum, nanmean, median and quantile (jax.numpy's), the lower median, the
k-th smallest value and the mode with their indices (torch's), histc and bincount.

Order statistics are composites of sort (whose VJP scatters the cotangent back to where each sorted
element came from) and gather: the gradient of a quantile flows through its interpolation weights to
the two elements it reads, and that of kthvalue / median_low / mode to the selected index, as in PyTorch.
The mode's index is the one new primitive (argmode_p): a data-dependent answer with no derivative.
"""
import builtins

import numpy as np

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import move_to_front, normalize_axis
from .creation import zeros
from .elementwise import (add, cast, ceil, div, eq, floor, floor_divide, ge, le, logical_and, logical_not, lt,
                          maximum, mul, ne, round, sub, where)
from .indexing import argsort, index_add, sort, take_along_axis
from .reduction import max, min, sum
from .shape import broadcast_to, expand_dims, reshape, squeeze

__all__ = [
    "argmode_p", "nansum", "nanmean", "median", "nanmedian", "quantile", "nanquantile", "median_low",
    "nanmedian_low", "kthvalue", "mode", "histc", "bincount",
]

QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _operand(x):
    x = _family.as_operand(x)
    return x if _family.is_arraylike(x) else _family.asarray(x)


def _isnan(x):
    return ne(x, x)


def nansum(x, axis=None, keepdims=False, dtype=None):
    """Sum over `axis` treating nan as 0."""
    x = _operand(x)
    if x.dtype.category not in (dt.BOOL, dt.INT):
        x = where(_isnan(x), 0, x)
    out = sum(x, axis, keepdims)
    return out if dtype is None else cast(out, dtype)


def nanmean(x, axis=None, keepdims=False):
    """Mean over `axis` of the non-nan elements (nan where there are none)."""
    x = _operand(x)
    if x.dtype.category in (dt.BOOL, dt.INT):
        x = cast(x, dt.default_float)
    count = sum(logical_not(_isnan(x)), axis, keepdims)
    return div(nansum(x, axis, keepdims), cast(count, x.dtype))


# ---------------------------------------------------------------------------
# selection by sorted position


def _axis_args(name, x, axis):
    """(x, axis): axis=None means the flattened array."""
    x = _operand(x)
    if axis is None:
        return reshape(x, (-1,)), 0
    if x.ndim == 0:
        normalize_axis(axis, 0, name)
        return reshape(x, (1,)), 0
    return x, normalize_axis(axis, x.ndim, name)


def _select(x, axis, pos, keepdims, ndim):
    """(values, indices) of the elements at sorted position `pos` (an int64 array with x's shape but 1
    along axis) of x along `axis`; indices into x. A 0-d input (`ndim` 0) gives 0-d results."""
    if builtins.any(s == 0 for s in x.shape):  # nothing to select from (the empty axis is checked by callers)
        shape = () if ndim == 0 else tuple(1 if a == axis else s for a, s in enumerate(x.shape) if keepdims or a != axis)
        return zeros(shape, dtype=x.dtype, device=x.device), zeros(shape, dtype=dt.int64, device=x.device)
    order = argsort(x, axis)
    idx = take_along_axis(order, pos, axis)
    values = take_along_axis(x, idx, axis)
    if ndim == 0:
        return reshape(values, ()), reshape(idx, ())
    if not keepdims:
        values, idx = squeeze(values, axis), squeeze(idx, axis)
    return values, idx


def _positions(x, axis, value):
    """An int64 array of `value` (a python int or an array) with x's shape but 1 along axis."""
    shape = tuple(1 if a == axis else s for a, s in enumerate(x.shape))
    pos = zeros(shape, dtype=dt.int64, device=x.device)
    return add(pos, value)


def _check_nonempty(name, x, axis):
    if x.shape[axis] == 0:
        raise IndexError(f"{name}: cannot select from the empty axis {axis} (shape {x.shape})")


def kthvalue(x, k, axis=-1, keepdims=False):
    """(values, indices): the k-th smallest element (k from 1) along `axis`; nan counts as the largest."""
    ndim = _operand(x).ndim
    x, axis = _axis_args("kthvalue", x, axis)
    if not 1 <= k <= x.shape[axis]:
        raise ValueError(f"kthvalue: k={k} is out of range for an axis of size {x.shape[axis]}")
    return _select(x, axis, _positions(x, axis, k - 1), keepdims, ndim)


def _nan_count(x, axis):
    if x.dtype.category in (dt.BOOL, dt.INT):
        return None
    return sum(_isnan(x), axis, keepdims=True)


def _select_at(x, axis, pos, keepdims, flat, ndim):
    """(values, indices) at sorted position `pos` along `axis`; `flat`: x was raveled from `ndim` dims."""
    out = _select(x, axis, _positions(x, axis, pos), keepdims and not flat, ndim if not flat else 1)
    if flat and keepdims:
        return tuple(reshape(o, (1,) * ndim) for o in out)
    if flat:
        return tuple(reshape(o, ()) for o in out)
    return out


def median_low(x, axis=None, keepdims=False):
    """(values, indices): the lower median along `axis` (of the flattened array when None) and its
    index, as torch.median; a slice holding nan gives nan and the index of its first nan."""
    ndim = _operand(x).ndim
    flat = axis is None
    x, axis = _axis_args("median_low", x, axis)
    _check_nonempty("median_low", x, axis)
    n = x.shape[axis]
    nans = _nan_count(x, axis)
    pos = (n - 1) // 2 if nans is None else where(eq(nans, 0), (n - 1) // 2, sub(n, nans))
    return _select_at(x, axis, pos, keepdims, flat, ndim)


def nanmedian_low(x, axis=None, keepdims=False):
    """(values, indices): the lower median of the non-nan elements along `axis`, as torch.nanmedian
    (nan and index 0 for an all-nan slice)."""
    ndim = _operand(x).ndim
    flat = axis is None
    x, axis = _axis_args("nanmedian_low", x, axis)
    _check_nonempty("nanmedian_low", x, axis)
    nans = _nan_count(x, axis)
    n = x.shape[axis]
    pos = (n - 1) // 2 if nans is None else maximum(floor_divide(sub(sub(n, nans), 1), 2), 0)
    return _select_at(x, axis, pos, keepdims, flat, ndim)


# ---------------------------------------------------------------------------
# quantiles


def _quantile(name, x, q, axis, keepdims, method, ignore_nan):
    if method not in QUANTILE_METHODS:
        raise ValueError(f"{name}: method must be one of {', '.join(QUANTILE_METHODS)}, got {method!r}")
    x = _operand(x)
    _family.require_float(name, x)
    ndim = x.ndim
    flat = axis is None
    if flat:
        x, axis = reshape(x, (-1,)), 0
    elif x.ndim == 0:
        normalize_axis(axis, 0, name)
        x, axis = reshape(x, (1,)), 0
    else:
        axis = normalize_axis(axis, x.ndim, name)
    n = x.shape[axis]
    if n == 0:
        raise ValueError(f"{name}: cannot take a quantile of an empty axis (shape {x.shape})")
    q = q if _family.is_arraylike(q) else _family.asarray(np.asarray(q, dtype=x.dtype.np), device=x.device)
    if q.ndim > 1:
        raise ValueError(f"{name}: q must be a scalar or a 1-D array, got shape {q.shape}")
    q = cast(q, x.dtype) if q.dtype is not x.dtype else q
    scalar_q = q.ndim == 0
    nq = 1 if scalar_q else q.shape[0]
    values = sort(x, axis)  # nan sorts last
    nans = sum(_isnan(values), axis, keepdims=True)
    qb = reshape(q, (nq,) + (1,) * x.ndim)
    if ignore_nan:  # rank over the non-nan elements; an all-nan slice reads position 0 (a nan)
        ranks = maximum(mul(qb, expand_dims(cast(sub(sub(n, nans), 1), x.dtype), 0)), 0.0)
    else:  # a slice holding nan reads its last element, a nan
        ranks = where(expand_dims(eq(nans, 0), 0), mul(qb, float(n - 1)), float(n - 1))
    if method == "lower":
        below = above = floor(ranks)
    elif method == "higher":
        below = above = ceil(ranks)
    elif method == "nearest":
        below = above = round(ranks)
    else:
        below, above = floor(ranks), ceil(ranks)
    full = (nq,) + tuple(values.shape)
    vb = broadcast_to(expand_dims(values, 0), full)
    lo = take_along_axis(vb, cast(below, dt.int64), axis + 1)
    if method in ("lower", "higher", "nearest"):
        out = lo
    else:
        hi = take_along_axis(vb, cast(above, dt.int64), axis + 1)
        w = sub(ranks, below) if method == "linear" else where(eq(below, above), 0.0, 0.5)
        # torch's lerp: from the nearer end, so that w = 1 gives hi exactly
        d = sub(hi, lo)
        out = where(lt(w, 0.5), add(lo, mul(w, d)), sub(hi, mul(d, sub(1.0, w))))
    # out: (nq, ..., 1 at axis, ...)
    if flat:
        out = reshape(out, (nq,) + ((1,) * ndim if keepdims else ()))
    elif ndim == 0:
        out = reshape(out, (nq,))
    elif not keepdims:
        out = squeeze(out, axis + 1)
    return reshape(out, tuple(out.shape[1:])) if scalar_q else out


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The q-th quantiles of x along `axis` (of the flattened array when None), jax.numpy.quantile:
    q a number or a 1-D array (its axis comes first in the result); a slice holding nan gives nan."""
    return _quantile("quantile", x, q, axis, keepdims, method, ignore_nan=False)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """quantile of the non-nan elements (nan for an all-nan slice)."""
    return _quantile("nanquantile", x, q, axis, keepdims, method, ignore_nan=True)


def median(x, axis=None, keepdims=False):
    """jax.numpy.median: the mean of the two middle elements for an even count (torch.median is
    median_low)."""
    return quantile(x, 0.5, axis, keepdims=keepdims)


def nanmedian(x, axis=None, keepdims=False):
    return nanquantile(x, 0.5, axis, keepdims=keepdims)


# ---------------------------------------------------------------------------
# mode


def _argmode_meta(x, *, axis):
    if not 0 <= axis < builtins.max(x.ndim, 1):
        raise IndexError(f"argmode: axis {axis} is out of range for an array of {x.ndim} dimensions")
    if x.ndim and x.shape[axis] == 0:
        raise ValueError(f"argmode: cannot take the mode over the empty axis {axis} (shape {x.shape})")
    return tuple(s for a, s in enumerate(x.shape) if a != axis), dt.int64


argmode_p = Primitive("argmode", _argmode_meta)


@argmode_p.def_impl("cpu")
def _argmode_cpu(x, *, axis):
    """The index of the last occurrence of the most frequent value (the smallest of equally frequent
    ones) along `axis`, as torch.mode."""
    if x.ndim == 0:
        return np.zeros((), np.int64)
    a = np.moveaxis(x, axis, -1)
    lead, n = a.shape[:-1], a.shape[-1]
    a = a.reshape(-1, n)
    s = np.sort(a, axis=1)
    pos = np.arange(n)
    starts = np.ones(s.shape, bool)
    starts[:, 1:] = (s[:, 1:] != s[:, :-1]) & ~((s[:, 1:] != s[:, 1:]) & (s[:, :-1] != s[:, :-1]))
    ends = np.ones(s.shape, bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, pos, n), 1), axis=1), 1)
    best = np.argmax(last - first, axis=1)  # the first longest run: the smallest value
    v = s[np.arange(len(s)), best][:, None]
    hit = (a == v) | ((a != a) & (v != v))
    out = np.max(np.where(hit, pos, -1), axis=1)
    return out.reshape(lead).astype(np.int64)


def _argmode_batch(vals, bdims, *, axis):
    x = move_to_front(vals[0], bdims[0])
    if len(x.shape) == 1:
        return argmode_p.bind(reshape(x, (x.shape[0], 1)), axis=1), 0
    return argmode_p.bind(x, axis=axis + 1), 0


argmode_p.batch = _argmode_batch


def mode(x, axis=-1, keepdims=False):
    """(values, indices): the most frequent value along `axis` (the smallest of equally frequent ones)
    and the index of its last occurrence, as torch.mode; the gradient goes to that index."""
    x = _operand(x)
    axis = normalize_axis(axis, x.ndim, "mode")
    idx = argmode_p.bind(x, axis=axis)
    if x.ndim == 0:
        return x, idx
    idx_k = expand_dims(idx, axis)
    values = take_along_axis(x, idx_k, axis)
    if keepdims:
        return values, idx_k
    return squeeze(values, axis), idx


# ---------------------------------------------------------------------------
# histograms


def histc(x, bins=100, min=0, max=0):  # noqa: A002 - torch's argument names
    """Counts of x in `bins` equal bins over [min, max] (the data's range when min == max; widened by 1
    each side if that is empty); elements outside are ignored, x == max falls in the last bin."""
    x = _operand(x)
    _family.require_float("histc", x)
    if bins <= 0:
        raise ValueError(f"histc: bins must be > 0, got {bins}")
    if min > max:
        raise ValueError("histc: max must be larger than min")
    x = reshape(x, (-1,))
    if min == max and x.shape[0]:
        lo, hi = _min_max(x)
    else:
        lo, hi = float(min), float(max)
        lo = _family.asarray(np.asarray(lo, x.dtype.np), device=x.device)
        hi = _family.asarray(np.asarray(hi, x.dtype.np), device=x.device)
    same = eq(lo, hi)
    lo, hi = where(same, sub(lo, 1), lo), where(same, add(hi, 1), hi)
    # torch's histc bin: linear interpolation in x's dtype (no search against the edges)
    inside = logical_and(ge(x, lo), le(x, hi))
    pos = cast(floor(div(mul(sub(x, lo), float(bins)), sub(hi, lo))), dt.int64)
    pos = where(inside, where(ge(pos, bins), bins - 1, pos), 0)  # the last bin holds its right edge
    return index_add(zeros((bins,), dtype=x.dtype, device=x.device), pos, cast(inside, x.dtype))


def _min_max(x):
    return min(x), max(x)


def bincount(x, weights=None, minlength=0, length=None):
    """Counts (or summed weights) of each non-negative integer in the 1-D x: out[i] = sum of weights
    where x == i; the length is max(x) + 1 (at least minlength) unless `length` is given (a value
    that needs x's data, so traced code must give it); values outside [0, length) are dropped."""
    x = _operand(x)
    if x.dtype.category not in (dt.BOOL, dt.INT) or x.ndim != 1:
        raise TypeError(f"bincount: expected a 1-D integer array, got {x.dtype.name} of shape {x.shape}")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be >= 0, got {minlength}")
    if length is None:
        length = builtins.max(int(max(x)) + 1 if x.shape[0] else 0, minlength)
    x = cast(x, dt.int64)
    if weights is None:
        w = add(zeros(x.shape, dtype=dt.int64, device=x.device), 1)
    else:
        w = _operand(weights)
        if w.shape != x.shape:
            raise ValueError(f"bincount: weights must have the shape of x {x.shape}, got {w.shape}")
    inside = logical_and(ge(x, 0), _lt(x, length))
    w = where(inside, w, 0)
    idx = where(inside, x, 0)
    return index_add(zeros((length,), dtype=w.dtype, device=x.device), idx, w)


def _lt(x, n):
    return logical_not(ge(x, n))

