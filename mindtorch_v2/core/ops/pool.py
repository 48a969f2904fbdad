"""Pooling over the trailing len(window) axes of an array (any leading axes; torch's (N, C, *spatial)).

max_pool and avg_pool are primitives on the window pair of conv.py; their rules are core ops:

    max_pool:  dx = crop(windows_transpose(one_hot(first maximum per window) * g))
    avg_pool:  dx = crop(windows_transpose(broadcast(g / count)))

The pooling geometry (output sizes under ceil_mode, the padding actually applied, the -inf / lowest
padding value of max_pool) and the tie-break (the first maximum of each window in row-major order,
where torch routes the gradient and points its indices) are defined here once: max_pool's VJP and JVP
and max_pool_indices (torch's return_indices) share `_first_max`; adaptive_pool_bins is the bin rule
of torch's adaptive pools.
"""
import itertools
import math

import numpy as np

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import move_to_front
from .conv import (_check_geometry, _crop_spatial, _ntuple, _pad_spatial, _padded, _pairs,
                   _windows_cpu, windows_p, windows_transpose_p)
from .creation import arange, asarray
from .elementwise import eq, mul, where
from .reduction import argmax, sum as _sum
from .shape import broadcast_to, expand_dims, reshape

__all__ = ["max_pool_p", "avg_pool_p", "max_pool", "avg_pool", "max_pool_indices", "adaptive_pool_bins"]

_prod = _family.prod


