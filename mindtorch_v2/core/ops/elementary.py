"""Elementwise math beyond elementwise.py, with jax.numpy's names: inverse trigonometric and hyperbolic
functions, exp2, hypot, arctan2, floating-point manipulation (copysign, nextafter, signbit, frac, ldexp,
nan_to_num), the NaN-ignoring fmin / fmax, integer gcd / lcm / shifts, and the modified Bessel functions
I0, I1 (and their exponentially scaled forms, which core.special re-exports) that jax.numpy.i0 needs.

Primitives where a kernel is needed (a NumPy or scipy.special function) or where a formula of other ops
loses accuracy (hypot: no overflow of x*x); composites (no rules of their own) for the rest.
"""
import math

import ml_dtypes
import numpy as np
import scipy.special as _sc

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import binary, broadcast_shapes, elementwise_rule, promote, same_dtype, unary
from .complex import complex as complex_
from .composite import trunc
from .elementwise import (abs, add, cast, div, eq, ge, gt, le, imag, logical_or, mul, ne, neg, pow,
                          real, reciprocal, rsqrt, sigmoid, sign, sin, sub, where)

__all__ = [
    "arcsin_p", "arccos_p", "arctan_p", "sinh_p", "cosh_p", "arcsinh_p", "arccosh_p", "arctanh_p", "exp2_p",
    "arctan2_p", "hypot_p", "logaddexp_p", "logaddexp2_p", "nextafter_p", "signbit_p", "gcd_p", "lcm_p",
    "left_shift_p", "right_shift_p",
    "i0_p", "i1_p", "i0e_p", "i1e_p",
    "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan",
    "asinh", "acosh", "atanh", "exp2", "arctan2", "atan2", "hypot", "nextafter", "signbit", "gcd", "lcm",
    "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "i0", "logaddexp", "logaddexp2",
    "copysign", "frac", "ldexp", "sinc", "deg2rad", "rad2deg", "radians", "degrees", "heaviside", "fmin",
    "fmax", "float_power", "nan_to_num", "isneginf", "isposinf", "isnan", "isinf", "isreal", "positive",
]


def _quiet(np_fn):
    """The lowering without floating-point warnings (arcsin(2) is nan, arctanh(1) inf, silently, as in torch),
    in its input's dtype (scipy.special computes float16 in float32; a 0-d input gives a numpy scalar)."""
    def lowering(x, *args, **params):
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(x, *args, **params), dtype=x.dtype)
    return lowering


_float = _family.as_float


_float_unary = _family.float_unary


def _float_binary(prim, name=None):
    def fn(x, y):
        x, y = promote(prim.name, x, y, to_float=True)
        return prim.bind(x, y)
    fn.__name__ = name or prim.name
    fn.__doc__ = f"Elementwise {prim.name} with broadcasting; integer inputs are promoted to the default float."
    return fn


# ---------------------------------------------------------------------------
# inverse trigonometric and hyperbolic functions, exp2 (holomorphic: right for complex too)

arcsin_p = unary("arcsin", _quiet(np.arcsin), d_x=lambda x: rsqrt(sub(1.0, mul(x, x))))
arccos_p = unary("arccos", _quiet(np.arccos), d_x=lambda x: neg(rsqrt(sub(1.0, mul(x, x)))))
arctan_p = unary("arctan", np.arctan, d_x=lambda x: reciprocal(add(1.0, mul(x, x))))
sinh_p = unary("sinh", _quiet(np.sinh), d_x=lambda x: cosh(x))
cosh_p = unary("cosh", _quiet(np.cosh), d_x=lambda x: sinh(x))
arcsinh_p = unary("arcsinh", np.arcsinh, d_x=lambda x: rsqrt(add(mul(x, x), 1.0)))
# 1/sqrt(x-1)/sqrt(x+1), not 1/sqrt(x*x-1): the same for real x > 1, and the principal branch for complex x
arccosh_p = unary("arccosh", _quiet(np.arccosh), d_x=lambda x: mul(rsqrt(sub(x, 1.0)), rsqrt(add(x, 1.0))))
arctanh_p = unary("arctanh", _quiet(np.arctanh), d_x=lambda x: reciprocal(sub(1.0, mul(x, x))))
exp2_p = unary("exp2", _quiet(np.exp2), d_out=lambda out: mul(out, math.log(2.0)))

