"""torch.func over eager Tensors: grad / grad_and_value / vjp / jvp / jacrev / jacfwd / hessian / vmap
(in_dims, out_dims, randomness), their nesting, per-example gradients against a loop of
torch.autograd.grad, caller tensors left alone, functionalized in-place ops inside transforms,
and functional_call / stack_module_state ensembles (torch.func semantics)."""
import re

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import func, nn

rng = np.random.default_rng(1)
f64 = torch.float64


def T(x, requires_grad=False):
    return torch.tensor(np.asarray(x, dtype=np.float64), dtype=f64, requires_grad=requires_grad)


def r(*shape):
    return rng.standard_normal(shape)


def npy(t):
    return np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t)


def close(x, y, tol=1e-10):
    x, y = npy(x), npy(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def is_tensor(*xs):
    return all(isinstance(x, torch.Tensor) for x in xs)


# ---------------------------------------------------------------------------
# grad / grad_and_value


def test_grad_basic_and_argnums():
    x, y = r(3), r(3)
    f = lambda a, b: (torch.sin(a) * b ** 2).sum()  # noqa: E731
    g = func.grad(f)(T(x), T(y))
    assert is_tensor(g)
    close(g, np.cos(x) * y ** 2)
    close(func.grad(f, argnums=1)(T(x), T(y)), 2 * np.sin(x) * y)
    gx, gy = func.grad(f, argnums=(0, 1))(T(x), T(y))
    close(gx, np.cos(x) * y ** 2)
    close(gy, 2 * np.sin(x) * y)
    (gy_only,) = func.grad(f, argnums=(1,))(T(x), T(y))
    close(gy_only, 2 * np.sin(x) * y)


def test_grad_has_aux_and_kwargs():
    x = r(4)
    g, aux = func.grad(lambda a: ((a ** 3).sum(), {"double": a * 2}), has_aux=True)(T(x))
    close(g, 3 * x ** 2)
    assert is_tensor(aux["double"])
    close(aux["double"], 2 * x)
    # keyword arguments are passed through and not differentiated
    g = func.grad(lambda a, scale=1.0: (a * a).sum() * scale)(T(x), scale=3.0)
    close(g, 6 * x)


def test_grad_and_value():
    x = r(3)
    g, v = func.grad_and_value(lambda a: (a ** 2).sum())(T(x))
    close(g, 2 * x)
    close(v, (x ** 2).sum())
    g, (v, aux) = func.grad_and_value(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(T(x))
    close(g, 2 * x)
    close(v, (x ** 2).sum())
    close(aux, x.mean())
    (gx, gy), v = func.grad_and_value(lambda a, b: (a * b).sum(), argnums=(0, 1))(T(x), T(2 * x))
    close(gx, 2 * x)
    close(gy, x)
    close(v, 2 * (x ** 2).sum())


def test_grad_of_grad_is_second_derivative():
    d2 = func.grad(func.grad(lambda a: torch.sin(a) * a))(T(0.7))
    close(d2, 2 * np.cos(0.7) - 0.7 * np.sin(0.7))


def test_grad_over_a_dict_of_parameters():
    w, b, x = r(3, 2), r(2), r(3)
    p = {"w": T(w), "b": T(b)}
    g = func.grad(lambda q: torch.tanh(T(x) @ q["w"] + q["b"]).sum())(p)
    s = 1 - np.tanh(x @ w + b) ** 2
    close(g["b"], s)
    close(g["w"], np.outer(x, s))


# ---------------------------------------------------------------------------
# vjp / jvp


def test_vjp_single_and_multiple_primals():
    x, y = r(3), r(3)
    out, vjp_fn = func.vjp(lambda a: torch.exp(a) * 2, T(x))
    close(out, 2 * np.exp(x))
    ct = r(3)
    (gx,) = vjp_fn(T(ct))
    close(gx, 2 * np.exp(x) * ct)
    out, vjp_fn = func.vjp(lambda a, b: (a * b, a + b), T(x), T(y))
    u, v = r(3), r(3)
    gx, gy = vjp_fn((T(u), T(v)))
    close(gx, u * y + v)
    close(gy, u * x + v)


def test_vjp_has_aux():
    x = r(3)
    out, vjp_fn, aux = func.vjp(lambda a: (a ** 2, a.sum()), T(x), has_aux=True)
    close(out, x ** 2)
    close(aux, x.sum())
    (g,) = vjp_fn(torch.ones(3, dtype=f64))
    close(g, 2 * x)


def test_jvp_single_and_multiple_primals():
    x, t = r(3), r(3)
    out, tan = func.jvp(torch.sin, (T(x),), (T(t),))
    close(out, np.sin(x))
    close(tan, np.cos(x) * t)
    y, s = r(3), r(3)
    out, tan = func.jvp(lambda a, b: a * b, (T(x), T(y)), (T(t), T(s)))
    close(out, x * y)
    close(tan, t * y + x * s)
    out, tan, aux = func.jvp(lambda a: (a ** 2, a + 1), (T(x),), (T(t),), has_aux=True)
    close(tan, 2 * x * t)
    close(aux, x + 1)


# ---------------------------------------------------------------------------
# jacrev / jacfwd / hessian


def _np_jac(x):
    # f(x) = x * x.sum(): J = diag(s) + x 1^T
    return np.diag(np.full(len(x), x.sum())) + np.outer(x, np.ones(len(x)))


def test_jacrev_and_jacfwd_equal_hand_jacobian():
    x = r(4)
    f = lambda a: a * a.sum()  # noqa: E731
    jr, jf = func.jacrev(f)(T(x)), func.jacfwd(f)(T(x))
    assert is_tensor(jr, jf)
    close(jr, _np_jac(x))
    close(jf, _np_jac(x))
    # argnums tuple and a tuple of outputs
    y = r(4)
    g = lambda a, b: (a * b, (a ** 2).sum())  # noqa: E731
    for jac in (func.jacrev, func.jacfwd):
        (j_ab_a, j_ab_b), (j_s_a, j_s_b) = jac(g, argnums=(0, 1))(T(x), T(y))
        close(j_ab_a, np.diag(y))
        close(j_ab_b, np.diag(x))
        close(j_s_a, 2 * x)
        close(j_s_b, np.zeros(4))
        close(jac(g, argnums=1)(T(x), T(y))[0], np.diag(x))


# d/dx at bounds and at atan2's origin, recorded from PyTorch 2.13 (float64): clamp passes the gradient at
# its bounds (min <= x <= max), atan2's derivative at y = x = 0 is 0. Eager backward, grad, jacfwd and jacrev
# run the same rules, so they give the same numbers. (PyTorch's own jacfwd of atan2 gives nan at the origin:
# its forward-mode formula is a second one, without the 0 there; ours is the one rule.)
BOUNDARY_GRADIENTS = [
    ("clamp", lambda x: torch.clamp(x, -1.0, 1.0), [-2.0, -1.0, 0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 1.0, 0.0]),
    ("clamp min", lambda x: torch.clamp(x, min=0.0), [-1.0, 0.0, 1.0], [0.0, 1.0, 1.0]),
    ("clamp max", lambda x: torch.clamp(x, max=0.0), [-1.0, 0.0, 1.0], [1.0, 1.0, 0.0]),
    ("clamp_min", lambda x: torch.clamp_min(x, 0.0), [-1.0, 0.0, 1.0], [0.0, 1.0, 1.0]),
    ("clamp_max", lambda x: torch.clamp_max(x, 0.0), [-1.0, 0.0, 1.0], [1.0, 1.0, 0.0]),
    ("clamp tensor bounds", lambda x: torch.clamp(x, T([-1.0] * 3), T([1.0] * 3)), [-1.0, 0.0, 1.0],
     [1.0, 1.0, 1.0]),
    ("clamp_ inplace", lambda x: (x * 1.0).clamp_(-1.0, 1.0), [-2.0, -1.0, 0.0, 1.0, 2.0],
     [0.0, 1.0, 1.0, 1.0, 0.0]),
    ("atan2(x, x)", lambda x: torch.atan2(x, x), [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]),
    ("atan2(x, 0)", lambda x: torch.atan2(x, torch.zeros(3, dtype=f64)), [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]),
    ("atan2(0, x)", lambda x: torch.atan2(torch.zeros(3, dtype=f64), x), [0.0, 1.0, -1.0], [0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("fn,x,expected", [c[1:] for c in BOUNDARY_GRADIENTS], ids=[c[0] for c in BOUNDARY_GRADIENTS])
def test_gradient_at_boundaries_is_pytorchs_in_eager_and_under_transforms(fn, x, expected):
    xt = T(x, requires_grad=True)
    fn(xt).sum().backward()
    np.testing.assert_array_equal(npy(xt.grad), expected)
    np.testing.assert_array_equal(npy(func.grad(lambda v: fn(v).sum())(T(x))), expected)
    for jac in (func.jacfwd, func.jacrev):  # elementwise: the Jacobian is diagonal
        np.testing.assert_array_equal(npy(jac(fn)(T(x))), np.diag(expected))


def test_atan2_gradients_of_both_arguments_at_and_off_the_origin():
    y, x = [0.0, 1.0, -3.0, 0.0], [0.0, 2.0, 0.5, -0.0]
    dy, dx = [0.0, 0.4, 0.05405405405405406, 0.0], [0.0, -0.2, 0.32432432432432434, 0.0]  # from PyTorch
    yt, xt = T(y, requires_grad=True), T(x, requires_grad=True)
    torch.atan2(yt, xt).sum().backward()
    close(yt.grad, dy)
    close(xt.grad, dx)
    gy, gx = func.grad(lambda a, b: torch.atan2(a, b).sum(), argnums=(0, 1))(T(y), T(x))
    close(gy, dy)
    close(gx, dx)
    jy, jx = func.jacfwd(torch.atan2, argnums=(0, 1))(T(y), T(x))
    close(jy, np.diag(dy))
    close(jx, np.diag(dx))


def test_jacobians_with_aux():
    x = r(3)
    for jac in (func.jacrev, func.jacfwd):
        j, aux = jac(lambda a: (torch.sin(a), a.sum()), has_aux=True)(T(x))
        close(j, np.diag(np.cos(x)))
        close(aux, x.sum())


def test_jacobian_of_matrix_function():
    m, w = r(2, 3), r(3, 4)
    expect = np.einsum("ik,jl->ijkl", np.eye(2), w.T)
    close(func.jacrev(lambda a: a @ T(w))(T(m)), expect)
    close(func.jacfwd(lambda a: a @ T(w))(T(m)), expect)


def test_hessian():
    x, A = r(3), r(3, 3)
    close(func.hessian(lambda a: (a ** 3).sum())(T(x)), np.diag(6 * x))
    close(func.hessian(lambda a: a @ T(A) @ a)(T(x)), A + A.T)
    f = lambda a: (torch.exp(a[0] * a) * torch.sin(a)).sum()  # noqa: E731
    h = func.hessian(f)(T(x))
    close(h, func.jacfwd(func.jacrev(f))(T(x)), tol=1e-9)
    close(h, func.jacrev(func.jacrev(f))(T(x)), tol=1e-9)
    close(h, npy(h).T, tol=1e-9)


# detach, .data and grad mode inside transforms (PyTorch 2.13 gives each expected value below)

def _no_grad_square(x):
    with torch.no_grad():
        c = x * x
    return (c * x).sum()


def test_detach_and_data_stop_the_derivatives_of_every_transform():
    x = T([0.5, 0.8, 1.1])
    close(func.grad(lambda x: (x * x.detach()).sum())(x), [0.5, 0.8, 1.1])
    close(func.grad(lambda x: (x * x.data).sum())(x), [0.5, 0.8, 1.1])
    close(func.jvp(lambda x: x * x.detach(), (x,), (torch.ones_like(x),))[1], [0.5, 0.8, 1.1])
    close(func.jacfwd(lambda x: x * x.detach())(x), np.diag([0.5, 0.8, 1.1]))
    close(func.jacrev(lambda x: x * x.detach())(x), np.diag([0.5, 0.8, 1.1]))
    close(func.vmap(lambda r: r * r.detach())(x), [0.25, 0.64, 1.21])
    d = []
    func.grad(lambda x: (d.append(x.detach()) or x).sum())(x)  # shares the version counter, as outside
    assert d[0]._version == 0


def test_no_grad_inside_reverse_transforms_stops_the_gradient_and_forward_mode_ignores_it():
    x = T([0.5, 0.8, 1.1])
    close(func.grad(_no_grad_square)(x), [0.25, 0.64, 1.21])
    close(func.jacrev(_no_grad_square)(x), [0.25, 0.64, 1.21])

    def set_mode(x):
        with torch.set_grad_enabled(False):
            c = x * x
        return (c * x).sum()
    close(func.grad(set_mode)(x), [0.25, 0.64, 1.21])
    close(func.grad(lambda x: (torch.no_grad()(lambda y: y * y)(x) * x).sum())(x), [0.25, 0.64, 1.21])

    def enabled_again(x):
        with torch.no_grad():
            with torch.enable_grad():
                c = x * x
        return (c * x).sum()
    close(func.grad(enabled_again)(x), [0.75, 1.92, 3.63])
    close(func.jvp(_no_grad_square, (x,), (torch.ones_like(x),))[1], 6.3)  # forward mode: no_grad ignored
    close(func.jacfwd(_no_grad_square)(x), [0.75, 1.92, 3.63])
    close(func.hessian(_no_grad_square)(x), np.diag([1.0, 1.6, 2.2]))
    close(func.grad(lambda x: func.grad(_no_grad_square)(x).sum())(x), [0.0, 0.0, 0.0])
    with torch.no_grad():  # a transform entered under no_grad still differentiates
        close(func.grad(_no_grad_square)(x), [0.25, 0.64, 1.21])
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_the_grad_mode_a_transformed_function_sees():
    x = T([0.5, 0.8, 1.1])
    seen = []
    func.grad(lambda x: seen.append(torch.is_grad_enabled()) or x.sum())(x)
    func.vmap(lambda r: seen.append(torch.is_grad_enabled()) or r)(x)
    with torch.no_grad():
        func.grad(lambda x: seen.append(torch.is_grad_enabled()) or x.sum())(x)
        func.vmap(lambda r: seen.append(torch.is_grad_enabled()) or r)(x)
        func.jvp(lambda r: seen.append(torch.is_grad_enabled()) or r, (x,), (x,))
    assert seen == [True, True, True, False, False]

    def inference(x):
        with torch.inference_mode():
            return x * x
    with pytest.raises(RuntimeError, match="inference_mode is not supported inside a torch.func transform"):
        func.grad(lambda x: inference(x).sum())(x)
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


# Python numbers taken from a traced tensor: constants under grad/jvp (PyTorch 2.13 gives each expected value
# below), PyTorch's RuntimeError under vmap

def test_requires_grad_reads_true_for_what_a_reverse_mode_transform_differentiates():
    # PyTorch's GradTrackingTensor reads requires_grad True (ours read False: code branching on it differed)
    seen = []

    def f(x):
        y = x * 2
        with torch.no_grad():
            z = x * 3
        seen.append((x.requires_grad, y.requires_grad, z.requires_grad, y.detach().requires_grad,
                     torch.ones(2).requires_grad))
        return y.sum()

    func.grad(f)(torch.ones(3))
    func.vmap(func.grad(f))(torch.ones(2, 3))
    func.vmap(lambda r: seen.append(r.requires_grad) or r)(torch.ones(2, 3))
    func.jvp(lambda r: seen.append(r.requires_grad) or r, (torch.ones(3),), (torch.ones(3),))
    assert seen == [(True, True, False, False, False)] * 2 + [False, False]


def test_python_numbers_from_a_tensor_under_grad_and_jvp_are_constants():
    ones = torch.ones(3)
    close(func.grad(lambda x: x.sum() * x.sum().item())(ones), [3.0, 3.0, 3.0])
    close(func.grad(lambda x: x.sum() * float(x.sum().detach()))(ones), [3.0, 3.0, 3.0])
    close(func.grad(lambda x: x.sum() * int(x.sum().detach()))(ones), [3.0, 3.0, 3.0])
    close(func.grad(lambda x: x.sum() * x.tolist()[0])(ones), [1.0, 1.0, 1.0])
    close(func.grad(lambda x: x.sum() if x.sum() > 0 else -x.sum())(ones), [1.0, 1.0, 1.0])
    close(func.grad(lambda x: x.sum() if x.sum() > 0 else -x.sum())(-ones), [-1.0, -1.0, -1.0])
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    out, tangent = func.jvp(lambda x: x * x.sum().item(), (m,), (torch.ones_like(m),))
    close(out, [[10.0, 20.0], [30.0, 40.0]])
    close(tangent, [[10.0, 10.0], [10.0, 10.0]])
    close(func.jacrev(lambda x: x * x.sum().item())(m[0]), [[3.0, 0.0], [0.0, 3.0]])
    close(func.jacfwd(lambda x: x * x.sum().item())(m[0]), [[3.0, 0.0], [0.0, 3.0]])
    close(func.hessian(lambda x: (x * x.sum().item()).sum())(m[0]), [[0.0, 0.0], [0.0, 0.0]])


@pytest.mark.parametrize("fn, message", [
    (lambda r: r * r.sum().item(), "calling .item() on a Tensor"),
    (lambda r: r * float(r.sum()), "calling .item() on a Tensor"),
    (lambda r: r * int(r.sum()), "calling .item() on a Tensor"),
    (lambda r: r if r.sum() > 4 else -r, "data-dependent control flow"),
    (lambda r: r * r.tolist()[0], "tolist()"),
], ids=["item", "float", "int", "bool", "tolist"])
def test_python_numbers_from_a_batched_tensor_raise_pytorchs_vmap_error(fn, message):
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    for transform in (func.vmap(fn), func.grad(lambda x: func.vmap(fn)(x).sum()),
                      func.vmap(func.grad(lambda r: fn(r).sum()))):
        with pytest.raises(RuntimeError, match=r"^vmap: .*" + re.escape(message)):
            transform(m)


@pytest.mark.parametrize("convert", [np.asarray, lambda t: t.detach().numpy()], ids=["asarray", "numpy"])
def test_a_traced_tensor_never_becomes_a_numpy_array(convert):
    # it would drop the derivative or the batch silently; PyTorch raises RuntimeError too
    for transform in (func.grad(lambda x: (x * float(convert(x).sum())).sum()),
                      func.vmap(lambda x: x * float(convert(x).sum()))):
        with pytest.raises(RuntimeError, match=r"numpy\(\) is not available inside a function transform"):
            transform(torch.ones(2, 3))


def test_a_traced_tensor_prints_as_pytorchs_wrappers():
    seen = []
    x = torch.ones(2, 3)
    func.vmap(func.grad(lambda r: seen.append(repr(r)) or r.sum()))(x)
    func.jvp(lambda r: seen.append(repr(r)) or r, (x[0],), (x[0],))
    assert seen == [
        "GradTrackingTensor(lvl=2, value=\n    BatchedTensor(lvl=1, bdim=0, value=\n        tensor([[1., 1., 1.],\n"
        "                [1., 1., 1.]])\n    )\n)",
        "GradTrackingTensor(lvl=1, value=\n    tensor([1., 1., 1.])\n)"]


# ---------------------------------------------------------------------------
# vmap


def test_vmap_in_dims_out_dims():
    x, y = r(4, 3), r(3, 4)
    out = func.vmap(lambda a, b: a * b, in_dims=(0, 1))(T(x), T(y))
    assert is_tensor(out)
    close(out, x * y.T)
    out = func.vmap(lambda a, b: a * b, in_dims=(0, None))(T(x), T(y[:, 0]))
    close(out, x * y[:, 0])
    out = func.vmap(lambda a: a * 2, in_dims=1, out_dims=1)(T(y))
    close(out, y * 2)
    a_, b_ = func.vmap(lambda a: (a.sum(), a * 3), out_dims=(0, 1))(T(x))
    close(a_, x.sum(1))
    close(b_, (x * 3).T)
    # kwargs are passed unbatched
    out = func.vmap(lambda a, scale=1.0: a * scale)(T(x), scale=2.0)
    close(out, 2 * x)
    # pytree inputs, one in_dims per leaf
    out = func.vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": 1},))({"a": T(x), "b": T(y)})
    close(out, x * y.T)
    out = func.vmap(lambda xs: xs[0] + xs[1], in_dims=([0, 1],))([T(x), T(y)])
    close(out, x + y.T)


def test_vmap_in_dims_pytree_with_none_entries():
    x, y = r(4, 3), r(3, 4)
    out = func.vmap(lambda d: d["a"] @ d["w"], in_dims=({"a": 0, "w": None},))({"a": T(x), "w": T(y)})
    close(out, x @ y)


def test_vmap_nested_and_torch_vmap_is_func_vmap():
    assert torch.vmap is func.vmap
    x, y = r(4, 3), r(5, 3)
    out = torch.vmap(torch.vmap(lambda a, b: (a * b).sum(), in_dims=(None, 0)), in_dims=(0, None))(T(x), T(y))
    close(out, x @ y.T)


def test_vmap_of_tensor_methods_and_indexing():
    x = r(4, 3, 5)
    idx = torch.tensor([[0, 2], [1, 1], [4, 0], [3, 3]])
    out = func.vmap(lambda a: a.view(-1).max())(T(x))
    close(out, x.reshape(4, -1).max(1))
    out = func.vmap(lambda a: a[:, torch.tensor([4, 0])].sum(-1))(T(x))  # an unbatched index tensor
    close(out, x[:, :, [4, 0]].sum(-1))
    # a batched index tensor
    out = func.vmap(lambda a, i: a[:, i].softmax(-1).sum(0))(T(x), idx)
    ref = []
    for b in range(4):
        s = x[b][:, idx.numpy()[b]]
        e = np.exp(s - s.max(-1, keepdims=True))
        ref.append((e / e.sum(-1, keepdims=True)).sum(0))
    close(out, np.stack(ref))


def test_vmap_randomness_error_raises():
    with pytest.raises(RuntimeError, match="random"):
        func.vmap(lambda a: a + torch.rand(3))(torch.zeros(4, 3))
    with pytest.raises(RuntimeError, match="random"):
        func.vmap(lambda a: a + torch.randn(3), randomness="error")(torch.zeros(4, 3))


def test_vmap_randomness_must_be_a_known_mode():
    with pytest.raises(RuntimeError, match="randomness"):
        func.vmap(lambda a: a, randomness="sometimes")(torch.zeros(4, 3))


def test_vmap_randomness_same_gives_identical_rows():
    out = func.vmap(lambda a: a + torch.rand(3), randomness="same")(torch.zeros(4, 3))
    rows = npy(out)
    assert out.shape == (4, 3)
    for i in range(1, 4):
        assert rows[i].tolist() == rows[0].tolist()
    assert ((rows >= 0) & (rows < 1)).all()


def test_vmap_randomness_different_gives_different_rows():
    out = func.vmap(lambda a: a + torch.randn(3), randomness="different")(torch.zeros(4, 3))
    rows = npy(out)
    assert out.shape == (4, 3)
    assert len({tuple(row) for row in rows.tolist()}) == 4
    # and a fresh draw each call
    out2 = func.vmap(lambda a: a + torch.randn(3), randomness="different")(torch.zeros(4, 3))
    assert npy(out2).tolist() != rows.tolist()


def test_vmap_randomness_does_not_affect_random_ops_outside():
    torch.manual_seed(5)
    ref = torch.rand(3)
    torch.manual_seed(5)
    func.vmap(lambda a: a * 2)(torch.zeros(4, 3))  # no random op inside: the generator is left alone
    close(torch.rand(3), ref)


# ---------------------------------------------------------------------------
# per-example gradients of a small MLP


def _mlp_loss(w1, b1, w2, b2, x, y_onehot):
    h = torch.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -(torch.log_softmax(logits, -1) * y_onehot).sum()


def _mlp_loss_indexed(w1, b1, w2, b2, x, y):
    # the label picks its log-probability by indexing with a (batched, under vmap) integer tensor
    h = torch.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -torch.log_softmax(logits, -1)[y]


def test_per_example_gradients_match_a_loop_of_autograd_grad():
    w1, b1, w2, b2 = r(4, 8) * 0.5, r(8) * 0.1, r(8, 3) * 0.5, r(3) * 0.1
    xs = r(6, 4)
    labels = np.array([0, 2, 1, 1, 0, 2])
    ys = T(np.eye(3)[labels])
    params = [T(p) for p in (w1, b1, w2, b2)]
    per = func.vmap(func.grad(_mlp_loss, argnums=(0, 1, 2, 3)), in_dims=(None, None, None, None, 0, 0))(
        *params, T(xs), ys)
    assert [tuple(g.shape) for g in per] == [(6, 4, 8), (6, 8), (6, 8, 3), (6, 3)]
    for i in range(6):
        leaves = [T(p, requires_grad=True) for p in (w1, b1, w2, b2)]
        loss = _mlp_loss(*leaves, T(xs[i]), ys[i])
        grads = torch.autograd.grad(loss, leaves)
        for g_batched, g_loop in zip(per, grads):
            close(g_batched[i], g_loop)
    # and by hand for the last layer's bias: softmax(logits) - onehot(y)
    logits = np.tanh(xs @ w1 + b1) @ w2 + b2
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    close(per[3], p - np.eye(3)[labels])


def test_per_example_gradients_with_integer_labels_indexing():
    w1, b1, w2, b2 = r(4, 8) * 0.5, r(8) * 0.1, r(8, 3) * 0.5, r(3) * 0.1
    xs = r(6, 4)
    labels = torch.tensor([0, 2, 1, 1, 0, 2])
    params = [T(p) for p in (w1, b1, w2, b2)]
    per = func.vmap(func.grad(_mlp_loss_indexed, argnums=(0, 1, 2, 3)), in_dims=(None,) * 4 + (0, 0))(
        *params, T(xs), labels)
    for i in range(6):
        leaves = [T(p, requires_grad=True) for p in (w1, b1, w2, b2)]
        grads = torch.autograd.grad(_mlp_loss_indexed(*leaves, T(xs[i]), labels[i]), leaves)
        for g_batched, g_loop in zip(per, grads):
            close(g_batched[i], g_loop)


def test_grad_of_vmapped_loss_equals_summed_per_example_gradients():
    w, xs = r(3, 2), r(5, 3)
    loss = lambda w_, x: (torch.tanh(x @ w_) ** 2).sum()  # noqa: E731
    per = func.vmap(func.grad(loss), in_dims=(None, 0))(T(w), T(xs))
    total = func.grad(lambda w_: func.vmap(loss, in_dims=(None, 0))(w_, T(xs)).sum())(T(w))
    close(total, npy(per).sum(0))
    t = np.tanh(xs @ w)
    close(total, xs.T @ (2 * t * (1 - t ** 2)))


def test_vmap_of_jacrev_and_jvp_of_vmap():
    x = r(5, 4)
    J = func.vmap(func.jacrev(lambda a: a * a.sum()))(T(x))
    close(J, np.stack([_np_jac(v) for v in x]))
    t = r(5, 4)
    out, tan = func.jvp(func.vmap(lambda a: torch.exp(a).sum()), (T(x),), (T(t),))
    close(out, np.exp(x).sum(1))
    close(tan, (np.exp(x) * t).sum(1))
    out, tan = func.vmap(lambda a, s: func.jvp(torch.sin, (a,), (s,)))(T(x), T(t))
    close(tan, np.cos(x) * t)


# ---------------------------------------------------------------------------
# the caller's tensors are left alone


def test_transforms_leave_caller_tensors_untouched_and_record_nothing():
    x = T(r(3), requires_grad=True)
    w = T(r(3, 3), requires_grad=True)
    before = npy(x).copy()
    pre_loss = (x * x).sum()  # an eager graph built before the transforms
    v0, vw0 = x._version, w._version
    f = lambda a, m: torch.tanh(m @ a).sum()  # noqa: E731
    func.grad(f)(x, w)
    func.grad_and_value(f, argnums=(0, 1))(x, w)
    func.vjp(f, x, w)[1](torch.tensor(1.0, dtype=f64))
    func.jvp(lambda a: f(a, w), (x,), (torch.ones(3, dtype=f64),))
    func.jacrev(lambda a: m_at(w, a))(x)
    func.jacfwd(lambda a: m_at(w, a))(x)
    func.hessian(lambda a: f(a, w))(x)
    func.vmap(lambda a: f(a, w))(torch.stack([x, x]))
    for t, v in ((x, v0), (w, vw0)):
        assert t._version == v
        assert t.grad is None
        assert t.is_leaf and t.requires_grad and t.grad_fn is None
    close(x, before)
    # the eager tape still works and sees only its own graph
    pre_loss.backward()
    close(x.grad, 2 * before)
    assert w.grad is None


def m_at(m, a):
    return m @ a


def test_grad_of_a_function_that_uses_eager_autograd_inputs():
    # an input that requires grad is treated as a plain value inside the transform
    x = T(r(3), requires_grad=True)
    g = func.grad(lambda a: (a ** 2).sum())(x)
    close(g, 2 * npy(x))
    assert x.grad is None and x._version == 0


# ---------------------------------------------------------------------------
# in-place ops inside transformed functions (functionalized)


def _inplace_f(x):
    y = torch.zeros(x.shape, dtype=x.dtype)
    y[0] = x[0] * 2
    y.add_(x)
    return y  # = [3 x0, x1, x2, ...]


def _np_inplace_f(x):
    y = x.copy()
    y[0] = 3 * x[0]
    return y


def test_inplace_under_vmap():
    x = r(4, 3)
    close(func.vmap(_inplace_f)(T(x)), np.stack([_np_inplace_f(v) for v in x]))
    close(func.vmap(_inplace_f, in_dims=1, out_dims=1)(T(x.T)), np.stack([_np_inplace_f(v) for v in x]).T)


def test_inplace_under_grad_jvp_and_vjp():
    x = r(3)
    close(func.grad(lambda a: _inplace_f(a).sum())(T(x)), [3.0, 1.0, 1.0])
    close(func.grad(lambda a: (_inplace_f(a) ** 2).sum())(T(x)), [18 * x[0], 2 * x[1], 2 * x[2]])
    t = r(3)
    out, tan = func.jvp(_inplace_f, (T(x),), (T(t),))
    close(out, _np_inplace_f(x))
    close(tan, [3 * t[0], t[1], t[2]])
    out, vjp_fn = func.vjp(_inplace_f, T(x))
    (g,) = vjp_fn(T(t))
    close(g, [3 * t[0], t[1], t[2]])
    close(func.jacrev(_inplace_f)(T(x)), np.diag([3.0, 1.0, 1.0]))
    close(func.jacfwd(_inplace_f)(T(x)), np.diag([3.0, 1.0, 1.0]))


def test_inplace_under_vmap_of_grad_and_grad_of_vmap():
    x = r(4, 3)
    g = func.vmap(func.grad(lambda a: (_inplace_f(a) ** 2).sum()))(T(x))
    close(g, np.stack([[18 * v[0], 2 * v[1], 2 * v[2]] for v in x]))
    g = func.grad(lambda a: func.vmap(_inplace_f)(a).sum())(T(x))
    close(g, np.tile([3.0, 1.0, 1.0], (4, 1)))
    out, tan = func.vmap(lambda a, s: func.jvp(_inplace_f, (a,), (s,)))(T(x), T(x * 0 + 1))
    close(tan, np.tile([3.0, 1.0, 1.0], (4, 1)))


def test_inplace_default_dtype_buffer_under_vmap():
    # torch.zeros(shape) is float32 whatever x is: the writes are cast to y's dtype
    def f(x):
        y = torch.zeros(x.shape)
        y[0] = x[0] * 2
        y.add_(x)
        return y
    x = r(2, 3)
    out = func.vmap(f)(T(x))
    assert out.dtype == torch.float32
    close(out, np.stack([_np_inplace_f(v) for v in x]).astype(np.float32), tol=1e-6)


def test_inplace_on_a_view_inside_vmap_and_grad():
    def f(x):
        y = torch.zeros(2, x.shape[0], dtype=x.dtype)
        row = y[1]
        row.copy_(x)     # write through a view: the base sees it
        row.mul_(x)
        return y.sum(0)  # = x * x
    x = r(4, 3)
    close(func.vmap(f)(T(x)), x * x)
    close(func.vmap(func.grad(lambda a: f(a).sum()))(T(x)), 2 * x)


# ---------------------------------------------------------------------------
# modules as functions

HAS_NN = hasattr(torch, "nn") and hasattr(torch.nn, "Linear")
needs_nn = pytest.mark.skipif(not HAS_NN, reason="torch.nn is not available")


def _mlp():
    nn = torch.nn
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()


@needs_nn
def test_a_traced_write_into_a_captured_tensor_raises_and_leaves_it_intact():
    # it used to leave a dead tracer in the captured tensor (a module's running stats broken from then on)
    buf = torch.zeros(3)

    def f(x):
        buf.add_(x)
        return (x * x).sum()

    with pytest.raises(RuntimeError, match="wrote in place into a captured Tensor"):
        func.grad(f)(torch.ones(3))
    assert (buf + 1).tolist() == [1.0, 1.0, 1.0] and buf._version == 0
    bn = nn.BatchNorm1d(3)
    with pytest.raises(RuntimeError, match="captured Tensor"):
        func.vmap(bn)(torch.ones(4, 2, 3))
    assert bn.running_mean.tolist() == [0.0, 0.0, 0.0]
    bn(torch.ones(2, 3))  # still a working module

    def accumulate(x):  # a tensor made inside the function may take traced writes
        acc = torch.zeros(3)
        acc.add_(x)
        return (acc * x).sum()
    close(func.grad(accumulate)(torch.ones(3)), [2.0, 2.0, 2.0])
    close(func.vmap(lambda x: torch.zeros(3).add_(x))(torch.ones(2, 3)), np.ones((2, 3)))


def test_an_in_place_write_into_a_vmap_argument_reaches_the_callers_tensor():
    # PyTorch writes through; ours wrote into a copy and left the caller's tensor as it was
    x = torch.zeros(2, 3)
    func.vmap(lambda r: r.add_(1))(x)
    assert x.tolist() == [[1.0] * 3] * 2 and x._version == 1
    x = torch.zeros(3, 2)
    func.vmap(lambda r: r.mul_(2).add_(1), in_dims=1)(x)
    assert x.tolist() == [[1.0, 1.0]] * 3
    y = torch.zeros(3)
    func.vmap(lambda a, b: (b.add_(1.0), a)[1], in_dims=(0, None))(torch.ones(2, 3), y)
    assert y.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="wrote a batched value into a Tensor that is not batched"):
        func.vmap(lambda a, b: b.add_(a), in_dims=(0, None))(torch.ones(2, 3), y)
    assert y.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        func.vmap(lambda r: r.add_(1))(torch.zeros(2, 3, requires_grad=True))


_X = torch.ones(3)


@pytest.mark.parametrize("call, kind, message", [  # PyTorch 2.13's types and messages
    (lambda: func.grad(lambda x: x * 2)(_X), RuntimeError, "Expected f(*args) to return a scalar Tensor, got tensor "
                                                          "with 1 dims"),
    (lambda: func.grad(lambda x: 3.0)(_X), RuntimeError, "Expected f(*args) to return a Tensor, got <class 'float'>"),
    (lambda: func.grad(lambda x: x.sum(), has_aux=True)(_X), RuntimeError, "should be a tuple: (output, aux)"),
    (lambda: func.grad(lambda x: (x * 1j).sum())(_X), RuntimeError, "only for real scalar outputs"),
    (lambda: func.grad(lambda x: x.sum())(torch.ones(3, dtype=torch.int64)), RuntimeError,
     "only Tensors of floating point dtype can require gradients"),
    (lambda: func.jacrev(lambda x: x)(torch.ones(3, dtype=torch.int64)), RuntimeError, "floating point dtype"),
    (lambda: func.jacfwd(lambda x: x)(torch.ones(3, dtype=torch.int64)), ValueError,
     "Expected primal to be floating point or complex, but got: torch.int64"),
    (lambda: func.grad(lambda x, y: x.sum(), argnums=2)(_X, _X), RuntimeError, "Got argnum=2, but only 2 positional"),
    (lambda: func.grad(lambda x, y: x.sum(), argnums=0.0)(_X, _X), RuntimeError, "argnums must be int or Tuple"),
    (lambda: func.grad(lambda x, y: x.sum(), argnums=(0, 0))(_X, _X), RuntimeError, "argnums elements must be unique"),
    (lambda: func.grad(lambda x, y: x.sum(), argnums=())(_X, _X), RuntimeError, "argnums must be non-empty"),
    (lambda: func.vjp(lambda x: x * 2, _X)[1](torch.ones(2)), RuntimeError,
     "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of torch.Size([3])"),
    (lambda: func.jvp(lambda x: x * 2, (_X,), (torch.ones(2),)), RuntimeError, "different size than that of the "
                                                                               "original Tensor"),
    (lambda: func.jvp(lambda x: x * 2, (_X,), (_X, _X)), RuntimeError, "the same python structure"),
    (lambda: func.jvp(lambda x: x * 2, _X, _X), RuntimeError, "Expected primals to be a tuple"),
], ids=["nonscalar", "float-out", "aux-pair", "complex-out", "int-in", "jacrev-int", "jacfwd-int", "argnum-range",
        "argnum-float", "argnum-dup", "argnum-empty", "vjp-shape", "jvp-shape", "jvp-structure", "jvp-tuple"])
def test_torch_func_misuse_raises_pytorchs_error_types(call, kind, message):
    with pytest.raises(kind, match=re.escape(message)):
        call()


def test_vmap_chunk_size_gives_the_unchunked_results():
    x = torch.arange(10.0).reshape(5, 2)
    out, s_ = func.vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, None), chunk_size=2)(x, torch.ones(2))
    assert torch.equal(out, x) and s_.tolist() == [1.0, 5.0, 9.0, 13.0, 17.0]
    assert func.vmap(lambda a: a * 2, in_dims=1, out_dims=1, chunk_size=1)(x).tolist() == (x * 2).tolist()
    sizes = []  # one vmapped call per chunk, each over its part of the batch
    func.vmap(lambda a: sizes.append(a.shape) or a, chunk_size=2)(torch.ones(5, 3, 4))
    assert sizes == [torch.Size([3, 4])] * 3
    torch.manual_seed(0)
    same = func.vmap(lambda a: a + torch.rand(()), randomness="same", chunk_size=2)(torch.zeros(5))
    assert len(set(same.tolist())) == 1
    torch.manual_seed(0)
    different = func.vmap(lambda a: a + torch.rand(()), randomness="different", chunk_size=2)(torch.zeros(5))
    assert len(set(different.tolist())) == 5
    y = torch.zeros(5, 2)
    func.vmap(lambda r: r.add_(1), chunk_size=2)(y)
    assert y.sum().item() == 10.0
    w = torch.randn(3)
    grads = func.vmap(func.grad(lambda w, a: (w * a).sum()), in_dims=(None, 0), chunk_size=2)(w, x[:, :1] * torch.ones(3))
    assert torch.equal(grads, x[:, :1] * torch.ones(3))
    for bad in (0, -1):
        with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
            func.vmap(lambda a: a, chunk_size=bad)
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        func.jacrev(lambda a: a, chunk_size=0)
    close(func.jacrev(lambda a: a * 2, chunk_size=1)(torch.ones(3)), 2 * np.eye(3))


class _Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.a(x) + self.b(x)


def test_functional_call_ties_weights_as_pytorch():
    # PyTorch 2.13 gives each expected value below: a value given for one name of a tied weight serves all
    m = _Tied()
    nn.init.zeros_(m.a.weight)
    x, ones = torch.ones(2), torch.ones(2, 2)
    assert func.functional_call(m, {"a.weight": ones}, (x,)).tolist() == [4.0, 4.0]
    assert func.functional_call(m, {"b.weight": ones}, (x,)).tolist() == [4.0, 4.0]
    assert func.functional_call(m, {"b.weight": ones}, (x,), tie_weights=False).tolist() == [2.0, 2.0]
    assert func.functional_call(m, {"a.weight": ones, "b.weight": ones}, (x,)).tolist() == [4.0, 4.0]
    g = func.grad(lambda p: func.functional_call(m, p, (x,)).sum())({"a.weight": ones})
    assert g["a.weight"].tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(ValueError, match=r"multiple values for keys \['a.weight', 'b.weight'\], which are tied"):
        func.functional_call(m, {"a.weight": ones, "b.weight": torch.ones(2, 2)}, (x,))
    with pytest.raises(ValueError, match=r"\['a.weight'\] appeared in multiple dictionaries"):
        func.functional_call(m, ({"a.weight": ones}, {"a.weight": ones}), (x,))
    assert m.b.weight is m.a.weight and m.a.weight.sum().item() == 0.0


def test_functional_call_equals_module_with_same_params_and_leaves_module_alone():
    torch.manual_seed(0)
    m = _mlp()
    orig = {k: (v, npy(v).copy(), v._version) for k, v in m.named_parameters()}
    new = {k: T(r(*v.shape)) for k, v in m.named_parameters()}
    x = T(r(4, 3))
    out = func.functional_call(m, new, (x,))
    # the same params loaded into a copy of the module
    ref = _mlp()
    with torch.no_grad():
        for k, v in ref.named_parameters():
            v.copy_(new[k])
    close(out, ref(x))
    h = np.tanh(npy(x) @ npy(new["0.weight"]).T + npy(new["0.bias"]))
    close(out, h @ npy(new["2.weight"]).T + npy(new["2.bias"]))
    # a single tensor arg (not a tuple) is accepted
    close(func.functional_call(m, new, x), out)
    for k, v in m.named_parameters():
        p, val, ver = orig[k]
        assert v is p and v._version == ver
        close(v, val)
    # with the module's own params it equals the module
    close(func.functional_call(m, dict(m.named_parameters()), (x,)), m(x))


@needs_nn
def test_functional_call_under_grad_gives_parameter_gradients():
    torch.manual_seed(1)
    m = _mlp()
    params = {k: v.detach() for k, v in m.named_parameters()}
    x = T(r(4, 3))
    g = func.grad(lambda p: func.functional_call(m, p, (x,)).pow(2).sum())(params)
    loss = m(x).pow(2).sum()
    ref = torch.autograd.grad(loss, [p for _, p in m.named_parameters()])
    for (k, _), gr in zip(m.named_parameters(), ref):
        close(g[k], gr)
    assert all(p.grad is None for p in m.parameters())


@needs_nn
def test_per_example_gradients_with_cross_entropy_and_functional_call():
    # the torch.func tutorial recipe: vmap(grad(loss), in_dims=(None, 0, 0)) with integer targets
    torch.manual_seed(3)
    m = _mlp()
    params = {k: v.detach() for k, v in m.named_parameters()}
    xs, ys = T(r(5, 3)), torch.tensor([1, 0, 1, 1, 0])

    def loss(p, x, y):
        out = func.functional_call(m, p, (x[None],))
        return torch.nn.functional.cross_entropy(out, y[None])

    per = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
    for i in range(5):
        ref = torch.autograd.grad(torch.nn.functional.cross_entropy(m(xs[i:i + 1]), ys[i:i + 1]),
                                  list(m.parameters()))
        for (k, _), gr in zip(m.named_parameters(), ref):
            close(per[k][i], gr)


@needs_nn
def test_ensemble_with_stack_module_state_and_vmap_functional_call():
    torch.manual_seed(2)
    models = [_mlp() for _ in range(5)]
    params, buffers = func.stack_module_state(models)
    assert set(params) == {k for k, _ in models[0].named_parameters()}
    for k, v in params.items():
        assert tuple(v.shape) == (5,) + tuple(dict(models[0].named_parameters())[k].shape)
    base = _mlp()
    x = T(r(7, 3))

    def call(p, b, xx):
        return func.functional_call(base, (p, b), (xx,))

    out = func.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    assert tuple(out.shape) == (5, 7, 2)
    for i, m in enumerate(models):
        close(out[i], m(x))
    # each model on its own minibatch
    xs = T(r(5, 7, 3))
    out = func.vmap(call)(params, buffers, xs)
    for i, m in enumerate(models):
        close(out[i], m(xs[i]))
    # the ensemble's per-model gradients match each model's autograd
    def loss(p, b, xx):
        return call(p, b, xx).pow(2).sum()
    grads = func.vmap(func.grad(loss), in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        ref = torch.autograd.grad(m(x).pow(2).sum(), list(m.parameters()))
        for (k, _), gr in zip(m.named_parameters(), ref):
            close(grads[k][i], gr)


# ---------------------------------------------------------------------------
# dict results keep insertion order, as torch's pytrees do (the core's sort keys)


def _order_params():
    return {"b": torch.ones(2), "a": torch.ones(3)}


def _order_loss(p):
    return (p["b"] ** 2).sum() + p["a"].sum()


def _order_out(p):
    return {"q": p["b"] * 1, "c": p["a"] * 1}


def test_grad_of_a_dict_keeps_the_input_key_order():
    p = _order_params()
    assert list(torch.func.grad(_order_loss)(p)) == ["b", "a"]
    g, aux = torch.func.grad(lambda p: (_order_loss(p), {"z": torch.ones(1), "y": torch.ones(1)}), has_aux=True)(p)
    assert list(g) == ["b", "a"] and list(aux) == ["z", "y"]
    g, value = torch.func.grad_and_value(_order_loss)(p)
    assert list(g) == ["b", "a"] and float(value) == 5.0


def test_vmap_vjp_jvp_results_keep_the_output_key_order():
    p = _order_params()
    assert list(torch.func.vmap(lambda x: {"b": x, "a": x})(torch.ones(2))) == ["b", "a"]
    out, vjp_fn = torch.func.vjp(_order_out, p)
    assert list(out) == ["q", "c"]
    assert list(vjp_fn({"q": torch.ones(2), "c": torch.ones(3)})[0]) == ["b", "a"]
    out, tangent = torch.func.jvp(_order_out, (p,), (p,))
    assert list(out) == ["q", "c"] and list(tangent) == ["q", "c"]


def test_jacobians_keep_output_then_input_key_order():
    p = _order_params()
    for jac in (torch.func.jacrev, torch.func.jacfwd):
        j = jac(_order_out)(p)
        assert list(j) == ["q", "c"] and list(j["q"]) == ["b", "a"]
        assert j["q"]["b"].shape == (2, 2) and j["q"]["a"].shape == (2, 3)
    h = torch.func.hessian(_order_loss)(p)
    assert list(h) == ["b", "a"] and list(h["b"]) == ["b", "a"]
    np.testing.assert_allclose(np.asarray(h["b"]["b"]), 2 * np.eye(2))


def test_the_transformed_function_sees_the_callers_key_order():
    p = _order_params()
    seen = []

    def loss(p):
        seen.append(list(p))
        return _order_loss(p)

    torch.func.grad(loss)(p)
    torch.func.vmap(loss, in_dims=({"b": 0, "a": None},))({"b": torch.ones(4, 2), "a": torch.ones(3)})
    torch.func.jacrev(loss)(p)
    assert seen == [["b", "a"]] * 3
    # per-sample gradients: vmap over grad keeps the parameter order end to end
    g = torch.func.vmap(torch.func.grad(lambda p, x: (p["b"].sum() + p["a"].sum()) * x), in_dims=(None, 0))(
        p, torch.arange(4.0))
    assert list(g) == ["b", "a"] and g["b"].shape == (4, 2)


# ---------------------------------------------------------------------------
# linearize and functionalize (expected values recorded with PyTorch 2.13)


def _lin_fn(a, b):
    return {"s": (a.sin() * a.exp()).sum() * b, "t": (a[:2] @ b).tanh()}


def test_linearize_gives_the_output_and_the_jvp_at_the_primals():
    x, y = torch.tensor([0.5, 1.0, 2.0]), torch.tensor([[1.0, -2.0], [0.25, 3.0]])
    calls = []

    def g(a, b):
        calls.append(1)
        return _lin_fn(a, b)

    out, jvp_fn = func.linearize(g, x, y)
    dx, dy = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([[0.5, 0.0], [1.0, -1.0]])
    for _ in range(3):
        tangent = jvp_fn(dx, dy)
    np.testing.assert_allclose(out["s"].numpy(), [[9.79664421, -19.59328842], [2.44916105, 29.38993263]], rtol=1e-6)
    np.testing.assert_allclose(out["t"].numpy(), [0.63514894, 0.96402758], rtol=1e-6)
    assert list(tangent) == ["s", "t"]
    np.testing.assert_allclose(tangent["s"].numpy(), [[25.57949829, -41.36235046], [14.96693802, 52.24687958]],
                               rtol=1e-6)
    np.testing.assert_allclose(tangent["t"].numpy(), [1.64061093, 0.21195245], rtol=1e-5)
    # the function ran for the output and once more to stage the linear part; later calls run only that
    assert len(calls) == 2
    np.testing.assert_allclose(jvp_fn(dx * 2, dy * 2)["s"].numpy(), tangent["s"].numpy() * 2, rtol=1e-6)


def test_linearize_checks_the_tangents_as_pytorch():
    _, jvp_fn = func.linearize(_lin_fn, torch.tensor([0.5, 1.0, 2.0]), torch.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"tangent:0 with shape .*\[2\].* doesn't match the shape .*\[3\]"):
        jvp_fn(torch.ones(2), torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="tangent:0 with dtype torch.float64 .* doesn't match the dtype "
                                           "torch.float32"):
        jvp_fn(torch.ones(3, dtype=torch.float64), torch.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expected the tangents .* to have the same argspec as the primals"):
        jvp_fn(torch.ones(3))


def test_functionalize_keeps_the_functions_results_and_its_writes_into_inputs():
    def f(a):
        b = a + 1
        b.view(-1).add_(1)
        a.mul_(2)
        return b

    inp = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = func.functionalize(f)(inp)
    assert out.tolist() == [[3.0, 4.0], [5.0, 6.0]] and inp.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert func.functionalize(f, remove="mutations_and_views").__wrapped__ is f
    with pytest.raises(RuntimeError, match="received invalid argument for remove=x. Valid options are"):
        func.functionalize(f, remove="x")
    # with the transforms, as PyTorch's examples use it
    g = torch.func.grad(lambda a: func.functionalize(f)(a.clone()).sum())(inp)
    assert g.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@pytest.mark.parametrize("out_dims", [5, -4, 2, -3])
def test_vmap_out_dims_past_the_rank_raise_pytorchs_index_error(out_dims):
    # it was core's ValueError (PyTorch 2.13 raises IndexError with this message); core keeps a ValueError
    with pytest.raises(IndexError, match=re.escape(f"Dimension out of range (expected to be in range of [-2, 1], "
                                                   f"but got {out_dims})")):
        func.vmap(lambda a: a * 2, out_dims=out_dims)(torch.randn(3, 2))
    with pytest.raises(ValueError, match="out_axes"):
        torch.core.vmap(lambda a: a * 2, out_axes=out_dims)(torch.core.ones((3, 2)))


# ---------------------------------------------------------------------------
# outer autograd through torch.func transforms (expected values recorded with PyTorch 2.13)

_OUTER_EXPECTED = [
    [0.7418313026428223, -3.506848096847534, -2.2428174018859863],
    [2.0289626121520996, -16.057056427001953, -49.090431213378906],
    [-0.7268619537353516, 0.5448746681213379, -0.00044201992568559945],
    [-0.8775825500488281, 3.329174757003784, -25.924598693847656],
    [5.136101722717285, 118.22489929199219, 26366276.0],
    [1.9220755100250244, -3.715543508529663, 13.57965087890625],
    [[[-6.468750953674316, -12.281251907348633, -20.062503814697266], [-10.48125171661377, -19.368751525878906, -33.037506103515625]], [-8.625000953674316, -13.97500228881836]],
]


def test_transform_results_are_differentiable_by_outer_autograd():
    # the results required no grad (the tape is off inside transforms): MAML's inner gradient, a gradient
    # penalty over per-sample gradients, a Jacobian in a loss could not be backpropagated
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0])

    def loss(p, x):
        return ((p * x).sin() ** 2).sum()

    res = []

    def take():
        res.append(w.grad.tolist())
        w.grad = None

    g = torch.func.grad(loss)(w, x)
    assert g.requires_grad and g.grad_fn is not None
    (w - 0.1 * g).pow(2).sum().backward()
    take()
    xs = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(w, xs).pow(2).sum().backward()
    take()
    torch.func.jacrev(lambda p: (p * x).tanh())(w).sum().backward()
    take()
    torch.func.hessian(lambda p: (p * x).sin().sum())(w).sum().backward()
    take()
    out, t = torch.func.jvp(lambda p: (p * p * x).exp().sum(), (w,), (torch.ones(3),))
    (out + t).backward()
    take()
    gv, val = torch.func.grad_and_value(loss)(w, x)
    (gv.sum() + val).backward()
    take()
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        lin.bias.copy_(torch.tensor([0.05, -0.05]))
    params = dict(lin.named_parameters())

    def inner(p, xb, yb):
        return ((torch.func.functional_call(lin, p, (xb,)) - yb) ** 2).mean()

    xb, yb = torch.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    grads = torch.func.grad(inner)(params, xb, yb)
    inner({k: v - 0.5 * grads[k] for k, v in params.items()}, xb * 2, yb).backward()
    res.append([lin.weight.grad.tolist(), lin.bias.grad.tolist()])
    for got, want in zip(res, _OUTER_EXPECTED):
        if isinstance(want[0], list) and isinstance(want[0][0], list):
            got, want = [*got[0], got[1]], [*want[0], want[1]]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5)
    assert len(res) == len(_OUTER_EXPECTED)


def test_outer_autograd_through_a_transform_without_the_tape():
    w = torch.ones(3, requires_grad=True)
    g = torch.func.grad(lambda p: (p ** 3).sum())(w)
    (gw,) = torch.autograd.grad(g.sum(), w, create_graph=False)
    assert gw.tolist() == [6.0, 6.0, 6.0]
    with torch.no_grad():  # no tape: plain results
        assert not torch.func.grad(lambda p: (p ** 3).sum())(w).requires_grad


_CAPTURED_EXPECTED = [
    [1.3817732334136963, 6.742753505706787, 28.769023895263672],
    [[[1.3000000715255737, 1.5000001192092896, 5.0], [-0.9000002145767212, 0.4999995231628418, -5.000000953674316]], [2.4000000953674316, -3.200000286102295]],
    [[[0.6410753130912781, 0.9318200945854187, 0.7137615084648132], [1.030082106590271, 0.6139203310012817, 0.9260416626930237]], [-0.1453724056482315, 0.20808087289333344]],
    [[[1.7947338819503784, 1.8677400350570679, 1.8129854202270508], [-2.594843864440918, -6.35186767578125, -3.534099817276001]], [-0.03650306165218353, 1.8785120248794556], [0.6959917545318604, 2.1873369216918945, 0.0]],
]


def test_tensors_a_transformed_function_captures_are_differentiated_by_outer_autograd():
    # a closed-over weight and a module's parameters (vmap(model)(x), jacrev of a layer) got no gradient
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0])
    res = []
    g = torch.func.grad(lambda x: ((x * w).sin() ** 2).sum())(x)
    (g * x).sum().backward()
    res.append([w.grad.tolist()])
    w.grad = None
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        lin.bias.copy_(torch.tensor([0.05, -0.05]))

    def take(*extra):
        res.append([*lin.weight.grad.tolist(), lin.bias.grad.tolist(), *extra])
        lin.zero_grad()

    torch.func.vmap(lin)(torch.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]])).pow(2).sum().backward()
    take()
    torch.func.jacrev(lambda v: lin(v).tanh())(torch.tensor([1.0, -1.0, 0.5])).sum().backward()
    take()
    o, t = torch.func.jvp(lambda v: (lin(v) * w[:2]).exp().sum(), (torch.tensor([1.0, -1.0, 0.5]),),
                          (torch.ones(3),))
    (o * t).backward()
    take(w.grad.tolist())
    want = [[e] if not isinstance(e[0], list) else [*e[0], *e[1:]] for e in _CAPTURED_EXPECTED]
    assert len(res) == len(want)
    for got, exp in zip(res, want):
        for a, b in zip(got, exp):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_per_sample_gradients_of_detached_parameters_require_no_grad():
    # the model's parameters are reached (captured) and require grad, but the function reads their detached
    # copies through functional_call: its results depend on no tensor autograd tracks, as in PyTorch
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    params = {k: v.detach() for k, v in lin.named_parameters()}

    def loss(p, x, y):
        return ((torch.func.functional_call(lin, p, (x,)) - y) ** 2).mean()

    g = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, torch.randn(4, 3), torch.randn(4, 2))
    assert g["weight"].shape == (4, 2, 3) and not g["weight"].requires_grad and not g["bias"].requires_grad
    w = torch.ones(3, requires_grad=True)

    def writes(x):
        w.mul_(2)
        return (x * w).sum()

    with pytest.raises(RuntimeError, match="wrote in place into a captured Tensor"):
        torch.func.grad(writes)(torch.ones(3))
    assert w.tolist() == [1.0, 1.0, 1.0]


