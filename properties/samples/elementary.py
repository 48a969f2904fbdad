"""Samples for the elementary family (core/ops/elementary.py): float64 inside each op's domain and away
from its kinks (arccosh: x > 1; arctan2 / hypot: away from the origin; the scaled Bessel I: away from 0,
where sign(x) jumps); complex128 samples near the real domain for the holomorphic ones (derivatives checked
too), complex64 for the lowering; integer samples for gcd, lcm and the
shifts, with shift amounts outside [0, bits) (torch defines those: 0 or the sign fill)."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import (ALL_DTYPES, INT_DTYPES, any_array, broadcast_shapes, complexify, floats, ints, magnitudes,
                          shapes)


def domain(spec, shape, dtype=np.float64):
    if spec[0] == "mag":
        return magnitudes(shape, spec[1], spec[2]).map(lambda a: a.astype(dtype))
    return floats(shape, spec[0], spec[1], dtype)


def complex_values(shape, lo, hi, dtype=np.complex128):
    return st.tuples(floats(shape, lo, hi), floats(shape, lo, hi)).map(
        lambda p: np.asarray(p[0] + 1j * p[1]).astype(dtype))  # asarray: a 0-d draw is a numpy scalar


def unary_float(spec, complex_ok=False):
    """float64 samples in `spec` (differentiable); now and then float32/16 or complex64 (lowering only), or
    complex128 near `spec` (differentiable)."""
    @st.composite
    def strategy(draw):
        shape = draw(shapes(min_side=0))
        k = draw(st.integers(0, 5))
        if k == 5:
            dtype = draw(st.sampled_from((np.float32, np.float16)))
            return Sample((draw(domain(spec, shape, dtype)),))
        if k == 4 and complex_ok:
            if draw(st.booleans()):  # complex64: lowering only
                return Sample((draw(complex_values(shape, -0.8, 0.8, np.complex64)),))
            # complex128 near the real domain (away from the branch cuts): the holomorphic rule, JAX's convention
            return Sample((draw(complexify(domain(spec, shape), -0.4, 0.4)),), diff=(0,))
        return Sample((draw(domain(spec, shape)),), diff=(0,))
    return strategy()


def binary_float(x_spec, y_spec, diff=(0, 1)):
    @st.composite
    def strategy(draw):
        sx, sy = draw(broadcast_shapes(2))
        if draw(st.integers(0, 3)) == 3:
            dtype = draw(st.sampled_from((np.float32, np.float16)))
            return Sample((draw(domain(x_spec, sx, dtype)), draw(domain(y_spec, sy, dtype))))
        return Sample((draw(domain(x_spec, sx)), draw(domain(y_spec, sy))), diff=diff)
    return strategy()


_UNARY = {
    core.arcsin_p: ((-0.9, 0.9), True), core.arccos_p: ((-0.9, 0.9), True), core.arctan_p: ((-3, 3), True),
    core.sinh_p: ((-3, 3), True), core.cosh_p: ((-3, 3), True), core.arcsinh_p: ((-3, 3), True),
    core.arccosh_p: ((1.1, 4), False), core.arctanh_p: ((-0.9, 0.9), True), core.exp2_p: ((-3, 3), True),
    core.i0_p: ((-3, 3), False), core.i1_p: ((-3, 3), False), core.i0e_p: (("mag", 0.2, 3), False),
    core.i1e_p: (("mag", 0.2, 3), False),
}
for _prim, (_spec, _complex) in _UNARY.items():
    register(_prim, unary_float(_spec, _complex))

register(core.arctan2_p, binary_float(("mag", 0.3, 3), ("mag", 0.3, 3)))
register(core.hypot_p, binary_float(("mag", 0.3, 3), ("mag", 0.3, 3)))
register(core.nextafter_p, binary_float((-3, 3), (-3, 3), diff=()))


@st.composite
def _signbit(draw):
    shape = draw(shapes(min_side=0))
    x = draw(any_array(shape, ALL_DTYPES))
    if x.dtype.kind == "f" and x.size:  # -0.0 and -nan have the sign bit set
        x = x.copy()
        x.flat[0] = draw(st.sampled_from((-0.0, 0.0, -np.nan, np.nan, -np.inf)))
    return Sample((x,))


register(core.signbit_p, _signbit())


@st.composite
def _integer_pair(draw, shift=False):
    sx, sy = draw(broadcast_shapes(2))
    dtype = draw(st.sampled_from(INT_DTYPES))
    x = draw(ints(sx, dtype, -100, 100))
    y = draw(ints(sy, dtype, -3, 70) if shift else ints(sy, dtype, -12, 12))
    return Sample((x, y))


register(core.gcd_p, _integer_pair())
register(core.lcm_p, _integer_pair())
register(core.left_shift_p, _integer_pair(shift=True))
register(core.right_shift_p, _integer_pair(shift=True))
