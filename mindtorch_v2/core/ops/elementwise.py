"""Elementwise primitives: unary math, binary arithmetic and comparisons, where, cast.

Each line declares a primitive with its derivative (see `_family.unary` /
`_family.binary`); the public function below it promotes dtypes the PyTorch way
and binds.
"""
import functools
import math

import numpy as np
import scipy.special as _sc

from .. import _numba
from .. import dtypes as dt
from ..array import Array, ArrayBase
from ._family import elementwise_rule, unary_rule
from ._transpose_kernel import transpose_copy
from ..primitive import Primitive
from . import _family
from ._family import NEG_ONE, ONE, binary, broadcast_shapes, promote, scalar_array, sum_to_shape, unary

__all__ = [
    "cast_p", "cast", "stop_gradient_p", "stop_gradient", "copy_p", "copy", "neg_p", "abs_p", "sign_p", "exp_p",
    "expm1_p", "log_p", "log1p_p", "sqrt_p", "rsqrt_p", "sin_p", "cos_p", "tan_p", "tanh_p", "sigmoid_p", "erf_p",
    "floor_p", "ceil_p", "round_p", "reciprocal_p", "logical_not_p", "bitwise_not_p", "neg", "abs", "sign",
    "floor", "ceil", "round", "logical_not", "bitwise_not", "bitwise_invert", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "tanh", "sigmoid", "erf", "reciprocal", "add_p", "sub_p", "mul_p", "div_p",
    "floor_divide_p", "remainder_p", "pow_p", "maximum_p", "minimum_p", "eq_p", "ne_p", "lt_p", "le_p", "gt_p",
    "ge_p", "logical_and_p", "logical_or_p", "logical_xor_p", "bitwise_and_p", "bitwise_or_p", "bitwise_xor_p",
    "add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum", "eq", "ne", "lt", "le",
    "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "subtract", "multiply", "divide", "power", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "true_divide", "negative", "absolute", "where_p", "where", "real_p", "real", "imag_p", "imag",
    "conj_p", "conj", "complex_p", "relu_p", "relu", "threshold_backward_p", "threshold_backward",
]

# ---------------------------------------------------------------------------
# cast and stop_gradient


def _cast_meta(x, *, dtype):
    return x.shape, dtype


def _cast_grad(g, x_dtype):
    if x_dtype.category < dt.FLOAT:
        return None
    return cast(g, x_dtype)  # complex -> real keeps the real part: the transpose of the real embedding


cast_p = Primitive("cast", _cast_meta, linear=True,
                   vjp=(lambda g, out, x, *, dtype: _cast_grad(g, x.dtype),))


cast_p.batch = unary_rule(cast_p)


@cast_p.def_impl("cpu")
def _cast_cpu(x, *, dtype):
    if x.dtype.kind == "c" and dtype.category != dt.COMPLEX:
        x = x.real  # complex to real keeps the real part (the eager layer warns, as torch does)
    if dtype is dt.float8_e4m3fn:  # it has no inf: torch saturates out-of-range values (inf too) to +-448
        x = np.clip(x.astype(np.float32), -448.0, 448.0)
    if x.dtype.kind == "f" and dtype.category < dt.FLOAT:
        with np.errstate(invalid="ignore", over="ignore"):  # nan / inf to an integer: silent, as in torch
            return x.astype(dtype.np)
    return x.astype(dtype.np)


def cast(x, dtype):
    """x converted to `dtype` (a no-op when it already has it)."""
    dtype = dt.canonicalize(dtype)
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        return _family.scalar_array(x, dtype, _family._cpu)
    if x.dtype is dtype:
        return x
    return cast_p.bind(x, dtype=dtype)


stop_gradient_p = unary("stop_gradient", lambda x: x, kind="any")


def stop_gradient(x):
    """x, with no derivative flowing through it."""
    return stop_gradient_p.bind(x)


# identity with a new identity: the eager layer's clone. Values are immutable, so the lowering
# shares a contiguous buffer (and makes others contiguous); a later in-place write to either copy
# sees two owners and copies first.
def _c_ordered(x):
    if x.flags.c_contiguous:
        return x
    if x.ndim == 2 and x.T.flags.c_contiguous:  # a transposed matrix (a weight's grad): copied by tiles
        return transpose_copy(x.T)
    return np.ascontiguousarray(x)


copy_p = unary("copy", _c_ordered, kind="any", linear=lambda t: t)


