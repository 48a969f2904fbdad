"""Torch names for the elementary and special functions (core/ops/elementary.py, core.special):
torch.asin ... torch.lcm with their methods, in-place and out= forms, the shift operators, and the
functions of torch.special (declared here as functions only; mindtorch_v2/special.py imports them).

PyTorch's dtype rules that the core does not share are checked here: float-only kernels
(logaddexp, hypot, nextafter, frac) refuse integers, integer kernels (gcd, shifts) refuse bool and
floats, with torch's NotImplementedError ("... not implemented for 'Long'").
"""
from .. import core
from ..core import dtypes as _dt
from .declare import tensor_method, torch_op
from .methods import _forward, _reflected
from .ops import _t, _unary, _w
from .tensor import Tensor, UnsupportedDTypeError
from .writeback import inplace_method
from . import promotion as _promotion

_p = _promotion.promote  # operands cast to torch's result dtype (the core promotes by the standard)

__all__ = [
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
    "arctan2", "arcsinh", "arccosh", "arctanh", "hypot", "logaddexp", "logaddexp2", "exp2", "copysign",
    "nextafter", "signbit", "frac", "ldexp", "xlogy", "sinc", "deg2rad", "rad2deg", "erfc", "erfinv", "lgamma",
    "digamma", "polygamma", "mvlgamma", "i0", "heaviside", "fmin", "fmax", "float_power", "nan_to_num", "logit",
    "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm", "isneginf", "isposinf", "isreal", "positive",
]

_FLOAT = _dt.FLOAT


def _dtype_of(*xs):
    return _promotion.result_type(*(x for x in xs if x is not None))


def _refuse(kernel, dtype):
    raise UnsupportedDTypeError(f'"{kernel}_cpu" not implemented for {dtype.scalar_name!r}')


def _float_kernel(kernel, *xs):
    """torch's float-only kernels: integer and bool operands are refused, not promoted."""
    d = _dtype_of(*xs)
    if d.category != _FLOAT:
        _refuse(kernel, d)


def _no_complex(name, x):
    if _t(x).dtype.category == _COMPLEX:
        raise RuntimeError(f"{name} does not support complex inputs.")


def _integer_kernel(kernel, *xs):
    d = _dtype_of(*xs)
    if d.category != _dt.INT:
        _refuse(kernel, d)


# ---------------------------------------------------------------------------
# trig and hyperbolic

asin = arcsin = torch_op(_unary(core.asin), name="asin", inplace=True, out=True, aliases=("arcsin",))
acos = arccos = torch_op(_unary(core.acos), name="acos", inplace=True, out=True, aliases=("arccos",))
atan = arctan = torch_op(_unary(core.atan), name="atan", inplace=True, out=True, aliases=("arctan",))
sinh = torch_op(_unary(core.sinh), name="sinh", inplace=True, out=True)
cosh = torch_op(_unary(core.cosh), name="cosh", inplace=True, out=True)
asinh = arcsinh = torch_op(_unary(core.asinh), name="asinh", inplace=True, out=True, aliases=("arcsinh",))
acosh = arccosh = torch_op(_unary(core.acosh), name="acosh", inplace=True, out=True, aliases=("arccosh",))
atanh = arctanh = torch_op(_unary(core.atanh), name="atanh", inplace=True, out=True, aliases=("arctanh",))
sinc = torch_op(_unary(core.sinc), name="sinc", inplace=True, out=True)
_COMPLEX = _dt.COMPLEX


def _real_angle(fn):
    def op(input):
        x = _t(input)
        if x.dtype.category == _COMPLEX:
            raise RuntimeError(f"{fn.__name__} is not supported for complex tensors.")
        return _w(fn(x))
    op.__name__ = fn.__name__
    return op


