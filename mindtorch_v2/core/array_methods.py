"""The Python operators and array methods of core values (`+`, `@`, `[]`, `.T`, `.sum()`, ...).

The face of the core, as JAX's array_methods.py: each is a real function below, written with the
op families, set on ArrayBase (shared by Arrays and every tracer type) by the one table at the end.
"""
from .array import ArrayBase
from .ops.composite import clamp, mean, std, var
from .ops.elementwise import (abs, add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cast, div, eq, floor_divide,
                              ge, gt, le, lt, mul, ne, neg, pow, remainder, sub)
from .ops.elementary import left_shift, right_shift
from .ops.elementwise import conj, imag, real
from .ops.indexing import getitem
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
def _astype(a, dtype): return cast(a, dtype)  # noqa: E704
def _ravel(a): return reshape(a, (-1,))  # noqa: E704
def _squeeze(a, axis=None): return squeeze(a, axis)  # noqa: E704
def _sum(a, axis=None, keepdims=False): return sum(a, axis, keepdims)  # noqa: E704
def _prod(a, axis=None, keepdims=False): return prod(a, axis, keepdims)  # noqa: E704
def _max(a, axis=None, keepdims=False): return max(a, axis, keepdims)  # noqa: E704
def _min(a, axis=None, keepdims=False): return min(a, axis, keepdims)  # noqa: E704
def _any(a, axis=None, keepdims=False): return any(a, axis, keepdims)  # noqa: E704
def _all(a, axis=None, keepdims=False): return all(a, axis, keepdims)  # noqa: E704
def _mean(a, axis=None, keepdims=False): return mean(a, axis, keepdims)  # noqa: E704
def _var(a, axis=None, ddof=0, keepdims=False): return var(a, axis, ddof, keepdims)  # noqa: E704
def _std(a, axis=None, ddof=0, keepdims=False): return std(a, axis, ddof, keepdims)  # noqa: E704
def _argmax(a, axis=None, keepdims=False): return argmax(a, axis, keepdims)  # noqa: E704
def _argmin(a, axis=None, keepdims=False): return argmin(a, axis, keepdims)  # noqa: E704
def _cumsum(a, axis=None): return cumsum(a, axis)  # noqa: E704
def _clip(a, min=None, max=None): return clamp(a, min, max)  # noqa: E704,A002


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
}
for _name, _fn in _METHODS.items():
    setattr(ArrayBase, _name, _fn)