def _pool_geometry(name, spatial, window, stride, padding, dilation, ceil_mode):
    """(output sizes, extra high padding per dim) with torch's ceil_mode rule: the last
    window must start inside the input or its low padding; the extra padding completes it."""
    out, extra = [], []
    for s, k, st, (lo, hi), d in zip(spatial, window, stride, padding, dilation):
        if lo > k // 2 or hi > k // 2:
            # torch's rule; it also keeps ceil_mode's count >= the floor count, so the padded
            # input below holds exactly `out` windows
            raise ValueError(f"{name}: padding {tuple(padding)} must be at most half the window {tuple(window)}")
        extent = d * (k - 1) + 1
        total = s + lo + hi
        if extent > total:
            raise ValueError(f"{name}: window {tuple(window)} (dilation {tuple(dilation)}) is larger than the "
                             f"padded input {_padded(spatial, padding)} (spatial shape {tuple(spatial)}, "
                             f"padding {tuple(padding)})")
        if ceil_mode:
            o = -(-(total - extent) // st) + 1
            if (o - 1) * st >= s + lo:
                o -= 1
        else:
            o = (total - extent) // st + 1
        out.append(o)
        extra.append(max(0, (o - 1) * st + extent - total))
    return tuple(out), tuple(extra)


def _pool_meta_common(name, x, window, stride, padding, dilation, ceil_mode):
    k = len(window)
    _check_geometry(name, k, window=window, stride=stride, padding=padding, dilation=dilation)
    if x.ndim < k:
        raise ValueError(f"{name}: input of shape {x.shape} has fewer than {k} spatial dimensions")
    if x.dtype is dt.bool_:
        raise TypeError(f"{name}: not supported for bool arrays")
    out, _ = _pool_geometry(name, x.shape[x.ndim - k:], window, stride, padding, dilation, ceil_mode)
    return x.shape[:x.ndim - k] + out


def _full_padding(name, x, window, stride, padding, dilation, ceil_mode):
    """The padding actually applied: the given pairs plus ceil_mode's extra on the high side."""
    k = len(window)
    _, extra = _pool_geometry(name, x.shape[x.ndim - k:], window, stride, padding, dilation, ceil_mode)
    return tuple((lo, hi + e) for (lo, hi), e in zip(padding, extra))


def _lowest(dtype):
    if dtype.category == dt.FLOAT:
        return -math.inf
    return int(np.iinfo(dtype.np).min)


# max_pool: windows padded with -inf; the gradient goes to the first maximum of each window (as torch)


def _max_pool_meta(x, *, window, stride, padding, dilation, ceil_mode):
    return _pool_meta_common("max_pool", x, window, stride, padding, dilation, ceil_mode), x.dtype


def _first_max(x, window, stride, padding, dilation, ceil_mode):
    """(one-hot bool mask (*lead, *out, K) of each window's first maximum in row-major order -- torch's
    tie-break, which the gradient and the indices both follow --, the full padding applied)."""
    full = _full_padding("max_pool", x, window, stride, padding, dilation, ceil_mode)
    cols = windows_p.bind(_pad_spatial(x, full, _lowest(x.dtype)), kernel=window, stride=stride, dilation=dilation)
    kk = _prod(window)
    flat = reshape(cols, cols.shape[:cols.ndim - len(window)] + (kk,))
    hit = eq(argmax(flat, axis=-1, keepdims=True), arange(kk, device=x.device))
    return hit, full


def _max_pool_vjp(g, out, x, *, window, stride, padding, dilation, ceil_mode):
    hit, full = _first_max(x, window, stride, padding, dilation, ceil_mode)
    gcols = reshape(where(hit, expand_dims(g, -1), 0), g.shape + tuple(window))
    gx = windows_transpose_p.bind(gcols, spatial=_padded(x.shape[x.ndim - len(window):], full), kernel=window,
                                  stride=stride, dilation=dilation)
    return _crop_spatial(gx, full)


def _max_pool_jvp(ts, out, x, *, window, stride, padding, dilation, ceil_mode):
    hit, full = _first_max(x, window, stride, padding, dilation, ceil_mode)
    tcols = windows_p.bind(_pad_spatial(ts[0], full), kernel=window, stride=stride, dilation=dilation)
    tflat = reshape(tcols, hit.shape)
    return _sum(where(hit, tflat, 0), axis=-1)


max_pool_p = Primitive("max_pool", _max_pool_meta, vjp=(_max_pool_vjp,), vjp_reads=(0,),
                       jvp=_max_pool_jvp)


def _pool_batch(prim):
    """Pools act on trailing spatial axes: fold the batch axis into N, unfold after."""
    def rule(vals, bdims, **p):
        x = move_to_front(vals[0], bdims[0])
        b, n = x.shape[0], x.shape[1]
        out = prim.bind(reshape(x, (b * n,) + tuple(x.shape[2:])), **p)
        return reshape(out, (b, n) + tuple(out.shape[1:])), 0
    return rule


max_pool_p.batch = _pool_batch(max_pool_p)


@max_pool_p.def_impl("cpu")
def _max_pool_cpu(x, *, window, stride, padding, dilation, ceil_mode):
    k = len(window)
    full = _full_padding("max_pool", x, window, stride, padding, dilation, ceil_mode)
    if any(lo or hi for lo, hi in full):
        x = np.pad(x, ((0, 0),) * (x.ndim - k) + full, constant_values=_lowest(dt.from_numpy(x.dtype)))
    cols = _windows_cpu(x, kernel=window, stride=stride, dilation=dilation)
    # a running maximum over kernel positions beats np.max over the strided window axes
    res = None
    for pos in itertools.product(*(range(n) for n in window)):
        v = cols[(Ellipsis,) + pos]
        res = v.copy() if res is None else np.maximum(res, v, out=res)
    return res


# avg_pool: zero padding; divisor = window size (count_include_pad) or the number of input elements
# (not counting padding) in the window; ceil_mode's extra padding is never counted (torch's rule)


def _avg_pool_meta(x, *, window, stride, padding, ceil_mode, count_include_pad):
    _family.require_float("avg_pool", x)
    ones = (1,) * len(window)
    return _pool_meta_common("avg_pool", x, window, stride, padding, ones, ceil_mode), x.dtype


def _avg_pool_counts(spatial, window, stride, padding, ceil_mode, count_include_pad):
    """Per spatial dim, the divisor of each output position (a tuple of ints), or None when it is
    prod(window) everywhere. The counted region is a box, so the divisor factorises per dim."""
    ones = (1,) * len(window)
    out, extra = _pool_geometry("avg_pool", spatial, window, stride, padding, ones, ceil_mode)
    if count_include_pad and not any(extra):
        return None
    counts = []
    for s, k, st, (lo, hi), o in zip(spatial, window, stride, padding, out):
        a, b = (0, s + lo + hi) if count_include_pad else (lo, lo + s)
        counts.append(tuple(max(1, min(i * st + k, b) - max(i * st, a)) for i in range(o)))
    return counts


def _avg_pool_scale(y, counts, dtype):
    """y (*lead, *out) divided by the divisor, with core ops (constants built from static ints)."""
    k = len(counts)
    for i, c in enumerate(counts):
        shape = tuple(len(c) if j == i else 1 for j in range(k))
        y = mul(y, reshape(asarray(tuple(1.0 / n for n in c), dtype=dtype, device=y.device), shape))
    return y


def _avg_pool_vjp(g, out, x, *, window, stride, padding, ceil_mode, count_include_pad):
    k = len(window)
    sp = x.shape[x.ndim - k:]
    counts = _avg_pool_counts(sp, window, stride, padding, ceil_mode, count_include_pad)
    g = mul(g, 1.0 / _prod(window)) if counts is None else _avg_pool_scale(g, counts, g.dtype)
    gcols = broadcast_to(reshape(g, g.shape + (1,) * k), g.shape + tuple(window))
    ones = (1,) * k
    full = _full_padding("avg_pool", x, window, stride, padding, ones, ceil_mode)
    gx = windows_transpose_p.bind(gcols, spatial=_padded(sp, full), kernel=window, stride=stride, dilation=ones)
    return _crop_spatial(gx, full)


avg_pool_p = Primitive("avg_pool", _avg_pool_meta, linear=True, vjp=(_avg_pool_vjp,),
                       jvp=lambda ts, out, x, **p: avg_pool_p.bind(ts[0], **p))


avg_pool_p.batch = _pool_batch(avg_pool_p)


@avg_pool_p.def_impl("cpu")
def _avg_pool_cpu(x, *, window, stride, padding, ceil_mode, count_include_pad):
    k = len(window)
    sp = x.shape[x.ndim - k:]
    ones = (1,) * k
    full = _full_padding("avg_pool", x, window, stride, padding, ones, ceil_mode)
    if any(lo or hi for lo, hi in full):
        x = np.pad(x, ((0, 0),) * (x.ndim - k) + full)
    cols = _windows_cpu(x, kernel=window, stride=stride, dilation=ones)
    res = None
    for pos in itertools.product(*(range(n) for n in window)):
        v = cols[(Ellipsis,) + pos]
        res = v.copy() if res is None else np.add(res, v, out=res)
    counts = _avg_pool_counts(sp, window, stride, padding, ceil_mode, count_include_pad)
    if counts is None:
        return res * res.dtype.type(1.0 / _prod(window))
    for i, c in enumerate(counts):
        shape = tuple(len(c) if j == i else 1 for j in range(k))
        res = res * np.reshape(1.0 / np.asarray(c, np.float64), shape).astype(res.dtype)
    return res


def _pool_args(name, x, window, stride, padding, dilation=1):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    if isinstance(window, (int, np.integer)):
        k = x.ndim - 2
        if k < 1:
            raise ValueError(f"{name}: an int window needs an (N, C, *spatial) input, got shape {x.shape}; "
                             f"pass a tuple window for other layouts")
        window = (int(window),) * k
    window = _ntuple(window, None, name, "window")
    k = len(window)
    stride = window if stride is None else _ntuple(stride, k, name, "stride")
    return x, window, stride, _pairs(padding, k, name), _ntuple(dilation, k, name, "dilation")


def max_pool(x, window, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max over sliding windows of x's trailing spatial axes (stride defaults to the window; -inf padding).

    An int window means spatial rank x.ndim - 2 ((N, C, *spatial) layout); a tuple sets the rank.
    """
    x, window, stride, padding, dilation = _pool_args("max_pool", x, window, stride, padding, dilation)
    return max_pool_p.bind(x, window=window, stride=stride, padding=padding, dilation=dilation,
                           ceil_mode=bool(ceil_mode))


def avg_pool(x, window, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over sliding windows of x's trailing spatial axes (zero padding, counted by default as in torch)."""
    x, window, stride, padding, _ = _pool_args("avg_pool", x, window, stride, padding)
    return avg_pool_p.bind(x, window=window, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
                           count_include_pad=bool(count_include_pad))


def max_pool_indices(x, window, stride=None, padding=0, dilation=1, ceil_mode=False):
    """The flat index into x's trailing spatial axes of each window's first maximum (int64, max_pool's shape):
    torch's return_indices, the positions max_pool's gradient goes to."""
    x, window, stride, padding, dilation = _pool_args("max_pool_indices", x, window, stride, padding, dilation)
    _max_pool_meta(x, window=window, stride=stride, padding=padding, dilation=dilation, ceil_mode=bool(ceil_mode))
    hit, full = _first_max(x, window, stride, padding, dilation, bool(ceil_mode))
    k = len(window)
    spatial = x.shape[x.ndim - k:]
    positions = _pad_spatial(reshape(arange(_prod(spatial), device=x.device), spatial), full, -1)
    pcols = windows_p.bind(positions, kernel=window, stride=stride, dilation=dilation)
    return _sum(where(hit, reshape(pcols, pcols.shape[:k] + (_prod(window),)), 0), axis=-1)


def adaptive_pool_bins(in_size, out_size):
    """The input range [start, end) of each of out_size adaptive-pool bins over in_size positions:
    bin i covers [floor(i * in / out), ceil((i + 1) * in / out)) (torch's rule; bins may overlap)."""
    return tuple(((i * in_size) // out_size, -(-((i + 1) * in_size) // out_size)) for i in range(out_size))