deg2rad = torch_op(_real_angle(core.deg2rad), name="deg2rad", inplace=True, out=True)
rad2deg = torch_op(_real_angle(core.rad2deg), name="rad2deg", inplace=True, out=True)
exp2 = torch_op(_unary(core.exp2), name="exp2", inplace=True, out=True)
erfc = torch_op(_unary(core.special.erfc), name="erfc", inplace=True, out=True)
erfinv = torch_op(_unary(core.special.erfinv), name="erfinv", inplace=True, out=True)
lgamma = torch_op(_unary(core.special.gammaln), name="lgamma", inplace=True, out=True)
digamma = torch_op(_unary(core.special.digamma), name="digamma", inplace=True, out=True)
i0 = torch_op(_unary(core.special.i0), name="i0", inplace=True, out=True)


@torch_op(inplace=True, out=True, aliases=("arctan2",))
def atan2(input, other):
    return _w(core.atan2(*_p(_t(input), other)))


arctan2 = atan2


@torch_op(inplace=True, out=True)
def hypot(input, other):
    _float_kernel("hypot", input, other)
    return _w(core.hypot(*_p(_t(input), other)))


@torch_op(out=True)
def logaddexp(input, other):
    if _dtype_of(input, other).category == _COMPLEX:
        return _complex_logaddexp(_t(input), other)
    _float_kernel("logaddexp", input, other)
    return _w(core.logaddexp(*_p(_t(input), other)))


def _complex_logaddexp(x, y):
    """log(exp(x) + exp(y)) for complex operands, shifted by the one with the larger real part (exp of the
    difference cannot overflow); equal infinite real parts give that operand."""
    x, y = _w(core.cast(x, _dtype_of(x, y))), _w(core.cast(y, _dtype_of(x, y)))
    x_above = core.ge(core.real(x), core.real(y))
    m, o = core.where(x_above, x, y), core.where(x_above, y, x)
    same = core.eq(m, o)
    d = core.where(same, 0, core.sub(o, core.where(same, 0, m)))
    return _w(core.add(m, core.log1p(core.exp(d))))


@torch_op(out=True)
def logaddexp2(input, other):
    _float_kernel("logaddexp2", input, other)
    return _w(core.logaddexp2(*_p(_t(input), other)))


@torch_op(inplace=True, out=True)
def nextafter(input, other):
    _float_kernel("nextafter", input, other)
    return _w(core.nextafter(*_p(_t(input), other)))


@torch_op(inplace=True, out=True)
def copysign(input, other):
    return _w(core.copysign(*_p(_t(input), other)))


@torch_op(inplace=True, out=True)
def ldexp(input, other):
    """input * 2**other as torch computes it: the power in other's dtype when floating, else in input's
    floating dtype (float16 * 2**20 overflows), else the default float; then the product."""
    x, e = _t(input), _t(other)
    if e.dtype.category < _dt.FLOAT:
        e = core.cast(e, x.dtype if x.dtype.category >= _dt.FLOAT else _dt.default_float)
    return _w(core.mul(*_promotion.promote(x, _w(core.exp2(e)))))


@torch_op(inplace=True, out=True)
def xlogy(input, other):
    if _dtype_of(input, other).category == _COMPLEX:
        _refuse("xlogy", _dtype_of(input, other))
    return _w(core.special.xlogy(*_p(input, other)))


@torch_op(out=True)
def signbit(input):
    return _w(core.signbit(_t(input)))


@torch_op(inplace=True, out=True)
def frac(input):
    _float_kernel("frac", input)
    return _w(core.frac(input))


# ---------------------------------------------------------------------------
# gamma family


@torch_op(method=False, out=True)
def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _w(core.special.polygamma(n, _t(input)))


@tensor_method("polygamma")
def _polygamma_method(self, n):
    """Tensor.polygamma(n): torch.polygamma(n, self)."""
    return polygamma(n, self)


tensor_method(inplace_method(_polygamma_method, "polygamma_"))


@torch_op(inplace=True, out=True)
def mvlgamma(input, p):
    if input.dtype is _dt.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    return _w(core.special.multigammaln(_t(input), p))


# ---------------------------------------------------------------------------
# comparisons, selections and replacements


@torch_op(inplace=True, out=True)
def heaviside(input, values):
    if isinstance(values, Tensor) and input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return _w(core.heaviside(*_p(input, values)))


