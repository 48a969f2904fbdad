"""torch.library: user-defined ops (custom_op, register_fake / autograd / vmap / kernel, Library.define/impl,
opcheck, infer_schema, get_ctx) and torch.ops, under eager autograd, meta tensors and torch.func."""
import typing
import warnings
from typing import List, Optional, Sequence

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core

Tensor = torch.Tensor
library = torch.library


def _np(t):
    return np.asarray(t.detach())


# ---------------------------------------------------------------------------
# the classic example: numpy_sin, a kernel computing with numpy


def _make_numpy_sin(name, autograd=True, fake=True):
    @library.custom_op(name, mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:
        return torch.from_numpy(np.asarray(np.sin(x.numpy())))

    if fake:
        @numpy_sin.register_fake
        def _(x):
            return torch.empty_like(x)

    if autograd:
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)

        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()  # torch ops: differentiable again

        numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def test_custom_op_returns_a_callable_customopdef_running_the_numpy_kernel():
    op = _make_numpy_sin("mt_lib::sin_a")
    assert isinstance(op, library.CustomOpDef)
    assert repr(op) == "<CustomOpDef(mt_lib::sin_a)>"
    x = torch.tensor([0.1, 0.5, 1.0])
    np.testing.assert_allclose(_np(op(x)), np.sin([0.1, 0.5, 1.0]), rtol=1e-6)


def test_backward_runs_the_registered_formula():
    op = _make_numpy_sin("mt_lib::sin_b")
    x = torch.tensor([0.1, 0.5, 1.0], dtype=torch.float64, requires_grad=True)
    y = op(x)
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.cos([0.1, 0.5, 1.0]), rtol=1e-12)


def test_backward_without_register_autograd_raises_torchs_error():
    op = _make_numpy_sin("mt_lib::sin_c", autograd=False)
    x = torch.tensor([0.1, 0.5], requires_grad=True)
    y = op(x)
    assert y.grad_fn is not None  # recorded, as torch's autograd-not-implemented node
    with pytest.raises(RuntimeError, match="no autograd formula was registered.*register_autograd"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="no autograd formula"):
        torch.func.grad(lambda t: op(t).sum())(torch.tensor([0.5]))


def test_create_graph_gives_the_second_derivative():
    op = _make_numpy_sin("mt_lib::sin_d")
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(op(x), x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.item(), np.cos(0.5))
    g.backward()
    np.testing.assert_allclose(x.grad.item(), -np.sin(0.5), rtol=1e-12)


def test_torch_func_grad_vjp_jvp_and_grad_of_grad():
    op = _make_numpy_sin("mt_lib::sin_e")
    x = torch.tensor([0.1, 0.5, 1.0], dtype=torch.float64)
    np.testing.assert_allclose(_np(torch.func.grad(lambda t: op(t).sum())(x)), np.cos(_np(x)), rtol=1e-12)
    out, pull = torch.func.vjp(op, x)
    ct = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    np.testing.assert_allclose(_np(pull(ct)[0]), np.cos(_np(x)) * _np(ct), rtol=1e-12)
    # forward mode: the transpose of the registered backward (PyTorch gives a zero tangent here)
    _, t = torch.func.jvp(op, (x,), (ct,))
    np.testing.assert_allclose(_np(t), np.cos(_np(x)) * _np(ct), rtol=1e-12)
    gg = torch.func.grad(torch.func.grad(lambda s: op(s)))(torch.tensor(0.5, dtype=torch.float64))
    np.testing.assert_allclose(gg.item(), -np.sin(0.5), rtol=1e-12)


