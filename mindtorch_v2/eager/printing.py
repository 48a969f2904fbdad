"""How a Tensor prints: torch's layout (summarised past 1000 elements, a shared width per tensor,
the dtype/device/grad suffixes)."""
import math

import numpy as np

from .. import core
from ..core import dtypes as _dt

# printing: a port of torch/_tensor_str.py (precision 4, threshold 1000, edgeitems 3, linewidth 80)
_PRECISION, _THRESHOLD, _EDGEITEMS, _LINEWIDTH = 4, 1000, 3, 80


class _Formatter:
    """torch's _Formatter: one width for every element; floats in int mode (`1.`), fixed (4 decimals) or
    scientific notation, decided from the finite non-zero values only."""

    def __init__(self, arr):
        self.floating = arr.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if not vals.size:
            return
        mags = np.abs(vals)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        for v in vals.tolist():
            if self.sci_mode:
                n = len(f"{v:.{_PRECISION}e}")
            elif self.int_mode:
                n = len(f"{v:.0f}") + 1
            else:
                n = len(f"{v:.{_PRECISION}f}")
            self.max_width = max(self.max_width, n)

    def format(self, v):
        if self.floating:
            if self.sci_mode:
                ret = f"{v:{self.max_width}.{_PRECISION}e}"
            elif self.int_mode:
                ret = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
            else:
                ret = f"{v:.{_PRECISION}f}"
        else:
            ret = str(v)
        return (self.max_width - len(ret)) * " " + ret


def _summarized(arr):
    """The elements torch's formatter sees for a large tensor: the edge items of every dim."""
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate([arr[:_EDGEITEMS], arr[-_EDGEITEMS:]]) if arr.shape[0] > 2 * _EDGEITEMS else arr
    rows = list(range(arr.shape[0]))
    if arr.shape[0] > 2 * _EDGEITEMS:
        rows = rows[:_EDGEITEMS] + rows[-_EDGEITEMS:]
    return np.stack([_summarized(arr[i]) for i in rows])


class _ComplexFormatter:
    """torch's complex printing: the real and imaginary parts each get their own _Formatter, joined as
    `1.0000+2.j`."""

    def __init__(self, arr):
        self.real, self.imag = _Formatter(arr.real), _Formatter(arr.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 2

    def format(self, v):
        imag = (self.imag.format(v.imag) + "j").lstrip()
        return self.real.format(v.real) + (imag if imag[0] in "+-" else "+" + imag)


def _vector_str(arr, indent, summarize, fmt):
    per_line = max(1, math.floor((_LINEWIDTH - indent) / (fmt.max_width + 2)))
    if summarize and arr.shape[0] > 2 * _EDGEITEMS:
        data = ([fmt.format(v) for v in arr[:_EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-_EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(arr, indent, summarize, fmt):
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    if summarize and arr.shape[0] > 2 * _EDGEITEMS:
        slices = ([_array_str(arr[i], indent + 1, summarize, fmt) for i in range(_EDGEITEMS)] + ["..."]
                  + [_array_str(arr[i], indent + 1, summarize, fmt)
                     for i in range(arr.shape[0] - _EDGEITEMS, arr.shape[0])])
    else:
        slices = [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(arr.shape[0])]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(body, suffixes, indent):
    out = [body]
    last = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > _LINEWIDTH:
            out.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(out) + ")"


def _format(t):
    v = t._value()
    if not isinstance(v, core.Array):
        return _format_traced(type(t), v, list(t._shape))
    prefix = "tensor("
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta":
        body = "..."
        suffixes.append(f"size={tuple(t._shape)}")
        if t.dtype is not _dt.default_float:
            suffixes.append(f"dtype={t.dtype}")
    else:
        arr = np.asarray(v)
        if t.dtype.narrow:  # bfloat16 / float8 print through float32, as torch does
            arr = arr.astype(np.float32)
        if arr.size == 0:
            body = "[]"
            if arr.ndim != 1:
                suffixes.append(f"size={tuple(arr.shape)}")
            if t.dtype is not _dt.default_float:
                suffixes.append(f"dtype={t.dtype}")
        else:
            if t.dtype not in (_dt.default_float, _dt.default_float.to_complex(), _dt.int64, _dt.bool_):
                suffixes.append(f"dtype={t.dtype}")
            summarize = arr.size > _THRESHOLD
            fmt = (_ComplexFormatter if arr.dtype.kind == "c" else _Formatter)(_summarized(arr) if summarize else arr)
            body = _array_str(arr, len(prefix), summarize, fmt)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, len(prefix))


def _format_traced(cls, v, shape):
    """A tensor that a torch.func transform traces, as PyTorch prints it: grad's and jvp's as a
    GradTrackingTensor around the primal, vmap's as a BatchedTensor around the batched value (with its batch
    axis); jit's (torch.compile's trace) by its shape alone."""
    level = getattr(getattr(v, "_main", None), "level", 0) + 1  # (PyTorch counts transforms from 1)
    if hasattr(v, "primal"):
        head, inner = f"GradTrackingTensor(lvl={level}, value=", v.primal
    elif hasattr(v, "bdim") and v.bdim is not None:
        head, inner = f"BatchedTensor(lvl={level}, bdim={v.bdim}, value=", v.val
    else:
        return f"tensor(<traced {type(v).__name__}>, shape={shape})"
    body = _format(cls._from_value(inner)).replace("\n", "\n    ")
    return f"{head}\n    {body}\n)"