def test_outer_autograd_reaches_views_arguments_also_captured_and_modules_passed_in():
    # expected values recorded with PyTorch 2.13. A captured view (a tied decoder's weight.t()) and a tensor
    # both passed and captured lost their share of the gradient; a module passed as an argument was not
    # searched for parameters; result dicts came back with their keys sorted
    X = torch.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, 2.0]])
    enc = nn.Linear(3, 2, bias=False)
    nn.init.constant_(enc.weight, 0.5)
    b = torch.zeros(3, requires_grad=True)
    wt = enc.weight.t()
    torch.func.vmap(lambda x: wt @ enc(x) + b)(X).pow(2).sum().backward()
    assert enc.weight.grad.tolist() == [[47.25, 25.875, 41.625]] * 2
    W = torch.ones(2, 3, requires_grad=True)
    torch.func.vmap(lambda x, w: w @ x + W.sum(), in_dims=(0, None))(X, W).sum().backward()
    assert W.grad.tolist() == [[7.5, 4.0, 8.0]] * 2
    m = nn.Linear(3, 1)
    assert torch.func.vmap(lambda mod, x: mod(x), in_dims=(None, 0))(m, X).requires_grad
    g = torch.func.grad(lambda p: torch.func.functional_call(m, p, (X,)).pow(2).sum())(dict(m.named_parameters()))
    assert list(g) == ["weight", "bias"] and g["weight"].requires_grad
    g = torch.func.grad(lambda p: torch.func.functional_call(m, p, (X,)).sum())(dict(m.named_parameters()))
    assert list(g) == ["weight", "bias"] and not g["weight"].requires_grad  # (constant in the parameters)


