"""Samples for nll_loss and nll_loss_backward: x (or g) float, targets in [0, C) with some set to ignore_index
(-100, or a class), a weight of the input's dtype one time in two, every reduction, (N, C) and (N, C, d...)
shapes, empty ones included; float64 ones with derivatives checked for the float input only."""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import FLOAT_DTYPES, any_array, floats, shapes

_TARGET_DTYPES = (np.int64, np.int32, np.uint8)


@st.composite
def _targets(draw, shape, c):
    """(target, ignore_index): classes in [0, c) of one of the integer dtypes, some of them ignore_index."""
    dtype = draw(st.sampled_from(_TARGET_DTYPES))
    ignore_index = draw(st.sampled_from((-100, 0, 1) if c > 1 else (-100,)))
    n = int(np.prod(shape))
    t = np.asarray(draw(st.lists(st.integers(0, max(c - 1, 0)), min_size=n, max_size=n)), np.int64)
    if n and ignore_index < 0:
        t[np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)))] = ignore_index
    if dtype is np.uint8:
        t[t < 0] = 255
        ignore_index = 255 if ignore_index < 0 else ignore_index
    return t.reshape(shape).astype(dtype), ignore_index


@st.composite
def _nll_case(draw, backward):
    n = draw(st.integers(0, 4))
    c = draw(st.integers(1, 4))
    rest = draw(shapes(max_dims=2, max_side=3, max_size=6))
    t, ignore_index = draw(_targets((n,) + rest, c))
    reduction = draw(st.sampled_from(("none", "sum", "mean")))
    differentiable = draw(st.booleans())
    dtype = np.float64 if differentiable else draw(st.sampled_from(FLOAT_DTYPES))
    shape = ((n,) + rest if reduction == "none" else ()) if backward else (n, c) + rest
    x = draw(floats(shape, -3, 3)) if differentiable else draw(any_array(shape, (dtype,), lo=-4, hi=4))
    args = (x, t)
    if draw(st.booleans()):
        args += (draw(floats((c,), 0.1, 2.0, dtype)),)
    params = {"ignore_index": ignore_index, "reduction": reduction}
    if backward:
        params["num_classes"] = c
    # ('mean' with every position ignored is nan whatever x is: no derivative to compare)
    nothing_kept = not np.any(t != ignore_index)
    return Sample(args, params, diff=(0,) if differentiable and not (nothing_kept and reduction == "mean") else ())


register(core.nll_loss_p, _nll_case(False), linear=True)
register(core.nll_loss_backward_p, _nll_case(True), linear=True)
