"""dtypes as interned module objects, and the core's promotion rules (the Array API standard's and JAX's).

Categories order the promotion: bool < integer < floating < complex. Python scalars are
*weak*: they only choose the result's category, never its size, so
`int64 array * 2.5 -> float32` (the default float) and
`float32 array + 1e-3 -> float32`.

Every array is strong, whatever its rank, and unsigned integers mix with signed ones by widening
(uint16 + int16 -> int32). PyTorch's extra rules (a zero-dimensional tensor sits between dimensioned
tensors and Python scalars; uint16/32/64 mix only with floats) are the eager layer's, in
mindtorch_v2/eager/promotion.py: eager ops cast their operands to torch's result dtype before they
call the core.

bfloat16 and the float8 types are ml_dtypes' NumPy dtypes (the library JAX uses): stored narrow,
computed in float32 by the cpu lowerings (see `primitive.Primitive._entry`), as PyTorch does on CPU."""
import math

import ml_dtypes
import numpy as np

BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class PromotionError(TypeError, RuntimeError):
    """Two dtypes no promotion holds (uint64 with a signed integer, float8 with another type; for PyTorch
    also uint16/32 with a non-float). A TypeError for the core, as NumPy raises for dtypes it cannot
    combine; a RuntimeError for torch code."""


class DType:
    """A dtype: one interned object per kind, compared by identity."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "scalar_name", "narrow", "__weakref__")

    def __init__(self, name, np_dtype, category, is_signed, scalar_name, narrow=False):
        self.name = name
        self.scalar_name = scalar_name  # torch's ScalarType name: "Float" in "FloatTensor" and in its messages
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = is_signed
        self.narrow = narrow  # no NumPy kernels of its own: lowerings compute in float32

    @property
    def is_floating_point(self):
        return self.category == FLOAT

    @property
    def is_complex(self):
        return self.category == COMPLEX

    def to_real(self):
        """The real dtype of a complex one (complex64 -> float32); real dtypes map to themselves."""
        return _TO_REAL.get(self, self)

    def to_complex(self):
        """The complex dtype holding this floating one (float32 -> complex64)."""
        try:
            return _TO_COMPLEX[self]
        except KeyError:
            raise TypeError(f"to_complex: no complex dtype for {self!r}") from None

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
uint16 = DType("uint16", np.uint16, INT, False, "UInt16")
uint32 = DType("uint32", np.uint32, INT, False, "UInt32")
uint64 = DType("uint64", np.uint64, INT, False, "UInt64")
float16 = DType("float16", np.float16, FLOAT, True, "Half")
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, FLOAT, True, "BFloat16", narrow=True)
float8_e4m3fn = DType("float8_e4m3fn", ml_dtypes.float8_e4m3fn, FLOAT, True, "Float8_e4m3fn", narrow=True)
float8_e5m2 = DType("float8_e5m2", ml_dtypes.float8_e5m2, FLOAT, True, "Float8_e5m2", narrow=True)
float32 = DType("float32", np.float32, FLOAT, True, "Float")
float64 = DType("float64", np.float64, FLOAT, True, "Double")
complex64 = DType("complex64", np.complex64, COMPLEX, True, "ComplexFloat")
complex128 = DType("complex128", np.complex128, COMPLEX, True, "ComplexDouble")

ALL = (bool_, uint8, int8, int16, int32, int64, uint16, uint32, uint64, float16, bfloat16, float8_e4m3fn,
       float8_e5m2, float32, float64, complex64, complex128)
FLOATING = (float16, bfloat16, float8_e4m3fn, float8_e5m2, float32, float64)
COMPLEXES = (complex64, complex128)
INTEGRAL = (uint8, int8, int16, int32, int64, uint16, uint32, uint64)
_FLOAT8 = (float8_e4m3fn, float8_e5m2)

_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128,
               complex64: complex64, complex128: complex128}

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
    if dtype is complex:
        return _TO_COMPLEX[default_float]
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


_SIGNED_HOLDING = {1: int16, 2: int32, 4: int64}  # the signed type that holds an unsigned one of this size


def _standard_pair(a, b):
    """The standard's (and JAX's) promotion of two array dtypes; None where no dtype holds both (uint64
    with a signed integer, a float8 type with another type)."""
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        return None
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOAT:  # complex64 + float64 -> complex128
            return _TO_COMPLEX[_standard_pair(hi.to_real(), lo)]
        return hi  # bool with anything, integers with inexact types: the higher kind (JAX's lattice)
    if a.category in (FLOAT, COMPLEX):
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.is_signed == b.is_signed:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return _SIGNED_HOLDING.get(unsigned.itemsize)  # uint8 + int8 -> int16, uint64 + int64 -> none


_STANDARD = {(a, b): _standard_pair(a, b) for a in ALL for b in ALL}


def _promote_standard(a, b):
    out = _STANDARD[a, b]
    if out is None:
        raise PromotionError(f"the array API standard does not promote {a.name} with {b.name}")
    return out


def promote_types(a, b):
    """The standard's (and JAX's) promotion of two dtypes: the smallest dtype holding both."""
    return _promote_standard(a, b)


def scalar_category(x):
    if isinstance(x, (bool, np.bool_)):
        return BOOL
    if isinstance(x, (int, np.integer)):
        return INT
    if isinstance(x, (float, np.floating)):
        return FLOAT
    if isinstance(x, (complex, np.complexfloating)):
        return COMPLEX
    raise TypeError(f"unsupported scalar {x!r} of type {type(x).__name__}")


_DEFAULT_FOR_CATEGORY = {BOOL: bool_, INT: int64, FLOAT: float32}


def default_for_category(category):
    if category == FLOAT:
        return default_float
    if category == COMPLEX:
        return _TO_COMPLEX[default_float]
    return _DEFAULT_FOR_CATEGORY[category]


def sum_dtype(x):
    """The dtype a sum or product of x accumulates in when none is given (the standard's rule): bool and
    signed integers in int64, unsigned integers in uint64, others in their own dtype."""
    d = x.dtype
    if d.category > INT:
        return d
    return int64 if d.is_signed or d.category == BOOL else uint64


def result_type(*args):
    """The result dtype of arrays, dtypes and Python scalars, by the Array API standard (and JAX).

    Arrays and dtypes are strong, whatever their rank: they promote by the standard's table. Python
    scalars are weak and only lift the category (to its default dtype, or for complex scalars with
    float arrays to the complex type of the float's width). PyTorch's weaker zero-dim tier is the eager
    layer's (mindtorch_v2/eager/promotion.py): eager ops hand the core operands already cast.
    """
    out = None
    scalar_cat = -1
    for x in args:
        d = x if type(x) is DType else getattr(x, "dtype", None)
        if type(d) is DType:
            out = d if out is None else _STANDARD[out, d] or _promote_standard(out, d)
        else:
            c = scalar_category(x)
            if c > scalar_cat:
                scalar_cat = c
    if out is None:
        return default_for_category(scalar_cat)
    if scalar_cat > out.category:
        if scalar_cat == COMPLEX and out.category == FLOAT:  # float64 array * 1j -> complex128
            return _TO_COMPLEX[out]
        return default_for_category(scalar_cat)
    return out


def can_cast(from_, to):
    """Whether the standard's promotion takes `from_` (a dtype or an array) to `to` without leaving
    its kind: int8 -> int32 yes, int32 -> int8 no, int -> float no, float32 -> complex64 yes."""
    f = from_ if type(from_) is DType else getattr(from_, "dtype", None)
    if type(f) is not DType:
        f = canonicalize(from_)
    t = canonicalize(to)
    if f is t:
        return True
    if f.category != t.category and not (f.category == FLOAT and t.category == COMPLEX):
        return False
    return _STANDARD[f, t] is t


_KINDS = {
    "bool": lambda d: d.category == BOOL,
    "signed integer": lambda d: d.category == INT and d.is_signed,
    "unsigned integer": lambda d: d.category == INT and not d.is_signed,
    "integral": lambda d: d.category == INT,
    "real floating": lambda d: d.category == FLOAT,
    "complex floating": lambda d: d.category == COMPLEX,
    "numeric": lambda d: d.category != BOOL,
}


def isdtype(dtype, kind):
    """Whether `dtype` is of `kind`: a dtype, one of the standard's kind names ('bool', 'signed
    integer', 'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric'), or a
    tuple of those."""
    if type(dtype) is not DType:
        raise TypeError(f"isdtype: expected a dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if type(kind) is DType:
        return dtype is kind
    if isinstance(kind, str):
        try:
            return _KINDS[kind](dtype)
        except KeyError:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {', '.join(map(repr, _KINDS))}") from None
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of them, got {kind!r}")


def is_float(dtype):
    return dtype.category == FLOAT


def is_inexact(dtype):
    """Floating or complex: the dtypes that carry derivatives."""
    return dtype.category >= FLOAT


def _info_dtype(arg):
    """The DType finfo/iinfo describe: given a dtype, or an array's."""
    d = getattr(arg, "dtype", None)
    return d if type(d) is DType else canonicalize(arg)


class finfo:
    """Machine limits of a floating (or complex: its real part's) dtype or array, as torch.finfo; finfo()
    describes the default float dtype. `dtype` is the name, as torch's (core.finfo gives the dtype object)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "_dtype")

    def __init__(self, type=None):  # noqa: A002 - torch's keyword
        d = default_float if type is None else _info_dtype(type)
        if d.category < FLOAT:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'{d.name}'")
        d = d.to_real()
        info = ml_dtypes.finfo(d.np)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))  # torch's: 0.01 for bfloat16
        self._dtype = d

    @property
    def dtype(self):
        return self._dtype.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self._dtype.name})")


class iinfo:
    """Limits of an integer dtype or array, as torch.iinfo. `dtype` is the name, as torch's (core.iinfo gives
    the dtype object)."""

    __slots__ = ("bits", "max", "min", "_dtype")

    def __init__(self, type):  # noqa: A002
        d = _info_dtype(type)
        if d is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.category >= FLOAT:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{d.name}'")
        info = np.iinfo(d.np)
        self.bits = int(info.bits)
        self.min, self.max = int(info.min), int(info.max)
        self._dtype = d

    @property
    def dtype(self):
        return self._dtype.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self._dtype.name})"


class array_finfo(finfo):
    """finfo as the Array API standard and jax.numpy give it (core.finfo): `dtype` is the real dtype object."""

    __slots__ = ()

    @property
    def dtype(self):
        return self._dtype


class array_iinfo(iinfo):
    """iinfo as the Array API standard gives it (core.iinfo): `dtype` is the dtype object."""

    __slots__ = ()

    @property
    def dtype(self):
        return self._dtype
