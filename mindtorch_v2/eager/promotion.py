"""PyTorch's type promotion: the eager layer's, on top of the core's.

The core promotes by the Array API standard (and JAX): every array is strong whatever its rank, Python
scalars are weak, uint16 + int16 -> int32. PyTorch adds a tier and refuses some pairs:

  * a zero-dim tensor sits between dimensioned tensors and Python scalars: it sets the result only when
    its category is higher (`int8 tensor + int64 0-d tensor -> int8`, `int8 tensor + float64 0-d -> float64`,
    `float32 tensor + float64 0-d -> float32`);
  * uint16/32/64 mix only with floating types, float8 types with nothing (a RuntimeError).

Eager ops compute torch's result dtype here and hand the core operands already cast to it, so the core's
own promotion has nothing left to decide. For two operands (the binary ops) `promote` is one dict lookup
keyed by each operand's (dtype, zero-dim) or number type, and casts only an operand whose dtype differs.
"""
import numpy as np

from .. import core
from ..core import dtypes as _dt
from .tensor import Tensor, as_result

BOOL, INT, FLOAT, COMPLEX = _dt.BOOL, _dt.INT, _dt.FLOAT, _dt.COMPLEX
_FLOAT8 = (_dt.float8_e4m3fn, _dt.float8_e5m2)
_WIDE_UNSIGNED = (_dt.uint16, _dt.uint32, _dt.uint64)  # PyTorch promotes them only with floating types


def _pair(a, b):
    """torch.promote_types of two dtypes; None where PyTorch refuses."""
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        return None
    if (a in _WIDE_UNSIGNED or b in _WIDE_UNSIGNED) and FLOAT not in (a.category, b.category):
        return None
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOAT:  # complex64 + float64 -> complex128
            return _pair(hi.to_real(), lo).to_complex()
        return hi
    if a.category in (FLOAT, COMPLEX):
        if {a, b} == {_dt.float16, _dt.bfloat16}:
            return _dt.float32
        return a if a.itemsize >= b.itemsize else b
    if a.is_signed == b.is_signed:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    return signed if signed.itemsize > unsigned.itemsize else _dt.int16  # uint8 with int8


_TABLE = {(a, b): _pair(a, b) for a in _dt.ALL for b in _dt.ALL}


def promote_types(a, b):
    """torch.promote_types: PyTorch's promotion of two dtypes."""
    out = _TABLE[a, b]
    if out is None:
        kind = "Float8 Types" if a in _FLOAT8 or b in _FLOAT8 else "uint16, uint32, uint64 types"
        raise _dt.PromotionError(f"Promotion for {kind} is not supported, attempted to promote {a.scalar_name} and "
                                 f"{b.scalar_name}")
    return out


def result_type(*args):
    """torch.result_type of tensors, dtypes and Python numbers: three tiers (dimensioned tensors and dtypes,
    zero-dim tensors, numbers). The highest tier present sets the dtype unless a lower tier has a higher
    category, which then picks its own dtype (zero-dim) or its category's default dtype (numbers)."""
    dim = zero = None
    scalar_cat = -1
    for x in args:
        if type(x) is _dt.DType:
            dim = x if dim is None else _TABLE[dim, x] or promote_types(dim, x)
            continue
        d = getattr(x, "dtype", None)
        if type(d) is not _dt.DType and d is not None and hasattr(x, "shape"):  # a numpy array
            d = _dt.from_numpy(d)
        if type(d) is _dt.DType:
            if x.shape:
                dim = d if dim is None else _TABLE[dim, d] or promote_types(dim, d)
            else:
                zero = d if zero is None else _TABLE[zero, d] or promote_types(zero, d)
        else:
            scalar_cat = max(scalar_cat, _dt.scalar_category(x))
    if dim is None:
        dim, zero = zero, None
    if dim is None:
        return _dt.default_for_category(scalar_cat)
    if zero is not None and zero.category > dim.category:
        if zero.category == COMPLEX and dim.category == FLOAT:  # the complex type of the float's width, at least
            dim = dim.to_complex() if dim.itemsize > zero.to_real().itemsize else zero
        else:
            dim = zero
    if scalar_cat > dim.category:
        if scalar_cat == COMPLEX and dim.category == FLOAT:  # float64 tensor * 1j -> complex128
            return dim.to_complex()
        return _dt.default_for_category(scalar_cat)
    return dim


_BINARY = {}  # ((dtype, zero-dim) or (number type, None), the same for the other operand) -> dtype


def _cast(x, dtype):
    return as_result(core.cast(x, dtype))


_NUMBER_TYPES = (bool, int, float, complex, np.bool_, np.integer, np.inexact)


def check_int_operand(v):
    """torch's refusal of a Python int that no 64-bit scalar holds (it takes -2**63 .. 2**64 - 1)."""
    if v >= 1 << 64:
        raise OverflowError("int too big to convert")
    if v < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")


def promote(*xs):
    """xs with each tensor cast to torch's result dtype of all of them (numbers stay as they are: the core
    keeps them weak, and they cannot change a dtype that already accounts for them). Other values (lists,
    arrays, None) pass through untouched, and so do all xs when no tensor is among them."""
    for v in xs:
        if type(v) is int and not -(1 << 63) <= v < 1 << 64:
            check_int_operand(v)
    if len(xs) == 2:  # the binary ops: one cached lookup, a cast only where a dtype differs
        x, y = xs
        tx, ty = isinstance(x, Tensor), isinstance(y, Tensor)
        if not (tx or ty) or not (tx or isinstance(x, _NUMBER_TYPES)) or not (ty or isinstance(y, _NUMBER_TYPES)):
            return xs
        kx = (x._storage.value.dtype, not x._shape) if tx else (type(x), None)
        ky = (y._storage.value.dtype, not y._shape) if ty else (type(y), None)
        try:
            d = _BINARY[kx, ky]
        except KeyError:
            d = _BINARY[kx, ky] = result_type(x, y)
        if tx and kx[0] is not d:
            x = _cast(x, d)
        if ty and ky[0] is not d:
            y = _cast(y, d)
        return x, y
    tensors = False
    for x in xs:
        if isinstance(x, Tensor):
            tensors = True
        elif not isinstance(x, _NUMBER_TYPES):
            return xs
    if not tensors:
        return xs
    d = result_type(*xs)
    return tuple(_cast(x, d) if isinstance(x, Tensor) and x.dtype is not d else x for x in xs)
