"""softmax and log_softmax as primitives, as PyTorch has _softmax and _log_softmax: one lowering each, and
VJPs that read the output, g - exp(out) * sum(g) and out * (g - sum(g * out)), as PyTorch's backward kernels.

Written as composites (a stop-gradient max, the where that turns an infinite max into nan, exp, sum, log,
subtractions) they were ~12 ops forward and ~8 backward for autograd to record and for jit to run one by one;
a cross-entropy step on (128, 10) logits spent more in dispatch than in arithmetic. The lowerings run the
composites' NumPy operations in the composites' order, so the values are the same bits; over an empty axis
the result is empty, and a row whose max is infinite is nan, as PyTorch gives.
"""
import numpy as np

from .. import dtypes as dt
from ..primitive import Primitive
from .elementwise import exp, mul, sub
from .reduction import _check_axes, _reduce_batch, _sum_cpu, sum_p

__all__ = ["softmax_p", "log_softmax_p"]


def _meta(name):
    def meta(x, *, axis):
        _check_axes(name, x, axis)
        if x.dtype.category != dt.FLOAT:
            raise TypeError(f"{name}: expected a real floating-point array, got {x.dtype}")
        return x.shape, x.dtype
    return meta


def _sum(x, axis):
    return sum_p.bind(x, axis=axis, keepdims=True)


log_softmax_p = Primitive(
    "log_softmax", _meta("log_softmax"), vjp_reads=("out",),
    vjp=(lambda g, out, x, *, axis: sub(g, mul(exp(out), _sum(g, axis))),),
    jvp=lambda ts, out, x, *, axis: sub(ts[0], _sum(mul(exp(out), ts[0]), axis)))
softmax_p = Primitive(
    "softmax", _meta("softmax"), vjp_reads=("out",),
    vjp=(lambda g, out, x, *, axis: mul(out, sub(g, _sum(mul(g, out), axis))),),
    jvp=lambda ts, out, x, *, axis: mul(out, sub(ts[0], _sum(mul(out, ts[0]), axis))))
log_softmax_p.batch = _reduce_batch(log_softmax_p)
softmax_p.batch = _reduce_batch(softmax_p)


def _shifted(x, axis):
    """x minus its max over `axis` (kept), the max nan where it is infinite."""
    n = x.shape[-1] if x.ndim else 0
    if 1 < n <= _SHORT_ROWS and axis == (x.ndim - 1,) and x.flags.c_contiguous:
        # short rows (classes of a classifier): NumPy's max runs a loop per row (6.7 us at (128, 10)); over the
        # Fortran-ordered copy it is one elementwise maximum per column (2.1 us). A max is exact in any order
        # (signed zeros aside, which cannot change a result: see the tests)
        rows = np.asfortranarray(x.reshape(-1, n))
        m = np.maximum.reduce(rows, axis=1).reshape(x.shape[:-1] + (1,))
    else:
        m = np.maximum.reduce(x, axis=axis if x.ndim else None, keepdims=True)
    finite = np.isfinite(m)
    if not finite.all():
        m = np.where(finite, m, m.dtype.type(np.nan))
    return x - m


_SHORT_ROWS = 32


def _sum_exp(e, axis):
    return _sum_cpu(e, axis=axis, keepdims=True)  # (sum's own lowering: its accumulation and rounding)


@log_softmax_p.def_impl("cpu")
def _log_softmax_cpu(x, *, axis):
    if x.size == 0:
        return x.copy()
    s = _shifted(x, axis)
    return s - np.log(_sum_exp(np.exp(s), axis))


@softmax_p.def_impl("cpu")
def _softmax_cpu(x, *, axis):
    if x.size == 0:
        return x.copy()
    e = np.exp(_shifted(x, axis))
    return e / _sum_exp(e, axis)
