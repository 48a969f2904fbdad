"""torch.testing: `assert_close` with torch's default tolerances and messages, and `make_tensor`.

`assert_close` pairs its inputs as torch does (sequences item by item, mappings key by key, tensors with
tensors, Python numbers with numbers), checks shape, device, dtype (and stride on request), then the
values with |actual - expected| <= atol + rtol * |expected|; a failure raises AssertionError with
torch's text ("Tensor-likes are not close!\\n\\nMismatched elements: ..."). Meta tensors are compared
on their metadata only, as in torch.
"""
import collections.abc
import math
import numbers

import numpy as np

from .core import dtypes as _dt
from .eager.complex_ops import view_as_complex
from .eager.creation import empty
from .eager.random_ops import randint
from .eager.shape_ops import repeat_interleave
from .eager.tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# dtype -> (rtol, atol) torch uses when neither is given; other dtypes compare for equality
_DEFAULT_TOLERANCES = {
    _dt.float16: (1e-3, 1e-5), _dt.bfloat16: (1.6e-2, 1e-5), _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7), _dt.complex64: (1.3e-6, 1e-5), _dt.complex128: (1e-7, 1e-7),
}
_SCALAR_DTYPES = {bool: _dt.bool_, int: _dt.int64, float: _dt.float64, complex: _dt.complex128}


class _Mismatch(Exception):
    """A failed check: the exception type torch raises, its message, and where in the inputs it occurred."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless actual and expected are close (see the module docstring); return None."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as m:
        text = m.message
        if m.kind is AssertionError and msg is not None:
            text = msg(text) if callable(msg) else msg
        elif m.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in m.path)
        raise m.kind(text) from None


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _compare(actual, expected, path, options):
    if actual is None and expected is None:
        return
    if isinstance(actual, Tensor) and isinstance(expected, Tensor):
        return _compare_tensors(actual, expected, path, **options)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, path, **options)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\nMissing keys in the actual "
                            f"mapping: {sorted(missing)}\nAdditional keys in the actual mapping: {sorted(extra)}", path)
        for k in sorted(actual, key=str):
            _compare(actual[k], expected[k], path + (k,), options)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.", path)


def _is_number(x):
    return isinstance(x, (numbers.Number, np.number, np.bool_)) and not isinstance(x, Tensor)


def _tolerances(dtypes, rtol, atol):
    if rtol is not None:
        return rtol, atol
    pairs = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _compare_numbers(actual, expected, path, *, rtol, atol, equal_nan, check_dtype, **_):
    ta, te = _scalar_type(actual), _scalar_type(expected)
    if check_dtype and ta is not te:
        raise _Mismatch(AssertionError, f"The (d)types do not match: {ta} != {te}.", path)
    rtol, atol = _tolerances((_SCALAR_DTYPES[ta], _SCALAR_DTYPES[te]), rtol, atol)
    a, e = (complex(actual), complex(expected)) if complex in (ta, te) else (actual, expected)
    if not _close(np.asarray(a), np.asarray(e), rtol, atol, equal_nan):
        raise _Mismatch(AssertionError, _scalar_message(a, e, rtol, atol), path)


def _scalar_type(x):
    for t in (bool, int, float):
        if isinstance(x, (t, np.bool_ if t is bool else np.integer if t is int else np.floating)):
            return t
    return complex


def _close(a, e, rtol, atol, equal_nan):
    """Elementwise |a - e| <= atol + rtol * |e| (equal infinities match; NaN matches NaN with equal_nan)."""
    if rtol == 0 and atol == 0 or a.dtype.kind in "biu" and e.dtype.kind in "biu":
        out = a == e
        return out if out.ndim else bool(out)
    return np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _compare_tensors(actual, expected, path, *, rtol, atol, equal_nan, check_device, check_dtype, check_stride):
    for name, get, check in (("shape", lambda t: t.shape, True), ("device", lambda t: t.device, check_device),
                             ("dtype", lambda t: t.dtype, check_dtype),
                             ("stride()", lambda t: t.stride(), check_stride)):
        if check and get(actual) != get(expected):
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {get(actual)} != "
                            f"{get(expected)}.", path)
    if actual.device.type == "meta" or expected.device.type == "meta":
        return
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
    if a.dtype != e.dtype:
        common = np.result_type(a, e)
        a, e = a.astype(common), e.astype(common)
    matches = np.asarray(_close(a, e, rtol, atol, equal_nan))
    if matches.all():
        return
    if actual.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_message(a.item(), e.item(), rtol, atol), path)
    raise _Mismatch(AssertionError, _tensor_message(a, e, matches, rtol, atol), path)


def _diff_lines(abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol):
    equality = rtol == 0 and atol == 0
    lines = []
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol), ("relative", rel_diff, rel_idx, rtol)):
        line = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return equality, "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    equality, diffs = _diff_lines(abs_diff, None, rel_diff, None, rtol, atol)
    return f"Scalars are not {'equal' if equality else 'close'}!\n\nExpected {expected} but got {actual}.\n{diffs}"


def _tensor_message(a, e, matches, rtol, atol):
    flat_match = matches.reshape(-1)
    total, bad = flat_match.size, flat_match.size - int(flat_match.sum())
    a, e = a.reshape(-1), e.reshape(-1)
    if a.dtype.kind in "biu":  # torch upcasts integers to int64 so the difference cannot overflow
        a, e = a.astype(np.int64), e.astype(np.int64)
    abs_diff = np.abs(a - e)
    abs_diff[flat_match] = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = abs_diff / np.abs(e)
    rel_diff[flat_match] = 0
    abs_i, rel_i = _argmax_nan(abs_diff), _argmax_nan(rel_diff)
    equality, diffs = _diff_lines(abs_diff[abs_i].item(), _index(abs_i, matches.shape), rel_diff[rel_i].item(),
                                  _index(rel_i, matches.shape), rtol, atol)
    return (f"Tensor-likes are not {'equal' if equality else 'close'}!\n\n"
            f"Mismatched elements: {bad} / {total} ({bad / total:.1%})\n{diffs}")


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _argmax_nan(x):
    """torch.max's index: the first NaN if there is one, else the first maximum."""
    nans = np.flatnonzero(np.isnan(x)) if x.dtype.kind in "fc" else ()
    return int(nans[0]) if len(nans) else int(np.argmax(x))


