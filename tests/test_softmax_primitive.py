"""softmax and log_softmax as primitives (core/ops/softmax.py): the composites' values bit for bit, PyTorch's
edge cases, one node each on the tape and in a jit program."""
import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core
from mindtorch_v2.core.ops import composite
from mindtorch_v2.core.ops.elementwise import div, exp, log, sub
from mindtorch_v2.core.ops.reduction import sum as core_sum


def _composite(name, x, axis):
    """The composite formulas the primitives replace (still what complex inputs take)."""
    shifted = sub(x, composite._stable_shift(x, axis, finite=False))
    if name == "softmax":
        e = exp(shifted)
        return div(e, core_sum(e, axis, keepdims=True))
    return sub(shifted, log(core_sum(exp(shifted), axis, keepdims=True)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_the_primitive_gives_the_composites_bits(name, dtype):
    rng = np.random.default_rng(0)
    for shape, axis in [((8, 10), 1), ((8, 10), 0), ((4, 3, 8, 8), -1), ((5,), 0), ((2, 3, 4), (0, 2))]:
        a = (rng.standard_normal(shape) * 5).astype(dtype)
        a.reshape(-1)[:2] = [-np.inf, 30.0]
        x = core.asarray(a)
        got = getattr(core, name)(x, axis)
        assert np.asarray(got).tobytes() == np.asarray(_composite(name, x, axis)).tobytes()


def test_edge_cases_as_pytorch():
    inf = float("inf")
    assert torch.isnan(torch.softmax(torch.tensor([1.0, inf]), 0)).all()  # an infinite max: nan
    got = torch.log_softmax(torch.tensor([[1.0, -inf], [-inf, -inf]]), 1)
    assert got[0].tolist() == [0.0, -inf] and torch.isnan(got[1]).all()
    assert torch.log_softmax(torch.tensor(2.0), 0).item() == 0.0
    assert torch.softmax(torch.tensor(2.0), 0).item() == 1.0
    assert torch.softmax(torch.zeros(0, 3), 1).shape == (0, 3) and torch.log_softmax(torch.zeros(3, 0), 1).shape == (3, 0)
    with pytest.raises(IndexError, match="out of range"):
        torch.softmax(torch.zeros(2, 3), 2)


def test_bfloat16_rounds_once_as_pytorch():
    # computed in float32 and rounded at the end (PyTorch's cpu kernel), not after every step; values recorded
    # with PyTorch 2.13: torch.softmax(torch.tensor([0.5, -1.25, 3.0, 2.0]).bfloat16(), 0)
    got = torch.softmax(torch.tensor([0.5, -1.25, 3.0, 2.0]).bfloat16(), 0).float().tolist()
    assert got == [0.05615234375, 0.009765625, 0.68359375, 0.251953125]


def test_one_node_each_with_pytorchs_names_and_gradients():
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    assert torch.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert torch.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
    assert torch.autograd.gradcheck(lambda t: torch.softmax(t, 1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.log_softmax(t, 0), (x,))
    jaxpr = core.make_jaxpr(lambda v: core.log_softmax(v, 1))(core.asarray(np.ones((2, 3), np.float32)))
    assert [e.prim.name for e in jaxpr.eqns] == ["log_softmax"]


@pytest.mark.parametrize("shape", [(128, 10), (3, 4, 2), (5, 32), (7, 33)])
def test_short_rows_take_the_column_wise_max_with_the_same_bits(shape):
    from mindtorch_v2.core.ops import softmax
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal(shape).astype(dtype) * 4
        flat = x.reshape(-1, shape[-1])
        flat[0, :2] = [0.0, -0.0]
        flat[1, :2] = [-0.0, 0.0]
        flat[2, :] = -np.inf
        flat[2, 1] = -0.0
        flat[3, 0] = np.nan
        flat[4, 1] = np.inf
        axis = (x.ndim - 1,)
        m = np.maximum.reduce(x, axis=axis, keepdims=True)  # the general path's max
        m = np.where(np.isfinite(m), m, m.dtype.type(np.nan))
        m = np.where(m == 0, dtype(-0.0), m)  # (a zero max as -0.0)
        want = x - m
        got = softmax._shifted(x, axis)
        assert got.tobytes() == want.tobytes()
        lse = softmax._log_softmax_cpu(x, axis=axis)
        assert lse.tobytes() == (want - np.log(softmax._sum_exp(np.exp(want), axis))).tobytes()
