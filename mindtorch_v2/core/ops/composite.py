"""Composites: ops built from primitives, with no rules of their own
(their derivatives come from the primitives they are made of)."""
import builtins
import functools
import math

from .. import dtypes as dt
from . import _family
from .creation import arange, zeros
from .elementwise import (abs, add, cast, ceil, div, exp, eq, floor, floor_divide, ge, gt, le, log, logical_and, lt,
                          mul, ne, pow, real, conj, remainder, sqrt, stop_gradient, sub, where)
from .indexing import index_add
from .reduction import max, min, sum
from .shape import broadcast_to, concatenate, reshape, slice_axis
from .softmax import log_softmax_p, softmax_p

__all__ = [
    "mean", "var", "std", "square", "isfinite", "logsumexp", "softmax", "log_softmax", "norm", "clamp", "clip",
    "trunc", "trunc_divide", "fmod", "log2", "log10", "tril", "triu", "roll", "tile", "diag",
]


_float = _family.as_float


def _count(x, axis):
    axes = _family.normalize_axes(axis, x.ndim, "mean")
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


_HALF = (dt.float16, dt.bfloat16, dt.float8_e4m3fn, dt.float8_e5m2)


def _in_float32(fn):
    """fn computed in float32 for half-precision inputs and rounded back once, as PyTorch accumulates them
    (a float16 mean of three 60000s is 60000, not the inf of a float16 sum)."""
    @functools.wraps(fn)
    def wrapped(x, *args, **kwargs):
        x = _float(x)
        if x.dtype in _HALF:
            return cast(fn(cast(x, dt.float32), *args, **kwargs), x.dtype)
        return fn(x, *args, **kwargs)
    return wrapped


@_in_float32
def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over `axis` (integer inputs give the default float)."""
    return div(sum(x, axis, keepdims), _count(x, axis))


@_in_float32
def var(x, axis=None, ddof=0, keepdims=False, *, correction=None):
    """Variance over `axis` with `ddof` (the standard's and torch's `correction`) delta degrees of freedom;
    complex inputs give the real variance E|x - mean|^2."""
    if correction is not None:
        ddof = correction
    d = sub(x, mean(x, axis, keepdims=True))
    d2 = real(mul(d, conj(d))) if x.dtype.category == dt.COMPLEX else mul(d, d)
    n = _count(x, axis)
    return div(sum(d2, axis, keepdims), builtins.max(n - ddof, 0) if n else 0)  # nan for no elements


def std(x, axis=None, ddof=0, keepdims=False, *, correction=None):
    """Standard deviation over `axis` with `ddof` (or `correction`) delta degrees of freedom."""
    return sqrt(var(x, axis, ddof if correction is None else correction, keepdims))


def square(x):
    return mul(x, x)


def isfinite(x):
    if x.dtype.category < dt.FLOAT:
        return eq(x, x)
    return logical_and(eq(x, x), lt(abs(x), math.inf))  # complex: |z| is finite iff both parts are


def _stable_shift(x, axis, finite=True):
    """max(x) over axis (no gradient) to subtract before exp; 0 for empty axes. With `finite`, 0 where the
    max is infinite (logsumexp([-inf, -inf]) is -inf, of [inf, 1] inf); without, an infinite max makes the
    result nan, as torch's softmax and log_softmax give."""
    axes = _family.normalize_axes(axis, x.ndim, "softmax")
    if builtins.any(x.shape[a] == 0 for a in axes):
        return 0.0
    m = stop_gradient(max(x, axis, keepdims=True))
    # an infinite max gives nan either way; shifting by nan (not inf) gets it without inf - inf warnings
    return where(isfinite(m), m, 0.0 if finite else math.nan)


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over `axis`, computed stably."""
    x = _float(x)
    m = _stable_shift(x, axis)
    out = add(log(sum(exp(sub(x, m)), axis, keepdims=True)), m)
    if not keepdims:
        axes = _family.normalize_axes(axis, x.ndim, "logsumexp")
        out = reshape(out, tuple(s for i, s in enumerate(x.shape) if i not in axes))
    return out


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`, computed stably (the softmax primitive; complex x as this
    composite)."""
    x = _float(x)
    if x.dtype.category == dt.FLOAT:
        return softmax_p.bind(x, axis=_family.normalize_axes(axis, x.ndim, "softmax"))
    e = exp(sub(x, _stable_shift(x, axis, finite=False)))
    return div(e, sum(e, axis, keepdims=True))