_FLOATING = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64, _dt.complex64, _dt.complex128)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """Return a tensor of `shape` filled with random values in [low, high) (torch's defaults: [-9, 10) for
    integers, [-9, 9) for floating and complex, True/False for bool)."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    floating = dtype in _FLOATING
    if requires_grad and not floating:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes")
    if dtype is _dt.bool_:
        result = randint(0, 2, shape, device=device).to(dtype)  # torch draws bool directly; same distribution
    elif not floating:
        info = _dt.iinfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max + (1 if dtype is not _dt.int64 else 0), -9, 10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    else:
        info = _dt.finfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max, -9, 9)
        # complex: real and imaginary parts drawn alike (torch draws into view_as_real of the result; that
        # view is a copy here, so draw the pairs and view them as complex)
        real = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(dtype)
        result = empty(tuple(shape) + (2,) if real else shape, device=device, dtype=real or dtype)
        if high - low < info.max:
            result.uniform_(low, high)
        else:  # the width itself would overflow: draw half-width and double
            result.uniform_(low / 2, high / 2).mul_(2)
        if real:
            result = view_as_complex(result)
    if noncontiguous and result.numel() > 1:
        result = repeat_interleave(result, 2, dim=-1)[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if not floating else _dt.finfo(dtype).tiny
    if floating:
        result.requires_grad_(requires_grad)
    return result


def _low_high(dtype, low, high, lowest, highest, default_low, default_high):
    """torch's clamping of [low, high) to the dtype's range (ceil'd for integers), with its errors."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low >= high and not (low == high and dtype in _FLOATING):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype not in _FLOATING:
        return math.ceil(low), math.ceil(high)
    return low, high
