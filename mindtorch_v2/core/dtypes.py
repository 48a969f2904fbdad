"""dtypes as interned module objects, with PyTorch's promotion rules.

Categories order the promotion: bool < integer < floating. Python scalars are
*weak*: they only choose the result's category, never its size, so
`int64 array * 2.5 -> float32` (the default float) and
`float32 array + 1e-3 -> float32`. Zero-dimensional arrays sit between
dimensioned arrays and Python scalars, as in PyTorch.
"""
import numpy as np

BOOL, INT, FLOAT = 0, 1, 2


class DType:
    """A dtype: one interned object per kind, compared by identity."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "scalar_name", "__weakref__")

    def __init__(self, name, np_dtype, category, is_signed, scalar_name):
        self.name = name
        self.scalar_name = scalar_name  # torch's ScalarType name: "Float" in "FloatTensor" and in its messages
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = is_signed

    @property
    def is_floating_point(self):
        return self.category == FLOAT

    def __repr__(self):  # the eager layer's torch.float32 is this very object
        return "torch.bool" if self is bool_ else f"torch.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


bool_ = DType("bool_", np.bool_, BOOL, False, "Bool")
uint8 = DType("uint8", np.uint8, INT, False, "Byte")
int8 = DType("int8", np.int8, INT, True, "Char")
int16 = DType("int16", np.int16, INT, True, "Short")
int32 = DType("int32", np.int32, INT, True, "Int")
int64 = DType("int64", np.int64, INT, True, "Long")
float16 = DType("float16", np.float16, FLOAT, True, "Half")
float32 = DType("float32", np.float32, FLOAT, True, "Float")
float64 = DType("float64", np.float64, FLOAT, True, "Double")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
FLOATING = (float16, float32, float64)
INTEGRAL = (uint8, int8, int16, int32, int64)

_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME["bool"] = bool_

default_float = float32
default_int = int64


# PyTorch's legacy tensor type names (`x.type()`, version-error messages)
def from_name(name):
    return _BY_NAME[name]


def from_numpy(np_dtype):
    """The DType for a numpy dtype; TypeError for dtypes we do not support."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    if np_dtype in _BY_NP:
        return _BY_NP[np_dtype]
    if np_dtype.kind == "u":  # uint16/32/64 have no torch counterpart but int64 holds them
        return int64
    raise TypeError(f"unsupported dtype {np_dtype}; supported: {', '.join(d.name for d in ALL)}")


def canonicalize(dtype):
    """Accept a DType, a numpy dtype/type, a python type or a name; return a DType."""
    if type(dtype) is DType:
        return dtype
    if dtype is None:
        return None
    if dtype is bool:
        return bool_
    if dtype is int:
        return default_int
    if dtype is float:
        return default_float
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    conv = getattr(dtype, "_core_dtype", None)  # eager dtype objects wrap a DType
    if conv is not None:
        return conv
    try:
        return from_numpy(np.dtype(dtype))
    except TypeError:
        raise
    except Exception:
        raise TypeError(f"cannot interpret {dtype!r} as a dtype") from None


def _promote_pair(a, b):
    """Promote two dtypes of arrays (both strong)."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == FLOAT:
        return a if a.itemsize >= b.itemsize else b
    # integers: uint8 mixes with signed types by widening to a signed type
    if a.is_signed == b.is_signed:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return int16  # uint8 with int8


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}


def promote_types(a, b):
    return _PROMOTE[a, b]


def scalar_category(x):
    if isinstance(x, (bool, np.bool_)):
        return BOOL
    if isinstance(x, (int, np.integer)):
        return INT
    if isinstance(x, (float, np.floating)):
        return FLOAT
    raise TypeError(f"unsupported scalar {x!r} of type {type(x).__name__}")


_DEFAULT_FOR_CATEGORY = {BOOL: bool_, INT: int64, FLOAT: float32}


def default_for_category(category):
    return default_float if category == FLOAT else _DEFAULT_FOR_CATEGORY[category]


def result_type(*args):
    """PyTorch's result dtype for arrays (anything with .dtype/.shape) and python scalars.

    Three tiers: dimensioned arrays, zero-dim arrays, python scalars. The
    highest tier present sets the dtype unless a lower tier has a higher
    category, which then picks its own dtype (zero-dim) or the default dtype
    of its category (python scalars).
    """
    dim = zero = None
    scalar_cat = -1
    for x in args:
        dt = getattr(x, "dtype", None)
        if type(dt) is DType:
            if x.shape:
                dim = dt if dim is None else _PROMOTE[dim, dt]
            else:
                zero = dt if zero is None else _PROMOTE[zero, dt]
        else:
            c = scalar_category(x)
            if c > scalar_cat:
                scalar_cat = c
    if dim is None:
        dim, zero = zero, None
    if dim is None:
        return default_for_category(scalar_cat)
    if zero is not None and zero.category > dim.category:
        dim = zero
    if scalar_cat > dim.category:
        return default_for_category(scalar_cat)
    return dim


def is_float(dtype):
    return dtype.category == FLOAT
