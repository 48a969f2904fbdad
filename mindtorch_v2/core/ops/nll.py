"""nll_loss and its gradient as a primitive pair, as PyTorch has nll_loss_forward / nll_loss_backward.

Written as a composite (ne, where, check_index, reshape, gather, neg, where, sum, cast, div forward; where, neg,
reshape, scatter_add backward) the negative log-likelihood of cross_entropy on (128, 10) logits was ~25 tiny ops,
~4% of a compiled MLP step: each NumPy call costs ~4x more right after the step's GEMMs (cold caches) than alone.
As two primitives it is one lowering each way (one numba loop where numba is installed, see _kernels).

nll_loss_p(x, target[, weight], *, ignore_index, reduction): x (N, C, d...) float, target (N, d...) integer,
weight (C,) of x's dtype or absent (the primitive is bound with two inputs). The loss at a position is
-weight[t] * x[n, t, ...], 0 where t == ignore_index; 'sum' adds them, 'mean' divides that sum by the summed
weight[t] of the kept positions (nan when every position is ignored, as PyTorch). Both sums are the calls sum's
lowering makes over the composite's arrays, so the values are the composite's bits. A target outside [0, C) that is
not ignore_index raises IndexError("Target {t} is out of bounds.") when the lowering runs (check_index's helper).

nll_loss_backward_p(g, target[, weight], *, ignore_index, reduction, num_classes): x's gradient, zeros but for
-weight[t] * g (over the denominator for 'mean') at the target positions. Both ops are linear in their first
input and each is the other's transpose, so each one's VJP is the other and their JVPs are themselves; target
and weight get no gradient (PyTorch refuses a weight that requires grad: the torch face raises that).
"""
import functools

import numpy as np

from .. import _numba
from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import all_front, move_to_front, prod
from .creation import asarray, zeros_like
from .elementwise import cast, div, ne, where
from .indexing import _check_index_cpu, take
from .reduction import _sum_cpu, sum as _sum
from .shape import broadcast_to, reshape, slice_axis, stack

__all__ = ["nll_loss_p", "nll_loss_backward_p", "nll_loss"]

_REDUCTIONS = ("none", "mean", "sum")
_MESSAGE = "Target {} is out of bounds."


def _check_common(name, t, w, c, dtype, ignore_index, reduction):
    if t.dtype.category != dt.INT:
        raise TypeError(f"{name}: target must be an integer array, got {t.dtype.name}")
    if w is not None:
        if w.shape != (c,):
            raise ValueError(f"{name}: weight of shape {w.shape} does not match the {c} classes")
        if w.dtype is not dtype:
            raise TypeError(f"{name}: weight dtype {w.dtype.name} differs from the input's {dtype.name}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {', '.join(_REDUCTIONS)}, got {reduction!r}")
    if type(ignore_index) is not int:
        raise TypeError(f"{name}: ignore_index must be an int, got {type(ignore_index).__name__}")


