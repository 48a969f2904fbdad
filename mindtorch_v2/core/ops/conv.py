"""Convolution on (N, C, *spatial) layouts (spatial rank 1, 2 or 3; any rank works), and the window
pair the convolutions and the pools (pool.py) are built on.

Every rule here is built on one linear pair of primitives over the trailing
spatial axes of an (already padded) array:

    windows            (*lead, *sp)                 -> (*lead, *out_sp, *kernel)   im2col
    windows_transpose  (*lead, *out_sp, *kernel)    -> (*lead, *sp)                col2im (overlap-add)

each the other's VJP. On cpu `windows` is a strided view (no copy) and
`windows_transpose` adds one strided slice per kernel position. With them the
derivatives of conv are plain core ops (pad, matmul, reshape, slices), so they
run on meta arrays and nest to any order:

    conv:            y = w @ im2col(windows(pad(x)))          (per batch element and group)
    conv_transpose:  x = crop(windows_transpose(w^T @ y))     the adjoint of conv(., w) in its input
    conv's VJP:      dx = conv_transpose(g, w)                dw = sum_n g @ im2col(windows(pad(x)))^T

conv_transpose is JAX's conv_transpose (the forward conv of the zero-dilated input with the flipped,
swapped kernel) computed as col2im, which never builds the zero-dilated input.
"""
import itertools

import numpy as np

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import move_to_front
from .elementwise import add
from .linalg import matmul
from .reduction import sum as _sum
from .shape import expand_dims, pad, reshape, slice_axis, squeeze, swapaxes, transpose

__all__ = ["windows_p", "windows_transpose_p", "conv_p", "windows", "windows_transpose", "conv", "conv_transpose",
           "conv_transpose_sizes"]

_as_strided = np.lib.stride_tricks.as_strided


# ---------------------------------------------------------------------------
# geometry helpers (static ints only)


def _out_sizes(name, spatial, kernel, stride, dilation):
    out = []
    for s, k, st, d in zip(spatial, kernel, stride, dilation):
        extent = d * (k - 1) + 1
        if extent > s:
            raise ValueError(f"{name}: kernel {tuple(kernel)} with dilation {tuple(dilation)} is larger than "
                             f"the (padded) input's spatial shape {tuple(spatial)}")
        out.append((s - extent) // st + 1)
    return tuple(out)


def _check_geometry(name, k, **params):
    for key, val in params.items():
        if len(val) != k:
            raise ValueError(f"{name}: {key} {val} must have {k} entries (one per spatial dimension)")
        if key == "padding":
            if any(lo < 0 or hi < 0 for lo, hi in val):
                raise ValueError(f"{name}: padding must be non-negative, got {val}")
        elif any(v < 1 for v in val):
            raise ValueError(f"{name}: {key} must be positive, got {val}")


_prod = _family.prod


def _padded(spatial, padding):
    return tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))


def _pad_spatial(x, padding, value=0):
    """x padded on its trailing len(padding) axes (core op; no-op without padding)."""
    if not any(lo or hi for lo, hi in padding):
        return x
    lead = ((0, 0),) * (x.ndim - len(padding))
    return pad(x, lead + tuple(padding), value=value)


def _crop_spatial(x, padding):
    """The inverse of _pad_spatial: slice the padding off the trailing axes."""
    k = len(padding)
    for i, (lo, hi) in enumerate(padding):
        if lo or hi:
            axis = x.ndim - k + i
            x = slice_axis(x, axis, lo, x.shape[axis] - hi)
    return x


# ---------------------------------------------------------------------------
# windows (im2col) and windows_transpose (col2im): a linear pair, each the other's VJP


def _windows_meta(x, *, kernel, stride, dilation):
    k = len(kernel)
    _check_geometry("windows", k, kernel=kernel, stride=stride, dilation=dilation)
    if x.ndim < k:
        raise ValueError(f"windows: input of shape {x.shape} has fewer than {k} spatial dimensions")
    out = _out_sizes("windows", x.shape[x.ndim - k:], kernel, stride, dilation)
    return x.shape[:x.ndim - k] + out + tuple(kernel), x.dtype


windows_p = Primitive(
    "windows", _windows_meta, linear=True,
    vjp=(lambda g, out, x, *, kernel, stride, dilation: windows_transpose_p.bind(
        g, spatial=x.shape[x.ndim - len(kernel):], kernel=kernel, stride=stride, dilation=dilation),),
    jvp=lambda ts, out, x, **p: windows_p.bind(ts[0], **p))