def copy(x):
    """x as a new value (no data is copied until someone writes)."""
    return copy_p.bind(x)


# ---------------------------------------------------------------------------
# unary


def _stable_sigmoid(x):
    if x.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _erf(x):
    # numpy has no erf: scipy's ufunc (a compiled loop, ~100x the speed of math.erf per element); float16 is
    # computed in float32 and rounded, asarray makes a 0-d result an array. float32 (GELU's dtype) takes the
    # kernel below where numba is installed: ~10x scipy's speed, the same numbers (see _erf32_loop).
    if x.dtype == np.float32:
        kernel = _erf32_kernel()
        if kernel is not None:
            out = np.empty(x.shape, np.float32)
            kernel(np.ascontiguousarray(x).reshape(-1), _erf32_table(), out.reshape(-1))
            return out
    return np.asarray(_sc.erf(x), dtype=x.dtype)


# float32 erf, computed in float64 and rounded once: scipy's float32 erf is its float64 one (~10 ns per element,
# 0.6 ms on a GPT block's 65k GELU inputs). _erf32_loop gives it bit for bit in two passes:
#
# fast (vectorized by LLVM: no table, no branch): erf(x) / x = P(x^2) below _ERF32_CUT, erf(|x|) =
# Q(|x| - _ERF32_MID) up to _ERF32_END (beyond, erf rounds to +-1 in float32), both computed for every element
# and one selected. Their error against scipy's float64 erf is < 1e-11 relative (tools/erf_pieces.py fits them
# and prints it), so scipy's value lies in y (1 -+ _ERF32_SLACK); where both ends round to the same float32, that
# is scipy's float32 result (rounding is monotonic). The a * b + c may fuse (llvm.fmuladd) or not: a few float64
# ulps, inside the slack.
#
# exact (scalar, for the elements whose ends round apart, nan included: ~0.4% of GELU's inputs): the table path
# (until the fast pass came, the whole kernel). |x| < 4 is cut into 128 pieces of width 1/32, and on each
# erf(a) / a (smooth, even, 2/sqrt(pi) at 0: so a * it keeps full relative accuracy down to denormal x) is a
# degree-6 polynomial in the offset from the piece's middle, fitted at Chebyshev points to scipy's float64 erf;
# |x| >= 4 rounds to +-1 in float32 (1 - erf(3.9) < 2**-25). Its float64 error is a few float64 ulps, so the
# rounded float32 result is scipy's except where scipy's own float64 value lies within those ulps of a float32
# rounding midpoint.
#
# `python tools/erf_pieces.py check` compares the kernel with scipy.special.erf on all 2^32 float32 bit
# patterns, fused and (`check plain`) unfused: 0 differ (tests/test_gpt_speed_paths.py samples them). On 65536
# values 1.5 * randn: ~1.6 ns per element (the table path alone: ~4 ns).
_ERF32_PIECES, _ERF32_DEGREE = 128, 6
_ERF32_CUT, _ERF32_END = 2.25, 3.92
_ERF32_MID = (_ERF32_CUT + _ERF32_END) / 2
_ERF32_SLACK = 2.0 ** -33  # (~1.2e-10: > 10x the pieces' error)
_ERF32_NEAR = (  # P, highest power of z = x^2 first
    -7.062959555501091e-13, 3.34339727321191e-11, -7.840988722796672e-10, 1.2462730457349695e-08,
    -1.547344143353131e-07, 1.6216656818265297e-06, -1.4877210624373232e-05, 0.0001204858940679186,
    -0.0008547684275097738, 0.005223937681271464, -0.026866155699918536, 0.1128379137793512, -0.3761263888047249,
    1.1283791670925842)
_ERF32_FAR = (  # Q, highest power of |x| - _ERF32_MID first
    2.2757462953814223e-06, -7.968921514377869e-06, 7.5416533843028495e-06, 2.340155686639279e-05,
    -0.00012031835177525215, 0.00030349679097438386, -0.0005319993903993111, 0.0006948792460835659,
    -0.0006844433229317055, 0.0004990664703407592, -0.0002561130713015536, 8.301885798657313e-05,
    0.9999871620349965)