def test_two_input_op_gradients_match_finite_differences():
    @library.custom_op("mt_lib::np_mul_exp", mutates_args=())
    def f(x: Tensor, y: Tensor, k: float) -> Tensor:
        return torch.from_numpy(np.exp(x.numpy()) * y.numpy() * k)

    def setup_context(ctx, inputs, output):
        x, y, k = inputs
        ctx.save_for_backward(y, output)
        ctx.k = k

    def backward(ctx, g):
        y, out = ctx.saved_tensors
        return g * out, g * out / y, None

    f.register_autograd(backward, setup_context=setup_context)
    rng = np.random.default_rng(0)
    xv, yv = rng.normal(size=(2, 3)), rng.uniform(0.5, 2.0, size=(2, 3))
    x = torch.tensor(xv, requires_grad=True)
    y = torch.tensor(yv, requires_grad=True)
    f(x, y, 1.5).sum().backward()
    eps = 1e-6

    def fd(which):
        g = np.zeros_like(which)
        for i in np.ndindex(which.shape):
            which[i] += eps
            hi = np.sum(np.exp(xv) * yv * 1.5)
            which[i] -= 2 * eps
            lo = np.sum(np.exp(xv) * yv * 1.5)
            which[i] += eps
            g[i] = (hi - lo) / (2 * eps)
        return g

    np.testing.assert_allclose(_np(x.grad), fd(xv), rtol=1e-6)
    np.testing.assert_allclose(_np(y.grad), fd(yv), rtol=1e-6)
    assert torch.autograd.gradcheck(lambda a, b: f(a, b, 1.5), (x.detach().requires_grad_(),
                                                                 y.detach().requires_grad_()))


def test_custom_op_inside_a_model_trains():
    op = _make_numpy_sin("mt_lib::sin_model")
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    before = lin.weight.detach().clone()
    loss = op(lin(x)).pow(2).sum()
    loss.backward()
    assert lin.weight.grad is not None and lin.weight.grad.shape == (2, 3)
    opt.step()
    assert not torch.equal(before, lin.weight.detach())


# ---------------------------------------------------------------------------
# meta tensors: the fake


def test_meta_tensors_run_the_fake_and_need_one():
    op = _make_numpy_sin("mt_lib::sin_meta", fake=False)
    m = torch.empty(3, 4, device="meta")
    with pytest.raises(RuntimeError, match="no fake impl registered.*register_fake"):
        op(m)

    @op.register_fake
    def _(x):
        return torch.empty_like(x)

    out = op(m)
    assert out.device.type == "meta" and tuple(out.shape) == (3, 4) and out.dtype == torch.float32


def test_fake_with_a_different_output_shape_and_dtype_on_meta():
    @library.custom_op("mt_lib::rowsum_i", mutates_args=())
    def rowsum(x: Tensor, keep: bool = False) -> Tensor:
        return torch.from_numpy(x.numpy().sum(1, keepdims=keep).astype(np.int64))

    @rowsum.register_fake
    def _(x, keep=False):
        return x.new_empty((x.shape[0], 1) if keep else (x.shape[0],), dtype=torch.int64)

    m = torch.empty(5, 2, device="meta")
    assert tuple(rowsum(m).shape) == (5,) and rowsum(m).dtype == torch.int64
    assert tuple(rowsum(m, keep=True).shape) == (5, 1)
    assert rowsum(torch.ones(2, 3)).tolist() == [3, 3]


def test_get_ctx_dynamic_size_is_not_representable_on_meta():
    @library.custom_op("mt_lib::nonzero", mutates_args=())
    def nonzero(x: Tensor) -> Tensor:
        return torch.from_numpy(np.stack(np.nonzero(x.numpy()), axis=1))

    @nonzero.register_fake
    def _(x):
        n = library.get_ctx().new_dynamic_size()
        return x.new_empty(n, x.dim(), dtype=torch.int64)

    assert library.get_ctx() is None  # outside a fake
    assert nonzero(torch.tensor([0.0, 1.0, 2.0])).tolist() == [[1], [2]]  # cpu never runs the fake
    with pytest.raises(NotImplementedError, match="data-dependent shape"):
        nonzero(torch.ones(3, device="meta"))


# ---------------------------------------------------------------------------
# vmap


