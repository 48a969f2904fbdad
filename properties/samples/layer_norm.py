"""Samples for layer_norm and layer_norm_backward: real floats normalized over their last k axes (k from 1 to
the rank, empty arrays included), eps 1e-5 or 0.5; the float64 ones with derivatives checked take eps 0.5,
so that no normalized row is near constant (where the derivatives blow up as 1 / sqrt(eps))."""
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import FLOAT_DTYPES, any_array, floats, shapes


@st.composite
def _layer_norm(draw, backward):
    shape = draw(shapes(min_dims=1, min_side=0))
    k = draw(st.integers(1, len(shape)))
    if draw(st.booleans()):
        args = tuple(draw(floats(shape, -3, 3)) for _ in range(1 + backward))
        return Sample(args, {"k": k, "eps": 0.5}, diff=tuple(range(len(args))))
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    args = tuple(draw(any_array(shape, (dtype,), lo=-4, hi=4)) for _ in range(1 + backward))
    return Sample(args, {"k": k, "eps": draw(st.sampled_from((1e-5, 0.5)))})


register(core.layer_norm_p, _layer_norm(False))
register(core.layer_norm_backward_p, _layer_norm(True))