arcsin = asin = _float_unary(arcsin_p)
arccos = acos = _float_unary(arccos_p)
arctan = atan = _float_unary(arctan_p)
sinh = _float_unary(sinh_p)
cosh = _float_unary(cosh_p)
arcsinh = asinh = _float_unary(arcsinh_p)
arccosh = acosh = _float_unary(arccosh_p)
arctanh = atanh = _float_unary(arctanh_p)
exp2 = _float_unary(exp2_p)


# ---------------------------------------------------------------------------
# arctan2, hypot (a primitive: np.hypot scales, so hypot(1e200, 1e200) is finite where sqrt(x*x+y*y) is inf),
# nextafter, signbit


def _atan2_recip(x, y):
    """1 / (x^2 + y^2), and 0 where that sum is 0 (torch's rule: atan2's derivative at the origin is 0, not
    0/0). The sum is replaced by 1 there before the division, so no inf enters a higher derivative either."""
    r2 = add(mul(x, x), mul(y, y))
    at_origin = eq(r2, 0.0)
    return where(at_origin, 0.0, reciprocal(where(at_origin, 1.0, r2)))


arctan2_p = binary("arctan2", np.arctan2, kind="real", d_x=lambda x, y, out: mul(y, _atan2_recip(x, y)),
                   d_y=lambda x, y, out: neg(mul(x, _atan2_recip(x, y))), reads=((0, 1), (0, 1)))
# torch's rule: g * x / out (nan at the origin, as in torch)
hypot_p = binary("hypot", np.hypot, kind="real", d_x=lambda x, y, out: div(x, out),
                 d_y=lambda x, y, out: div(y, out), reads=((0, "out"), (1, "out")))
nextafter_p = binary("nextafter", np.nextafter, kind="real")  # not differentiable (nor in torch)


def _signbit_meta(x):
    if x.dtype.category == dt.COMPLEX:
        raise TypeError("signbit: not supported for complex arrays")
    return x.shape, dt.bool_


def _signbit_np(x):
    if x.dtype.kind == "b":
        return np.zeros(x.shape, np.bool_)
    return np.signbit(x)


# bool out, no derivative; sees -0.0 and -nan, which `x < 0` does not
signbit_p = Primitive("signbit", _signbit_meta)
signbit_p.batch = _family.unary_rule(signbit_p)
signbit_p.def_impl("cpu")(_signbit_np)

arctan2 = atan2 = _float_binary(arctan2_p)
hypot = _float_binary(hypot_p)
nextafter = _float_binary(nextafter_p)


def signbit(x):
    """Whether the sign bit of x is set (True for -0.0; False for every unsigned or bool value)."""
    return signbit_p.bind(_family.as_operand(x) if _family.is_arraylike(x) else _family.asarray(x))


# ---------------------------------------------------------------------------
# integer ops: gcd, lcm, shifts (integer dtypes only: no bool, as torch and jax.numpy)


def _int_binary_meta(name):
    def meta(x, y):
        d = same_dtype(name, x, y)
        if d.category != dt.INT:
            raise TypeError(f"{name}: expected integer arrays, got {d.name}")
        return (x.shape if x.shape == y.shape else broadcast_shapes(name, x.shape, y.shape)), d
    return meta


def _int_binary(name, np_fn):
    prim = Primitive(name, _int_binary_meta(name))
    prim.batch = elementwise_rule(prim)
    prim.def_impl("cpu")(np_fn)
    return prim


def _shift_np(left):
    """x << s / x >> s as torch defines them for every shift: a shift by a negative amount or by at least the
    bit width gives 0 (left) or the sign fill (right), where C (and NumPy) leave it undefined."""
    def fn(x, s):
        bits = x.dtype.itemsize * 8
        wide = s.astype(np.int64) if s.dtype != np.uint64 else np.minimum(s, bits).astype(np.int64)
        outside = (wide < 0) | (wide >= bits)
        s = np.where(outside, 0, wide).astype(x.dtype)
        if left:
            return np.where(outside, 0, np.left_shift(x, s)).astype(x.dtype, copy=False)
        fill = np.right_shift(x, bits - 1) if x.dtype.kind == "i" else np.zeros_like(x)
        return np.where(outside, fill, np.right_shift(x, s)).astype(x.dtype, copy=False)
    return fn


gcd_p = _int_binary("gcd", np.gcd)
lcm_p = _int_binary("lcm", np.lcm)
left_shift_p = _int_binary("left_shift", _shift_np(left=True))
right_shift_p = _int_binary("right_shift", _shift_np(left=False))


def _int_fn(prim):
    def fn(x, y):
        x, y = promote(prim.name, x, y)
        return prim.bind(x, y)
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise {prim.name} of integer arrays, with broadcasting."
    return fn