def test_func_api_gaps_as_pytorch():
    # replace_all_batch_norm_modules_ was missing; jvp had no strict; functional_call passed None as an
    # argument and raised for a name the module lacks (PyTorch sets it for the call)
    m = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    assert torch.func.replace_all_batch_norm_modules_(m) is m
    bn = m[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    out = torch.func.vmap(m)(torch.randn(4, 2, 3))  # batch statistics per vmapped sample: no captured writes
    assert out.shape == (4, 2, 3)
    x0 = torch.tensor([0.5, -1.0, 2.0])
    assert torch.func.jvp(lambda x: x * 2, (x0,), (x0,), strict=False)[1].tolist() == [1.0, -2.0, 4.0]
    with pytest.raises(RuntimeError, match="independent of the inputs. This is not allowed with strict=True"):
        torch.func.jvp(lambda x: torch.ones(3), (x0,), (x0,), strict=True)

    class NoArg(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))

        def forward(self):
            return self.w * 2

    assert torch.func.functional_call(NoArg(), {"w": torch.zeros(2)}, None).tolist() == [0.0, 0.0]
    lin = nn.Linear(3, 1)
    assert torch.func.functional_call(lin, {"foo": torch.zeros(1)}, (x0,)).shape == (1,)
    assert not hasattr(lin, "foo")


