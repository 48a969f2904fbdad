"""Samples for the scan family: the running arg-extremum primitives behind cummax / cummin.

They return int64 indices (no derivative): samples check the meta rule, the lowering, vmap and eager
against core. Small integer ranges and rounded floats make ties (the index moves to the latest tie) and
the occasional nan (it sticks) common.
"""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import any_array, shapes


@st.composite
def _cumarg(draw):
    shape = draw(shapes(min_side=0))
    x = draw(any_array(shape, lo=-2, hi=2))
    if x.dtype.kind == "f" and x.size and draw(st.booleans()):
        x = np.array(np.round(x))
        x.flat[draw(st.integers(0, x.size - 1))] = np.nan
    return Sample((x,), {"axis": draw(st.integers(0, max(len(shape) - 1, 0)))})


register(core.cumargmax_p, _cumarg())
register(core.cumargmin_p, _cumarg())