@functools.cache
def _erf32_table():
    """(pieces * (degree + 1),) float64: each piece's polynomial in u in [-0.5, 0.5), highest power first."""
    from numpy.polynomial import chebyshev
    rows = []
    for i in range(_ERF32_PIECES):
        def erf_over_a(t, i=i):  # t in [-1, 1] is u = t / 2 on piece i
            a = (i + 0.5 + t / 2) / (_ERF32_PIECES / 4)
            return _sc.erf(a) / a
        power_t = chebyshev.cheb2poly(chebyshev.chebinterpolate(erf_over_a, _ERF32_DEGREE))
        rows.append((power_t * 2.0 ** np.arange(_ERF32_DEGREE + 1))[::-1])  # t = 2u
    return np.ascontiguousarray(np.concatenate(rows))


_fma = _numba.fma  # (compiled: llvm.fmuladd, core/_numba.intrinsics, bound by _erf32_kernel)


def _erf32_exact(xj, table):
    """float32 erf of one float32 by the table (plain multiplies and adds: never fused)."""
    scale = _ERF32_PIECES / 4.0
    width = _ERF32_DEGREE + 1
    xj = np.float64(xj)
    a = math.fabs(xj)  # (this module's abs is the primitive)
    inside = a < 4.0
    s = a * scale if inside else 0.0  # nan and |x| >= 4 read piece 0, then take their own result
    i = np.intp(s)
    u = s - i - 0.5
    b = i * width
    r = table[b]
    for k in range(1, width):
        r = r * u + table[b + k]
    r = a * r if inside else (1.0 if a == a else a)
    return np.float32(math.copysign(r, xj))


def _erf32_loop(x, table, out):
    """out = erf(x) (float32, 1-d): the fast pass, then the exact one where the fast one marked the element (a
    scan of the marks 8 at a time: testing every element would cost a quarter of the fast pass). Returns how
    many took the exact path."""
    n = x.shape[0]
    marks = np.empty((n + 7) // 8 * 8, np.uint8)
    exact = 0
    for j in range(n):
        xj = np.float64(x[j])
        a = math.fabs(xj)  # (this module's abs is the primitive)
        z = a * a
        near = _ERF32_NEAR[0]
        for k in range(1, len(_ERF32_NEAR)):
            near = _fma(near, z, _ERF32_NEAR[k])
        u = a - _ERF32_MID
        far = _ERF32_FAR[0]
        for k in range(1, len(_ERF32_FAR)):
            far = _fma(far, u, _ERF32_FAR[k])
        r = a * near if a < _ERF32_CUT else far  # (nan: far, nan: marked)
        r = 1.0 if a >= _ERF32_END else r
        lo = np.float32(r - r * _ERF32_SLACK)
        sure = lo == np.float32(r + r * _ERF32_SLACK)
        out[j] = np.float32(math.copysign(lo, xj))  # (the sign after: -0.0 - -0.0 * slack would be +0.0)
        marks[j] = not sure
        exact += not sure
    if exact:
        marks[n:] = 0
        words = marks.view(np.uint64)
        for w in range(words.shape[0]):
            if words[w]:
                for j in range(8 * w, min(8 * w + 8, n)):
                    if marks[j]:
                        out[j] = _erf32_exact(x[j], table)
    return exact


@functools.cache
def _erf32_kernel():
    """_erf32_loop compiled by numba (None without numba: scipy's loop then)."""
    if not _numba.available():
        return None
    global _fma, _erf32_exact
    _fma = _numba.intrinsics()[0]
    _erf32_exact = _numba.njit(_erf32_exact, inline="always")
    return _numba.njit(_erf32_loop)


def _quiet(np_fn):
    """The lowering without numpy's floating-point warnings: log(0) is -inf and 1/0 is inf silently,
    as in PyTorch (only for the ops that can produce them: the errstate costs about 1 us)."""
    def lowering(*args):
        with np.errstate(all="ignore"):
            return np_fn(*args)
    lowering.ufunc = np_fn if isinstance(np_fn, np.ufunc) else None  # what jit programs call, under one errstate
    return lowering


def _int_identity(np_fn):
    return lambda x: x if x.dtype.kind in "biu" else np_fn(x)


neg_p = unary("neg", np.negative, kind="numeric", linear=lambda t: neg(t))
sign_p = unary("sign", lambda x: np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype) if x.dtype.kind == "f"
               else np.sign(x), kind="real_numeric", zero=True)  # sign(nan) is 0 in torch
