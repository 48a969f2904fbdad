"""jit over the registry: for every primitive, the compiled program (trace, optimizer, buffer plan,
generated code) gives what a plain bind gives, and for every differentiable one, `jit(vjp)` gives what
`vjp` gives, on the same sample inputs."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import samples
from mindtorch_v2 import core
from test_primitive_properties import DIFF_PRIMS, PRIMS, as_tuple, differentiable_problem, draw_sample, on


def assert_same(got, want, what):
    for g, w in zip(got, want):
        assert (g.shape, g.dtype) == (w.shape, w.dtype), what
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=0, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("prim", PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_jit_of_a_primitive_equals_its_bind(prim, data):
    sample = draw_sample(data, prim)
    args = on("cpu", sample)
    f = core.jit(lambda *xs: prim.bind(*xs, **sample.params))
    want = as_tuple(prim, prim.bind(*args, **sample.params))
    assert_same(as_tuple(prim, f(*args)), want, f"{prim.name}: jit, first call (probe and plan)")
    assert_same(as_tuple(prim, f(*args)), want, f"{prim.name}: jit, generated code")


@pytest.mark.parametrize("prim", DIFF_PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_jit_of_the_vjp_equals_the_vjp(prim, data):
    p = differentiable_problem(prim, data)

    def pull(xs, us):
        return p.vjp(xs, us)
    want = pull(p.x, p.u)
    got = core.jit(pull)(list(p.x), list(p.u))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12, equal_nan=True,
                                   err_msg=f"{prim.name}: jit(vjp)")
