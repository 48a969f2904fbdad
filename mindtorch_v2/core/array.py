"""The immutable Array value, and the base class it shares with tracers.

An Array is (shape, dtype, device, buffer). On cpu the buffer is a numpy array
that nobody writes to (views of it are handed out read-only); on meta there is
no buffer. Operators (`+`, `@`, `[]`, ...) are installed on `ArrayBase` by
`core/operators.py`, so Arrays and every tracer type share them.
"""
import numpy as np

from . import dtypes as _dt
from .devices import backend_for, cpu, device as _device, meta


class ArrayBase:
    """What Arrays and tracers have in common: an abstract value plus operators."""

    __slots__ = ()
    __array_priority__ = 100  # numpy defers `ndarray + Array` to us

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    __hash__ = None  # arrays compare elementwise, so they are not hashable


class Array(ArrayBase):
    """An immutable array value. Build one with `core.asarray`, never mutate it."""

    __slots__ = ("shape", "dtype", "device", "_buf")

    def __init__(self, *args, **kwargs):
        raise TypeError("construct arrays with mindtorch_v2.core.asarray (Array is immutable)")

    def __setattr__(self, name, value):
        raise AttributeError(f"Array is immutable: cannot set attribute '{name}'")

    def __delattr__(self, name):
        raise AttributeError(f"Array is immutable: cannot delete attribute '{name}'")

    def __array__(self, dtype=None, copy=None):
        if self._buf is None:
            raise RuntimeError("cannot convert a meta array to numpy: meta arrays hold no data")
        buf = self._buf
        if buf.flags.writeable:  # once exported, never written again (nor donated for in-place reuse)
            buf.flags.writeable = False
        view = buf.view()
        if dtype is not None and view.dtype != dtype:
            return view.astype(dtype)
        if copy:
            return view.copy()
        return view

    def numpy(self):
        """A read-only numpy view of the data."""
        return self.__array__()

    def item(self):
        if self.size != 1:
            raise ValueError(f"item(): only arrays with one element can be converted, got shape {self.shape}")
        return self.__array__().reshape(()).item()

    def tolist(self):
        return self.__array__().tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"the truth value of an array with shape {self.shape} is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.category != _dt.INT or self.size != 1:
            raise TypeError("only integer arrays with one element can be converted to an index")
        return int(self.item())

    def __repr__(self):
        if self._buf is None:
            return f"Array(shape={self.shape}, dtype={self.dtype.name}, device=meta)"
        body = np.array2string(self._buf, separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype.name})"

    def __reduce__(self):
        return (_rebuild, (None if self._buf is None else np.asarray(self._buf), self.shape, self.dtype.name, str(self.device)))


_new = object.__new__


class _Unsealed(ArrayBase):
    """An Array under construction: the same slots without the immutability guard, so `make` fills them
    with plain attribute stores and then seals the object by switching its class to Array (half the cost
    of four slot-descriptor calls; `make` runs once per primitive result)."""

    __slots__ = ("shape", "dtype", "device", "_buf")


def make(buf, shape, dtype, device):
    """Wrap a backend buffer (or None on meta) as an Array. Internal fast path."""
    a = _new(_Unsealed)
    a.shape = shape
    a.dtype = dtype
    a.device = device
    a._buf = buf
    a.__class__ = Array
    return a


def constant(buf, shape, dtype, device):
    """An Array of a numpy buffer nobody writes to, put on `device` (meta keeps only the aval)."""
    if device is meta:
        return make(None, tuple(shape), dtype, device)
    if device is not cpu:
        buf = backend_for(device).to_buffer(buf)
    return make(buf, tuple(shape), dtype, device)


def aval(shape, dtype, device):
    """A bufferless Array standing for a value of this shape, dtype and device (for rules that read
    only shapes and dtypes; on meta it is the value itself)."""
    return make(None, tuple(shape), dtype, device)


def from_numpy_buffer(buf, device=cpu):
    """Wrap a numpy array we own (no copy)."""
    return make(buf, buf.shape, _dt.from_numpy(buf.dtype), device)


def meta_array(shape, dtype):
    return make(None, tuple(shape), dtype, meta)


def _rebuild(buf, shape, dtype_name, device_name):
    return make(buf, shape, _dt.from_name(dtype_name), _device(device_name))
