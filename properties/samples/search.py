"""Samples for the search family: searchsorted (its only primitive; integer valued, so no derivative).

The sorted sequence is 1-D (values of any shape) or N-D with the values sharing its leading axes;
its entries are sorted along the last axis and small integers, so that values tie with them and
both sides are exercised.
"""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import FLOAT_DTYPES, INT_DTYPES, any_array, shapes, sides


@st.composite
def _searchsorted(draw):
    dtype = draw(st.sampled_from(INT_DTYPES + FLOAT_DTYPES))
    m = draw(sides(5, lo=1))
    if draw(st.booleans()):
        a_shape, v_shape = (m,), draw(shapes(min_side=0))
    else:
        lead = draw(shapes(min_dims=1, max_dims=2, max_side=3))
        a_shape, v_shape = lead + (m,), lead + (draw(sides(4, lo=0)),)
    a = np.sort(draw(any_array(a_shape, (dtype,), lo=0, hi=6)), axis=-1)
    v = draw(any_array(v_shape, (dtype,), lo=-1, hi=7))
    params = {"side": draw(st.sampled_from(("left", "right"))),
              "dtype": draw(st.sampled_from((core.int64, core.int32)))}
    return Sample((a, v), params)


register(core.searchsorted_p, _searchsorted())
