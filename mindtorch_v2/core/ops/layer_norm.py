"""Layer normalization and its gradient as primitives, as PyTorch has native_layer_norm and
native_layer_norm_backward: x̂ = (x - mean) / sqrt(var + eps) over the last k axes (biased variance), and the
VJP r (g - mean(g) - x̂ mean(g x̂)), r = 1 / sqrt(var + eps). nn.functional.layer_norm scales and shifts x̂.

As a composite (mean, subtraction, square, mean, eps, rsqrt, product) a layer norm was ~7 ops forward and ~12
backward for autograd to record and run one by one: 340 us for (8, 32, 64) forward and backward, PyTorch 62 us.
The forward lowering runs the composite's NumPy operations in its order (the same bits for float32 and float64;
float16 is normalized in float32, as PyTorch accumulates it; bfloat16 and float8 are, as every lowering, by the
primitive machinery). The normalization's Jacobian is symmetric, so the
backward primitive is also its JVP, and the VJP of the backward with respect to g; its derivative in x is the
composite's (_backward_composite), for the higher orders.
"""
from math import prod

import numpy as np

from .. import dtypes as dt
from ..autodiff import JVPTrace, JVPTracer, vjp_flat
from ..primitive import Primitive, new_main
from . import _rows
from ._family import move_to_front
from .composite import mean
from .elementwise import add, mul, rsqrt, sub
from .reduction import _sum_cpu
from .shape import broadcast_to, expand_dims

__all__ = ["layer_norm_p", "layer_norm_backward_p"]


def _axes(ndim, k):
    return tuple(range(ndim - k, ndim))


def _check(name, x, k, eps):
    if x.dtype.category != dt.FLOAT:
        raise TypeError(f"{name}: expected a real floating-point array, got {x.dtype}")
    if type(k) is not int or not 1 <= k <= x.ndim:
        raise ValueError(f"{name}: k (the number of normalized trailing axes) must be an int in [1, {x.ndim}] for "
                         f"an array of shape {x.shape}, got {k!r}")
    if type(eps) is not float:
        raise TypeError(f"{name}: eps must be a float, got {type(eps).__name__}")


def _meta(x, *, k, eps):
    _check("layer_norm", x, k, eps)
    return x.shape, x.dtype


def _backward_meta(g, x, *, k, eps):
    _check("layer_norm_backward", x, k, eps)
    if g.shape != x.shape or g.dtype is not x.dtype:
        raise ValueError(f"layer_norm_backward: g {g.dtype}{list(g.shape)} must have x's shape and dtype, "
                         f"{x.dtype}{list(x.shape)}")
    return x.shape, x.dtype


def _normalized(x, k, eps):
    """(x̂, r) in core ops."""
    axes = _axes(x.ndim, k)
    centered = sub(x, mean(x, axes, keepdims=True))
    r = rsqrt(add(mean(mul(centered, centered), axes, keepdims=True), eps))
    return mul(centered, r), r


def _backward_composite(g, x, *, k, eps):
    """The gradient in core ops: r (g - mean(g) - x̂ mean(g x̂))."""
    xhat, r = _normalized(x, k, eps)
    axes = _axes(x.ndim, k)
    return mul(r, sub(sub(g, mean(g, axes, keepdims=True)), mul(xhat, mean(mul(g, xhat), axes, keepdims=True))))


def _backward_x_vjp(gg, out, g, x, *, k, eps):
    _, pull = vjp_flat(lambda xs: [_backward_composite(g, xs[0], k=k, eps=eps)], [x])
    return pull([gg])[0]


def _backward_jvp(ts, out, g, x, *, k, eps):
    tg, tx = ts
    res = None if tg is None else layer_norm_backward_p.bind(tg, x, k=k, eps=eps)
    if tx is not None:
        with new_main(JVPTrace) as main:
            o = _backward_composite(g, JVPTracer(main, x, tx), k=k, eps=eps)
            t = o.tangent if type(o) is JVPTracer and o._main is main else None
        if t is not None:
            res = t if res is None else add(res, t)
    return res


layer_norm_backward_p = Primitive(
    "layer_norm_backward", _backward_meta, vjp_reads=((1,), (0, 1)), jvp=_backward_jvp,
    vjp=(lambda gg, out, g, x, *, k, eps: layer_norm_backward_p.bind(gg, x, k=k, eps=eps), _backward_x_vjp))