gcd = _int_fn(gcd_p)
lcm = _int_fn(lcm_p)
left_shift = bitwise_left_shift = _int_fn(left_shift_p)
right_shift = bitwise_right_shift = _int_fn(right_shift_p)


# ---------------------------------------------------------------------------
# modified Bessel functions of the first kind (scipy.special kernels); the derivatives stay inside the family:
# I0' = I1, I1' = I0 - I1/x (1/2 at 0), and for the scaled ones (e^-|x| I): I0e' = I1e - sign(x) I0e,
# I1e' = I0e - I1e (sign(x) + 1/x)


def _at_zero(x, value, fn):
    """fn(x) away from x = 0 and `value` at 0; fn never sees the 0 (no 0/0 in a higher derivative)."""
    zero = eq(x, 0.0)
    return where(zero, value, fn(where(zero, 1.0, x)))


def series_near_zero(x, coeffs, fn, radius=1e-4):
    """fn(x), or the even series sum_k coeffs[k] x^(2k) where |x| < radius (fn never sees those points): for
    derivatives like I1' = I0 - I1/x, whose two terms cancel near 0 and whose own derivatives blow up there."""
    near = gt(radius, abs(x))
    x2 = mul(x, x)
    series = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        series = add(c, mul(x2, series))
    return where(near, series, fn(where(near, 1.0, x)))


def _i1_d(x):  # I1'(x) = 1/2 + 3x^2/16 + 5x^4/384 + ...
    return series_near_zero(x, (0.5, 3 / 16, 5 / 384), lambda s: sub(i0(s), div(i1(s), s)))


def _i1e_d(x, out):
    return _at_zero(x, 0.5, lambda s: sub(i0e(s), mul(i1e(s), add(sign(s), reciprocal(s)))))


def _xo_unary(name, np_fn, d):
    """An elementwise real primitive whose derivative d(x, out) reads both its input and its output."""
    prim = Primitive(name, _family._unary_meta(name, "real"), vjp_reads=(0, "out"),
                     vjp=(lambda g, out, x: mul(g, d(x, out)),), jvp=lambda ts, out, x: mul(ts[0], d(x, out)))
    prim.batch = _family.unary_rule(prim)
    prim.def_impl("cpu")(np_fn)
    return prim


i0_p = unary("i0", _quiet(_sc.i0), kind="real", d_x=lambda x: i1(x))
i1_p = unary("i1", _quiet(_sc.i1), kind="real", d_x=_i1_d)
i0e_p = _xo_unary("i0e", _quiet(_sc.i0e), lambda x, out: sub(i1e(x), mul(sign(x), out)))
i1e_p = _xo_unary("i1e", _quiet(_sc.i1e), _i1e_d)

i0 = _float_unary(i0_p)
i1 = _float_unary(i1_p)
i0e = _float_unary(i0e_p)
i1e = _float_unary(i1e_p)


# ---------------------------------------------------------------------------
# composites


def isnan(x):
    """Whether each element is nan (never for integers)."""
    return ne(x, x)


def isinf(x):
    """Whether each element is +inf or -inf (for complex: either part; never for integers)."""
    x = _family.as_operand(x)
    if x.dtype.category == dt.COMPLEX:
        return logical_or(isinf(real(x)), isinf(imag(x)))
    if x.dtype.category != dt.FLOAT:
        return ne(x, x)
    return eq(abs(x), math.inf)


def _real_only(name, x):
    if x.dtype.category == dt.COMPLEX:
        raise TypeError(f"{name}: not supported for complex arrays")


def isposinf(x):
    _real_only("isposinf", x)
    return eq(x, math.inf) if x.dtype.category == dt.FLOAT else ne(x, x)


def isneginf(x):
    _real_only("isneginf", x)
    return eq(x, -math.inf) if x.dtype.category == dt.FLOAT else ne(x, x)


def isreal(x):
    """Whether each element has a zero imaginary part (every element of a real array)."""
    if x.dtype.category == dt.COMPLEX:
        return eq(imag(x), 0.0)
    return logical_or(eq(x, x), ne(x, x))  # True everywhere, nan included, in x's shape (also under vmap)


def positive(x):
    """x itself (unary +); bool arrays are refused, as in torch."""
    x = _family.as_operand(x)
    if _family.is_arraylike(x) and x.dtype is dt.bool_:
        raise TypeError("positive: not supported for bool arrays")
    return x