def test_vmap_without_a_rule_loops_per_example_and_warns():
    op = _make_numpy_sin("mt_lib::sin_vm")
    xs = torch.tensor([[0.1, 0.5], [1.0, 2.0], [3.0, -1.0]])
    with pytest.warns(UserWarning, match="batching rule for mt_lib::sin_vm"):
        out = torch.func.vmap(op)(xs)
    np.testing.assert_allclose(_np(out), np.sin(_np(xs)), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out1 = torch.func.vmap(op, in_dims=1)(xs)
    np.testing.assert_allclose(_np(out1), np.sin(_np(xs)).T, rtol=1e-6)


def test_register_vmap_rule_gets_info_and_in_dims():
    @library.custom_op("mt_lib::np_scale", mutates_args=())
    def scale(x: Tensor, k: int) -> Tensor:
        return torch.from_numpy(x.numpy() * k)

    seen = []

    @scale.register_vmap
    def _(info, in_dims, x, k):
        seen.append((info.batch_size, info.randomness, in_dims))
        return scale(x, k), in_dims[0]

    out = torch.func.vmap(scale, in_dims=(1, None))(torch.ones(2, 3), 4)
    assert tuple(out.shape) == (3, 2) and _np(out).tolist() == [[4.0, 4.0]] * 3
    assert seen == [(3, "error", (1, None))]

    scale.register_vmap(lambda info, in_dims, x, k: x * k)
    with pytest.raises(RuntimeError, match="two returns, an output and out_dims"):
        torch.func.vmap(scale, in_dims=(0, None))(torch.ones(2, 3), 4)


def test_vmap_of_grad_gives_per_example_gradients():
    op = _make_numpy_sin("mt_lib::sin_vg")
    xs = torch.tensor([[0.1, 0.5], [1.0, 2.0]], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = torch.func.vmap(torch.func.grad(lambda t: op(t).sum()))(xs)
    np.testing.assert_allclose(_np(g), np.cos(_np(xs)), rtol=1e-12)


# ---------------------------------------------------------------------------
# several inputs and outputs


def test_tensor_list_input_and_output_with_autograd():
    @library.custom_op("mt_lib::scale_all", mutates_args=())
    def scale_all(xs: List[Tensor], n: int) -> List[Tensor]:
        return [x * n for x in xs]

    def setup(ctx, inputs, output):
        ctx.n = inputs[1]

    def backward(ctx, grads):
        return [g * ctx.n for g in grads], None

    scale_all.register_autograd(backward, setup_context=setup)
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    out = scale_all([a, b], 3)
    assert isinstance(out, list) and len(out) == 2
    out[0].sum().backward()
    assert a.grad.tolist() == [3.0, 3.0] and b.grad.tolist() == [0.0, 0.0, 0.0]


def test_tuple_output_and_keyword_only_argument():
    @library.custom_op("mt_lib::split_scale", mutates_args=())
    def split_scale(x: Tensor, *, alpha: float = 1.0) -> typing.Tuple[Tensor, Tensor]:
        return x * alpha, x * (2 * alpha)

    def setup(ctx, inputs, keyword_only_inputs, output):
        assert len(inputs) == 1
        ctx.alpha = keyword_only_inputs["alpha"]

    def backward(ctx, g1, g2):
        return g1 * ctx.alpha + g2 * 2 * ctx.alpha

    split_scale.register_autograd(backward, setup_context=setup)
    x = torch.ones(2, requires_grad=True)
    y1, y2 = split_scale(x, alpha=3.0)
    (y1.sum() + y2.sum()).backward()
    assert x.grad.tolist() == [9.0, 9.0]


def test_optional_tensor_argument():
    @library.custom_op("mt_lib::maybe_add", mutates_args=())
    def maybe_add(x: Tensor, y: Optional[Tensor] = None) -> Tensor:
        return x.clone() if y is None else x + y

    assert maybe_add(torch.ones(2)).tolist() == [1.0, 1.0]
    assert maybe_add(torch.ones(2), torch.ones(2)).tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------
# mutating ops


def test_mutating_op_writes_numpy_results_into_out_and_bumps_its_version():
    @library.custom_op("mt_lib::sin_out", mutates_args={"out"})
    def sin_out(x: Tensor, out: Tensor) -> None:
        np.sin(x.numpy(), out=out.numpy())

    x = torch.tensor([0.1, 0.5, 1.0])
    out = torch.empty(3)
    v = out._version
    assert sin_out(x, out) is None
    np.testing.assert_allclose(_np(out), np.sin(_np(x)), rtol=1e-6)
    assert out._version == v + 1
    base = torch.zeros(2, 3)
    sin_out(torch.ones(3), base[1])  # into a view: the base sees it
    np.testing.assert_allclose(_np(base), [[0, 0, 0], [np.sin(1.0)] * 3], rtol=1e-6)

    @sin_out.register_fake
    def _(x, out):
        return None

    sin_out(torch.empty(3, device="meta"), torch.empty(3, device="meta"))


def test_mutating_op_with_torch_inplace_ops_and_a_result():
    @library.custom_op("mt_lib::add_and_double", mutates_args={"x"})
    def add_and_double(x: Tensor, y: Tensor) -> Tensor:
        x.add_(y)
        return x * 2

    a = torch.zeros(3)
    r = add_and_double(a, torch.ones(3))
    assert a.tolist() == [1.0, 1.0, 1.0] and r.tolist() == [2.0, 2.0, 2.0] and a._version == 1


def test_undeclared_mutation_raises():
    @library.custom_op("mt_lib::sneaky", mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.add_(1)
        return x.clone()

    a = torch.zeros(2)
    with pytest.raises(RuntimeError, match="Argument x is not defined as mutable but was mutated"):
        sneaky(a)
    assert a.tolist() == [0.0, 0.0]


def test_register_autograd_on_a_mutating_op_raises():
    @library.custom_op("mt_lib::fill1_", mutates_args={"x"})
    def fill1_(x: Tensor) -> None:
        x.fill_(1.0)

    with pytest.raises(RuntimeError, match="Cannot register autograd formula for non-functional operator"):
        fill1_.register_autograd(lambda ctx, g: g)


def test_mutating_op_under_vmap_and_grad_of_functional_part():
    @library.custom_op("mt_lib::scale_", mutates_args={"x"})
    def scale_(x: Tensor, k: float) -> None:
        x.mul_(k)

    def f(t):
        u = t.clone()
        scale_(u, 3.0)
        return u

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch.func.vmap(f)(torch.ones(2, 3))
    assert _np(out).tolist() == [[3.0] * 3] * 2


# ---------------------------------------------------------------------------
# errors


def test_output_aliasing_an_input_raises():
    @library.custom_op("mt_lib::ident", mutates_args=())
    def ident(x: Tensor) -> Tensor:
        return x

    with pytest.raises(RuntimeError, match="must not also be an input.*may not alias"):
        ident(torch.ones(2))

    @library.custom_op("mt_lib::view_of", mutates_args=())
    def view_of(x: Tensor) -> Tensor:
        return x.view(2)

    with pytest.raises(RuntimeError, match="may not alias"):
        view_of(torch.ones(2))


def test_custom_op_argument_errors():
    def g(x: Tensor) -> Tensor:
        return x.clone()

    with pytest.raises(TypeError, match="mutates_args"):
        library.custom_op("mt_lib::nomut", g)
    with pytest.raises(ValueError):
        library.custom_op("noname", g, mutates_args=())
    with pytest.raises(ValueError):
        library.custom_op("a::b::c", g, mutates_args=())
    with pytest.raises(RuntimeError, match="expected eof"):
        library.custom_op("bad-ns::g", g, mutates_args=())
    with pytest.raises(ValueError, match="prim is a reserved namespace"):
        library.custom_op("prim::g", g, mutates_args=())
    with pytest.raises(ValueError, match="mutates_args must either be a sequence"):
        library.custom_op("mt_lib::g_str", g, mutates_args="x")
    with pytest.raises(ValueError, match="schema suggests that the op mutates"):
        library.custom_op("mt_lib::g_schema", g, mutates_args=(), schema="(Tensor(a!) x) -> Tensor")
    op = library.custom_op("mt_lib::g_schema_ok", g, mutates_args=(), schema="(Tensor x) -> Tensor")
    assert op(torch.ones(2)).tolist() == [1.0, 1.0]
    cu = library.custom_op("mt_lib::cuda_only", g, mutates_args=(), device_types="cuda")
    with pytest.raises(NotImplementedError, match="Could not run 'mt_lib::cuda_only' with arguments from the 'CPU'"):
        cu(torch.ones(2))


def test_kernel_errors_keep_their_type():
    @library.custom_op("mt_lib::picky", mutates_args=())
    def picky(x: Tensor) -> Tensor:
        raise ValueError("picky: no")

    with pytest.raises(ValueError, match="picky: no"):
        picky(torch.ones(2))


def test_backward_return_checks():
    @library.custom_op("mt_lib::mul_k", mutates_args=())
    def mul_k(x: Tensor, y: Tensor, k: float) -> Tensor:
        return x * y * k

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])

    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3)
    mul_k.register_autograd(lambda ctx, g: (g, g), setup_context=setup)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        mul_k(a, b, 2.0).sum().backward()
    mul_k.register_autograd(lambda ctx, g: (g, g, torch.ones(1)), setup_context=setup)
    with pytest.raises(RuntimeError, match="gradient different than None at position 3"):
        mul_k(a, b, 2.0).sum().backward()
    mul_k.register_autograd(lambda ctx, g: (torch.ones(2), None, None), setup_context=setup)
    with pytest.raises(RuntimeError, match=r"invalid gradient at index 0 - got \[2\] but expected shape compatible "
                                           r"with \[3\]"):
        mul_k(a, b, 2.0).sum().backward()


