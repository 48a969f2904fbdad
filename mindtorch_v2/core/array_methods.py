"""The Python operators and array methods of core values (`+`, `@`, `[]`, `.T`, `.sum()`, ...).

The face of the core, as JAX's array_methods.py: each is a real function below, written with the
op families, set on ArrayBase (shared by Arrays and every tracer type) by the one table at the end.
"""
import sys

import numpy as np

from .array import ArrayBase
from .ops.composite import clip, mean, std, var
from .ops.elementwise import (abs, add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cast, div, eq, floor_divide,
                              ge, gt, le, lt, mul, ne, neg, pow, remainder, sub)
from .ops.elementary import left_shift, right_shift
from .ops.elementwise import conj, imag, real
from .ops.creation import ones_like, to_device
from .ops.indexing import at_update, getitem
from .ops.linalg import matmul
from .ops.reduction import all, any, argmax, argmin, cumsum, max, min, prod, sum
from .ops.shape import reshape, squeeze, swapaxes, transpose


def _shape_args(args):
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def __add__(a, b): return add(a, b)  # noqa: E704
def __radd__(a, b): return add(b, a)  # noqa: E704
def __sub__(a, b): return sub(a, b)  # noqa: E704
def __rsub__(a, b): return sub(b, a)  # noqa: E704
def __mul__(a, b): return mul(a, b)  # noqa: E704
def __rmul__(a, b): return mul(b, a)  # noqa: E704
def __truediv__(a, b): return div(a, b)  # noqa: E704
def __rtruediv__(a, b): return div(b, a)  # noqa: E704
def __floordiv__(a, b): return floor_divide(a, b)  # noqa: E704
def __rfloordiv__(a, b): return floor_divide(b, a)  # noqa: E704
def __mod__(a, b): return remainder(a, b)  # noqa: E704
def __rmod__(a, b): return remainder(b, a)  # noqa: E704
def __pow__(a, b): return pow(a, b)  # noqa: E704
def __rpow__(a, b): return pow(b, a)  # noqa: E704
def __matmul__(a, b): return matmul(a, b)  # noqa: E704
def __rmatmul__(a, b): return matmul(b, a)  # noqa: E704
def __neg__(a): return neg(a)  # noqa: E704
def __pos__(a): return a  # noqa: E704
def __abs__(a): return abs(a)  # noqa: E704


# torch and jax.numpy: `~ & | ^` are bitwise (logical on bool, a TypeError on floats)
def __invert__(a): return bitwise_not(a)  # noqa: E704
def __and__(a, b): return bitwise_and(a, b)  # noqa: E704
def __rand__(a, b): return bitwise_and(b, a)  # noqa: E704
def __or__(a, b): return bitwise_or(a, b)  # noqa: E704
def __ror__(a, b): return bitwise_or(b, a)  # noqa: E704
def __xor__(a, b): return bitwise_xor(a, b)  # noqa: E704
def __rxor__(a, b): return bitwise_xor(b, a)  # noqa: E704
def __lshift__(a, b): return left_shift(a, b)  # noqa: E704
def __rlshift__(a, b): return left_shift(b, a)  # noqa: E704
def __rshift__(a, b): return right_shift(a, b)  # noqa: E704
def __rrshift__(a, b): return right_shift(b, a)  # noqa: E704


# `x == None` is False (and `!=` True), as for torch tensors, instead of a TypeError
def __eq__(a, b): return eq(a, b) if b is not None else False  # noqa: E704
def __ne__(a, b): return ne(a, b) if b is not None else True  # noqa: E704
def __lt__(a, b): return lt(a, b)  # noqa: E704
def __le__(a, b): return le(a, b)  # noqa: E704
def __gt__(a, b): return gt(a, b)  # noqa: E704
def __ge__(a, b): return ge(a, b)  # noqa: E704
def __getitem__(a, key): return getitem(a, key)  # noqa: E704


def _T(a): return transpose(a)  # noqa: E704
def _mT(a): return swapaxes(a, -1, -2)  # noqa: E704
def _real(a): return real(a)  # noqa: E704
def _imag(a): return imag(a)  # noqa: E704
def _conj(a): return conj(a)  # noqa: E704


def _reshape(a, *shape): return reshape(a, _shape_args(shape))  # noqa: E704
def _transpose(a, *axes): return transpose(a, _shape_args(axes) if axes else None)  # noqa: E704
def _astype(a, dtype, *, copy=True, device=None): return cast(a, dtype) if device is None else cast(to_device(a, device), dtype)  # noqa: E704,E501
def _ravel(a): return reshape(a, (-1,))  # noqa: E704
def _squeeze(a, axis=None): return squeeze(a, axis)  # noqa: E704
def _sum(a, axis=None, keepdims=False): return sum(a, axis, keepdims)  # noqa: E704
def _prod(a, axis=None, keepdims=False): return prod(a, axis, keepdims)  # noqa: E704
def _max(a, axis=None, keepdims=False): return max(a, axis, keepdims)  # noqa: E704
def _min(a, axis=None, keepdims=False): return min(a, axis, keepdims)  # noqa: E704
def _any(a, axis=None, keepdims=False): return any(a, axis, keepdims)  # noqa: E704
def _all(a, axis=None, keepdims=False): return all(a, axis, keepdims)  # noqa: E704
def _mean(a, axis=None, keepdims=False): return mean(a, axis, keepdims)  # noqa: E704
def _var(a, axis=None, ddof=0, keepdims=False, *, correction=None): return var(a, axis, ddof, keepdims, correction=correction)  # noqa: E704,E501
def _std(a, axis=None, ddof=0, keepdims=False, *, correction=None): return std(a, axis, ddof, keepdims, correction=correction)  # noqa: E704,E501
def _argmax(a, axis=None, keepdims=False): return argmax(a, axis, keepdims)  # noqa: E704
def _argmin(a, axis=None, keepdims=False): return argmin(a, axis, keepdims)  # noqa: E704
def _cumsum(a, axis=None): return cumsum(a, axis)  # noqa: E704
def _clip(a, min=None, max=None): return clip(a, min, max)  # noqa: E704,A002