# logaddexp / logaddexp2: primitives for speed. The stable composite (max + log1p(exp(-|y - x|)), in
# where-branches) was 13 binds: 110 us for a 1-element tensor against 5 for asin, and 8x np.logaddexp on 1e6
# elements. NumPy's kernels are exact and stable; the partials are torch's, sigmoid(x - y) (and with ln 2 for
# base 2): smooth (1/2 each and curvature 1/4 at ties), and 1 (not nan) against a +inf operand.
logaddexp_p = binary("logaddexp", _quiet(np.logaddexp), kind="real",
                     d_x=lambda x, y, out: sigmoid(sub(x, y)), d_y=lambda x, y, out: sigmoid(sub(y, x)), reads=(0, 1))
logaddexp2_p = binary("logaddexp2", _quiet(np.logaddexp2), kind="real",
                      d_x=lambda x, y, out: sigmoid(mul(sub(x, y), math.log(2.0))),
                      d_y=lambda x, y, out: sigmoid(mul(sub(y, x), math.log(2.0))), reads=(0, 1))
logaddexp = _float_binary(logaddexp_p)
logaddexp2 = _float_binary(logaddexp2_p)


def copysign(x, y):
    """|x| with the sign bit of y (so -0.0 counts as negative); integers become the default float. The
    derivative in x is sign(x) * sign-of-y (0 at x = 0, as torch), in y zero."""
    x, y = promote("copysign", x, y, to_float=True)
    m = abs(x)
    return where(signbit(y), neg(m), m)


def frac(x):
    """x - trunc(x): the fractional part, with the sign of x; nan at +-inf (inf - inf, without numpy's warning)."""
    if x.dtype.category != dt.FLOAT:
        return sub(x, trunc(x))
    infinite = eq(abs(x), math.inf)
    finite = where(infinite, 0.0, x)
    return where(infinite, math.nan, sub(finite, trunc(finite)))


def ldexp(x, e):
    """x * 2**e, in the floating dtype promoted from both (integers: the default float)."""
    x, e = promote("ldexp", x, e, to_float=True)
    return mul(x, exp2(e))


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (the normalized sinc of torch and NumPy). Near 0 its series, so that every
    derivative is right there too (torch's second derivative at 0 is nan)."""
    x = _float(x)
    pi2 = math.pi ** 2
    return series_near_zero(x, (1.0, -pi2 / 6, pi2 * pi2 / 120), lambda s: div(sin(mul(s, math.pi)), mul(s, math.pi)))


def deg2rad(x):
    return mul(_float(x), math.pi / 180.0)


def rad2deg(x):
    return mul(_float(x), 180.0 / math.pi)


radians, degrees = deg2rad, rad2deg


def heaviside(x, values):
    """0 where x < 0, `values` where x == 0, 1 where x > 0 (0 for nan, as torch)."""
    x, values = promote("heaviside", x, values)
    return where(eq(x, 0), values, cast(gt(x, 0), x.dtype))


def fmax(x, y):
    """The larger of x and y, ignoring nan (nan only where both are); x at ties, as torch's gradient."""
    x, y = promote("fmax", x, y)
    return where(logical_or(ge(x, y), ne(y, y)), x, y)


def fmin(x, y):
    """The smaller of x and y, ignoring nan (nan only where both are); x at ties."""
    x, y = promote("fmin", x, y)
    return where(logical_or(le(x, y), ne(y, y)), x, y)


def _double(x):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = _family.asarray(x)
    wide = dt.complex128 if x.dtype.category == dt.COMPLEX else dt.float64
    return cast(x, wide)


def float_power(x, y):
    """x ** y computed in double precision (complex128 if either is complex)."""
    x, y = _double(x), _double(y)
    if x.dtype is not y.dtype:
        x, y = promote("float_power", x, y)
    return pow(x, y)


def _finfo(dtype):
    return ml_dtypes.finfo(dtype.np)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """x with nan, +inf and -inf replaced (by default: 0 and the dtype's largest / lowest finite values);
    integer arrays come back as they are."""
    x = _family.as_operand(x)
    if x.dtype.category == dt.COMPLEX:  # each part on its own, as torch
        re, im = real(x), imag(x)
        return complex_(nan_to_num(re, nan, posinf, neginf), nan_to_num(im, nan, posinf, neginf))
    if x.dtype.category != dt.FLOAT:
        return x
    info = _finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    out = where(ne(x, x), nan, x)
    out = where(eq(x, math.inf), posinf, out)
    return where(eq(x, -math.inf), neginf, out)
