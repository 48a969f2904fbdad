"""Scans along one axis: cumulative_sum / cumulative_prod (jax.numpy names), cumprod, cummax, cummin,
logcumsumexp.

cumsum is a primitive of the reduction family; the others are composites, except the running
arg-extremum index (cumargmax_p / cumargmin_p), which has a data-dependent answer and no derivative:
cummax's values are `take_along_axis(x, index)`, so their gradient goes to the index, as in PyTorch.

cumprod and logcumsumexp are Hillis-Steele scans: log2(n) shifted combines of the whole array
(`x_i <- x_i (op) x_{i-k}` for k = 1, 2, 4, ...). Made of mul / logaddexp only, they are exact with
zeros in the input (no division: PyTorch's own backward takes care to handle zeros), stable (a
running logaddexp never forms exp of a large number), and differentiable to any order for free.
"""
import math

import numpy as np

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import move_to_front, normalize_axis
from .elementwise import abs, add, cast, eq, exp, log1p, maximum, mul, neg, sub, where
from .indexing import take_along_axis
from .reduction import cumsum
from .shape import concatenate, pad_p, reshape
from .creation import zeros

__all__ = [
    "cumargmax_p", "cumargmin_p", "cumulative_sum", "cumulative_prod", "cumprod", "cummax", "cummin",
    "logcumsumexp",
]


def _operand(x):
    x = _family.as_operand(x)
    return x if _family.is_arraylike(x) else _family.asarray(x)


def _shifted(x, axis, k, fill):
    """x moved k places towards the end of `axis`, `fill` in the k places freed at the start."""
    pw = tuple(((k, -k) if a == axis else (0, 0)) for a in range(x.ndim))
    return pad_p.bind(x, pad_width=pw, value=fill)


def _scan(x, axis, combine, identity):
    """Inclusive scan of x along `axis` with an associative `combine` (Hillis-Steele, log2(n) steps)."""
    n = x.shape[axis] if x.ndim else 1
    k = 1
    while k < n:
        x = combine(x, _shifted(x, axis, k, identity))
        k *= 2
    return x


def _scan_args(name, x, axis):
    x = _operand(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return x, normalize_axis(axis, x.ndim, name)


def _int64_if_integral(x):
    """Integer and bool scans accumulate in int64, as torch's cumsum / cumprod."""
    return cast(x, dt.int64) if x.dtype.category in (dt.BOOL, dt.INT) else x


def cumprod(x, axis=None, dtype=None):
    """Cumulative product along `axis` (of the flattened array when None); integers give int64.
    The gradient is exact where x has zeros."""
    x, axis = _scan_args("cumprod", x, axis)
    x = _int64_if_integral(x) if dtype is None else cast(x, dtype)
    if dt.is_float(x.dtype) and x.dtype.itemsize < 4:  # half precision multiplies in float32, as torch
        return cast(_scan(cast(x, dt.float32), axis, mul, 1), x.dtype)
    return _scan(x, axis, mul, 1)


def _with_initial(out, axis, value):
    first = zeros(tuple(1 if a == axis else s for a, s in enumerate(out.shape)), dtype=out.dtype, device=out.device)
    if value:
        first = add(first, value)
    return concatenate([first, out], axis)


def _cumulative_axis(name, x, axis):
    """The axis of jax.numpy's cumulative_* functions: required unless x is 1-D; 0-d arrays refused."""
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for an array of {x.ndim} dimensions")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{name}: an array of at least one dimension is required")
    return normalize_axis(axis, x.ndim, name)


def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    """jax.numpy.cumulative_sum: cumsum along `axis`, optionally with the empty sum 0 first."""
    x = _operand(x)
    axis = _cumulative_axis("cumulative_sum", x, axis)
    dtype = dt.sum_dtype(x) if dtype is None else dt.canonicalize(dtype)
    out = cast(cumsum(cast(x, dtype), axis), dtype)
    return _with_initial(out, axis, 0) if include_initial else out