layer_norm_p = Primitive(
    "layer_norm", _meta, vjp_reads=(0,),
    vjp=(lambda g, out, x, *, k, eps: layer_norm_backward_p.bind(g, x, k=k, eps=eps),),
    jvp=lambda ts, out, x, *, k, eps: layer_norm_backward_p.bind(ts[0], x, k=k, eps=eps))


def _batch(vals, bdims, **params):
    x = move_to_front(vals[0], bdims[0])
    return layer_norm_p.bind(x, **params), 0


def _backward_batch(vals, bdims, **params):
    size = next(v.shape[d] for v, d in zip(vals, bdims) if d is not None)
    front = [broadcast_to(expand_dims(v, 0), (size,) + tuple(v.shape)) if d is None else move_to_front(v, d)
             for v, d in zip(vals, bdims)]
    return layer_norm_backward_p.bind(*front, **params), 0


layer_norm_p.batch = _batch
layer_norm_backward_p.batch = _backward_batch


# ---------------------------------------------------------------------------
# cpu lowerings: the composite's NumPy operations, in its order; with numba, for C-ordered float32 / float64, one
# loop over the rows that repeats them operation for operation (_rows.layer_norm_loops): the same bits


def _compiled(k, *bufs):
    """The compiled loops where they apply to these arrays (C-ordered float32 / float64, not empty; _rows.ready
    for their rows), else None."""
    x = bufs[0]
    if x.dtype not in (np.float32, np.float64) or x.size == 0 or not all(b.flags.c_contiguous for b in bufs):
        return None
    return _rows.layer_norm_loops() if _rows.ready(prod(x.shape[:x.ndim - k])) else None


def _scalars(x, k, eps):
    """The row length n and the loops' scalars in x's dtype: n, eps and 1 (NumPy's weak Python numbers)."""
    n = prod(x.shape[x.ndim - k:])
    t = x.dtype.type
    return n, (t(n), t(eps), t(1))


def _stats(x, k, eps):
    """(x - mean, r) as the composite computes them (sum's own lowering, then a division by the count)."""
    axes = _axes(x.ndim, k)
    n = prod(x.shape[a] for a in axes)
    centered = x - _sum_cpu(x, axis=axes, keepdims=True) / n
    return centered, 1 / np.sqrt(_sum_cpu(centered * centered, axis=axes, keepdims=True) / n + x.dtype.type(eps))


def _half_in_float32(lowering):
    """float16 normalized in float32 and rounded back once, as PyTorch accumulates it (bfloat16 and the float8s
    come here in float32 already: the primitive machinery runs every lowering on float32 copies of them)."""
    def run(*bufs, k, eps):
        if bufs[0].dtype != np.float16:
            return lowering(*bufs, k=k, eps=eps)
        return lowering(*[b.astype(np.float32) for b in bufs], k=k, eps=eps).astype(np.float16)
    return run


@layer_norm_p.def_impl("cpu")
@_half_in_float32
def _layer_norm_cpu(x, *, k, eps):
    loops = _compiled(k, x)
    if loops is not None:
        n, scalars = _scalars(x, k, eps)
        out = np.empty(x.shape, x.dtype)
        loops[0](x.reshape(-1), *scalars, out.reshape(-1), np.empty(n, x.dtype))
        return out
    with np.errstate(all="ignore"):  # (no elements to normalize over: nan, as PyTorch)
        centered, r = _stats(x, k, eps)
        return centered * r


@layer_norm_backward_p.def_impl("cpu")
@_half_in_float32
def _layer_norm_backward_cpu(g, x, *, k, eps):
    loops = _compiled(k, x, g)
    if loops is not None:
        n, scalars = _scalars(x, k, eps)
        out = np.empty(x.shape, x.dtype)
        loops[1](g.reshape(-1), x.reshape(-1), *scalars, out.reshape(-1), np.empty(n, x.dtype), np.empty(n, x.dtype))
        return out
    axes = _axes(x.ndim, k)
    n = prod(x.shape[a] for a in axes)
    with np.errstate(all="ignore"):
        centered, r = _stats(x, k, eps)
        xhat = centered * r
        mean_g = _sum_cpu(g, axis=axes, keepdims=True) / n
        mean_gx = _sum_cpu(g * xhat, axis=axes, keepdims=True) / n
        return r * ((g - mean_g) - xhat * mean_gx)
