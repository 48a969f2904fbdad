"""Samples for the linalg family: matmul on (..., n, k) @ (..., k, m) with broadcast batch dims."""
import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import any_array, broadcast_shapes, floats, sides, size_of


@st.composite
def _matmul(draw):
    ba, bb = draw(broadcast_shapes(2, max_dims=2, max_side=3))
    n, k, m = (draw(sides(3)) for _ in range(3))
    sa, sb = ba + (n, k), bb + (k, m)
    assume(max(size_of(sa), size_of(sb)) <= 36)
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from((np.float32, np.float16, np.int64, np.int32, np.bool_)))
        return Sample((draw(any_array(sa, (dtype,), -2, 2)), draw(any_array(sb, (dtype,), -2, 2))))
    return Sample((draw(floats(sa, -2, 2)), draw(floats(sb, -2, 2))), diff=(0, 1))


register(core.matmul_p, _matmul())