def test_complex_gradients_follow_pytorchs_convention():
    # the core's are JAX's (the conjugates): grad, vjp and outer autograd through vmap gave conj of PyTorch's;
    # PyTorch's jacobians refuse complex inputs. Expected values recorded with PyTorch 2.13
    z0 = torch.tensor([1 + 2j, -0.5 + 0.3j])
    np.testing.assert_allclose(torch.func.grad(lambda z: z.abs().sum())(z0).numpy(),
                               [0.4472136 + 0.8944272j, -0.8574929 + 0.5144958j], rtol=1e-6)
    g, v = torch.func.grad_and_value(lambda z: z.abs().sum())(z0)
    np.testing.assert_allclose(g.numpy(), [0.4472136 + 0.8944272j, -0.8574929 + 0.5144958j], rtol=1e-6)
    (ct,) = torch.func.vjp(lambda z: z * (1 + 1j), z0)[1](torch.tensor([1 + 0j, 1j]))
    np.testing.assert_allclose(ct.numpy(), [1 - 1j, 1 + 1j])
    w = torch.tensor([1 + 2j, 0.5 - 1j, 2j], requires_grad=True)
    torch.func.vmap(lambda x: (w * x).abs().sum())(torch.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, 2.0]])).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.5652475 + 3.130495j, 0.8944272 - 1.7888544j, 4j], rtol=1e-6)
    for jac in (torch.func.jacrev, torch.func.jacfwd):
        with pytest.raises(RuntimeError, match="Expected all inputs to be real but received complex tensor at "
                                               "flattened input idx: 0"):
            jac(lambda z: z * z)(z0)