exp_p = unary("exp", _quiet(np.exp), d_out=lambda out: out)
def _expm1_cpu(x):
    if x.dtype.kind != "c":
        return np.expm1(x)
    # NumPy's complex expm1 loses the special values (expm1(inf + 0j) is inf + nan j); this is C99's cexp
    # minus one: real e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b/2) without cancellation near 0, imaginary
    # e^a sin b, which is b itself when b is 0 and 0 when a is -inf; +0.0 turns expm1(-0 + 0j) into +0.
    a, b = x.real, x.imag
    re = np.expm1(a) * np.cos(b) - 2 * np.sin(b / 2) ** 2
    re = np.where(a == -np.inf, -1.0, np.where((a == np.inf) & ~np.isfinite(b), np.inf, re)) + 0.0
    im = np.where(b == 0, b, np.where(a == -np.inf, 0.0, np.exp(a) * np.sin(b)))
    out = np.empty(x.shape, x.dtype)
    out.real, out.imag = re, im
    return out


expm1_p = unary("expm1", _quiet(_expm1_cpu), d_out=lambda out: add(out, 1.0))
log_p = unary("log", _quiet(np.log), d_x=lambda x: reciprocal(x))
log1p_p = unary("log1p", _quiet(np.log1p), d_x=lambda x: reciprocal(add(x, 1.0)))
sqrt_p = unary("sqrt", _quiet(np.sqrt), d_out=lambda out: div(0.5, out))
rsqrt_p = unary("rsqrt", _quiet(lambda x: 1 / np.sqrt(x)), d_out=lambda out: mul(-0.5, mul(out, mul(out, out))))
sin_p = unary("sin", _quiet(np.sin), d_x=lambda x: cos(x))
cos_p = unary("cos", _quiet(np.cos), d_x=lambda x: neg(sin(x)))
tan_p = unary("tan", _quiet(np.tan), d_out=lambda out: add(1.0, mul(out, out)))
tanh_p = unary("tanh", np.tanh, d_out=lambda out: sub(1.0, mul(out, out)))
sigmoid_p = unary("sigmoid", _stable_sigmoid, d_out=lambda out: mul(out, sub(1.0, out)))
erf_p = unary("erf", _erf, kind="real", d_x=lambda x: mul(2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))))
floor_p = unary("floor", _int_identity(np.floor), kind="real_numeric", zero=True)
ceil_p = unary("ceil", _int_identity(np.ceil), kind="real_numeric", zero=True)
round_p = unary("round", _int_identity(np.round), kind="real_numeric", zero=True)
reciprocal_p = unary("reciprocal", _quiet(lambda x: 1 / x), d_out=lambda out: neg(mul(out, out)))
logical_not_p = unary("logical_not", np.logical_not, kind="bool")
bitwise_not_p = unary("bitwise_not", np.invert, kind="integer")  # `~`: logical not on bool


# ---------------------------------------------------------------------------
# complex parts. The core's complex derivatives follow JAX: a VJP is the transpose of the JVP (no
# conjugation), so holomorphic rules are the real ones (g * f'(x)) and `grad` of a real function of z
# is the conjugate of PyTorch's `z.grad`; the eager tape conjugates at its boundary (eager/autograd).


def _complex_meta(name, to):
    def meta(x):
        if to == "real":
            if x.dtype is dt.bool_:
                raise TypeError(f"{name}: not supported for bool arrays")
            return x.shape, x.dtype.to_real()
        if x.dtype.category != dt.COMPLEX:
            raise TypeError(f"{name}: expected a complex dtype, got {x.dtype.name}")
        return x.shape, x.dtype
    return meta


def _real_lowering(np_fn):
    return lambda x: np_fn(x) if x.dtype.kind == "c" else x


real_p = Primitive("real", _complex_meta("real", "real"), linear=True,
                   vjp=(lambda g, out, x: cast(g, x.dtype),))  # the transpose of Re is the embedding
real_p.batch = unary_rule(real_p)
real_p.def_impl("cpu")(_real_lowering(np.real))
imag_p = Primitive("imag", _complex_meta("imag", "real"), linear=True,
                   vjp=(lambda g, out, x: mul(cast(g, x.dtype), -1j),))  # transpose of Im: t -> -i t
imag_p.batch = unary_rule(imag_p)
imag_p.def_impl("cpu")(np.imag)
conj_p = unary("conj", _real_lowering(np.conjugate), kind="any", linear=lambda t: conj(t))