def _nll_meta(x, t, w=None, *, ignore_index, reduction):
    if x.dtype.category != dt.FLOAT:
        raise TypeError(f"nll_loss: expected a real floating-point input, got {x.dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"nll_loss: input must be (N, C, d...), got shape {x.shape}")
    if t.shape != x.shape[:1] + x.shape[2:]:
        raise ValueError(f"nll_loss: target shape {t.shape} does not match input shape {x.shape} "
                         f"(expected {x.shape[:1] + x.shape[2:]})")
    _check_common("nll_loss", t, w, x.shape[1], x.dtype, ignore_index, reduction)
    return (t.shape if reduction == "none" else ()), x.dtype


def _nll_backward_meta(g, t, w=None, *, ignore_index, reduction, num_classes):
    if g.dtype.category != dt.FLOAT:
        raise TypeError(f"nll_loss_backward: expected a real floating-point gradient, got {g.dtype.name}")
    if t.ndim < 1:
        raise ValueError("nll_loss_backward: target must be (N, d...), got a 0-d array")
    if type(num_classes) is not int or num_classes < 0:
        raise ValueError(f"nll_loss_backward: num_classes must be an int >= 0, got {num_classes!r}")
    want = t.shape if reduction == "none" else ()
    if g.shape != want:
        raise ValueError(f"nll_loss_backward: gradient shape {g.shape} does not match {want} (target shape "
                         f"{t.shape}, reduction {reduction!r})")
    _check_common("nll_loss_backward", t, w, num_classes, g.dtype, ignore_index, reduction)
    return t.shape[:1] + (num_classes,) + t.shape[1:], g.dtype


def _weight(w):
    return () if w is None else (w,)


def _no_weight_derivative(*args, **params):
    raise NotImplementedError("nll_loss: the derivative with respect to weight is not implemented (PyTorch's "
                              "nll_loss_forward is not differentiable in it); pass the weight as a constant")


def _linear_in_first(prim):
    """The JVP of an op linear in its first input with the others held constant: the op of the tangent (a
    tangent of the weight has no rule)."""
    def jvp(tangents, out, first, t, w=None, **params):
        if len(tangents) > 2 and tangents[2] is not None:
            _no_weight_derivative()
        return prim.bind(zeros_like(first) if tangents[0] is None else tangents[0], t, *_weight(w), **params)
    return jvp


nll_loss_p = Primitive(
    "nll_loss", _nll_meta, vjp_reads=(1, 2),
    vjp=(lambda g, out, x, t, w=None, *, ignore_index, reduction: nll_loss_backward_p.bind(
        g, t, *_weight(w), ignore_index=ignore_index, reduction=reduction, num_classes=x.shape[1]),
         None, _no_weight_derivative))
nll_loss_backward_p = Primitive(
    "nll_loss_backward", _nll_backward_meta, vjp_reads=(1, 2),
    vjp=(lambda ct, out, g, t, w=None, *, ignore_index, reduction, num_classes: nll_loss_p.bind(
        ct, t, *_weight(w), ignore_index=ignore_index, reduction=reduction), None, _no_weight_derivative))
nll_loss_p.jvp = _linear_in_first(nll_loss_p)
nll_loss_backward_p.jvp = _linear_in_first(nll_loss_backward_p)


# ---------------------------------------------------------------------------
# batching: a batch axis of x / g and target folds into N; for 'sum' and 'mean' the per-position losses are
# reduced per batch element (the denominator of 'mean' too), in core ops. A batched weight is a loop.


def _kept_weights(t, w, ignore_index, dtype):
    """weight[t] (1 without a weight) at every position of t, 0 where t == ignore_index."""
    keep = ne(t, ignore_index)
    if w is None:
        return cast(keep, dtype)
    return where(keep, take(w, where(keep, t, 0), axis=0), asarray(0, dtype=dtype, device=t.device))


def _per_batch(vals, bdims, prim, params):
    """prim bound per batch element, the results stacked (a batched weight cannot fold into N)."""
    args, b = all_front(vals, bdims)
    outs = [prim.bind(*[reshape(slice_axis(a, 0, i, i + 1), a.shape[1:]) for a in args], **params)
            for i in range(b)]
    return stack(outs, 0), 0


def _fold(a):
    """(B, N, ...) -> (B * N, ...)."""
    return reshape(a, (a.shape[0] * a.shape[1],) + tuple(a.shape[2:]))


def _nll_batch(vals, bdims, *, ignore_index, reduction):
    if len(vals) == 3 and bdims[2] is not None:
        return _per_batch(vals, bdims, nll_loss_p, dict(ignore_index=ignore_index, reduction=reduction))
    w = vals[2] if len(vals) == 3 else None
    (x, t), b = all_front(vals[:2], bdims[:2])
    loss = nll_loss_p.bind(_fold(x), _fold(t), *_weight(w), ignore_index=ignore_index, reduction="none")
    loss = reshape(loss, tuple(t.shape))
    if reduction == "none":
        return loss, 0
    axes = tuple(range(1, len(t.shape)))
    total = _sum(loss, axes)
    if reduction == "sum":
        return total, 0
    return div(total, _sum(_kept_weights(t, w, ignore_index, x.dtype), axes)), 0


def _nll_backward_batch(vals, bdims, *, ignore_index, reduction, num_classes):
    params = dict(ignore_index=ignore_index, reduction=reduction, num_classes=num_classes)
    if len(vals) == 3 and bdims[2] is not None:
        return _per_batch(vals, bdims, nll_loss_backward_p, params)
    w = vals[2] if len(vals) == 3 else None
    g, t = vals[:2]
    b = bdims[0] if bdims[0] is not None else bdims[1]
    size = g.shape[b] if bdims[0] is not None else t.shape[b]
    t = move_to_front(t, bdims[1]) if bdims[1] is not None else broadcast_to(t, (size,) + tuple(t.shape))
    g = move_to_front(g, bdims[0]) if bdims[0] is not None else broadcast_to(g, (size,) + tuple(g.shape))
    if reduction != "none":  # per batch element: the scale every kept position gets, as a 'none' gradient
        if reduction == "mean":
            g = div(g, _sum(_kept_weights(t, w, ignore_index, g.dtype), tuple(range(1, len(t.shape)))))
        g = broadcast_to(reshape(g, (size,) + (1,) * (len(t.shape) - 1)), tuple(t.shape))
    out = nll_loss_backward_p.bind(_fold(g), _fold(t), *_weight(w), ignore_index=ignore_index, reduction="none",
                                   num_classes=num_classes)
    return reshape(out, (size, t.shape[1], num_classes) + tuple(t.shape[2:])), 0


nll_loss_p.batch = _nll_batch
nll_loss_backward_p.batch = _nll_backward_batch


# ---------------------------------------------------------------------------
# cpu lowerings: x as (N, C, D) and target as (N, D) (D the product of the trailing dims)


def _nll_loop(x, t, w, weighted, ignore_index, loss, kept_w):
    """loss[n, j] = -w[t] * x[n, t, j] (0 at ignore_index) and kept_w[n, j] = w[t] (0 there); returns the number
    of kept positions, or -1 at the first target out of [0, C) (nothing is read out of bounds)."""
    n, c, d = x.shape
    kept = 0
    for i in range(n):
        for j in range(d):
            k = t[i, j]
            if k == ignore_index:
                loss[i, j] = 0
                kept_w[i, j] = 0
                continue
            if k < 0 or k >= c:
                return -1
            kept += 1
            if weighted:
                loss[i, j] = -x[i, k, j] * w[k]
                kept_w[i, j] = w[k]
            else:
                loss[i, j] = -x[i, k, j]
    return kept


def _nll_grad_loop(g, per_position, t, w, weighted, ignore_index, out):
    """out[n, t, j] = -(g * w[t]) (g[n, j] per position, else g[0, 0]) at the kept positions of a zeroed out;
    returns 0, or -1 at the first target out of [0, C)."""
    n, c, d = out.shape
    for i in range(n):
        for j in range(d):
            k = t[i, j]
            if k == ignore_index:
                continue
            if k < 0 or k >= c:
                return -1
            s = g[i, j] if per_position else g[0, 0]
            out[i, k, j] = -(s * w[k]) if weighted else -s
    return 0


@functools.cache
def _kernels():
    """(_nll_loop, _nll_grad_loop) compiled by numba, or None without numba."""
    if not _numba.available():
        return None
    return tuple(_numba.njit(f, boundscheck=False) for f in (_nll_loop, _nll_grad_loop))


@functools.lru_cache(maxsize=64)
def _zeros(shape, dtype):
    """A read-only broadcast zero of this shape (no memory of its own), made once per shape."""
    return np.broadcast_to(dtype.type(0), shape)


@functools.cache
def _no_weight(dtype):
    """The weight a kernel gets when there is none (never read; a 1-d array of x's dtype types the loop)."""
    return np.zeros(1, dtype)


def _compiled(dtype):
    """The numba kernels for float32 / float64 (NumPy runs float16 and the rest), or None."""
    return _kernels() if dtype in (np.float32, np.float64) else None


def _checked_kept(t, ignore_index, c):
    """The mask of the targets that are not ignore_index, after check_index's error for the first of them out
    of [0, c)."""
    valid = t != ignore_index
    _check_index_cpu(t[valid], lo=0, hi=c, error="IndexError", message=_MESSAGE)
    return valid


def _picked_numpy(x, t, w, ignore_index):
    """(loss, kept_w or None, kept count) as _nll_loop gives them, with NumPy (x (N, C, D), t (N, D))."""
    valid = _checked_kept(t, ignore_index, x.shape[1])
    if valid.all():
        safe, valid = t, None
    else:
        safe = np.where(valid, t, 0)
    loss = -np.take_along_axis(x, safe[:, None, :], 1)[:, 0, :]
    kept = t.size if valid is None else int(np.count_nonzero(valid))
    kept_w = None
    if w is not None:
        kept_w = w[safe]
        if valid is not None:
            kept_w = np.where(valid, kept_w, w.dtype.type(0))
        loss = loss * kept_w
    if valid is not None:  # (+0.0 where ignored, as the kernel and PyTorch write: a weighted one is -x * 0 there)
        loss = np.where(valid, loss, x.dtype.type(0))
    return loss, kept_w, kept


def _denominator(kept_w, kept):
    """What 'mean' divides by: the summed kept weights (sum's lowering), or the kept count (an int)."""
    if kept_w is not None:
        return _sum_cpu(kept_w, axis=(0, 1), keepdims=False)
    return kept


_COUNTED = (np.dtype(np.float32), np.dtype(np.float64))  # (where a count of positions is finite: no inf / inf)


def _mean(total, denom, dtype):
    """total / denom as a 0-d array of dtype (denom: a count, or summed weights of dtype)."""
    if type(denom) is int:
        if denom and dtype in _COUNTED:  # (no division to silence: an errstate costs ~1 us, more after a GEMM)
            return np.asarray(total / dtype.type(denom), dtype)
        denom = dtype.type(denom)  # (float16: a count past 65504 is inf, inf / inf nan)
    # every position ignored (0 / 0), or summed weights of 0: nan or inf silently, as PyTorch
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(total / denom, dtype)


# The lowerings for the numba kernels' dtypes are closures made once per shape, dtype and params (_forward,
# _backward), each one flat function with what it calls bound: the eager lowering looks one up, and jit runs it
# as the equation's lowering (`specialized`). A closure makes the calls of the generic lowering, in the same
# order. Right after a GEMM every Python-level step costs several times its warm time, so the frames and lookups
# they save count (with softmax's closures: the compiled MLP step at batch 128 ~1% faster; F.cross_entropy
# forward+backward on (16, 10) in eager 77 -> 65 us).


@functools.lru_cache(maxsize=256)
def _forward(x_shape, t_shape, dtype, weighted, ignore_index, reduction):
    """nll_loss's lowering for these avals and params with the numba kernel, or None (no kernel)."""
    kernels = _compiled(dtype)
    if kernels is None:
        return None
    loop, empty, reduce, asarray, one = kernels[0], np.empty, np.add.reduce, np.asarray, dtype.type
    n, c = x_shape[:2]
    t3 = (n, prod(t_shape[1:]))
    x3 = (n, c, t3[1])
    # sum's lowering over every axis of the loss, float32 / float64: one row, so NumPy's reduce (tests compare the
    # closure with the NumPy path, which calls _sum_cpu)
    axes = tuple(range(len(t_shape)))
    no_weight = _no_weight(dtype)

    def forward(x, t, w=None):
        loss = empty(t3, dtype)
        if weighted:
            kept_w = empty(t3, dtype)
            kept = loop(x.reshape(x3), t.reshape(t3), w, True, ignore_index, loss, kept_w)
        else:
            kept = loop(x.reshape(x3), t.reshape(t3), no_weight, False, ignore_index, loss, loss)
        if kept < 0:
            _checked_kept(t, ignore_index, c)
        if reduction == "none":
            return loss.reshape(t_shape)
        total = reduce(loss.reshape(t_shape), axis=axes)
        if reduction == "sum":
            return asarray(total, dtype)
        if weighted:
            return _mean(total, _denominator(kept_w, kept), dtype)
        return asarray(total / one(kept), dtype) if kept else _mean(total, kept, dtype)
    return forward


@functools.lru_cache(maxsize=256)
def _backward(g_shape, t_shape, dtype, weighted, ignore_index, reduction, num_classes):
    """nll_loss_backward's lowering for these avals and params with the numba kernels, or None (no kernel)."""
    kernels = _compiled(dtype)
    if kernels is None:
        return None
    (count, scatter), empty, zeros, asarray, one = kernels, np.empty, np.zeros, np.asarray, dtype.type
    n, c = t_shape[0], num_classes
    t3 = (n, prod(t_shape[1:]))
    x3 = (n, c, t3[1])
    out_shape = t_shape[:1] + (c,) + t_shape[1:]
    g2 = t3 if reduction == "none" else (1, 1)
    no_weight = _no_weight(dtype)
    mean = reduction == "mean"
    zero_x = _zeros(x3, dtype) if mean else None

    def backward(g, t, w=None):
        t2 = t.reshape(t3)
        out = zeros(x3, dtype)
        wk = w if weighted else no_weight
        if mean:  # the forward's denominator, the same bits: its loop over a broadcast zero x
            kept_w = empty(t3, dtype)
            kept = count(zero_x, t2, wk, weighted, ignore_index, empty(t3, dtype) if weighted else kept_w, kept_w)
            if kept < 0:
                _checked_kept(t, ignore_index, c)
            if weighted or not kept:
                g = _mean(g, _denominator(kept_w if weighted else None, kept), dtype)
            else:
                g = asarray(g / one(kept), dtype)
        if scatter(g.reshape(g2), reduction == "none", t2, wk, weighted, ignore_index, out) < 0:
            _checked_kept(t, ignore_index, c)
        return out.reshape(out_shape)
    return backward


def _forward_of(e):
    x, t = e.invars[:2]
    return _forward(x.shape, t.shape, x.dtype.np, len(e.invars) == 3, e.params["ignore_index"],
                    e.params["reduction"])


def _backward_of(e):
    g, t = e.invars[:2]
    return _backward(g.shape, t.shape, g.dtype.np, len(e.invars) == 3, e.params["ignore_index"],
                     e.params["reduction"], e.params["num_classes"])


@nll_loss_p.def_impl("cpu")
@_family.specialized(_forward_of)
def _nll_cpu(x, t, w=None, *, ignore_index, reduction):
    compiled = _forward(x.shape, t.shape, x.dtype, w is not None, ignore_index, reduction)
    if compiled is not None:
        return compiled(x, t, w)
    n, c = x.shape[:2]
    t3 = t.reshape(n, prod(t.shape[1:]))
    loss, kept_w, kept = _picked_numpy(x.reshape(n, c, t3.shape[1]), t3, w, ignore_index)
    if reduction == "none":
        return loss.reshape(t.shape)
    total = _sum_cpu(loss.reshape(t.shape), axis=tuple(range(t.ndim)), keepdims=False)
    if reduction == "sum":
        return np.asarray(total, x.dtype)
    return _mean(total, _denominator(kept_w, kept), x.dtype)


@nll_loss_backward_p.def_impl("cpu")
@_family.specialized(_backward_of)
def _nll_backward_cpu(g, t, w=None, *, ignore_index, reduction, num_classes):
    compiled = _backward(g.shape, t.shape, g.dtype, w is not None, ignore_index, reduction, num_classes)
    if compiled is not None:
        return compiled(g, t, w)
    n, c = t.shape[0], num_classes
    t3 = t.reshape(n, prod(t.shape[1:]))
    out = np.zeros((n, c, t3.shape[1]), g.dtype)
    if reduction == "mean":  # the forward's denominator, the same bits
        _, kept_w, kept = _picked_numpy(out, t3, w, ignore_index)
        g = _mean(g, _denominator(kept_w, kept), g.dtype)
    g2 = g.reshape(t3.shape) if reduction == "none" else g.reshape(1, 1)
    valid = _checked_kept(t3, ignore_index, c)
    rows, cols = np.nonzero(valid)
    k = t3[rows, cols]
    s = g2[rows, cols] if reduction == "none" else g2[0, 0]
    out[rows, k, cols] = -(s * w[k]) if w is not None else -s
    return out.reshape(t.shape[:1] + (c,) + t.shape[1:])


def nll_loss(x, target, weight=None, *, ignore_index=-100, reduction="mean"):
    """The negative log-likelihood of class indices `target` under log-probabilities x (N, C, d...): see
    nll_loss_p. weight (C,) rescales each class; positions whose target is ignore_index count for nothing."""
    return nll_loss_p.bind(x, target, *_weight(weight), ignore_index=int(ignore_index), reduction=reduction)
