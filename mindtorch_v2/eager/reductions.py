"""Torch names for scans, order statistics and histograms (core/ops/scan.py, core/ops/statistics.py):
cumprod, cummax, cummin, logcumsumexp, nansum, nanmean, median, nanmedian, quantile, nanquantile,
kthvalue, mode, aminmax, var_mean, std_mean, histc, bincount.

Ops returning (values, indices) return torch.return_types-like named tuples and take `out=` as a pair
of tensors, written as torch does (resized on a shape mismatch). torch's dtype refusals and messages
are checked here, before the core runs.
"""
import math

from .. import core
from ..core import dtypes as _dt
from .declare import torch_op, write_out_tuple
from . import return_types
from .ops import _axis, _t, _w, mean, std, var
from .tensor import Tensor, UnsupportedDTypeError, _dim

__all__ = [
    "cumprod", "cummax", "cummin", "logcumsumexp", "nansum", "nanmean", "median", "nanmedian", "quantile",
    "nanquantile", "kthvalue", "mode", "aminmax", "var_mean", "std_mean", "histc", "bincount",
]


_cummax_t, _cummin_t = return_types.cummax, return_types.cummin
_median_t, _nanmedian_t = return_types.median, return_types.nanmedian
_kthvalue_t, _mode_t, _aminmax_t = return_types.kthvalue, return_types.mode, return_types.aminmax

_FLOAT = _dt.FLOAT


def _is_float(x):
    return x.dtype.category == _FLOAT


def _pair_op(name, rtype, compute):
    """A torch function returning `rtype` (values, indices), with out= as a pair."""
    def op(*args, out=None, **kwargs):
        res = rtype(*(_w(r) for r in compute(*args, **kwargs)))
        return res if out is None else write_out_tuple(name, out, res)
    op.__name__ = name
    return op


# ---------------------------------------------------------------------------
# scans


@torch_op(inplace=True, out=True)
def cumprod(input, dim, *, dtype=None):
    x = _t(input)
    return _w(core.cumprod(x, _dim(dim, x.ndim), None if dtype is None else _dt.canonicalize(dtype)))


def _cumext(core_fn):
    def compute(input, dim):
        x = _t(input)
        return core_fn(x, _dim(dim, x.ndim))
    return compute


cummax = torch_op(_pair_op("cummax", _cummax_t, _cumext(core.cummax)), name="cummax")
cummin = torch_op(_pair_op("cummin", _cummin_t, _cumext(core.cummin)), name="cummin")


@torch_op(out=True)
def logcumsumexp(input, dim):
    x = _t(input)
    if not _is_float(x):
        raise UnsupportedDTypeError(f'"logcumsumexp_out_cpu" not implemented for {x.dtype.scalar_name!r}')
    return _w(core.logcumsumexp(x, _dim(dim, x.ndim)))


# ---------------------------------------------------------------------------
# nan-ignoring reductions