# ---------------------------------------------------------------------------
# infer_schema


def test_infer_schema_strings():
    def f(x: Tensor, y: Optional[Tensor], zs: Sequence[Tensor], n: int, a: float, b: bool, s: str,
          d: torch.dtype, dev: torch.device, li: List[int], o: Optional[int] = None, e: float = 2.0, *,
          kw: int = 3) -> Tensor: ...
    assert library.infer_schema(f, mutates_args=()) == (
        "(Tensor x, Tensor? y, Tensor[] zs, SymInt n, float a, bool b, str s, ScalarType d, Device dev, "
        "SymInt[] li, SymInt? o=None, float e=2.0, *, SymInt kw=3) -> Tensor")

    def g(x: Tensor, out: Tensor) -> None: ...
    assert library.infer_schema(g, mutates_args={"out"}) == "(Tensor x, Tensor(a1!) out) -> ()"
    assert library.infer_schema(g, mutates_args="unknown") == "(Tensor(a0!) x, Tensor(a1!) out) -> ()"
    assert library.infer_schema(g, op_name="foo", mutates_args={"out"}) == "foo(Tensor x, Tensor(a1!) out) -> ()"

    def h(x: Tensor) -> typing.Tuple[Tensor, Tensor]: ...
    assert library.infer_schema(h, mutates_args=()) == "(Tensor x) -> (Tensor, Tensor)"

    def k(x: Tensor) -> List[Tensor]: ...
    assert library.infer_schema(k, mutates_args=()) == "(Tensor x) -> Tensor[]"

    def s(x: "Tensor", m: typing.Union[int, float, bool], d: torch.dtype = torch.float32) -> "Tensor": ...
    assert library.infer_schema(s, mutates_args=()) == "(Tensor x, Scalar m, ScalarType d=float32) -> Tensor"


