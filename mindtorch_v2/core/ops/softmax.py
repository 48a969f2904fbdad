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
from . import _family, _rows
from .reduction import _ROW_SUM_DTYPES, _check_axes, _reduce_batch, _short_rows, _sum_cpu, sum_p

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
        # (but for which of two zeros it returns: see below)
        rows = np.asfortranarray(x.reshape(-1, n))
        m = np.maximum.reduce(rows, axis=1).reshape(x.shape[:-1] + (1,))
    else:
        m = np.maximum.reduce(x, axis=axis if x.ndim else None, keepdims=True)
    finite = np.isfinite(m)
    if not finite.all():
        m = np.where(finite, m, m.dtype.type(np.nan))
    # a zero max as -0.0: which zero a max returns depends on its order (NumPy's SIMD max takes the later of
    # two), and log_softmax's x - m would give -0.0 or +0.0 for an x of -0.0 by it. -0.0 makes it +0.0 for
    # both zeros, as PyTorch gives; _rows' loop does the same
    m = np.where(m == 0, m.dtype.type(-0.0), m)
    return x - m


_SHORT_ROWS = 32


def _sum_exp(e, axis):
    return _sum_cpu(e, axis=axis, keepdims=True)  # (sum's own lowering: its accumulation and rounding)


# Over short rows of a C-ordered float32 / float64 array, with numba installed, the lowerings run _rows' loops:
# the NumPy lowering's operations compiled, but for NumPy's exp and log (the fast extra keeps NumPy's bits).
# (1024, 32) float32: softmax 67 -> 37 us, log_softmax 68 -> 45 us; (128, 10) log_softmax 14.5 -> 6.7 us. Each
# such lowering is one flat closure per shape and dtype (_by_rows), which jit runs as the equation's lowering
# (`specialized`): right after a GEMM every Python-level step costs several times its warm time.

_BY_ROWS = {}


def _by_rows(shape, dtype, axis, log):
    """The lowering of log_softmax (log) or softmax over these short rows, as one closure (for a C-ordered x; the
    generic lowering for another), or None where the loops do not apply (or do not run yet: _rows.ready)."""
    key = (shape, dtype, axis, log)
    fn = _BY_ROWS.get(key)
    if fn is not None or key in _BY_ROWS:
        return fn
    rows = _short_rows(shape, axis) if dtype in _ROW_SUM_DTYPES else None
    if rows is not None and not _rows.ready(rows[0]):
        return None  # (asked again next call: ready counts the rows NumPy sums meanwhile)
    if rows is not None:
        fn = _rows_lowering(shape, dtype, axis, *rows, log)
    if len(_BY_ROWS) >= 256:  # (bounded: a program of many shapes starts over)
        _BY_ROWS.clear()
    _BY_ROWS[key] = fn
    return fn


def _rows_lowering(shape, dtype, axis, rows, n, log):
    shift, scale, row_sums, row_sub = _rows.softmax_loops()
    empty, exp, ln, nan = np.empty, np.exp, np.log, dtype.type(np.nan)
    numpy_path = _log_softmax_numpy if log else _softmax_numpy

    def lowering(x):
        if not x.flags.c_contiguous:
            return numpy_path(x, axis)
        s = empty(shape, dtype)
        flat = s.reshape(-1)
        shift(x.reshape(-1), n, nan, flat)
        if log:
            sums = empty(rows, dtype)
            row_sums(exp(s).reshape(-1), n, sums)
            row_sub(flat, n, ln(sums))
        else:
            exp(s, out=s)
            scale(flat, n)
        return s
    return lowering


def _log_softmax_numpy(x, axis):
    s = _shifted(x, axis)
    return s - np.log(_sum_exp(np.exp(s), axis))


def _softmax_numpy(x, axis):
    e = np.exp(_shifted(x, axis))
    return e / _sum_exp(e, axis)


def _rows_rule(log):
    """jit's rule (`specialized`): the _by_rows closure for the equation's avals, or None."""
    return lambda e: _by_rows(e.invars[0].shape, e.invars[0].dtype.np, e.params["axis"], log)


@log_softmax_p.def_impl("cpu")
@_family.specialized(_rows_rule(True))
def _log_softmax_cpu(x, *, axis):
    if x.size == 0:
        return x.copy()
    fn = _by_rows(x.shape, x.dtype, axis, True) if x.flags.c_contiguous else None  # (_rows.ready counts C rows)
    return fn(x) if fn is not None else _log_softmax_numpy(x, axis)


@softmax_p.def_impl("cpu")
@_family.specialized(_rows_rule(False))
def _softmax_cpu(x, *, axis):
    if x.size == 0:
        return x.copy()
    fn = _by_rows(x.shape, x.dtype, axis, False) if x.flags.c_contiguous else None  # (_rows.ready counts C rows)
    return fn(x) if fn is not None else _softmax_numpy(x, axis)
