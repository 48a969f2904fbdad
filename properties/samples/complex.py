"""Samples for the complex-part primitives (real, imag, conj, complex) and bitcast.

Differentiable samples are complex128 (or float64 pairs for `complex`); the property suite pairs
cotangents and tangents as Re sum(a * b), under which JAX's convention makes the VJP the JVP's adjoint."""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import ALL_DTYPES, any_array, broadcast_shapes, complexify, floats, shapes


@st.composite
def _complex_unary(draw, real_too=True):
    shape = draw(shapes(min_side=0))
    k = draw(st.integers(0, 3))
    if k == 3:  # complex64: meta and lowering only
        return Sample((draw(complexify(floats(shape, -3, 3))).astype(np.complex64),))
    if k == 2 and real_too:  # a real input: real and conj are the identity there
        return Sample((draw(floats(shape, -3, 3)),), diff=(0,))
    return Sample((draw(complexify(floats(shape, -3, 3), -3, 3)),), diff=(0,))


register(core.real_p, _complex_unary(), linear=True)
register(core.imag_p, _complex_unary(real_too=False), linear=True)
register(core.conj_p, _complex_unary(), linear=True)


@st.composite
def _complex_pair(draw):
    a, b = draw(broadcast_shapes(2))
    dtype = draw(st.sampled_from((np.float64, np.float64, np.float32)))
    diff = (0, 1) if dtype == np.float64 else ()
    return Sample((draw(floats(a, -3, 3, dtype)), draw(floats(b, -3, 3, dtype))), diff=diff)


register(core.complex_p, _complex_pair(), linear=True)

_WIDTHS = {1: (np.int8, np.uint8, np.bool_), 2: (np.int16, np.float16), 4: (np.int32, np.float32),
           8: (np.int64, np.float64, np.complex64), 16: (np.complex128,)}


@st.composite
def _bitcast(draw):
    shape = draw(shapes(min_dims=1, min_side=1))
    src = draw(st.sampled_from((np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64,
                                np.complex64)))
    size = np.dtype(src).itemsize
    width = draw(st.sampled_from([w for w in _WIDTHS if (shape[-1] * size) % w == 0]))
    dst = draw(st.sampled_from(_WIDTHS[width]))
    if dst == np.bool_:
        dst = np.uint8  # not every byte is a valid bool
    x = draw(any_array(shape, (src,) if src not in (np.complex64,) else (np.float32,)))
    if src == np.complex64:
        x = np.asarray(x + 1j * x, dtype=np.complex64)
    return Sample((x,), {"dtype": core.dtypes.from_numpy(np.dtype(dst))})


register(core.bitcast_p, _bitcast())