def test_infer_schema_errors():
    def no_ann(x) -> Tensor: ...

    def no_ret(x: Tensor): ...

    def varargs(x: Tensor, *args) -> Tensor: ...

    def bad_type(x: np.ndarray) -> Tensor: ...

    def tuple_in(x: Tensor, n: typing.Tuple[int, ...]) -> Tensor: ...

    def opt_ret(x: Tensor) -> Optional[Tensor]: ...

    def int_mut(x: int) -> Tensor: ...

    def g(x: Tensor, out: Tensor) -> None: ...

    cases = [(no_ann, (), "Parameter x must have a type annotation"),
             (no_ret, (), "No return type annotation was provided"),
             (varargs, (), "do not support positional-only args, varargs, or varkwargs"),
             (bad_type, (), "Parameter x has unsupported type"),
             (tuple_in, (), "We do not support Tuple inputs in schema"),
             (opt_ret, (), "Return has unsupported type"),
             (int_mut, ("x",), "only Tensors or collections of Tensors can be mutated"),
             (g, ("nope",), "in mutates_args were not found in the custom op's signature")]
    for fn, mut, words in cases:
        with pytest.raises(ValueError, match=words):
            library.infer_schema(fn, mutates_args=mut)


# ---------------------------------------------------------------------------
# torch.ops and the Library API


