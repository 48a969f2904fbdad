"""Tensor operators, conversions and the in-place method family."""
import builtins
import numbers
import warnings

import numpy as np

from .. import core
from ..core import dtypes as _dt
from ..core import to_device
from . import inplace, ops
from . import memory_format as _mf
from .creation import strided
from .creation import tensor as _tensor
from .declare import tensor_method
from .legacy_types import legacy_dtype
from .storage import UntypedStorage
from .tensor import Tensor, _named
from .writeback import apply, inplace_method, original

_w = ops._w


def _forward(fn, self, other):
    try:
        return fn(self, other)
    except TypeError:
        if _operand(other):
            raise
        return NotImplemented  # Python then tries other's reflected op (t == None is False)


def _reflected(fn, self, other):
    try:
        return fn(other, self)
    except TypeError:
        if _operand(other):
            raise
        return NotImplemented


def _operand(x):
    return isinstance(x, (Tensor, numbers.Number, np.ndarray, np.generic))


@tensor_method
def to(self, *args, **kwargs):
    """A tensor with the given dtype and/or device (self when nothing changes)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (_dt.DType,)) or a in (float, int, bool):
            dtype = a
        elif a is not None:
            device = a
    out = self
    if device is not None:
        dev = core.device(device)
        if dev is not out.device:
            out = Tensor._from_value(to_device(out._value(), dev), requires_grad=False)
            out._rg = self._rg and self._grad_fn is None and out.dtype.category >= _dt.FLOAT
    if dtype is not None:
        dtype = _dt.canonicalize(dtype)
        if dtype is not out.dtype:
            if out.dtype.category == _dt.COMPLEX and dtype.category != _dt.COMPLEX:
                warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                              stacklevel=2)
            out = _mf.keep_layout(_named(_w(core.cast(out, dtype)), "ToCopyBackward0", self), self)
    if memory_format is not None and memory_format is not _mf.preserve_format:
        out = _mf.to_format(out, memory_format)
    if copy and out is self:
        out = self.clone()
    return out


@tensor_method
def clone(self, memory_format=None):
    """A copy with its own storage; by default (preserve_format) a dense layout is kept, as in PyTorch."""
    order = _mf.clone_order(self, memory_format) if self._strides is not None or memory_format is not None else None
    if order is not None:
        return _named(_mf.in_order(self, order), "CloneBackward0", self)
    return _named(_w(core.copy(self)), "CloneBackward0", self)


@tensor_method("type")
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name ("torch.FloatTensor"), or self converted to a dtype, legacy type or its name."""
    if dtype is None:
        return "torch." + self.dtype.scalar_name + "Tensor"
    return to(self, legacy_dtype(dtype))


@tensor_method
def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return _tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_filled(self, fill, size, dtype, device, requires_grad, size_kw, name):
    """new_zeros/new_ones/new_empty: size given as ints, one sequence, or the keyword `size` (torch takes all)."""
    if size_kw:
        unknown = sorted(set(size_kw) - {"size"})
        if unknown:
            raise TypeError(f"{name}() got an unexpected keyword argument '{unknown[0]}'")
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (size_kw["size"],)
    elif not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    out = _w(core.full(size, fill, dtype=dtype or self.dtype, device=device or self.device))
    return out.requires_grad_(requires_grad)


@tensor_method
def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    out = _w(core.full(tuple(size), fill_value, dtype=dtype or self.dtype, device=device or self.device))
    return out.requires_grad_(requires_grad)


# ---------------------------------------------------------------------------
# Python operators: torch's reflected forms, and NotImplemented for operands torch does not take


