"""Samples for softmax and log_softmax: real floats, over any subset of the axes (a 0-d array may name axis
0), empty arrays included; float64 ones with derivatives checked."""
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import FLOAT_DTYPES, any_array, axes_subset, floats, shapes


@st.composite
def _softmax(draw):
    shape = draw(shapes(min_side=0))
    axis = draw(st.sampled_from(((), (0,)))) if not shape else draw(axes_subset(len(shape)))
    if not draw(st.booleans()):
        return Sample((draw(floats(shape, -4, 4)),), {"axis": axis}, diff=(0,))
    return Sample((draw(any_array(shape, FLOAT_DTYPES, lo=-8, hi=8)),), {"axis": axis})


register(core.softmax_p, _softmax())
register(core.log_softmax_p, _softmax())