def test_torch_ops_resolves_registered_ops():
    op = _make_numpy_sin("mt_ops::sin")
    packet = torch.ops.mt_ops.sin
    assert repr(packet) == "mt_ops.sin" and repr(packet.default) == "mt_ops.sin.default"
    x = torch.tensor([0.5])
    np.testing.assert_allclose(_np(packet(x)), np.sin([0.5]), rtol=1e-6)
    np.testing.assert_allclose(_np(packet.default(x)), np.sin([0.5]), rtol=1e-6)
    assert op._opoverload == packet.default
    assert str(packet.default._schema) == "mt_ops::sin(Tensor x) -> Tensor"
    with pytest.raises(AttributeError, match="'_OpNamespace' 'mt_ops' object has no attribute 'nope'"):
        torch.ops.mt_ops.nope
    with pytest.raises(AttributeError, match="has no overload name"):
        packet.nope


def test_library_define_and_impl():
    lib = library.Library("mt_libdef", "DEF")
    try:
        assert lib.define("foo(Tensor x, int n=2) -> Tensor") == "foo"
        lib.impl("foo", lambda x, n=2: x * n, "CPU")
        assert torch.ops.mt_libdef.foo(torch.ones(2)).tolist() == [2.0, 2.0]
        assert torch.ops.mt_libdef.foo.default(torch.ones(2), 3).tolist() == [3.0, 3.0]
        with pytest.raises(NotImplementedError, match="no fake impl or Meta kernel"):
            torch.ops.mt_libdef.foo(torch.ones(2, device="meta"))
        lib.impl("foo", lambda x, n=2: torch.empty_like(x), "Meta")
        assert tuple(torch.ops.mt_libdef.foo(torch.ones(4, device="meta")).shape) == (4,)
        with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
            lib.define("foo(Tensor x, int n=2) -> Tensor")
        with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY can be used"):
            library.Library("mt_libdef", "DEF")
        # a composite implementation: autograd comes from the ops it calls
        lib.define("cube(Tensor x) -> Tensor")
        lib.impl("cube", lambda x: x * x * x, "CompositeImplicitAutograd")
        x = torch.tensor([2.0], requires_grad=True)
        torch.ops.mt_libdef.cube(x).sum().backward()
        assert x.grad.tolist() == [12.0]
    finally:
        lib._destroy()
    with pytest.raises(AttributeError):
        torch.ops.mt_libdef.foo
    with pytest.raises(ValueError, match="Unsupported kind"):
        library.Library("mt_libdef", "BAD")