def cumulative_prod(x, axis=None, dtype=None, include_initial=False):
    """jax.numpy.cumulative_prod: cumprod along `axis`, optionally with the empty product 1 first."""
    x = _operand(x)
    axis = _cumulative_axis("cumulative_prod", x, axis)
    dtype = dt.sum_dtype(x) if dtype is None else dt.canonicalize(dtype)
    out = cast(cumprod(x, axis, dtype), dtype)
    return _with_initial(out, axis, 1) if include_initial else out


# ---------------------------------------------------------------------------
# running arg-extremum: the index cummax / cummin report


def _cumarg_meta(name):
    def meta(x, *, axis):
        if not 0 <= axis < max(x.ndim, 1):
            raise IndexError(f"{name}: axis {axis} is out of range for an array of {x.ndim} dimensions")
        return x.shape, dt.int64
    return meta


def _cumarg_cpu(accumulate):
    def impl(x, *, axis):
        if x.ndim == 0:
            return np.zeros((), np.int64)
        running = accumulate(x, axis=axis)  # nan propagates: once seen, the running value stays nan
        # PyTorch's rule: the index moves to i when x_i ties or beats the running value, or is nan
        hit = (x == running) | (x != x)
        pos = np.arange(x.shape[axis], dtype=np.int64).reshape((-1,) + (1,) * (x.ndim - 1 - axis))
        return np.maximum.accumulate(np.where(hit, pos, 0), axis=axis)
    return impl


def _cumarg_batch(prim):
    def rule(vals, bdims, *, axis):
        x = move_to_front(vals[0], bdims[0])
        if len(x.shape) == 1:  # a 0-d value: its index is 0
            return reshape(prim.bind(reshape(x, (x.shape[0], 1)), axis=1), (x.shape[0],)), 0
        return prim.bind(x, axis=axis + 1), 0
    return rule


cumargmax_p = Primitive("cumargmax", _cumarg_meta("cumargmax"))
cumargmax_p.batch = _cumarg_batch(cumargmax_p)
cumargmax_p.def_impl("cpu")(_cumarg_cpu(np.maximum.accumulate))
cumargmin_p = Primitive("cumargmin", _cumarg_meta("cumargmin"))
cumargmin_p.batch = _cumarg_batch(cumargmin_p)
cumargmin_p.def_impl("cpu")(_cumarg_cpu(np.minimum.accumulate))


def _cumext(prim, name, x, axis):
    x = _operand(x)
    axis = normalize_axis(axis, x.ndim, name)
    idx = prim.bind(x, axis=axis)
    if x.ndim == 0:
        return x, idx
    return take_along_axis(x, idx, axis), idx


def cummax(x, axis):
    """(values, indices): the running maximum along `axis` and where it was attained (the latest of
    ties; nan propagates), as torch.cummax. The values' gradient goes to those indices."""
    return _cumext(cumargmax_p, "cummax", x, axis)


def cummin(x, axis):
    """(values, indices): the running minimum along `axis`, as torch.cummin."""
    return _cumext(cumargmin_p, "cummin", x, axis)


# ---------------------------------------------------------------------------
# logcumsumexp


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal operands (-inf ones too) give max + log 2,
    and then the gradient splits evenly (max's tie rule; the where masks the |a - b| kink)."""
    m = maximum(a, b)
    same = eq(a, b)
    d = where(same, 0.0, neg(abs(sub(a, b))))
    return add(m, log1p(exp(d)))


def logcumsumexp(x, axis):
    """log(cumsum(exp(x))) along `axis`, computed stably (a running logaddexp)."""
    x = _operand(x)
    _family.require_float("logcumsumexp", x)
    axis = normalize_axis(axis, x.ndim, "logcumsumexp")
    if x.ndim == 0:
        return x
    if x.dtype.itemsize < 4:
        return cast(_scan(cast(x, dt.float32), axis, _logaddexp, -math.inf), x.dtype)
    return _scan(x, axis, _logaddexp, -math.inf)

