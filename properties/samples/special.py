"""Samples for core.special (core/ops/special.py): float64 inside each function's domain (gammaln, polygamma:
x > 0, away from the poles; y0/y1/k0/k1: x > 0; ndtri, erfinv: inside (0, 1) / (-1, 1)), float32 and float16
for the meta rule and the lowering; zeta and the incomplete gamma functions are differentiable in their
second argument only (torch: the same)."""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementary import binary_float, domain, unary_float
from .elementwise import broadcast_shapes, floats, ints, shapes

_UNARY = {
    core.special.erfc_p: (-2.5, 2.5), core.special.erfinv_p: (-0.9, 0.9), core.special.erfcx_p: (-2, 3),
    core.special.ndtr_p: (-3, 3), core.special.ndtri_p: (0.05, 0.95), core.special.log_ndtr_p: (-5, 3),
    core.special.gammaln_p: (0.3, 5), core.special.j0_p: (-4, 4), core.special.j1_p: (-4, 4),
    core.special.y0_p: (0.5, 5), core.special.y1_p: (0.5, 5), core.special.k0_p: (0.3, 4),
    core.special.k1_p: (0.3, 4), core.special.k0e_p: (0.3, 4), core.special.k1e_p: (0.3, 4),
}
for _prim, _spec in _UNARY.items():
    register(_prim, unary_float(_spec))


@st.composite
def _airy(draw):
    shape = draw(shapes(min_side=0))
    dtype = draw(st.sampled_from((np.float64, np.float32, np.float16)))
    return Sample((draw(domain((-3, 3), shape, dtype)),))


register(core.special.airy_ai_p, _airy())


@st.composite
def _polygamma(draw):
    n = draw(st.integers(0, 3))
    s = draw(unary_float((0.3, 5)))
    return Sample(s.args, {"n": n}, diff=s.diff)


register(core.special.polygamma_p, _polygamma())
register(core.special.zeta_p, binary_float((1.5, 4), (0.5, 3), diff=(1,)))
register(core.special.gammainc_p, binary_float((0.5, 3), (0.3, 4), diff=(1,)))
register(core.special.gammaincc_p, binary_float((0.5, 3), (0.3, 4), diff=(1,)))

_KINDS = ("chebyshev_t", "chebyshev_u", "chebyshev_v", "chebyshev_w", "shifted_chebyshev_t", "shifted_chebyshev_u",
          "shifted_chebyshev_v", "shifted_chebyshev_w", "hermite_h", "hermite_he", "laguerre_l", "legendre_p")


@st.composite
def _polynomial(draw):
    sx, sn = draw(broadcast_shapes(2))
    dtype = draw(st.sampled_from((np.float64, np.float32)))
    x = draw(floats(sx, -1.5, 1.5, dtype))
    n = draw(ints(sn, np.int64, -2, 8)).astype(dtype)
    return Sample((x, n), {"kind": draw(st.sampled_from(_KINDS))})


register(core.special.orthogonal_polynomial_p, _polynomial())