windows_p.batch = lambda vals, bdims, **p: (windows_p.bind(move_to_front(vals[0], bdims[0]), **p), 0)


@windows_p.def_impl("cpu")
def _windows_cpu(x, *, kernel, stride, dilation):
    k = len(kernel)
    lead, sp = x.shape[:x.ndim - k], x.shape[x.ndim - k:]
    out = _out_sizes("windows", sp, kernel, stride, dilation)
    st = x.strides[x.ndim - k:]
    strides = x.strides[:x.ndim - k] + tuple(a * b for a, b in zip(st, stride)) + tuple(
        a * b for a, b in zip(st, dilation))
    return _as_strided(x, lead + out + tuple(kernel), strides, writeable=False)


def _windows_transpose_meta(cols, *, spatial, kernel, stride, dilation):
    k = len(kernel)
    _check_geometry("windows_transpose", k, spatial=spatial, kernel=kernel, stride=stride, dilation=dilation)
    out = _out_sizes("windows_transpose", spatial, kernel, stride, dilation)
    if cols.ndim < 2 * k or cols.shape[cols.ndim - 2 * k:] != out + tuple(kernel):
        raise ValueError(f"windows_transpose: input of shape {cols.shape} does not end with the window grid "
                         f"{out + tuple(kernel)} of spatial shape {tuple(spatial)}")
    if cols.dtype is dt.bool_:
        raise TypeError("windows_transpose: not supported for bool arrays")
    return cols.shape[:cols.ndim - 2 * k] + tuple(spatial), cols.dtype


windows_transpose_p = Primitive(
    "windows_transpose", _windows_transpose_meta, linear=True,
    vjp=(lambda g, out, cols, *, spatial, kernel, stride, dilation: windows_p.bind(
        g, kernel=kernel, stride=stride, dilation=dilation),),
    jvp=lambda ts, out, cols, **p: windows_transpose_p.bind(ts[0], **p))


windows_transpose_p.batch = lambda vals, bdims, **p: (
    windows_transpose_p.bind(move_to_front(vals[0], bdims[0]), **p), 0)


@windows_transpose_p.def_impl("cpu")
def _windows_transpose_cpu(cols, *, spatial, kernel, stride, dilation):
    # overlap-add: one strided slice per kernel position (a loop over the kernel, not the output)
    k = len(kernel)
    lead = cols.shape[:cols.ndim - 2 * k]
    out = cols.shape[cols.ndim - 2 * k:cols.ndim - k]
    res = np.zeros(lead + tuple(spatial), cols.dtype)
    for pos in itertools.product(*(range(n) for n in kernel)):
        dst = tuple(slice(p * d, p * d + st * (o - 1) + 1, st) for p, d, st, o in zip(pos, dilation, stride, out))
        res[(Ellipsis,) + dst] += cols[(Ellipsis,) + pos]
    return res


def windows(x, kernel, stride=1, dilation=1):
    """The sliding windows over x's trailing len(kernel) axes: shape (*lead, *out, *kernel)."""
    x = _family.as_operand(x)
    kernel = _ntuple(kernel, None, "windows", "kernel")
    k = len(kernel)
    return windows_p.bind(x, kernel=kernel, stride=_ntuple(stride, k, "windows", "stride"),
                          dilation=_ntuple(dilation, k, "windows", "dilation"))


def windows_transpose(cols, spatial, kernel, stride=1, dilation=1):
    """The adjoint of `windows`: each window's values added back at its place in an array of `spatial`."""
    cols = _family.as_operand(cols)
    kernel = _ntuple(kernel, None, "windows_transpose", "kernel")
    k = len(kernel)
    return windows_transpose_p.bind(
        cols, spatial=_ntuple(spatial, k, "windows_transpose", "spatial"), kernel=kernel,
        stride=_ntuple(stride, k, "windows_transpose", "stride"),
        dilation=_ntuple(dilation, k, "windows_transpose", "dilation"))


# ---------------------------------------------------------------------------
# conv: x (N, C_in, *sp), w (C_out, C_in / groups, *kernel) -> (N, C_out, *out)