_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")
_namespace = sys.modules[__package__]  # mindtorch_v2.core (being initialised as this module loads)


def __array_namespace__(a, /, *, api_version=None):
    """The Array API namespace of core arrays: mindtorch_v2.core."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; the core implements "
                         f"{', '.join(_API_VERSIONS)}")
    return _namespace


def __complex__(a): return complex(a.item())  # noqa: E704
def _to_device(a, device, /, *, stream=None): return to_device(a, device)  # noqa: E704


def __dlpack__(a, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export the data through DLPack (NumPy's exporter). The buffer is read-only, which only versioned
    DLPack (max_version >= (1, 0)) can say; for older consumers a private copy is exported unless
    copy=False forbids it (then BufferError, as NumPy raises)."""
    buf = np.asarray(a)
    kwargs = {} if dl_device is None else {"dl_device": dl_device}
    try:
        return buf.__dlpack__(stream=stream, max_version=max_version, copy=copy, **kwargs)
    except BufferError:
        if copy is False:
            raise
        return buf.copy().__dlpack__(stream=stream, max_version=max_version, **kwargs)


def __dlpack_device__(a):
    if a.device.type != "cpu":
        raise BufferError(f"__dlpack__: arrays on {a.device} cannot be exported (only cpu arrays can)")
    return np.asarray(a).__dlpack_device__()


def __setitem__(a, key, value):
    raise TypeError("core arrays are immutable and do not support item assignment; use the functional "
                    "update x.at[key].set(value) (also .add, .multiply, .divide, .min, .max), which returns a new array")


class _At:
    """`x.at`: indexed by a key, gives the functional updates of x[key] (JAX's `.at`)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, key):
        return _AtIndex(self.array, key)


class _AtIndex:
    """`x.at[key]`: .get() reads x[key]; .set / .add / .multiply / .divide / .min / .max return updated copies
    of x."""

    __slots__ = ("array", "key")

    def __init__(self, array, key):
        self.array, self.key = array, key

    def get(self):
        return getitem(self.array, self.key)

    def set(self, values):
        return at_update(self.array, self.key, values, "set")

    def add(self, values):
        return at_update(self.array, self.key, values, "add")

    def multiply(self, values):
        return at_update(self.array, self.key, values, "multiply")

    def divide(self, values):
        """x divided by values at key (duplicate indices divide by each), as JAX's: x over a divisor that is
        1 away from key; integer arrays give the default float dtype, as `/` does."""
        return div(self.array, at_update(ones_like(self.array), self.key, values, "multiply"))

    def min(self, values):
        return at_update(self.array, self.key, values, "min")

    def max(self, values):
        return at_update(self.array, self.key, values, "max")


def _at(a): return _At(a)  # noqa: E704


# the table: attribute name -> function above
_METHODS = {
    "__add__": __add__, "__radd__": __radd__, "__sub__": __sub__, "__rsub__": __rsub__,
    "__mul__": __mul__, "__rmul__": __rmul__, "__truediv__": __truediv__, "__rtruediv__": __rtruediv__,
    "__floordiv__": __floordiv__, "__rfloordiv__": __rfloordiv__, "__mod__": __mod__, "__rmod__": __rmod__,
    "__pow__": __pow__, "__rpow__": __rpow__, "__matmul__": __matmul__, "__rmatmul__": __rmatmul__,
    "__neg__": __neg__, "__pos__": __pos__, "__abs__": __abs__, "__invert__": __invert__,
    "__and__": __and__, "__rand__": __rand__, "__or__": __or__, "__ror__": __ror__,
    "__xor__": __xor__, "__rxor__": __rxor__, "__lshift__": __lshift__, "__rlshift__": __rlshift__,
    "__rshift__": __rshift__, "__rrshift__": __rrshift__, "__eq__": __eq__, "__ne__": __ne__,
    "__lt__": __lt__, "__le__": __le__, "__gt__": __gt__, "__ge__": __ge__, "__getitem__": __getitem__,
    "T": property(_T), "mT": property(_mT), "reshape": _reshape, "transpose": _transpose, "astype": _astype,
    "ravel": _ravel, "squeeze": _squeeze, "sum": _sum, "prod": _prod, "max": _max, "min": _min, "any": _any,
    "all": _all, "mean": _mean, "var": _var, "std": _std, "argmax": _argmax, "argmin": _argmin,
    "cumsum": _cumsum, "clip": _clip, "real": property(_real), "imag": property(_imag), "conj": _conj,
    "__array_namespace__": __array_namespace__, "__complex__": __complex__, "to_device": _to_device,
    "__dlpack__": __dlpack__, "__dlpack_device__": __dlpack_device__, "__setitem__": __setitem__,
    "at": property(_at),
}
for _name, _fn in _METHODS.items():
    setattr(ArrayBase, _name, _fn)