@torch_op(out=True)
def fmax(input, other):
    return _w(core.fmax(*_p(_t(input), other)))


@torch_op(out=True)
def fmin(input, other):
    return _w(core.fmin(*_p(_t(input), other)))


@torch_op(out=True)
def float_power(input, exponent):
    return _w(core.float_power(input, exponent))


@tensor_method
def float_power_(self, exponent):
    """In place: only a float64 (or complex128) self can hold float_power's result, as in PyTorch."""
    need = _dt.complex128 if _dtype_of(self, exponent).category == _COMPLEX else _dt.float64
    if self.dtype is not need:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.scalar_name} but the operation's "
                           f"result requires dtype {need.scalar_name}")
    return _float_power_inplace(self, exponent)


_float_power_inplace = inplace_method(float_power, "float_power_")


@torch_op(inplace=True, out=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    x = _t(input)
    if x.dtype.category == _COMPLEX:  # the real and imaginary parts, each as a real tensor
        parts = (core.nan_to_num(core.real(x), nan, posinf, neginf), core.nan_to_num(core.imag(x), nan, posinf, neginf))
        return _w(core.complex(*parts))
    if x.dtype.category != _FLOAT:
        return x.clone()
    return _w(core.nan_to_num(x, nan, posinf, neginf))


@torch_op(inplace=True, out=True)
def logit(input, eps=None):
    if _t(input).dtype.category == _COMPLEX:
        _refuse("logit", input.dtype)
    return _w(core.special.logit(_t(input), eps))


@torch_op(out=True)
def isposinf(input):
    _no_complex("isposinf", input)
    return _w(core.isposinf(_t(input)))


@torch_op(out=True)
def isneginf(input):
    _no_complex("isneginf", input)
    return _w(core.isneginf(_t(input)))


@torch_op
def isreal(input):
    return _w(core.isreal(_t(input)))


@torch_op
def positive(input):
    if input.dtype is _dt.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---------------------------------------------------------------------------
# integers


@torch_op(inplace=True, out=True)
def gcd(input, other):
    _integer_kernel("gcd", input, other)
    return _w(core.gcd(*_p(input, other)))


@torch_op(inplace=True, out=True)
def lcm(input, other):
    _integer_kernel("lcm", input, other)
    return _w(core.lcm(*_p(input, other)))


@torch_op(inplace=True, out=True)
def bitwise_left_shift(input, other):
    _integer_kernel("lshift", input, other)
    return _w(core.left_shift(*_p(input, other)))


@torch_op(inplace=True, out=True)
def bitwise_right_shift(input, other):
    _integer_kernel("rshift", input, other)
    return _w(core.right_shift(*_p(input, other)))


@tensor_method
def __lshift__(self, other): return _forward(bitwise_left_shift, self, other)  # noqa: E704
@tensor_method
def __rlshift__(self, other): return _reflected(bitwise_left_shift, self, other)  # noqa: E704
@tensor_method
def __rshift__(self, other): return _forward(bitwise_right_shift, self, other)  # noqa: E704
@tensor_method
def __rrshift__(self, other): return _reflected(bitwise_right_shift, self, other)  # noqa: E704


tensor_method(inplace_method(bitwise_left_shift, "__ilshift__"))
tensor_method(inplace_method(bitwise_right_shift, "__irshift__"))

# ---------------------------------------------------------------------------
# torch.special: functions only (mindtorch_v2/special.py imports them by name). The names torch also has
# at the top level are the same functions.


def _special_unary(fn, name, half=True):
    """A torch.special function of one tensor; half=False: torch has no float16 kernel for it."""
    if half:
        return torch_op(_unary(fn), name=name, method=False, out=True)

    def op(input):
        x = _t(input)
        if x.dtype is _dt.float16:
            _refuse(name, x.dtype)
        return _w(fn(x))
    op.__name__ = name
    return torch_op(op, method=False, out=True)


erfcx = _special_unary(core.special.erfcx, "erfcx", half=False)
log_ndtr = _special_unary(core.special.log_ndtr, "log_ndtr", half=False)
ndtr = _special_unary(core.special.ndtr, "ndtr")
ndtri = _special_unary(core.special.ndtri, "ndtri", half=False)
i0e = _special_unary(core.special.i0e, "i0e")
i1 = _special_unary(core.special.i1, "i1")
i1e = _special_unary(core.special.i1e, "i1e")
entr = _special_unary(core.special.entr, "entr")
bessel_j0 = _special_unary(core.special.j0, "bessel_j0", half=False)
bessel_j1 = _special_unary(core.special.j1, "bessel_j1", half=False)
bessel_y0 = _special_unary(core.special.y0, "bessel_y0", half=False)
bessel_y1 = _special_unary(core.special.y1, "bessel_y1", half=False)
modified_bessel_i0 = _special_unary(core.special.i0, "modified_bessel_i0", half=False)
modified_bessel_i1 = _special_unary(core.special.i1, "modified_bessel_i1", half=False)
modified_bessel_k0 = _special_unary(core.special.k0, "modified_bessel_k0", half=False)
modified_bessel_k1 = _special_unary(core.special.k1, "modified_bessel_k1", half=False)
scaled_modified_bessel_k0 = _special_unary(core.special.k0e, "scaled_modified_bessel_k0", half=False)
scaled_modified_bessel_k1 = _special_unary(core.special.k1e, "scaled_modified_bessel_k1", half=False)
spherical_bessel_j0 = _special_unary(core.special.spherical_bessel_j0, "spherical_bessel_j0", half=False)
airy_ai = _special_unary(core.special.airy_ai, "airy_ai", half=False)


@torch_op(method=False, out=True)
def xlog1py(input, other):
    return _w(core.special.xlog1py(input, other))


@torch_op(method=False, out=True)
def zeta(input, other):
    _no_half("zeta", input, other)
    return _w(core.special.zeta(input, other))


@torch_op(method=False, out=True)
def gammainc(input, other):
    _float_kernel("igamma", input, other)
    return _w(core.special.gammainc(input, other))


@torch_op(method=False, out=True)
def gammaincc(input, other):
    _float_kernel("igammac", input, other)
    return _w(core.special.gammaincc(input, other))


@torch_op(method=False, out=True)
def multigammaln(input, p):
    return mvlgamma(input, p)


@torch_op(method=False, out=True, name="round")
def special_round(input, *, decimals=0):
    """torch.special.round: torch.round for floating tensors only."""
    x = _t(input)
    if x.dtype.category != _FLOAT:
        _refuse("round_vml", x.dtype)
    return x.round(decimals=decimals)


def _no_half(kernel, *xs):
    d = _dtype_of(*xs)
    if d is _dt.float16:
        _refuse(kernel, d)


def _polynomial(fn, name):
    def op(input, n):
        _no_half(name, input, n)
        return _w(fn(input, n))
    op.__name__ = name
    return torch_op(op, method=False, out=True)


chebyshev_polynomial_t = _polynomial(core.special.chebyshev_polynomial_t, "chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial(core.special.chebyshev_polynomial_u, "chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial(core.special.chebyshev_polynomial_v, "chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial(core.special.chebyshev_polynomial_w, "chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial(core.special.shifted_chebyshev_polynomial_t,
                                             "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial(core.special.shifted_chebyshev_polynomial_u,
                                             "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial(core.special.shifted_chebyshev_polynomial_v,
                                             "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial(core.special.shifted_chebyshev_polynomial_w,
                                             "shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial(core.special.hermite_polynomial_h, "hermite_polynomial_h")
hermite_polynomial_he = _polynomial(core.special.hermite_polynomial_he, "hermite_polynomial_he")
laguerre_polynomial_l = _polynomial(core.special.laguerre_polynomial_l, "laguerre_polynomial_l")
legendre_polynomial_p = _polynomial(core.special.legendre_polynomial_p, "legendre_polynomial_p")