def _conv_meta(x, w, *, stride, padding, dilation, groups):
    k = w.ndim - 2
    if k < 1:
        raise ValueError(f"conv: weight must have shape (C_out, C_in / groups, *kernel), got {w.shape}")
    if x.ndim != k + 2:
        raise ValueError(f"conv: a {k}-d kernel (weight shape {w.shape}) needs a {k + 2}-D input "
                         f"(N, C, *spatial), got shape {x.shape}")
    d = _family.same_dtype("conv", x, w)
    _family.require_float("conv", x)
    _check_geometry("conv", k, stride=stride, padding=padding, dilation=dilation)
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"conv: groups must be a positive int, got {groups!r}")
    c_in, c_out = x.shape[1], w.shape[0]
    if c_in % groups:
        raise ValueError(f"conv: groups={groups} does not divide the input channels {c_in} (input shape {x.shape})")
    if c_out % groups:
        raise ValueError(f"conv: groups={groups} does not divide the output channels {c_out} "
                         f"(weight shape {w.shape})")
    if w.shape[1] * groups != c_in:
        raise ValueError(f"conv: input of shape {x.shape} has {c_in} channels, but weight of shape {w.shape} "
                         f"with groups={groups} expects {w.shape[1] * groups}")
    padded = _padded(x.shape[2:], padding)
    for s, kk, dd in zip(padded, w.shape[2:], dilation):
        if dd * (kk - 1) + 1 > s:
            raise ValueError(f"conv: kernel {w.shape[2:]} with dilation {dilation} is larger than the padded "
                             f"input {padded} (input shape {x.shape}, padding {padding})")
    out = _out_sizes("conv", padded, w.shape[2:], stride, dilation)
    return (x.shape[0], c_out) + out, d


