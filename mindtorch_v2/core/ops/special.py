"""core.special: special functions with scipy.special's names (as jax.scipy.special), on scipy.special kernels.

One primitive per kernel, its derivative written with core ops from the family's other functions
(gammaln' = digamma = polygamma(0, .), polygamma(n, .)' = polygamma(n + 1, .), erfinv' = sqrt(pi)/2 exp(erfinv^2),
...); composites (xlogy, xlog1py, entr, logit, multigammaln, ...) where a formula of existing ops is exact.
Integer and bool inputs become the default float dtype, as in PyTorch. The Bessel functions of the first kind
I0, I1 (and scaled) live in elementary.py (jax.numpy.i0 needs them) and are re-exported here.

Where torch.special defines a function without a derivative (the Bessel functions of the first and second
kind, Airy, the orthogonal polynomials), ours has one when it is a formula of the family's own functions
(J0' = -J1, K0' = -K1, ...) and none otherwise (airy_ai, the polynomials: torch has none either).
"""
import math

import numpy as np
import scipy.special as _sc

from .. import dtypes as dt
from ..array import ArrayBase
from ..primitive import Primitive
from . import _family
from ._family import binary, broadcast_shapes, elementwise_rule, promote, same_dtype, unary, unary_rule
from .composite import log_softmax, logsumexp, softmax
from .elementary import _float, _quiet, _xo_unary, i0, i0e, i1, i1e, isnan, series_near_zero, sinc
from .elementwise import (abs, add, div, eq, erf, exp, gt, log, log1p, logical_and, logical_not, lt, mul, neg,
                          reciprocal, sigmoid, sin, sub, where)

