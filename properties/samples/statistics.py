"""Samples for the statistics family: argmode, the index of torch.mode (int64 out, no derivative).

Small integer ranges make equally frequent values common (the smallest wins; its last index is taken).
"""
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import any_array, shapes


@st.composite
def _argmode(draw):
    shape = draw(shapes(min_side=1))
    x = draw(any_array(shape, lo=-2, hi=2))
    return Sample((x,), {"axis": draw(st.integers(0, max(len(shape) - 1, 0)))})


register(core.argmode_p, _argmode())