@torch_op(out=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = _t(input)
    if dtype is None and x.dtype.category == _dt.INT and not x.dtype.is_signed:
        dtype = _dt.int64  # torch's integer sums are int64 (the core's stay unsigned)
    if dtype is not None:
        dtype = _dt.canonicalize(dtype)
        x = _w(core.cast(x, dtype))
    return _w(core.nansum(x, _axis(dim, x.ndim), bool(keepdim), dtype))


@torch_op(out=True)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    x = _t(input)
    if not _is_float(x):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{x.dtype.scalar_name}")
    if dtype is not None:
        x = _w(core.cast(x, _dt.canonicalize(dtype)))
    return _w(core.nanmean(x, _axis(dim, x.ndim), bool(keepdim)))


# ---------------------------------------------------------------------------
# order statistics


def _check_selectable(name, x, d):
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _evenly(x, value):
    """`value` (an element of x) with its gradient shared evenly by the elements of x equal to it (nan:
    by its nans), torch's rule for median() and nanmedian() without dim: max of x masked to those
    elements is exactly `value`, and max's VJP splits evenly among ties."""
    v = core.stop_gradient(value)
    hit = core.logical_or(core.eq(x, v), core.logical_and(core.ne(x, x), core.ne(v, v)))
    return core.max(core.where(hit, x, -math.inf if _is_float(x) else core.min(x)))


_EMPTY_MEDIAN = {_dt.float16: math.nan, _dt.float32: math.nan, _dt.float64: math.nan, _dt.int32: -2 ** 31,
                 _dt.int64: -2 ** 63, _dt.bool_: True}


def _refuse_bool(kernel, x, applies=True):
    """torch's selection kernels refuse bool (some answer empty or 0-d inputs before the check: `applies`)."""
    if x.dtype is _dt.bool_ and applies:
        raise UnsupportedDTypeError(f'"{kernel}" not implemented for \'Bool\'')


def _median_all(name, core_fn, input):
    x = _t(input)
    _refuse_bool("median_cpu", x, x.numel() > 0)
    if x.numel() == 0:  # torch: nan, converted to an integer dtype as the C++ cast does on x86
        return _w(core.full((), _EMPTY_MEDIAN.get(x.dtype, 0), dtype=x.dtype, device=x.device))
    values, _ = core_fn(x)
    return _w(_evenly(x, values))


def _median_op(name, rtype, core_fn):
    def compute(input, dim, keepdim=False):
        x = _t(input)
        d = _dim(dim, x.ndim)
        _check_selectable(name, x, d)
        _refuse_bool("median_out", x)
        return core_fn(x, d, bool(keepdim))

    pair = _pair_op(name, rtype, compute)

    def op(input, dim=None, keepdim=False, *, out=None):
        if dim is None:
            if out is not None:
                raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
            return _median_all(name, core_fn, input)
        return pair(input, dim, keepdim, out=out)
    op.__name__ = name
    return op


median = torch_op(_median_op("median", _median_t, core.median_low), name="median")
nanmedian = torch_op(_median_op("nanmedian", _nanmedian_t, core.nanmedian_low), name="nanmedian")


def _kthvalue(input, k, dim=-1, keepdim=False):
    x = _t(input)
    _refuse_bool("kthvalue_cpu", x, x.ndim > 0 and x.numel() > 0)
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return core.kthvalue(x, k, d, bool(keepdim))


kthvalue = torch_op(_pair_op("kthvalue", _kthvalue_t, _kthvalue), name="kthvalue")


def _mode(input, dim=-1, keepdim=False):
    x = _t(input)
    d = _dim(dim, x.ndim)
    _check_selectable("mode", x, d)
    return core.mode(x, d, bool(keepdim))


mode = torch_op(_pair_op("mode", _mode_t, _mode), name="mode")

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    x = _t(input)
    if x.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.device.type != "meta" and q.numel() and not bool(core.all(core.logical_and(core.ge(q, 0), core.le(q, 1)))):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    else:
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if x.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    axis = None if dim is None else _dim(dim, x.ndim)
    fn = core.nanquantile if ignore_nan else core.quantile
    return _w(fn(x, q, axis, interpolation, bool(keepdim)))


@torch_op(out=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@torch_op(out=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


def _aminmax(input, *, dim=None, keepdim=False):
    x = _t(input)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        axis = None
    else:
        axis = _dim(dim, x.ndim)
        if x.ndim and x.shape[axis] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero size.")
    keep = bool(keepdim)
    lo, hi = core.min(x, axis, keep), core.max(x, axis, keep)
    return lo, hi


aminmax = torch_op(_pair_op("aminmax", _aminmax_t, _aminmax), name="aminmax")


def _moments(second, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # the var_mean(input, unbiased) overload
        dim, unbiased = None, dim
    return (second(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over dim, as torch.var_mean (a plain tuple)."""
    return _moments(var, input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over dim, as torch.std_mean (a plain tuple)."""
    return _moments(std, input, dim, unbiased, keepdim, correction)


# ---------------------------------------------------------------------------
# histograms


def _fmt(v):
    return "-nan" if v != v else f"{v:g}"


@torch_op(out=True)
def histc(input, bins=100, min=0, max=0):  # noqa: A002
    x = _t(input)
    if not _is_float(x):
        raise UnsupportedDTypeError(f'"histogram_cpu" not implemented for {x.dtype.scalar_name!r}')
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = float(min), float(max)
    if lo == hi and x.numel() and x.device.type != "meta":
        lo, hi = float(core.min(x)), float(core.max(x))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    return _w(core.histc(x.detach(), bins, min, max))  # not differentiable


@torch_op
def bincount(input, weights=None, minlength=0):
    x = _t(input)
    if x.dtype.category != _dt.INT:
        raise UnsupportedDTypeError(f'"bincount_cpu" not implemented for {x.dtype.scalar_name!r}')
    if x.ndim != 1 or (x.numel() and int(core.min(x)) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None:
        weights = _t(weights)
        if weights.ndim != 1 or weights.shape[0] != x.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        if weights.dtype not in (_dt.float32, _dt.float64):  # torch counts other weights in double
            weights = _w(core.cast(weights, _dt.float64))
    return _w(core.bincount(x, weights, minlength))
