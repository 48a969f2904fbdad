"""torch.special: the special functions, declared in mindtorch_v2/eager/math_ops.py (those torch also has
at the top level, in eager/ops.py) and computed by mindtorch_v2.core.special."""
from .eager.math_ops import (  # noqa: F401
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t, chebyshev_polynomial_u,
    chebyshev_polynomial_v, chebyshev_polynomial_w, digamma, entr, erfc, erfcx, erfinv, exp2, gammainc, gammaincc,
    hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e, laguerre_polynomial_l, legendre_polynomial_p,
    log_ndtr, logit, modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
    multigammaln, ndtr, ndtri, polygamma, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w, sinc, spherical_bessel_j0, xlog1py, xlogy, zeta,
)
from .eager.math_ops import digamma as psi  # noqa: F401
from .eager.math_ops import lgamma as gammaln  # noqa: F401
from .eager.math_ops import special_round as round  # noqa: F401,A004
from .eager.ops import erf, expm1, log1p, log_softmax, logsumexp, softmax  # noqa: F401
from .eager.ops import sigmoid as expit  # noqa: F401

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0",
    "i0e", "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
    "xlog1py", "xlogy", "zeta",
]
