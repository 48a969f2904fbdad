"""Samples for the reduction family: sum, prod, max, min, any, all, argmax, argmin, cumsum.

Axes are what the primitives take: a sorted tuple of distinct non-negative axes
(a 0-d array may name axis 0, as in PyTorch). max/min get distinct values so the
extremum is unique; prod gets exact zeros now and then (its VJP has a branch for them).
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import ALL_DTYPES, any_array, axes_subset, floats, separated, shapes


@st.composite
def _axes(draw, ndim):
    if ndim == 0:
        return draw(st.sampled_from(((), (0,))))
    return draw(axes_subset(ndim))


@st.composite
def _sum(draw):
    shape = draw(shapes(min_side=0))
    params = {"axis": draw(_axes(len(shape))), "keepdims": draw(st.booleans())}
    if not draw(st.booleans()):
        return Sample((draw(floats(shape, -3, 3)),), params, diff=(0,))
    return Sample((draw(any_array(shape)),), params)


register(core.sum_p, _sum(), linear=True)


@st.composite
def _prod(draw):
    shape = draw(shapes(min_side=0, max_size=12))
    params = {"axis": draw(_axes(len(shape))), "keepdims": draw(st.booleans())}
    if draw(st.integers(0, 3)) == 3:
        return Sample((draw(any_array(shape, lo=-2, hi=2)),), params)
    # |x| in [0.5, 1.5], and about one element in five exactly 0: prod is a polynomial, smooth at zeros too
    x = draw(floats(shape, 0.5, 1.5))
    sign = draw(hnp.arrays(np.bool_, shape))
    zero = draw(hnp.arrays(np.bool_, shape, elements=st.integers(0, 4).map(lambda k: k == 0)))
    x = np.where(zero, 0.0, np.where(sign, -x, x))
    return Sample((x,), params, diff=(0,))


register(core.prod_p, _prod())


@st.composite
def _extremum(draw):
    # empty arrays too, reduced only along non-empty axes (an empty reduction has no value)
    shape = draw(shapes(min_side=0))
    axis = draw(_axes(len(shape))) if len(shape) == 0 else tuple(
        a for a in draw(axes_subset(len(shape))) if shape[a] > 0)
    params = {"axis": axis, "keepdims": draw(st.booleans())}
    if draw(st.integers(0, 2)) == 2:  # ties allowed: meta rule and lowering only
        return Sample((draw(any_array(shape, lo=-2, hi=2)),), params)
    return Sample((draw(separated(shape)),), params, diff=(0,))


register(core.max_p, _extremum())
register(core.min_p, _extremum())


@st.composite
def _logical(draw):
    shape = draw(shapes(min_side=0))
    params = {"axis": draw(_axes(len(shape))), "keepdims": draw(st.booleans())}
    return Sample((draw(any_array(shape, lo=-1, hi=1)),), params)


register(core.any_p, _logical())
register(core.all_p, _logical())


@st.composite
def _arg(draw):
    shape = draw(shapes(min_side=1))
    axis = draw(st.one_of(st.none(), st.integers(0, max(len(shape) - 1, 0))))
    dtypes = tuple(d for d in ALL_DTYPES if d is not np.bool_)
    x = draw(any_array(shape, dtypes, lo=-2, hi=2))
    return Sample((x,), {"axis": axis, "keepdims": draw(st.booleans())})


register(core.argmax_p, _arg())
register(core.argmin_p, _arg())


@st.composite
def _cumsum(draw):
    shape = draw(shapes(min_side=0))
    params = {"axis": draw(st.integers(0, max(len(shape) - 1, 0)))}
    if not draw(st.booleans()):
        return Sample((draw(floats(shape, -3, 3)),), params, diff=(0,))
    return Sample((draw(any_array(shape)),), params)


register(core.cumsum_p, _cumsum(), linear=True)