def test_module_level_define_impl_register_functions():
    library.define("mt_mod::bar", "(Tensor x) -> Tensor")

    @library.impl("mt_mod::bar", "cpu")
    def _(x):
        return x + 1

    @library.register_fake("mt_mod::bar")
    def _(x):
        return torch.empty_like(x)

    library.register_autograd("mt_mod::bar", lambda ctx, g: g * 1.0)
    assert torch.ops.mt_mod.bar(torch.zeros(2)).tolist() == [1.0, 1.0]
    assert tuple(torch.ops.mt_mod.bar(torch.zeros(5, device="meta")).shape) == (5,)
    x = torch.zeros(2, requires_grad=True)
    torch.ops.mt_mod.bar(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]

    @library.register_kernel("mt_mod::bar", "cpu")
    def _(x):
        return x + 2

    assert torch.ops.mt_mod.bar(torch.zeros(1)).tolist() == [2.0]
    library.register_vmap("mt_mod::bar", lambda info, in_dims, x: (torch.ops.mt_mod.bar(x), in_dims[0]))
    assert _np(torch.func.vmap(torch.ops.mt_mod.bar)(torch.zeros(2, 2))).tolist() == [[2.0, 2.0]] * 2
    with pytest.raises(RuntimeError, match="does not exist"):
        library.register_fake("mt_mod::missing", lambda x: x)


def test_set_kernel_enabled_switches_the_kernel_off():
    op = _make_numpy_sin("mt_lib::sin_toggle")
    with op.set_kernel_enabled("cpu", False):
        with pytest.raises(NotImplementedError, match="Could not run"):
            op(torch.ones(1))
    assert op(torch.zeros(1)).tolist() == [0.0]


# ---------------------------------------------------------------------------
# opcheck


def test_opcheck_passes_a_correct_op():
    op = _make_numpy_sin("mt_lib::sin_check")
    res = library.opcheck(op, (torch.randn(3, requires_grad=True),))
    assert res == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                   "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}
    assert library.opcheck(op, (torch.randn(3),), test_utils="test_schema") == {"test_schema": "SUCCESS"}


def test_opcheck_reports_bad_registrations():
    @library.custom_op("mt_lib::badfake", mutates_args=())
    def badfake(x: Tensor) -> Tensor:
        return x.clone()

    with pytest.raises(library.OpCheckError, match="test_faketensor failed with There was no fake impl"):
        library.opcheck(badfake, (torch.randn(3),))

    @badfake.register_fake
    def _(x):
        return x.new_empty(4)

    with pytest.raises(library.OpCheckError, match="test_faketensor failed.*Shapes"):
        library.opcheck(badfake, (torch.randn(3),))
    res = library.opcheck(badfake, (torch.randn(3),), raise_exception=False)
    assert res["test_schema"] == "SUCCESS" and isinstance(res["test_faketensor"], Exception)

    @library.custom_op("mt_lib::sneaky_check", mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.add_(1)
        return x.clone()

    with pytest.raises(library.OpCheckError, match="test_schema failed.*Argument x is not defined as mutable"):
        library.opcheck(sneaky, (torch.randn(3),), test_utils=("test_schema",))
    noauto = _make_numpy_sin("mt_lib::sin_noauto", autograd=False)
    with pytest.raises(library.OpCheckError, match="test_aot_dispatch_dynamic failed.*no autograd formula"):
        library.opcheck(noauto, (torch.randn(3, requires_grad=True),))
    with pytest.raises(ValueError, match="expected test_utils to be subset of"):
        library.opcheck(badfake, (torch.randn(3),), test_utils=("test_schema", "bogus"))


def test_custom_op_primitives_stay_out_of_the_core_registry():
    _make_numpy_sin("mt_lib::sin_registry")
    assert not any("::" in name for name in core.primitives())
    _make_numpy_sin("mt_lib::sin_registry")  # redefining an op is allowed, as in torch
    assert torch.ops.mt_lib.sin_registry(torch.zeros(1)).tolist() == [0.0]
