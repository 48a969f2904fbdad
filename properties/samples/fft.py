"""Samples for the Fourier family: fft_p of every kind and norm over a random set of axes (in any
order: the last one is rfft's and irfft's half axis), on arrays of up to 3 dimensions. Double-precision
samples are differentiable (complex128 inputs: the suite perturbs them in both directions); single
precision exercises the meta rule and the lowering.
"""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import floats



def _complex(shape, dtype):
    return st.tuples(floats(shape, -2, 2), floats(shape, -2, 2)).map(
        lambda p: (p[0] + 1j * p[1]).astype(dtype))


@st.composite
def _fft(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, (6, 5, 3)[ndim - 1])) for _ in range(ndim))
    axes = tuple(draw(st.permutations(range(ndim)))[:draw(st.integers(1, ndim))])
    kind = draw(st.sampled_from(("fft", "ifft", "rfft", "irfft")))
    norm = draw(st.sampled_from(("backward", "ortho", "forward")))
    lengths = [shape[a] for a in axes]
    if kind == "irfft":
        m = shape[axes[-1]]
        lengths[-1] = 2 * m - 1 if m == 1 else draw(st.sampled_from((2 * m - 2, 2 * m - 1)))
    params = dict(kind=kind, axes=axes, lengths=tuple(lengths), norm=norm)
    single = draw(st.integers(0, 3)) == 3
    if kind == "rfft":
        return Sample((draw(floats(shape, -2, 2, np.float32 if single else np.float64)),), params,
                      diff=() if single else (0,))
    x = draw(_complex(shape, np.complex64 if single else np.complex128))
    return Sample((x,), params, diff=() if single else (0,))


register(core.fft.fft_p, _fft(), linear=True)