def test_jacfwd_randomness_as_vmaps():
    # it was ignored: random ops drew under "error", and any value was accepted
    x0 = torch.tensor([0.5, -1.0, 2.0])
    with pytest.raises(RuntimeError, match="random operation while in randomness error mode"):
        torch.func.jacfwd(lambda a: a * torch.rand(3))(x0)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        torch.func.jacfwd(lambda a: a * torch.rand(3), randomness="foo")(x0)
    j = torch.func.jacfwd(lambda a: a * torch.rand(3), randomness="same")(x0)
    d = torch.diagonal(j)
    assert torch.equal(j, torch.diag(d)) and bool(((d >= 0) & (d < 1)).all())


def test_requires_grad_inside_a_transform_raises_as_pytorch():
    # autograd.functional inside vmap silently gave zeros (the tape is off there); PyTorch refuses
    X = torch.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, 2.0]])
    for f in (lambda x: x.requires_grad_(), lambda x: torch.autograd.functional.jacobian(torch.sin, x),
              lambda x: torch.autograd.functional.vjp(torch.sin, x, torch.ones(3))[1]):
        with pytest.raises(RuntimeError, match=r"attempting to call Tensor.requires_grad_\(\) \(or perhaps using "
                                               r"torch.autograd.functional.\* APIs\) inside of a function being "
                                               "transformed"):
            torch.func.vmap(f)(X)
    assert X.clone().requires_grad_().requires_grad  # (outside a transform, as ever)


