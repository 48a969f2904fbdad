"""Constructors: asarray, zeros, ones, full, empty, arange, linspace, eye, *_like.

Constants have no inputs and so no derivative: they are plain functions that
build a buffer (or, on meta, only an aval), not primitives.
"""
import numpy as np

from .. import array as _array
from .. import dtypes as dt
from ..array import Array
from ..devices import device as _device
from ..primitive import Tracer
from . import _family
from ._family import scalar_array  # a cached 0-d constant (public: the eager fast path uses it)
from .shape import stack

__all__ = [
    "scalar_array",     "asarray", "array", "to_device", "astype", "from_dlpack", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
    "full_like", "arange", "linspace", "eye",
]


def _infer_dtype(data):
    """torch.tensor's inference: bools -> bool, ints -> int64, floats -> the default float."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return dt.from_numpy(data.dtype)
    arr = np.asarray(data)
    if arr.dtype.kind == "b":
        return dt.bool_
    if arr.dtype.kind in "iu":
        return dt.int64
    if arr.dtype.kind == "f":
        return dt.default_float
    if arr.dtype.kind == "c":
        return dt.default_for_category(dt.COMPLEX)
    if arr.dtype.kind == "O" or arr.dtype.kind in "USV":
        raise TypeError(f"cannot build an array from {type(data).__name__} data of kind '{arr.dtype}'")
    raise TypeError(f"unsupported data type {arr.dtype}")


def _const(buf, dtype, device):
    return _array.constant(buf, buf.shape, dtype, device)


def asarray(data, dtype=None, device=None, *, copy=None):
    """An Array from an Array, tracer, numpy array, python number, nested lists or a DLPack/buffer
    object. Other data is copied (an Array owns a buffer nobody writes to); `copy=False` (the standard's
    "never copy") is therefore a ValueError for it, and for a change of dtype or device."""
    dtype = dt.canonicalize(dtype)
    if isinstance(data, (Array, Tracer)) or hasattr(type(data), "__mt_bind__"):
        if copy is False and (dtype not in (None, data.dtype) or device is not None and _device(device) is not data.device):
            raise ValueError("asarray: copy=False, but changing the dtype or device needs a copy")
        out = data if dtype is None else _family.cast(data, dtype)
        if device is not None and _device(device) is not out.device:
            out = to_device(out, device)
        return out
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(data).__name__} must be copied into an immutable Array")
    dev = _device(device) if device is not None else _array.cpu
    if data is None or isinstance(data, str):  # (numpy would make None a NaN)
        raise TypeError(f"asarray: expected an array, a number or nested sequences, got {type(data).__name__}")
    if not isinstance(data, (list, tuple, np.ndarray, np.generic, bool, int, float, complex)):
        data = _foreign(data)
    if dtype is None:
        dtype = _infer_dtype(data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, (Array, Tracer)) for x in _leaves(data)):
        return stack([asarray(x, dtype, device) for x in data])
    buf = np.array(data, dtype=dtype.np, copy=True)
    return _const(buf, dtype, dev)


def _foreign(data):
    """A numpy view of another library's array (DLPack, the buffer protocol, __array__), to be copied."""
    if hasattr(data, "__dlpack__"):
        return np.from_dlpack(data)
    try:
        return np.asarray(data)
    except Exception:
        raise TypeError(f"asarray: cannot make an array from {type(data).__name__}") from None


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array of the data of a DLPack-exporting object (a numpy array, a torch tensor, another
    Array, ...), copied into a buffer of its own (copy=False is refused: Arrays are immutable)."""
    if isinstance(x, (Array, Tracer)):
        return asarray(x, device=device, copy=copy)
    if copy is False:
        raise ValueError("from_dlpack: copy=False is not supported: an Array owns an immutable copy of its data")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    return asarray(np.from_dlpack(x), device=device)


def astype(x, dtype, /, *, copy=True, device=None):
    """x converted to `dtype` (and moved to `device`), the Array API's astype. Arrays are immutable, so
    `copy` changes nothing observable; with copy=False an unchanged array is returned as is."""
    if device is not None:
        x = to_device(x, device)
    return _family.cast(x, dtype)


def _leaves(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _leaves(x)
        else:
            yield x


array = asarray


def to_device(x, device):
    """x on another device (cpu -> meta keeps only the aval; meta -> cpu is an error)."""
    dev = _device(device)
    if dev is x.device:
        return x
    if x.device.type == "meta":
        raise RuntimeError(f"cannot copy a meta array to {dev}: meta arrays hold no data")
    if dev.type == "meta":
        return _array.make(None, x.shape, x.dtype, dev)
    return _const(np.asarray(x), x.dtype, dev)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed, got shape {shape}")
    return shape


def _filled(shape, value, dtype, device):
    if value is None or isinstance(value, str):  # (numpy would make None a NaN)
        raise TypeError(f"full: the fill value must be a number, not {type(value).__name__}")
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, shape, dtype, dev)
    return _const(np.full(shape, value, dtype.np), dtype, dev)


def zeros(shape, dtype=None, device=None):
    """An array of zeros (default dtype float32)."""
    shape = _shape_arg((shape,) if isinstance(shape, (int, np.integer)) else (shape,))
    return _filled(shape, 0, dt.canonicalize(dtype) or dt.default_float, device)


def ones(shape, dtype=None, device=None):
    shape = _shape_arg((shape,) if isinstance(shape, (int, np.integer)) else (shape,))
    return _filled(shape, 1, dt.canonicalize(dtype) or dt.default_float, device)


def empty(shape, dtype=None, device=None):
    """An array whose contents are unspecified (zeros here: immutable arrays are never filled later)."""
    return zeros(shape, dtype, device)


def full(shape, fill_value, dtype=None, device=None):
    """An array filled with fill_value; dtype inferred from the value like torch.full."""
    shape = _shape_arg((shape,) if isinstance(shape, (int, np.integer)) else (shape,))
    dtype = dt.canonicalize(dtype) or dt.result_type(fill_value)
    return _filled(shape, fill_value, dtype, device)


def _like(x, dtype, device):
    return (dt.canonicalize(dtype) or x.dtype), (device if device is not None else x.device)


def zeros_like(x, dtype=None, device=None):
    dtype, device = _like(x, dtype, device)
    return _filled(tuple(x.shape), 0, dtype, device)


def ones_like(x, dtype=None, device=None):
    dtype, device = _like(x, dtype, device)
    return _filled(tuple(x.shape), 1, dtype, device)


def empty_like(x, dtype=None, device=None):
    return zeros_like(x, dtype, device)


def full_like(x, fill_value, dtype=None, device=None):
    dtype, device = _like(x, dtype, device)
    return _filled(tuple(x.shape), fill_value, dtype, device)


def arange(start, stop=None, step=1, dtype=None, device=None):
    """Evenly spaced values in [start, stop); int64 for integer arguments, else float32."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must be non-zero")
    if dtype is None:
        dtype = dt.result_type(start, stop, step)
    dtype = dt.canonicalize(dtype)
    n = max(int(np.ceil((stop - start) / step)), 0)
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, (n,), dtype, dev)
    buf = (start + step * np.arange(n, dtype=np.float64 if dtype.category == dt.FLOAT else np.int64)).astype(dtype.np)
    return _const(buf, dtype, dev)


def linspace(start, stop, num=50, dtype=None, device=None, *, endpoint=True):
    """`num` evenly spaced values from start to stop, inclusive unless endpoint=False (float32 by default;
    complex bounds give the default complex dtype)."""
    if num < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {num}")
    dtype = dt.canonicalize(dtype) or (dt.default_for_category(dt.COMPLEX) if isinstance(start, complex) or isinstance(stop, complex) else dt.default_float)
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, (int(num),), dtype, dev)
    return _const(np.linspace(start, stop, int(num), endpoint=bool(endpoint)).astype(dtype.np), dtype, dev)


def eye(n, m=None, dtype=None, device=None, *, k=0):
    """The n x m matrix with ones on the k-th diagonal (k > 0 above the main one)."""
    m = n if m is None else m
    dtype = dt.canonicalize(dtype) or dt.default_float
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, (int(n), int(m)), dtype, dev)
    return _const(np.eye(int(n), int(m), int(k), dtype=dtype.np), dtype, dev)


_family.provide(asarray=asarray)