__all__ = [
    "erfc_p", "erfinv_p", "erfcx_p", "ndtr_p", "ndtri_p", "log_ndtr_p", "gammaln_p", "polygamma_p", "zeta_p",
    "gammainc_p", "gammaincc_p", "xlogy_p", "xlog1py_p", "j0_p", "j1_p", "y0_p", "y1_p", "k0_p", "k1_p", "k0e_p",
    "k1e_p", "airy_ai_p",
    "orthogonal_polynomial_p",
    "erf", "erfc", "erfinv", "erfcx", "ndtr", "ndtri", "log_ndtr", "gammaln", "lgamma", "digamma", "psi",
    "polygamma", "multigammaln", "zeta", "gammainc", "gammaincc", "i0", "i0e", "i1", "i1e", "j0", "j1", "y0",
    "y1", "k0", "k1", "k0e", "k1e", "airy_ai", "spherical_bessel_j0", "expit", "logit", "xlogy", "xlog1py",
    "entr", "sinc", "logsumexp", "softmax", "log_softmax", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _fn(prim, name=None):
    name = name or prim.name
    return _family.float_unary(prim, name, f"Elementwise {name} (scipy.special.{prim.name}); integers become the "
                                           "default float.")


def _fn2(prim):
    def fn(x, y):
        x, y = promote(prim.name, x, y, to_float=True)
        return prim.bind(x, y)
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise {prim.name} (scipy.special.{prim.name}) with broadcasting."
    return fn


def _gauss(x):
    return mul(_INV_SQRT_2PI, exp(mul(-0.5, mul(x, x))))


# ---------------------------------------------------------------------------
# error functions and the normal distribution

erfc_p = unary("erfc", _quiet(_sc.erfc), kind="real", d_x=lambda x: mul(-_TWO_OVER_SQRT_PI, exp(neg(mul(x, x)))))
erfinv_p = unary("erfinv", _quiet(_sc.erfinv), kind="real",
                 d_out=lambda out: mul(math.sqrt(math.pi) / 2.0, exp(mul(out, out))))
erfcx_p = _xo_unary("erfcx", _quiet(_sc.erfcx), lambda x, out: sub(mul(mul(2.0, x), out), _TWO_OVER_SQRT_PI))
ndtr_p = unary("ndtr", _quiet(_sc.ndtr), kind="real", d_x=_gauss)
ndtri_p = unary("ndtri", _quiet(_sc.ndtri), kind="real",
                d_out=lambda out: mul(math.sqrt(2.0 * math.pi), exp(mul(0.5, mul(out, out)))))
# d log_ndtr = gauss(x) / ndtr(x), as exp(-x^2/2 - log_ndtr(x)): finite far into the left tail
log_ndtr_p = _xo_unary("log_ndtr", _quiet(_sc.log_ndtr),
                       lambda x, out: mul(_INV_SQRT_2PI, exp(sub(mul(-0.5, mul(x, x)), out))))

erfc = _fn(erfc_p)
erfinv = _fn(erfinv_p)
erfcx = _fn(erfcx_p)
ndtr = _fn(ndtr_p)
ndtri = _fn(ndtri_p)
log_ndtr = _fn(log_ndtr_p)


# ---------------------------------------------------------------------------
# gamma family

def _polygamma_meta(x, *, n):
    _family.require_float("polygamma", x)
    return x.shape, x.dtype


def _polygamma_np(x, *, n):
    if n == 0:
        return _sc.psi(x)
    return _sc.polygamma(n, x)


def _polygamma_d(x, n):
    return polygamma_p.bind(x, n=n + 1)


polygamma_p = Primitive("polygamma", _polygamma_meta, vjp_reads=(0,),
                        vjp=(lambda g, out, x, *, n: mul(g, _polygamma_d(x, n)),),
                        jvp=lambda ts, out, x, *, n: mul(ts[0], _polygamma_d(x, n)))
polygamma_p.batch = unary_rule(polygamma_p)
polygamma_p.def_impl("cpu")(_quiet(_polygamma_np))
# gammaln(-inf) is inf in PyTorch (|Gamma| grows without bound there), -inf in scipy
gammaln_p = unary("gammaln", _quiet(lambda x: np.where(np.isneginf(x), np.inf, _sc.gammaln(x)).astype(x.dtype)),
                  kind="real", d_x=lambda x: digamma(x))

gammaln = lgamma = _fn(gammaln_p)


def polygamma(n, x):
    """The n-th derivative of digamma (n = 0: digamma itself)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma: n must be an int, got {n!r}")
    if n < 0:
        raise ValueError("polygamma: n must be non-negative")
    x = _float(x) if not isinstance(x, ArrayBase) or x.dtype.category < dt.FLOAT else x
    return polygamma_p.bind(x, n=int(n))


def digamma(x):
    """The logarithmic derivative of the gamma function (scipy's psi)."""
    return polygamma(0, x)


psi = digamma


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d: sum_j gammaln(a - j/2) + d(d-1)/4 log(pi)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"multigammaln: d must be a positive int, got {d!r}")
    a = _float(a)
    out = gammaln(a)
    for j in range(1, int(d)):
        out = add(out, gammaln(sub(a, j / 2.0)))
    return add(out, d * (d - 1) / 4.0 * math.log(math.pi))


# zeta(x, q), the Hurwitz zeta function: d/dq = -x zeta(x + 1, q); d/dx has no closed form (torch: none either)
zeta_p = binary("zeta", _quiet(_sc.zeta), kind="real", d_y=lambda x, y, out: neg(mul(x, zeta(add(x, 1.0), y))),
                reads=((), (0, 1)))


def _igamma_density(a, x, out):
    """x^(a-1) e^-x / Gamma(a): d/dx of the regularized lower incomplete gamma function."""
    return exp(sub(sub(mul(sub(a, 1.0), log(x)), x), gammaln(a)))


# d/da has no closed form (torch: not implemented either)
gammainc_p = binary("gammainc", _quiet(_sc.gammainc), kind="real", d_y=_igamma_density, reads=((), (0, 1)))
gammaincc_p = binary("gammaincc", _quiet(_sc.gammaincc), kind="real",
                     d_y=lambda a, x, out: neg(_igamma_density(a, x, out)), reads=((), (0, 1)))

zeta = _fn2(zeta_p)
gammainc = _fn2(gammainc_p)
gammaincc = _fn2(gammaincc_p)


# ---------------------------------------------------------------------------
# Bessel functions (first and second kind, modified second kind), Airy Ai


j0_p = unary("j0", _quiet(_sc.j0), kind="real", d_x=lambda x: neg(j1(x)))
# J1'(x) = J0 - J1/x = 1/2 - 3x^2/16 + 5x^4/384 - ... (the series near 0, where the difference cancels)
j1_p = unary("j1", _quiet(_sc.j1), kind="real",
             d_x=lambda x: series_near_zero(x, (0.5, -3 / 16, 5 / 384), lambda s: sub(j0(s), div(j1(s), s))))
y0_p = unary("y0", _quiet(_sc.y0), kind="real", d_x=lambda x: neg(y1(x)))
y1_p = unary("y1", _quiet(_sc.y1), kind="real", d_x=lambda x: sub(y0(x), div(y1(x), x)))
k0_p = unary("k0", _quiet(_sc.k0), kind="real", d_x=lambda x: neg(k1(x)))
k1_p = unary("k1", _quiet(_sc.k1), kind="real", d_x=lambda x: neg(add(k0(x), div(k1(x), x))))
k0e_p = _xo_unary("k0e", _quiet(_sc.k0e), lambda x, out: sub(out, k1e(x)))  # k0e = e^x k0
k1e_p = _xo_unary("k1e", _quiet(_sc.k1e), lambda x, out: sub(mul(out, sub(1.0, reciprocal(x))), k0e(x)))
airy_ai_p = unary("airy_ai", _quiet(lambda x: _sc.airy(x)[0]), kind="real")  # no derivative (torch: none either)

j0, j1, y0, y1 = _fn(j0_p), _fn(j1_p), _fn(y0_p), _fn(y1_p)
k0, k1, k0e, k1e = _fn(k0_p), _fn(k1_p), _fn(k0e_p), _fn(k1e_p)
airy_ai = _fn(airy_ai_p)


def spherical_bessel_j0(x):
    """sin(x) / x: its series near 0 (every derivative right there), 0 at +-inf as in PyTorch (sin(inf) is nan)."""
    x = _float(x)
    infinite = eq(abs(x), math.inf)
    return where(infinite, 0.0, series_near_zero(where(infinite, 1.0, x), (1.0, -1 / 6, 1 / 120),
                                                 lambda s: div(sin(s), s)))


# ---------------------------------------------------------------------------
# composites: logistic, x log y, entropy


expit = sigmoid


def logit(x, eps=None):
    """log(x / (1 - x)); with eps, x is first clamped to [eps, 1 - eps] (zero gradient outside, as torch)."""
    x = _float(x)
    if eps is not None:
        x = where(lt(x, eps), eps, where(gt(x, 1.0 - eps), 1.0 - eps, x))
    return log(div(x, sub(1.0, x)))


def _x_log_dx(log_fn, pole):
    """d/dx of x * log_fn(y): log_fn(y), and 0 where x == 0 with y at or beyond the log's pole (torch's rule)."""
    def d(x, y, out):
        masked = logical_and(eq(x, 0.0), logical_not(gt(y, pole)))
        return where(masked, 0.0, log_fn(where(masked, 1.0, y)))
    return d


# xlogy / xlog1py: primitives for speed (the masked composite was 10 binds, 70 us for a 1-element tensor); scipy's
# kernels give 0 where x == 0 unless y is nan, as torch. d/dy = x / y is torch's too (nan at x = y = 0).
xlogy_p = binary("xlogy", _quiet(_sc.xlogy), kind="real", d_x=_x_log_dx(log, 0.0),
                 d_y=lambda x, y, out: div(x, y), reads=(0, 1))
xlog1py_p = binary("xlog1py", _quiet(_sc.xlog1py), kind="real", d_x=_x_log_dx(log1p, -1.0),
                   d_y=lambda x, y, out: div(x, add(y, 1.0)), reads=(0, 1))
xlogy = _fn2(xlogy_p)
xlog1py = _fn2(xlog1py_p)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0 (nan stays nan)."""
    x = _float(x)
    pos = gt(x, 0.0)
    inside = where(pos, x, 1.0)  # the branch never sees x <= 0 (no -inf * 0 there)
    val = neg(mul(inside, log(inside)))
    return where(pos, val, where(eq(x, 0.0), 0.0, where(isnan(x), x, -math.inf)))


# ---------------------------------------------------------------------------
# orthogonal polynomials P_n(x), torch.special's argument order (x, n): n is truncated to an integer, and a
# negative n gives 0. One primitive with the family as a static param; no derivative (torch: none either).


def _cheb_v(n, x):
    return _sc.eval_chebyu(n, x) - np.where(n > 0, _sc.eval_chebyu(np.maximum(n - 1, 0), x), 0.0)


def _cheb_w(n, x):
    return _sc.eval_chebyu(n, x) + np.where(n > 0, _sc.eval_chebyu(np.maximum(n - 1, 0), x), 0.0)


_POLYNOMIALS = {
    "chebyshev_t": _sc.eval_chebyt,
    "chebyshev_u": _sc.eval_chebyu,
    "chebyshev_v": _cheb_v,  # V_n = U_n - U_{n-1}
    "chebyshev_w": _cheb_w,  # W_n = U_n + U_{n-1}
    "shifted_chebyshev_t": lambda n, x: _sc.eval_chebyt(n, 2 * x - 1),
    "shifted_chebyshev_u": lambda n, x: _sc.eval_chebyu(n, 2 * x - 1),
    "shifted_chebyshev_v": lambda n, x: _cheb_v(n, 2 * x - 1),
    "shifted_chebyshev_w": lambda n, x: _cheb_w(n, 2 * x - 1),
    "hermite_h": _sc.eval_hermite,
    "hermite_he": _sc.eval_hermitenorm,
    "laguerre_l": _sc.eval_laguerre,
    "legendre_p": _sc.eval_legendre,
}


def _polynomial_meta(x, n, *, kind):
    if kind not in _POLYNOMIALS:
        raise ValueError(f"orthogonal_polynomial: unknown kind {kind!r}")
    d = same_dtype("orthogonal_polynomial", x, n)
    _family.require_float("orthogonal_polynomial", x)
    return (x.shape if x.shape == n.shape else broadcast_shapes(kind, x.shape, n.shape)), d


def _polynomial_np(x, n, *, kind):
    with np.errstate(all="ignore"):
        k = np.trunc(n)
        bad = ~np.isfinite(k)
        k = np.where(bad, 0, k).astype(np.int64)
        x64 = x.astype(np.float64)
        out = _POLYNOMIALS[kind](np.maximum(k, 0), x64)
        out = np.where(k < 0, 0.0, out)
        # a non-finite degree gives 0, as PyTorch's int64 conversion of it (INT64_MIN: a negative degree)
        out = np.where(bad, 0.0, np.where(np.isnan(x64), np.nan, out))
    return out.astype(x.dtype)


orthogonal_polynomial_p = Primitive("orthogonal_polynomial", _polynomial_meta)
orthogonal_polynomial_p.batch = elementwise_rule(orthogonal_polynomial_p)
orthogonal_polynomial_p.def_impl("cpu")(_polynomial_np)


def _polynomial(kind, name):
    def fn(x, n):
        x, n = promote(name, x, n, to_float=True)
        return orthogonal_polynomial_p.bind(x, n, kind=kind)
    fn.__name__ = name
    fn.__doc__ = f"The {kind.replace('_', ' ')} polynomial of degree n (truncated to an int) at x."
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_t", "chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_u", "chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_v", "chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_w", "chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_t", "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_u", "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_v", "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_w", "shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_h", "hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_he", "hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_l", "laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_p", "legendre_polynomial_p")