def _complex_pair_meta(re, im):
    d = _family.same_dtype("complex", re, im)
    if d not in (dt.float32, dt.float64, dt.float16, dt.bfloat16):
        raise TypeError(f"complex: expected float32 or float64 parts, got {d.name}")
    return broadcast_shapes("complex", re.shape, im.shape), d.to_complex()


complex_p = Primitive("complex", _complex_pair_meta, linear=True,
                      vjp=(lambda g, out, re, im: sum_to_shape(real(g), re.shape),
                           lambda g, out, re, im: sum_to_shape(neg(imag(g)), im.shape)))
complex_p.batch = elementwise_rule(complex_p)
complex_p.def_impl("cpu")(lambda re, im: (re.astype(np.result_type(re, np.complex64)) + 1j * im))


def real(x):
    """The real part (real arrays: themselves)."""
    x = _family.as_operand(x)
    if not _family.is_arraylike(x) or x.dtype.category != dt.COMPLEX:
        return x if _family.is_arraylike(x) else _family.scalar_array(x.real, dt.result_type(x.real), _family._cpu)
    return real_p.bind(x)


def imag(x):
    """The imaginary part of a complex array."""
    return imag_p.bind(_family.as_operand(x))


def conj(x):
    """The complex conjugate (real arrays: themselves)."""
    x = _family.as_operand(x)
    if x.dtype.category != dt.COMPLEX:
        return x
    return conj_p.bind(x)


def _d_abs(x):
    # d|x|/dx: sign(x) for real x; for complex x, conj(x)/|x| (0 at 0), the transpose of t -> Re(conj(x) t)/|x|
    if x.dtype.category != dt.COMPLEX:
        return sign(x)
    a = abs(x)
    return conj(div(x, cast(where(eq(a, 0.0), 1.0, a), x.dtype)))


def _abs_jvp(ts, out, x):
    t = mul(ts[0], _d_abs(x))
    return real(t) if x.dtype.category == dt.COMPLEX else t


abs_p = Primitive("abs", _complex_meta("abs", "real"), vjp=(lambda g, out, x: mul(g, _d_abs(x)),), vjp_reads=(0,),
                  jvp=_abs_jvp)
abs_p.batch = unary_rule(abs_p)
abs_p.def_impl("cpu")(np.abs)


def neg(x):
    return neg_p.bind(x)


def abs(x):  # noqa: A001 - the array-API name
    return abs_p.bind(x)


def sign(x):
    """-1, 0 or 1 by the sign of x (0 for NaN, as PyTorch); for complex x the unit phase x / |x| (0 at 0),
    as the Array API standard and torch.sgn define it."""
    x = _family.as_operand(x)
    if _family.is_arraylike(x) and x.dtype.category == dt.COMPLEX:
        a = abs(x)
        zero = eq(a, 0.0)  # 0 (never -0) there
        return where(zero, 0.0, div(x, cast(where(zero, 1.0, a), x.dtype)))
    return sign_p.bind(x)


def floor(x):
    return floor_p.bind(x)


def ceil(x):
    return ceil_p.bind(x)


def round(x):  # noqa: A001
    return round_p.bind(x)


def logical_not(x):
    return logical_not_p.bind(_family.as_operand(x))


def bitwise_not(x):
    return bitwise_not_p.bind(_family.as_operand(x))


bitwise_invert = bitwise_not  # the Array API standard's name


_float_unary = _family.float_unary


exp = _float_unary(exp_p)
expm1 = _float_unary(expm1_p)
log = _float_unary(log_p)
log1p = _float_unary(log1p_p)
sqrt = _float_unary(sqrt_p)
rsqrt = _float_unary(rsqrt_p)
sin = _float_unary(sin_p)
cos = _float_unary(cos_p)
tan = _float_unary(tan_p)
tanh = _float_unary(tanh_p)
sigmoid = _float_unary(sigmoid_p)
erf = _float_unary(erf_p)
reciprocal = _float_unary(reciprocal_p)

# ---------------------------------------------------------------------------
# binary


def _max_partial(x, y, out):  # ties split the gradient, as in PyTorch
    return add(cast(gt(x, y), x.dtype), mul(0.5, cast(eq(x, y), x.dtype)))


def _min_partial(x, y, out):
    return add(cast(lt(x, y), x.dtype), mul(0.5, cast(eq(x, y), x.dtype)))