def test_vjp_composes_with_outer_autograd():
    # expected values recorded with PyTorch 2.13: the output and vjp_fn's results did not require grad
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    out, fn = torch.func.vjp(lambda x: x.sin() * 2, x)
    (gx,) = torch.autograd.grad(fn(torch.ones(3))[0].sum(), x, create_graph=True)  # second order, as PyTorch's
    np.testing.assert_allclose(gx.detach().numpy(), [-0.9588511, 1.682942, -1.8185948], rtol=1e-6)
    (g,) = fn(torch.ones(3))
    (g.sum() + out.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.796314, 2.7635465, -2.6508884], rtol=1e-6)
    v = torch.ones(3, requires_grad=True)
    (g2,) = torch.func.vjp(lambda x: x.sin() * 2, torch.tensor([0.5, -1.0, 2.0]))[1](v)
    g2.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [1.7551651, 1.0806047, -0.8322937], rtol=1e-6)
    out, fn, aux = torch.func.vjp(lambda x: (x.exp(), x.sum()), x, has_aux=True)
    assert out.requires_grad and aux.requires_grad and fn(torch.ones(3))[0].requires_grad
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        fn(torch.ones(2))


def test_higher_order_autograd_through_transform_results():
    # create_graph through a transform's result raised: a gradient penalty on vmap(model) (WGAN-GP), the
    # second and third derivative of func.grad's result. Expected values recorded with PyTorch 2.13
    m = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    with torch.no_grad():
        m[0].weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        m[0].bias.copy_(torch.tensor([0.05, -0.05]))
    X = torch.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, 2.0]], requires_grad=True)
    (g,) = torch.autograd.grad(torch.func.vmap(m)(X).sum(), X, create_graph=True)
    ((g.norm(dim=1) - 1) ** 2).mean().backward()
    np.testing.assert_allclose(m[0].weight.grad.numpy(), [[-0.67878032, -0.27843887, 0.12964319],
                                                          [0.36637959, 0.11154123, 0.58558083]], rtol=1e-5)
    np.testing.assert_allclose(m[0].bias.grad.numpy(), [0.07686947, 0.22593112], rtol=1e-5)
    np.testing.assert_allclose(X.grad.numpy(), [[0.00535569, -0.03869852, 0.0548185],
                                                [0.09270371, 0.13629019, -0.16731633]], rtol=1e-5)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    gw = torch.func.grad(lambda p: (p.sin() * p).sum())(w)
    (h,) = torch.autograd.grad(gw.sum(), w, create_graph=True)
    (h2,) = torch.autograd.grad(h.sum(), w)
    np.testing.assert_allclose(h.detach().numpy(), [1.5154524, 0.23913372, -2.6508884], rtol=1e-5)
    np.testing.assert_allclose(h2.numpy(), [-1.8770679, 3.0647151, -1.8955985], rtol=1e-5)


