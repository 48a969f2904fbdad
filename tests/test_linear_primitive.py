"""nn.functional.linear as one primitive (core.linear_p): the composite's values and gradients bit for bit, one
backward node with PyTorch's names, the composite in staged programs, PyTorch's errors. (Compiled training steps
through it give eager's numbers: tests/test_compile.py.)"""
import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core

F = torch.nn.functional


def _composite(x, w, b):
    out = torch.matmul(x, w.t())
    return out if b is None else out + b


@pytest.mark.parametrize("shape", [(16, 784), (8, 32, 64), (2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("with_bias", [True, False])
def test_values_and_gradients_are_the_composites_bits(shape, dtype, with_bias):
    torch.manual_seed(0)
    out_features = 24
    runs = []
    for f in (F.linear, _composite):
        torch.manual_seed(1)
        x = torch.randn(*shape, dtype=dtype, requires_grad=True)
        w = torch.randn(out_features, shape[-1], dtype=dtype, requires_grad=True)
        b = torch.randn(out_features, dtype=dtype, requires_grad=True) if with_bias else None
        y = f(x, w, b)
        y.backward(torch.randn(*y.shape, dtype=dtype))
        grads = [x.grad, w.grad] + ([b.grad] if with_bias else [])
        runs.append([y.detach()] + grads)
        assert w.grad.stride() == w.stride()  # (a .grad laid out as its parameter)
    for a, b_ in zip(*runs):
        assert a.numpy().tobytes() == b_.numpy().tobytes()


def test_one_node_with_pytorchs_names():
    x2, x3 = torch.randn(4, 3, requires_grad=True), torch.randn(2, 4, 3, requires_grad=True)
    w, b = torch.randn(5, 3, requires_grad=True), torch.randn(5, requires_grad=True)
    # (names recorded from PyTorch 2.13)
    assert [F.linear(x, w).grad_fn.name() for x in (x2, x3)] == ["MmBackward0", "UnsafeViewBackward0"]
    assert [F.linear(x, w, b).grad_fn.name() for x in (x2, x3)] == ["AddmmBackward0", "ViewBackward0"]
    node = F.linear(x3, w, b).grad_fn
    assert [n.name() for n, _ in node.next_functions] == ["AccumulateGrad"] * 3
    lin = torch.nn.Linear(3, 5)
    assert lin(x3).grad_fn.name() == "ViewBackward0"


def test_staged_programs_record_the_composite():
    x = core.asarray(np.ones((4, 3), np.float32))
    w = core.asarray(np.ones((5, 3), np.float32))
    b = core.asarray(np.ones(5, np.float32))
    jaxpr = core.make_jaxpr(lambda x, w, b: core.linear_p.bind(x, w, b))(x, w, b)
    assert [e.prim.name for e in jaxpr.eqns] == ["transpose", "matmul", "add"]
    eager = np.asarray(core.linear_p.bind(x, w, b))
    assert np.asarray(core.jit(lambda x, w, b: core.linear_p.bind(x, w, b))(x, w, b)).tobytes() == eager.tobytes()


def test_vmap_over_inputs_and_over_weights():
    rng = np.random.default_rng(0)
    xs = core.asarray(rng.standard_normal((7, 4, 3)))
    ws = core.asarray(rng.standard_normal((7, 5, 3)))
    b = core.asarray(rng.standard_normal(5))
    got = core.vmap(lambda x, w: core.linear_p.bind(x, w, b))(xs, ws)
    want = np.einsum("bij,bkj->bik", np.asarray(xs), np.asarray(ws)) + np.asarray(b)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    got = core.vmap(lambda x: core.linear_p.bind(x, ws[0], b), in_axes=1)(xs)
    np.testing.assert_allclose(np.asarray(got), np.einsum("bij,kj->ibk", np.asarray(xs), np.asarray(ws[0]))
                               + np.asarray(b), rtol=1e-12)


def test_pytorchs_errors():
    x, w = torch.randn(4, 3), torch.randn(5, 3)
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        F.linear(torch.randn(4, 2), w)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        F.linear(x, w.double())
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Double and Float"):
        F.linear(x, w, torch.randn(5, dtype=torch.float64))
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(5\) must match the existing size \(4\)"):
        F.linear(torch.randn(2, 4, 3), w, torch.randn(4))
    assert F.linear(x, w, torch.randn(1)).shape == (4, 5)  # (a bias that broadcasts)
    assert F.linear(torch.randn(3), w).shape == (5,)  # (a vector input)


def test_staged_programs_check_what_eager_checks():
    x, w = core.asarray(np.ones((4, 3), np.float32)), core.asarray(np.ones((5, 3), np.float32))
    f = core.jit(lambda x, w, b: core.linear_p.bind(x, w, b))
    with pytest.raises(ValueError, match=r"b must have shape \(5,\)"):
        f(x, w, core.asarray(np.ones((4, 5), np.float32)))
    with pytest.raises(TypeError, match="same dtype"):
        f(x, w, core.asarray(np.ones(5, np.float64)))


def test_bfloat16_rounds_once_in_eager_and_compiled_alike():
    # the narrow floats run in float32 and round once, as PyTorch's addmm: programs record the primitive for them
    # (its composite would round the product, then the sum)
    torch.manual_seed(0)
    x = torch.randn(6, 16).to(torch.bfloat16)
    lin = torch.nn.Linear(16, 8).to(torch.bfloat16)
    eager = lin(x).detach()
    compiled = torch.compile(lin)(x).detach()
    assert compiled.float().numpy().tobytes() == eager.float().numpy().tobytes()
    args = [t.detach()._value() for t in (x, lin.weight, lin.bias)]
    jaxpr = core.make_jaxpr(lambda x, w, b: core.linear_p.bind(x, w, b))(*args)
    assert [e.prim.name for e in jaxpr.eqns] == ["linear"]
    w, b = lin.weight.detach().float().numpy(), lin.bias.detach().float().numpy()
    want = x.float().numpy() @ w.T + b  # (in float32, rounded once below)
    assert eager.float().numpy().tobytes() == torch.tensor(want).to(torch.bfloat16).float().numpy().tobytes()