tensor_method(ops._add, "__add__")  # the hot path: no wrapper call
@tensor_method
def __radd__(self, other): return _reflected(ops.add, self, other)  # noqa: E704
tensor_method(ops._sub, "__sub__")  # the hot path: no wrapper call
@tensor_method
def __rsub__(self, other): return _named(_reflected(ops.sub, self, other), "RsubBackward1", self)  # noqa: E704
tensor_method(ops.mul.__wrapped__, "__mul__")  # the hot path: no wrapper call
@tensor_method
def __rmul__(self, other): return _reflected(ops.mul, self, other)  # noqa: E704
tensor_method(ops.true_divide.__wrapped__, "__truediv__")  # the hot path: no wrapper call
@tensor_method
def __rtruediv__(self, other): return _reflected(ops.div, self, other)  # noqa: E704
@tensor_method
def __floordiv__(self, other): return _forward(ops.floor_divide, self, other)  # noqa: E704
@tensor_method
def __rfloordiv__(self, other): return _reflected(ops.floor_divide, self, other)  # noqa: E704
@tensor_method
def __mod__(self, other): return _forward(ops.remainder, self, other)  # noqa: E704
@tensor_method
def __rmod__(self, other): return _reflected(ops.remainder, self, other)  # noqa: E704
@tensor_method
def __pow__(self, other): return _forward(ops.pow, self, other)  # noqa: E704
@tensor_method
def __rpow__(self, other): return _named(_reflected(ops.pow, self, other), "PowBackward2", self)  # noqa: E704
@tensor_method
def __matmul__(self, other): return _forward(ops.matmul, self, other) if isinstance(other, Tensor) else NotImplemented  # noqa: E501,E704
@tensor_method
def __rmatmul__(self, other): return _reflected(ops.matmul, self, other) if isinstance(other, Tensor) else NotImplemented  # noqa: E501,E704
@tensor_method
def __neg__(self): return ops.neg(self)  # noqa: E704
@tensor_method
def __pos__(self):
    if self.dtype is _dt.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self
@tensor_method
def __abs__(self): return ops.abs(self)  # noqa: E704
@tensor_method
def __invert__(self): return ops.bitwise_not(self)  # noqa: E704
@tensor_method
def __and__(self, other): return _forward(ops.bitwise_and, self, other)  # noqa: E704
@tensor_method
def __rand__(self, other): return _reflected(ops.bitwise_and, self, other)  # noqa: E704
@tensor_method
def __or__(self, other): return _forward(ops.bitwise_or, self, other)  # noqa: E704
@tensor_method
def __ror__(self, other): return _reflected(ops.bitwise_or, self, other)  # noqa: E704
@tensor_method
def __xor__(self, other): return _forward(ops.bitwise_xor, self, other)  # noqa: E704
@tensor_method
def __rxor__(self, other): return _reflected(ops.bitwise_xor, self, other)  # noqa: E704
@tensor_method
def __eq__(self, other): return _forward(ops.eq, self, other)  # noqa: E704
@tensor_method
def __ne__(self, other): return _forward(ops.ne, self, other)  # noqa: E704
@tensor_method
def __lt__(self, other): return _forward(ops.lt, self, other)  # noqa: E704
@tensor_method
def __le__(self, other): return _forward(ops.le, self, other)  # noqa: E704
@tensor_method
def __gt__(self, other): return _forward(ops.gt, self, other)  # noqa: E704
@tensor_method
def __ge__(self, other): return _forward(ops.ge, self, other)  # noqa: E704


# augmented assignment: the in-place form of the op (x += y is x.add_(y))
tensor_method(inplace_method(ops.add, "__iadd__"))
tensor_method(inplace_method(ops.sub, "__isub__"))
tensor_method(inplace_method(ops.mul, "__imul__"))
tensor_method(inplace_method(ops.div, "__itruediv__"))
tensor_method(inplace_method(ops.floor_divide, "__ifloordiv__"))
tensor_method(inplace_method(ops.remainder, "__imod__"))
tensor_method(inplace_method(ops.pow, "__ipow__"))
tensor_method(inplace_method(ops.bitwise_and, "__iand__"))
tensor_method(inplace_method(ops.bitwise_or, "__ior__"))
tensor_method(inplace_method(ops.bitwise_xor, "__ixor__"))