def log_softmax(x, axis=-1):
    """x - log(sum(exp(x))) along `axis`, computed stably (the log_softmax primitive; complex x as this
    composite)."""
    x = _float(x)
    if x.dtype.category == dt.FLOAT:
        return log_softmax_p.bind(x, axis=_family.normalize_axes(axis, x.ndim, "log_softmax"))
    shifted = sub(x, _stable_shift(x, axis, finite=False))
    return sub(shifted, log(sum(exp(shifted), axis, keepdims=True)))


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector p-norm over `axis` (ord: None/2/'fro', 1, inf, -inf, 0 or any p > 0); complex: of |x|."""
    x = _float(x)
    if x.dtype.category == dt.COMPLEX:
        x = abs(x)
    if ord is None or ord == 2 or ord == "fro":
        s = sum(mul(x, x), axis, keepdims)
        zero = eq(s, 0.0)
        # the gradient at 0 is 0 (as in PyTorch), not 0 * inf
        return where(zero, 0.0, sqrt(where(zero, 1.0, s)))
    if ord == 1:
        return sum(abs(x), axis, keepdims)
    if ord == math.inf:
        return max(abs(x), axis, keepdims)
    if ord == -math.inf:
        return min(abs(x), axis, keepdims)
    if ord == 0:  # the count of non-zeros, NaN included (NaN != 0)
        return sum(cast(ne(x, 0.0), x.dtype), axis, keepdims)
    if isinstance(ord, (int, float)) and not isinstance(ord, bool):
        return pow(sum(pow(abs(x), float(ord)), axis, keepdims), 1.0 / ord)
    raise ValueError(f"norm: unsupported ord {ord!r}")


def clamp(x, min=None, max=None):  # noqa: A002 - torch's argument names
    """x limited to [min, max]; the gradient passes where min <= x <= max, as in PyTorch."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    out = x
    if min is not None:
        out = where(lt(out, min), min, out)
    if max is not None:
        out = where(gt(out, max), max, out)
    return out


def clip(x, /, min=None, max=None):  # noqa: A002 - the standard's argument names
    """The standard's clip: clamp, and x itself when neither bound is given."""
    return x if min is None and max is None else clamp(x, min, max)



# ---------------------------------------------------------------------------
# rounding and remainders


def trunc(x):
    """x rounded toward zero."""
    return where(lt(x, 0), ceil(x), floor(x))


def trunc_divide(x, y):
    """x / y rounded toward zero; integers stay integers (exact, from the floor quotient: a float
    quotient loses int64 precision)."""
    x, y = _family.promote("trunc_divide", x, y)
    if x.dtype.category == dt.FLOAT:
        return trunc(div(x, y))
    q = floor_divide(x, y)
    inexact = ne(remainder(x, y), 0)
    return where(logical_and(inexact, ne(lt(x, 0), lt(y, 0))), add(q, 1), q)


def fmod(x, y):
    """C's fmod (the sign of the dividend), exact: sign(x) * remainder(|x|, |y|), with |x| as x * s for
    s = +-1 so that d/dx is 1 at x = 0 too; integers stay integers."""
    x, y = _family.promote("fmod", x, y)
    if not x.dtype.is_signed:
        return remainder(x, y)
    sx = sub(1, mul(2, cast(lt(x, 0), x.dtype)))
    sy = sub(1, mul(2, cast(lt(y, 0), y.dtype)))
    return mul(sx, remainder(mul(x, sx), mul(y, sy)))


def log2(x):
    return div(log(x), math.log(2.0))


def log10(x):
    return div(log(x), math.log(10.0))


# ---------------------------------------------------------------------------
# structure: triangles, rolls, tiles, diagonals


def _triangle(x, k, lower):
    n, m = x.shape[-2], x.shape[-1]
    diff = sub(reshape(arange(m, device=x.device), (1, m)), reshape(arange(n, device=x.device), (n, 1)))
    keep = le(diff, k) if lower else ge(diff, k)
    return where(keep, x, zeros((), dtype=x.dtype, device=x.device))


def tril(x, k=0):
    """x with the elements above the k-th diagonal of its last two axes zeroed."""
    return _triangle(x, k, lower=True)


def triu(x, k=0):
    """x with the elements below the k-th diagonal of its last two axes zeroed."""
    return _triangle(x, k, lower=False)


def roll(x, shift, axis=None):
    """x with elements shifted along axis (cyclically); axis=None rolls the flattened array."""
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for s, a in zip(shifts, axes):
        a = _family.normalize_axis(a, x.ndim, "roll")
        n = x.shape[a]
        if n == 0:
            continue
        s %= n
        if s:
            x = concatenate([slice_axis(x, a, n - s, n), slice_axis(x, a, 0, n - s)], a)
    return x


def tile(x, reps):
    """x repeated reps[i] times along axis i (reps longer than x.ndim adds leading axes)."""
    reps = tuple(int(r) for r in reps)
    reps = (1,) * (x.ndim - len(reps)) + reps  # reps shorter than x.ndim repeat the trailing axes
    x = reshape(x, (1,) * (len(reps) - x.ndim) + tuple(x.shape))
    # interleave a new axis before each axis, broadcast it to the repeat count, then merge
    inter = []
    for s in x.shape:
        inter += [1, s]
    x = reshape(x, tuple(inter))
    target = []
    for r, s in zip(reps, x.shape[1::2]):
        target += [r, s]
    x = broadcast_to(x, tuple(target))
    return reshape(x, tuple(r * s for r, s in zip(reps, target[1::2])))


def diag(x, k=0):
    """The (n + |k|)-square matrix with the 1-D x on its k-th diagonal."""
    n = x.shape[0] + builtins.abs(k)
    idx = arange(x.shape[0], device=x.device)
    flat = add(mul(add(idx, builtins.max(-k, 0)), n), add(idx, builtins.max(k, 0)))
    out = index_add(zeros((n * n,), dtype=x.dtype, device=x.device), flat, x, axis=0)
    return reshape(out, (n, n))
