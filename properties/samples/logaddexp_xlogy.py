"""Samples for logaddexp / logaddexp2 (core/ops/elementary.py) and xlogy / xlog1py (core.special): primitives for
speed, each with smooth partials on float64 samples (ties included for logaddexp: its derivatives are smooth
there; for xlogy, x = 0 with y inside the log's domain, where the value is 0 and d/dx is log(y))."""
import numpy as np
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import broadcast_shapes, floats


def _pair(x_dom, y_dom, zeros_in_x=False):
    @st.composite
    def strategy(draw):
        sx, sy = draw(broadcast_shapes(2))
        if draw(st.integers(0, 3)) == 3:  # float32 / float16: meta rule and lowering only
            dtype = draw(st.sampled_from((np.float32, np.float16)))
            return Sample((draw(floats(sx, *x_dom, dtype)), draw(floats(sy, *y_dom, dtype))))
        x = draw(floats(sx, *x_dom))
        if zeros_in_x:
            x = np.where(draw(floats(sx, 0, 1)) < 0.25, 0.0, x)
        y = draw(floats(sy, *y_dom))
        if not zeros_in_x and draw(st.booleans()) and sx == sy:
            y = x.copy()  # ties
        return Sample((np.asarray(x), np.asarray(y)), diff=(0, 1))
    return strategy()


register(core.logaddexp_p, _pair((-4, 4), (-4, 4)))
register(core.logaddexp2_p, _pair((-4, 4), (-4, 4)))
register(core.special.xlogy_p, _pair((-3, 3), (0.3, 4), zeros_in_x=True))
register(core.special.xlog1py_p, _pair((-3, 3), (-0.6, 4), zeros_in_x=True))