# (no __imatmul__: torch has none, so `a @= b` rebinds a to a new tensor and a's views keep the old data)


tensor_method(inplace.setitem, "__setitem__")
tensor_method(inplace.zero_)
tensor_method(inplace.fill_)
tensor_method(inplace.copy_)


# ---------------------------------------------------------------------------
# dtype and device conversions


@tensor_method
def cpu(self, memory_format=None): return to(self, "cpu")  # noqa: E704
@tensor_method
def cuda(self, device=None, non_blocking=False, memory_format=None):  # raises: no CUDA in this build
    return to(self, _device_of("cuda", device), non_blocking=non_blocking)
@tensor_method
def xpu(self, device=None, non_blocking=False, memory_format=None):  # raises: no XPU in this build
    return to(self, _device_of("xpu", device), non_blocking=non_blocking)
@tensor_method
def float(self, memory_format=None): return to(self, _dt.float32)  # noqa: E704,A001
@tensor_method
def double(self, memory_format=None): return to(self, _dt.float64)  # noqa: E704
@tensor_method
def half(self, memory_format=None): return to(self, _dt.float16)  # noqa: E704
@tensor_method
def bfloat16(self, memory_format=None): return to(self, _dt.bfloat16)  # noqa: E704
@tensor_method
def cfloat(self, memory_format=None): return to(self, _dt.complex64)  # noqa: E704
@tensor_method
def cdouble(self, memory_format=None): return to(self, _dt.complex128)  # noqa: E704
@tensor_method
def long(self, memory_format=None): return to(self, _dt.int64)  # noqa: E704
@tensor_method
def int(self, memory_format=None): return to(self, _dt.int32)  # noqa: E704,A001
@tensor_method
def short(self, memory_format=None): return to(self, _dt.int16)  # noqa: E704
@tensor_method
def char(self, memory_format=None): return to(self, _dt.int8)  # noqa: E704
@tensor_method
def byte(self, memory_format=None): return to(self, _dt.uint8)  # noqa: E704
@tensor_method
def bool(self, memory_format=None): return to(self, _dt.bool_)  # noqa: E704,A001
@tensor_method
def type_as(self, other): return to(self, other.dtype)  # noqa: E704
@tensor_method
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **size_kw):
    return _new_filled(self, 0, size, dtype, device, requires_grad, size_kw, "new_zeros")


@tensor_method
def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **size_kw):
    return _new_filled(self, 1, size, dtype, device, requires_grad, size_kw, "new_ones")


@tensor_method
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **size_kw):
    return _new_filled(self, 0, size, dtype, device, requires_grad, size_kw, "new_empty")




@tensor_method
def untyped_storage(self):
    """The bytes of the storage this tensor views (shared by every view of it), as torch's UntypedStorage."""
    return UntypedStorage(self._storage)


@tensor_method
def data_ptr(self):
    """The address of this tensor's first element: its storage's address plus storage_offset() elements
    (0 when the storage is empty or on meta). Views of one storage give consistent addresses."""
    ptr = UntypedStorage(self._storage).data_ptr()
    return ptr + self._offset * self.dtype.itemsize if ptr else 0


def _nbytes(self):
    return self.numel() * self.dtype.itemsize


def _itemsize(self):
    return self.dtype.itemsize


def _layout(self):
    return strided


tensor_method(property(_nbytes, doc="The bytes of the elements this tensor views (numel() * itemsize)."),
              "nbytes")
tensor_method(property(_itemsize, doc="The size in bytes of one element."), "itemsize")
tensor_method(property(_layout, doc="The memory layout: torch.strided (the only one here)."), "layout")


def _device_of(kind, device):
    """Tensor.cuda(device) / .xpu(device): the device of that kind (an index, a device, or the default)."""
    if device is None:
        return kind
    return f"{kind}:{device}" if isinstance(device, builtins.int) else device  # `int` is a method name here