def test_bernoulli_with_traced_probabilities():
    # the probabilities were read through numpy: vmap(randomness='different'), grad and torch.compile raised
    P = torch.full((200, 3), 0.5)
    out = torch.func.vmap(torch.bernoulli, randomness="different")(P)
    assert out.shape == (200, 3) and set(out.unique().tolist()) <= {0.0, 1.0} and 0.3 < float(out.mean()) < 0.7
    g = torch.func.grad(lambda x: (torch.bernoulli(torch.sigmoid(x)) * x).sum())(torch.zeros(50))
    assert set(g.unique().tolist()) <= {0.0, 1.0}
    cf = torch.compile(lambda p: torch.bernoulli(p))
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a, b = cf(torch.full((1000,), 0.25)), cf(torch.full((1000,), 0.25))
    assert not [c for c in caught if "torch.compile" in str(c.message)]
    assert not torch.equal(a, b) and 0.15 < float(a.mean()) < 0.35
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
        torch.bernoulli(torch.full((3,), 1.5))


def test_multinomial_with_traced_weights():
    # the weights were read through numpy: vmap(randomness='different') and torch.compile (LM sampling) raised
    P = torch.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    for replacement, n in ((False, 1), (False, 2), (True, 4)):
        out = torch.func.vmap(lambda p: torch.multinomial(p, n, replacement=replacement), randomness="different")(P)
        assert out.shape == (2, n) and out.dtype == torch.int64 and 2 not in out[1].tolist()
        if not replacement:
            assert all(len(set(row)) == n for row in out.tolist())  # (distinct without replacement)
    cf = torch.compile(lambda p: torch.multinomial(p, 1))
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draws = [cf(torch.tensor([0.2, 0.8])).item() for _ in range(400)]
    assert not [c for c in caught if "torch.compile" in str(c.message)] and 0.7 < np.mean(draws) < 0.88
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        torch.func.vmap(lambda p: torch.multinomial(p, 4), randomness="different")(P)


def test_normal_with_a_traced_std():
    # its `std >= 0` check read the traced values: vmap and torch.compile raised
    out = torch.func.vmap(lambda s: torch.normal(0.0, s), randomness="different")(torch.full((2, 3), 0.5))
    assert out.shape == (2, 3) and not torch.equal(out[0], out[1])
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(0.0, torch.tensor([-1.0, 1.0]))
