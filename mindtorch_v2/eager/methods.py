"""Tensor operators, conversions and the in-place method family."""
import numbers

import numpy as np

from .. import core
from ..core import dtypes as _dt
from ..core import to_device
from . import inplace, ops
from .tensor import Tensor

_w = ops._w


def _binop(fn):
    def op(self, other):
        try:
            return fn(self, other)
        except TypeError:
            if _operand(other):
                raise
            return NotImplemented  # Python then tries other's reflected op (t == None is False)
    return op


def _rbinop(fn):
    def op(self, other):
        try:
            return fn(other, self)
        except TypeError:
            if _operand(other):
                raise
            return NotImplemented
    return op


def _operand(x):
    return isinstance(x, (Tensor, numbers.Number, np.ndarray, np.generic))


def to(self, *args, **kwargs):
    """A tensor with the given dtype and/or device (self when nothing changes)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
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
            out._rg = self._rg and self._grad_fn is None and out.dtype.category == _dt.FLOAT
    if dtype is not None:
        dtype = _dt.canonicalize(dtype)
        if dtype is not out.dtype:
            out = _w(core.cast(out, dtype))
    if copy and out is self:
        out = self.clone()
    return out


def clone(self, memory_format=None):
    """A copy with its own storage (no data is copied until one of them is written)."""
    return _w(core.copy(self))


def _conv(dtype):
    return lambda self, memory_format=None: to(self, dtype)


def type_(self, dtype=None):
    if dtype is None:
        return "torch." + self.dtype.scalar_name + "Tensor"
    return to(self, dtype)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from .creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def _new_filled(fill):
    def fn(self, *size, dtype=None, device=None, requires_grad=False):
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
        out = _w(core.full(size, fill, dtype=dtype or self.dtype, device=device or self.device))
        return out.requires_grad_(requires_grad)
    return fn


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    out = _w(core.full(tuple(size), fill_value, dtype=dtype or self.dtype, device=device or self.device))
    return out.requires_grad_(requires_grad)


_INPLACE_FROM = [
    "add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "clamp", "clamp_min", "clamp_max",
    "relu", "sigmoid", "tanh", "masked_fill", "index_add", "scatter", "scatter_add", "floor", "ceil", "round",
    "sign", "reciprocal", "remainder", "fmod", "lerp", "sin", "cos", "log1p", "expm1", "rsqrt", "square",
    "trunc", "floor_divide", "logical_not", "erf", "true_divide", "subtract", "multiply", "divide", "clip",
    "tril", "triu", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
]


def _inplace_from(name):
    fn = getattr(ops, name)
    return inplace._method(fn)


def install(T):
    o = ops
    T.__add__ = o._add
    T.__radd__ = _rbinop(o.add)
    T.__sub__ = o._sub
    T.__rsub__ = _rbinop(o.sub)
    T.__mul__ = o.mul
    T.__rmul__ = _rbinop(o.mul)
    T.__truediv__ = o.true_divide
    T.__rtruediv__ = _rbinop(o.div)
    T.__floordiv__ = _binop(o.floor_divide)
    T.__rfloordiv__ = _rbinop(o.floor_divide)
    T.__mod__ = _binop(o.remainder)
    T.__rmod__ = _rbinop(o.remainder)
    T.__pow__ = _binop(o.pow)
    T.__rpow__ = _rbinop(o.pow)
    T.__matmul__ = _binop(o.matmul)
    T.__rmatmul__ = _rbinop(o.matmul)
    T.__neg__ = lambda self: o.neg(self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: o.abs(self)
    T.__invert__ = lambda self: o.bitwise_not(self)
    T.__and__ = _binop(o.bitwise_and)
    T.__rand__ = _rbinop(o.bitwise_and)
    T.__or__ = _binop(o.bitwise_or)
    T.__ror__ = _rbinop(o.bitwise_or)
    T.__xor__ = _binop(o.bitwise_xor)
    T.__rxor__ = _rbinop(o.bitwise_xor)
    T.__eq__ = _binop(o.eq)
    T.__ne__ = _binop(o.ne)
    T.__lt__ = _binop(o.lt)
    T.__le__ = _binop(o.le)
    T.__gt__ = _binop(o.gt)
    T.__ge__ = _binop(o.ge)
    T.__setitem__ = inplace.setitem
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor"):
        fn = {"add": o.add, "sub": o.sub, "mul": o.mul, "truediv": o.div, "floordiv": o.floor_divide,
              "mod": o.remainder, "pow": o.pow, "and": o.bitwise_and, "or": o.bitwise_or,
              "xor": o.bitwise_xor}[name]
        setattr(T, f"__i{name}__", inplace._method(fn))
    T.__imatmul__ = lambda self, other: inplace.apply(self, lambda: o.matmul(inplace.original(self, (other,)), other),
                                                      "__imatmul__")
    for name in _INPLACE_FROM:
        if hasattr(ops, name) and not name.endswith("_"):
            setattr(T, name + "_", _inplace_from(name))
    T.zero_ = inplace.zero_
    T.fill_ = inplace.fill_
    T.copy_ = inplace.copy_
    T.to = to
    T.clone = clone
    T.cpu = lambda self: to(self, "cpu")
    T.float = _conv(_dt.float32)
    T.double = _conv(_dt.float64)
    T.half = _conv(_dt.float16)
    T.long = _conv(_dt.int64)
    T.int = _conv(_dt.int32)
    T.short = _conv(_dt.int16)
    T.char = _conv(_dt.int8)
    T.byte = _conv(_dt.uint8)
    T.bool = _conv(_dt.bool_)
    T.type = type_
    T.type_as = lambda self, other: to(self, other.dtype)
    T.new_tensor = new_tensor
    T.new_zeros = _new_filled(0)
    T.new_ones = _new_filled(1)
    T.new_empty = _new_filled(0)
    T.new_full = new_full