def _cols_to_matrix(cols, groups):
    """(N, C, *out, *kernel) windows -> (N, G, C/G * K, P), the im2col matrix (one copy)."""
    k = (cols.ndim - 2) // 2
    n, c = cols.shape[:2]
    perm = (0, 1) + tuple(range(2 + k, 2 + 2 * k)) + tuple(range(2, 2 + k))
    return reshape(transpose(cols, perm), (n, groups, (c // groups) * _prod(cols.shape[2 + k:]),
                                           _prod(cols.shape[2:2 + k])))


def _matrix_to_cols(m, c, kernel, out_sp):
    """(N, G, C/G * K, P) -> (N, C, *out, *kernel): the inverse of _cols_to_matrix (a transposed view)."""
    k = len(kernel)
    m = reshape(m, (m.shape[0], c) + tuple(kernel) + tuple(out_sp))
    return transpose(m, (0, 1) + tuple(range(2 + k, 2 + 2 * k)) + tuple(range(2, 2 + k)))


def _conv_transpose(y, w, padded, stride, padding, dilation, groups):
    """The adjoint of conv(., w) in its input, for static (normalized) params: y (N, C_out, *sp_y) ->
    (N, C_in, *out), out = padded minus padding. Columns w^T @ y per group, overlap-added back into the
    padded input by windows_transpose, then the padding cropped. Past the span the windows cover
    (output_padding), the padded input is zeros."""
    n, c_out = y.shape[:2]
    kernel = w.shape[2:]
    # cols[n, grp] = w[grp]^T @ y[n, grp]: (CgK, Og) @ (Og, P)
    ym = reshape(y, (n, groups, c_out // groups, _prod(y.shape[2:])))
    wm = reshape(w, (groups, c_out // groups, _prod(w.shape[1:])))
    cols = _matrix_to_cols(matmul(swapaxes(wm, -1, -2), ym), w.shape[1] * groups, kernel, y.shape[2:])
    # windows_transpose fills up to stride - 1 positions past the last window; the rest is padded on
    reach = tuple(min(p, (o - 1) * st + d * (kk - 1) + st)
                  for p, o, st, d, kk in zip(padded, y.shape[2:], stride, dilation, kernel))
    xp = windows_transpose_p.bind(cols, spatial=reach, kernel=kernel, stride=stride, dilation=dilation)
    return _crop_spatial(_pad_spatial(xp, tuple((0, p - r) for p, r in zip(padded, reach))), padding)


def _conv_vjp_x(g, out, x, w, *, stride, padding, dilation, groups):
    return _conv_transpose(g, w, _padded(x.shape[2:], padding), stride, padding, dilation, groups)


def _conv_vjp_w(g, out, x, w, *, stride, padding, dilation, groups):
    # dw[grp] = sum_n g[n, grp] @ cols[n, grp]^T: (Og, P) @ (P, CgK)
    cols = windows_p.bind(_pad_spatial(x, padding), kernel=w.shape[2:], stride=stride, dilation=dilation)
    cm = _cols_to_matrix(cols, groups)
    gm = reshape(g, (g.shape[0], groups, w.shape[0] // groups, _prod(g.shape[2:])))
    return reshape(_sum(matmul(gm, swapaxes(cm, -1, -2)), axis=0), w.shape)


def _conv_jvp(ts, out, x, w, **params):
    tx, tw = ts
    res = None if tx is None else conv_p.bind(tx, w, **params)
    if tw is not None:
        t = conv_p.bind(x, tw, **params)
        res = t if res is None else add(res, t)
    return res


conv_p = Primitive("conv", _conv_meta, vjp=(_conv_vjp_x, _conv_vjp_w), vjp_reads=((1,), (0,)),
                   jvp=_conv_jvp)


def _conv_batch(vals, bdims, *, stride, padding, dilation, groups):
    """Batched images fold into N; batched filters become extra groups (one per batch element)."""
    (x, w), (bx, bw) = vals, bdims
    if bw is None:
        x = move_to_front(x, bx)
        b, n = x.shape[0], x.shape[1]
        out = conv_p.bind(reshape(x, (b * n,) + tuple(x.shape[2:])), w, stride=stride, padding=padding,
                          dilation=dilation, groups=groups)
        return reshape(out, (b, n) + tuple(out.shape[1:])), 0
    w = move_to_front(w, bw)
    b, o = w.shape[0], w.shape[1]
    sp = len(w.shape) - 3
    if bx is None:  # one image batch, B filter banks: regroup filters group-major, then split them back
        g = groups
        wg = reshape(w, (b, g, o // g) + tuple(w.shape[2:]))
        wg = transpose(wg, (1, 0) + tuple(range(2, len(wg.shape))))
        out = conv_p.bind(x, reshape(wg, (g * b * (o // g),) + tuple(w.shape[2:])), stride=stride,
                          padding=padding, dilation=dilation, groups=g)
        n = out.shape[0]
        out = reshape(out, (n, g, b, o // g) + tuple(out.shape[2:]))
        out = transpose(out, (2, 0, 1, 3) + tuple(range(4, 4 + sp)))
        return reshape(out, (b, n, o) + tuple(out.shape[4:])), 0
    x = move_to_front(x, bx)
    n, c = x.shape[1], x.shape[2]
    xs = reshape(transpose(x, (1, 0) + tuple(range(2, len(x.shape)))), (n, b * c) + tuple(x.shape[3:]))
    out = conv_p.bind(xs, reshape(w, (b * o,) + tuple(w.shape[2:])), stride=stride, padding=padding,
                      dilation=dilation, groups=groups * b)
    out = reshape(out, (n, b, o) + tuple(out.shape[2:]))
    return transpose(out, (1, 0) + tuple(range(2, len(out.shape)))), 0


conv_p.batch = _conv_batch


@conv_p.def_impl("cpu")
def _conv_cpu(x, w, *, stride, padding, dilation, groups):
    k = w.ndim - 2
    if any(lo or hi for lo, hi in padding):
        x = np.pad(x, ((0, 0), (0, 0)) + tuple(padding))
    cols = _windows_cpu(x, kernel=w.shape[2:], stride=stride, dilation=dilation)  # (N, C, *out, *kernel)
    n, c = x.shape[:2]
    out_sp = cols.shape[2:2 + k]
    c_out = w.shape[0]
    cg = c // groups
    kk = _prod(w.shape[2:])
    pp = _prod(out_sp)
    # im2col: (N, G, Cg * K, P) -- one copy of the windows -- then a batched GEMM with w as (G, Co/G, Cg * K)
    perm = (0, 1) + tuple(range(2 + k, 2 + 2 * k)) + tuple(range(2, 2 + k))
    cols = np.transpose(cols, perm).reshape(n, groups, cg * kk, pp)
    res = np.matmul(w.reshape(groups, c_out // groups, cg * kk), cols)
    return res.reshape((n, c_out) + out_sp)


def _ntuple(v, k, name, what):
    """An int (repeated k times) or a sequence of k ints, as a tuple of ints."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        if k is None:
            return (int(v),)
        return (int(v),) * k
    try:
        out = tuple(int(a) for a in v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or a tuple of ints, got {v!r}") from None
    if k is not None and len(out) != k:
        raise ValueError(f"{name}: {what} {tuple(v)} must have {k} entries (one per spatial dimension)")
    return out


def _pairs(padding, k, name):
    """Padding as ((lo, hi), ...) per spatial dim, from an int, k ints or k pairs."""
    if isinstance(padding, (int, np.integer)):
        return ((int(padding), int(padding)),) * k
    padding = tuple(padding)
    if len(padding) != k:
        raise ValueError(f"{name}: padding {padding} must have {k} entries (one per spatial dimension)")
    out = []
    for p in padding:
        if isinstance(p, (int, np.integer)):
            out.append((int(p), int(p)))
        else:
            lo, hi = p
            out.append((int(lo), int(hi)))
    return tuple(out)


def _operands(name, x, w, layout):
    """(x, w) promoted, the number of spatial dims, and whether x was unbatched (then given a batch axis)."""
    x, w = _family.promote(name, x, w)
    k = w.ndim - 2
    if k < 1:
        raise ValueError(f"{name}: weight must have shape {layout}, got {w.shape}")
    unbatched = x.ndim == k + 1
    if unbatched:
        x = expand_dims(x, 0)
    return x, w, k, unbatched


def conv(x, w, stride=1, padding=0, dilation=1, groups=1):
    """N-d cross-correlation (torch's convN) of x (N, C_in, *sp) with w (C_out, C_in / groups, *kernel).

    padding: an int, one int per spatial dim, one (lo, hi) pair per dim, or 'valid' / 'same'.
    An unbatched x (C_in, *sp) gives an unbatched result.
    """
    x, w, k, unbatched = _operands("conv", x, w, "(C_out, C_in / groups, *kernel)")
    stride = _ntuple(stride, k, "conv", "stride")
    dilation = _ntuple(dilation, k, "conv", "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"conv: padding='same' needs stride 1, got stride {stride}")
            total = [d * (kk - 1) for d, kk in zip(dilation, w.shape[2:])]
            padding = tuple((t // 2, t - t // 2) for t in total)
        else:
            raise ValueError(f"conv: padding must be 'valid', 'same', an int or a tuple, got {padding!r}")
    out = conv_p.bind(x, w, stride=stride, padding=_pairs(padding, k, "conv"), dilation=dilation,
                      groups=int(groups))
    return squeeze(out, 0) if unbatched else out




def conv_transpose_sizes(spatial, kernel, stride, padding, dilation, output_padding):
    """The spatial shape conv_transpose gives (torch's ConvTranspose rule), per dim:
    (in - 1) * stride - lo - hi + dilation * (kernel - 1) + output_padding + 1; padding as (lo, hi) pairs."""
    return tuple((s - 1) * st - lo - hi + d * (kk - 1) + op + 1
                 for s, kk, st, (lo, hi), d, op in zip(spatial, kernel, stride, padding, dilation, output_padding))


def conv_transpose(y, w, stride=1, padding=0, dilation=1, groups=1, output_padding=0):
    """The transpose of conv (torch's conv_transposeN, conv's input-gradient): y (N, C_in, *sp) with
    w (C_in, C_out / groups, *kernel), the weight of the conv it transposes -> (N, C_out, *out).

    out per dim is conv_transpose_sizes(...); padding crops the result (an int, one int per dim or one
    (lo, hi) pair per dim) and output_padding adds positions on the high side (each smaller than the
    stride or the dilation). An unbatched y (C_in, *sp) gives an unbatched result.
    """
    y, w, k, unbatched = _operands("conv_transpose", y, w, "(C_in, C_out / groups, *kernel)")
    if y.ndim != k + 2:
        raise ValueError(f"conv_transpose: a {k}-d kernel (weight shape {w.shape}) needs a {k + 2}-D input "
                         f"(N, C, *spatial), got shape {y.shape}")
    _family.require_float("conv_transpose", y)
    stride = _ntuple(stride, k, "conv_transpose", "stride")
    dilation = _ntuple(dilation, k, "conv_transpose", "dilation")
    output_padding = _ntuple(output_padding, k, "conv_transpose", "output_padding")
    padding = _pairs(padding, k, "conv_transpose")
    _check_geometry("conv_transpose", k, stride=stride, padding=padding, dilation=dilation)
    groups = int(groups)
    if groups < 1 or y.shape[1] % groups or y.shape[1] != w.shape[0]:
        raise ValueError(f"conv_transpose: input of shape {y.shape} must have the weight's {w.shape[0]} channels, "
                         f"a multiple of groups={groups}")
    if any(op < 0 or (op >= st and op >= d) for op, st, d in zip(output_padding, stride, dilation)):
        raise ValueError(f"conv_transpose: output_padding {output_padding} must be smaller than the stride "
                         f"{stride} or the dilation {dilation}")
    out = conv_transpose_sizes(y.shape[2:], w.shape[2:], stride, padding, dilation, output_padding)
    if any(o <= 0 for o in out):
        raise ValueError(f"conv_transpose: the output size {out} (input shape {y.shape}) is not positive")
    res = _conv_transpose(y, w, _padded(out, padding), stride, padding, dilation, groups)
    return squeeze(res, 0) if unbatched else res
