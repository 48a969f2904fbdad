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
    "scalar_array",     "asarray", "array", "to_device", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
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


def asarray(data, dtype=None, device=None):
    """An Array from an Array, tracer, numpy array, python number or nested lists (copied)."""
    dtype = dt.canonicalize(dtype)
    if isinstance(data, (Array, Tracer)) or hasattr(type(data), "__mt_bind__"):
        out = data if dtype is None else _family.cast(data, dtype)
        if device is not None and _device(device) is not out.device:
            out = to_device(out, device)
        return out
    dev = _device(device) if device is not None else _array.cpu
    if data is None or isinstance(data, str):  # (numpy would make None a NaN)
        raise TypeError(f"asarray: expected an array, a number or nested sequences, got {type(data).__name__}")
    if dtype is None:
        dtype = _infer_dtype(data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, (Array, Tracer)) for x in _leaves(data)):
        return stack([asarray(x, dtype, device) for x in data])
    buf = np.array(data, dtype=dtype.np, copy=True)
    return _const(buf, dtype, dev)


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


def linspace(start, stop, num=50, dtype=None, device=None):
    """`num` evenly spaced values from start to stop inclusive (float32 by default)."""
    if num < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {num}")
    dtype = dt.canonicalize(dtype) or dt.default_float
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, (int(num),), dtype, dev)
    return _const(np.linspace(start, stop, int(num)).astype(dtype.np), dtype, dev)


def eye(n, m=None, dtype=None, device=None):
    """The n x m identity matrix."""
    m = n if m is None else m
    dtype = dt.canonicalize(dtype) or dt.default_float
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, (int(n), int(m)), dtype, dev)
    return _const(np.eye(int(n), int(m), dtype=dtype.np), dtype, dev)


_family.provide(asarray=asarray)