def _pow_dx(x, y, out):
    # y * x^(y-1), with 0 (not 0 * inf) at x = y = 0 as torch; masking only that point keeps the
    # rule differentiable in y at y = 0, and the inner where keeps a nan out of higher orders
    at_origin = logical_and(eq(x, 0.0), eq(y, 0.0))
    return where(at_origin, 0.0, mul(y, pow(where(at_origin, 1.0, x), sub(y, 1.0))))


def _pow_dy(x, y, out):
    if y.dtype.category == dt.COMPLEX:  # 0^y for complex y: the derivative is 0 there too (not 0 * log 0)
        zero_base = eq(x, 0.0)
    else:
        zero_base = logical_and(eq(x, 0.0), ge(y, 0.0))  # 0^y is constant in y there: 0, not 0 * log(0)
    return where(zero_base, 0.0, mul(out, log(where(zero_base, 1.0, x))))


def _pow_np(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        # torch's integer pow: a negative exponent gives 1 for base 1, +-1 for base -1, else 0
        # (numpy raises instead)
        neg_exp = y < 0
        out = np.power(x, np.where(neg_exp, 0, y))
        odd = (y % 2).astype(bool)
        at_neg = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0)).astype(x.dtype)
        return np.where(neg_exp, at_neg, out).astype(x.dtype, copy=False)
    return np.power(x, y)


def _floor_divide_np(x, y):
    if x.dtype.kind in "iu" and not np.all(y) and x.size:  # (an empty x divides by nothing)
        raise ZeroDivisionError("floor_divide: integer division by zero")
    return np.floor_divide(x, y)


def _remainder_np(x, y):
    if x.dtype.kind in "iu" and not np.all(y) and x.size:
        raise ZeroDivisionError("remainder: integer division by zero")
    return np.remainder(x, y)


add_p = binary("add", np.add, d_x=ONE, d_y=ONE)
sub_p = binary("sub", np.subtract, kind="numeric", d_x=ONE, d_y=NEG_ONE)
mul_p = binary("mul", np.multiply, d_x=lambda x, y, out: y, d_y=lambda x, y, out: x, reads=((1,), (0,)))
div_p = binary("div", _quiet(np.true_divide), kind="float", d_x=lambda x, y, out: reciprocal(y),
               d_y=lambda x, y, out: neg(div(div(x, y), y)), reads=((1,), (0, 1)))
floor_divide_p = binary("floor_divide", _quiet(_floor_divide_np), kind="real_numeric", zero=True)
remainder_p = binary("remainder", _quiet(_remainder_np), kind="real_numeric", d_x=ONE,
                     d_y=lambda x, y, out: neg(floor_divide(x, y)), reads=((), (0, 1)))
pow_p = binary("pow", _family.specialized(  # jit: a float pow is numpy's power itself (the integer rules aside)
    lambda e: np.power if e.outvars[0].dtype.np.kind in "fc" else None)(_quiet(_pow_np)),
    kind="numeric", d_x=_pow_dx, d_y=_pow_dy, reads=((0, 1), (0, 1, "out")))
maximum_p = binary("maximum", np.maximum, kind="ordered", d_x=_max_partial, d_y=lambda x, y, o: _max_partial(y, x, o), reads=(0, 1))
minimum_p = binary("minimum", np.minimum, kind="ordered", d_x=_min_partial, d_y=lambda x, y, o: _min_partial(y, x, o), reads=(0, 1))
eq_p = binary("eq", np.equal, kind="compare")
ne_p = binary("ne", np.not_equal, kind="compare")
lt_p = binary("lt", np.less, kind="ordered_compare")
le_p = binary("le", np.less_equal, kind="ordered_compare")
gt_p = binary("gt", np.greater, kind="ordered_compare")
ge_p = binary("ge", np.greater_equal, kind="ordered_compare")
logical_and_p = binary("logical_and", np.logical_and, kind="logical")
logical_or_p = binary("logical_or", np.logical_or, kind="logical")
logical_xor_p = binary("logical_xor", np.logical_xor, kind="logical")
# `&`, `|`, `^`: bitwise on integers, logical on bool, an error on floats (as torch and jax.numpy)
bitwise_and_p = binary("bitwise_and", np.bitwise_and, kind="integer")
bitwise_or_p = binary("bitwise_or", np.bitwise_or, kind="integer")
bitwise_xor_p = binary("bitwise_xor", np.bitwise_xor, kind="integer")


def _binary_fn(prim, to_float=False):
    name = prim.name

    FLOAT = dt.FLOAT

    def fn(x, y):
        # fast paths: same-dtype arrays/tracers, or a float one with a python number
        if type(x) is Array and type(y) is Array and x.dtype is y.dtype and (
                not to_float or x.dtype.category == FLOAT):
            return prim.bind(x, y)
        if isinstance(x, ArrayBase):
            if isinstance(y, ArrayBase):
                if x.dtype is y.dtype and (not to_float or x.dtype.category == FLOAT):
                    return prim.bind(x, y)
            elif (type(y) is float or type(y) is int) and x.dtype.category == FLOAT:
                return prim.bind(x, scalar_array(y, x.dtype, x.device))
        elif isinstance(y, ArrayBase) and (type(x) is float or type(x) is int) and y.dtype.category == FLOAT:
            return prim.bind(scalar_array(x, y.dtype, y.device), y)
        x, y = promote(name, x, y, to_float=to_float)
        return prim.bind(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting and PyTorch dtype promotion."
    return fn


add = _binary_fn(add_p)
sub = _binary_fn(sub_p)
mul = _binary_fn(mul_p)
div = _binary_fn(div_p, to_float=True)
floor_divide = _binary_fn(floor_divide_p)
remainder = _binary_fn(remainder_p)
pow = _binary_fn(pow_p)  # noqa: A001
maximum = _binary_fn(maximum_p)
minimum = _binary_fn(minimum_p)
eq = _binary_fn(eq_p)
ne = _binary_fn(ne_p)
lt = _binary_fn(lt_p)
le = _binary_fn(le_p)
gt = _binary_fn(gt_p)
ge = _binary_fn(ge_p)
logical_and = _binary_fn(logical_and_p)
logical_or = _binary_fn(logical_or_p)
logical_xor = _binary_fn(logical_xor_p)
bitwise_and = _binary_fn(bitwise_and_p)
bitwise_or = _binary_fn(bitwise_or_p)
bitwise_xor = _binary_fn(bitwise_xor_p)

# array-API / jax.numpy spellings
subtract, multiply, divide, power = sub, mul, div, pow
equal, not_equal, less, less_equal, greater, greater_equal = eq, ne, lt, le, gt, ge
true_divide, negative, absolute = div, neg, abs

# ---------------------------------------------------------------------------
# where


def _where_meta(c, x, y):
    if c.dtype is not dt.bool_:
        raise TypeError(f"where: condition must be bool, got {c.dtype.name}")
    d = _family.same_dtype("where", x, y)
    return broadcast_shapes("where", c.shape, x.shape, y.shape), d


def _where_jvp(ts, out, c, x, y):
    _, tx, ty = ts
    tx = _family.scalar_array(0, out.dtype, out.device) if tx is None else tx
    ty = _family.scalar_array(0, out.dtype, out.device) if ty is None else ty
    return _family.broadcast_to_shape(where(c, tx, ty), out.shape)


where_p = Primitive(
    "where", _where_meta, vjp_reads=(0,), jvp=_where_jvp,
    vjp=(None,
         lambda g, out, c, x, y: sum_to_shape(where(c, g, 0.0), x.shape),
         lambda g, out, c, x, y: sum_to_shape(where(c, 0.0, g), y.shape)))
where_p.batch = elementwise_rule(where_p)


@where_p.def_impl("cpu")
def _where_cpu(c, x, y):
    return np.where(c, x, y)


def _where_fill(c, x, y):
    """where(c, x, y) when one of x, y is a 0-d value and the other has the result's shape: a copy of the
    other, then the value written where it is chosen (np.copyto's where=): a causal mask's masked_fill on
    (8, 4, 32, 32) takes 26 us this way, 40 us in np.where's broadcasting loop. The same elements, so the same
    bits; jit chooses it by measurement (_choice.fastest)."""
    if y.ndim == 0:
        out = x.copy()
        np.copyto(out, y, where=np.logical_not(c))
    else:
        out = y.copy()
        np.copyto(out, x, where=c)
    return out


def _where_variants(c, x, y):
    shape = np.broadcast_shapes(c.shape, x.shape, y.shape)
    fills = (y.ndim == 0 and x.shape == shape) or (x.ndim == 0 and y.shape == shape)
    return (_where_fill,) if fills and 0 not in shape else ()


_where_cpu.variants = _where_variants


def where(condition, x, y):
    """Elements of x where condition holds, else of y (broadcasting, promoted dtypes)."""
    condition = _family.as_operand(condition)
    if not _family.is_arraylike(condition):
        x, y = promote("where", x, y)
        condition = _family.scalar_array(bool(condition), dt.bool_, x.device)
    else:
        if condition.dtype is not dt.bool_:
            condition = cast(condition, dt.bool_)
        x, y = promote("where", x, y, device=condition.device)  # python-number branches go to its device
    return where_p.bind(condition, x, y)


# relu is a primitive, not the composite where(x <= 0, 0, x), for PyTorch's autograd: its derivative
# threshold_backward(g, out) reads the output and is itself an op of `out` (with zero derivative there), so
# under create_graph the gradient of relu requires grad and relu's second derivative is zeros, not an error.
def _threshold_backward_np(g, out):
    """g where out > 0 or is nan, else +0. A select by bit mask (g's bits AND all-ones or zero): np.where
    branches per element, and on relu's near-random mask it ran 8x slower (158 vs 20 us at 128x512)."""
    g, out = np.asarray(g), np.asarray(out)
    if g.ndim == 0 or g.shape != out.shape:
        return np.where(out <= 0, np.zeros((), g.dtype), g)
    if g.size >= 4096 and g.dtype.kind == "f" and g.dtype.itemsize >= 4 and out.dtype == g.dtype:
        kernel = _threshold_kernel()
        if kernel is not None:  # one pass instead of four (~3x faster at 128x512)
            res = np.empty(g.shape, g.dtype)
            kernel(np.ascontiguousarray(g).reshape(-1), np.ascontiguousarray(out).reshape(-1), res.reshape(-1))
            return res
    bits = np.dtype(f"i{g.dtype.itemsize}")  # the signed integer of g's width
    mask = np.less_equal(out, 0).view(np.int8).astype(bits)  # 1 where zeroed
    np.subtract(mask, 1, out=mask)                           # zeroed -> 0, kept -> all bits set
    return np.bitwise_and(g.view(bits), mask, out=mask).view(g.dtype)


_threshold_backward_np.fresh_result = True


def _threshold_loop(g, out, res):
    for j in range(g.shape[0]):
        res[j] = g[j] if not out[j] <= 0 else 0


@functools.cache
def _threshold_kernel():
    """_threshold_loop compiled by numba (None without numba: the bit-mask select then)."""
    return _numba.njit(_threshold_loop)


threshold_backward_p = Primitive(
    "threshold_backward", _family._binary_meta("threshold_backward", "real_numeric"), vjp_reads=(1,),
    vjp=(lambda gg, out, g, y: threshold_backward_p.bind(gg, y), lambda gg, out, g, y: _family.zeros_like(y)),
    jvp=lambda ts, out, g, y: threshold_backward_p.bind(ts[0], y) if ts[0] is not None else _family.zeros_like(out))
threshold_backward_p.batch = elementwise_rule(threshold_backward_p)
threshold_backward_p.def_impl("cpu")(_threshold_backward_np)

relu_p = Primitive(
    "relu", _family._unary_meta("relu", "real_numeric"), vjp_reads=("out",),
    vjp=(lambda g, out, x: threshold_backward_p.bind(g, out),),
    jvp=lambda ts, out, x: threshold_backward_p.bind(ts[0], out))
relu_p.batch = unary_rule(relu_p)
@relu_p.def_impl("cpu")
def _relu_cpu(x, out=None):
    # one pass (np.where with a comparison takes two, ~5x the time); nan stays nan, -0.0 gives +0.0 as before.
    # out=: jit's plan hands it a dead buffer (no fresh 256 KB per call for a 128x512 activation)
    return np.maximum(x, 0, out=out)


_relu_cpu.fresh_result = True
_relu_cpu.accepts_out = True
# its loop expression for a fused run (core/fusion.py): maximum(x, 0)'s bits, nan (its payload) and -0.0 -> +0.0
_relu_cpu.fused = "({0} if {0} > {zero} or {0} != {0} else {zero})"


def threshold_backward(g, out):
    """g where out > 0, else 0 (relu's derivative; nan in out passes g, as PyTorch)."""
    return threshold_backward_p.bind(g, out)


def relu(x):
    """max(x, 0) with gradient 0 at 0 and nan kept, as in PyTorch."""
    return relu_p.bind(_family.as_operand(x))


_family.provide(cast=cast, mul=mul, neg=neg, add=add)
