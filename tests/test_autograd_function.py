"""torch.autograd.Function: custom forward/backward, ctx (saved tensors with version checks,
needs_input_grad, non-differentiable and dirty outputs, materialize_grads), wrong gradient counts,
double backward through a backward written in tensor ops, and once_differentiable."""
import gc

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2.autograd import Function, FunctionCtx, once_differentiable


def dbl(*shape, requires_grad=True):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=requires_grad)


def close(a, b):
    return np.allclose(np.asarray(a.detach()), np.asarray(b.detach() if isinstance(b, torch.Tensor) else b))


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Mul(Function):
    seen = None

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        Mul.seen = ctx.needs_input_grad
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        return ga, gb


class Cube(Function):
    """x ** 3 with a backward in differentiable tensor ops (so double backward works)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


# ---------------------------------------------------------------------------
# basics


def test_exp_saving_its_output_gives_the_right_gradient_and_a_named_grad_fn():
    x = dbl(4)
    y = Exp.apply(x)
    assert close(y, x.exp())
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "ExpBackward"
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert "grad_fn=<ExpBackward>" in repr(y)
    assert y.grad_fn.next_functions[0][0] is x._edge()[0]
    (y * 2).sum().backward()
    assert close(x.grad, 2 * x.exp())


def test_function_inside_a_bigger_graph():
    x = dbl(3)
    w = dbl(3)
    z = (Exp.apply(x * w) + x).sum() * 3
    z.backward()
    e = (x * w).exp()
    assert close(x.grad, 3 * (e * w + 1))
    assert close(w.grad, 3 * e * x)


def test_needs_input_grad_follows_requires_grad():
    a = dbl(3)
    b = dbl(3, requires_grad=False)
    out = Mul.apply(a, b)
    assert out.grad_fn.needs_input_grad == (True, False)
    out.sum().backward()
    assert Mul.seen == (True, False)
    assert close(a.grad, b)
    assert b.grad is None
    # next_functions has one edge per Tensor input; the one that needs no gradient is empty
    assert out.grad_fn.next_functions[1] == (None, 0)


def test_no_node_when_no_input_requires_grad_or_under_no_grad():
    y = Exp.apply(dbl(3, requires_grad=False))
    assert not y.requires_grad and y.grad_fn is None
    with torch.no_grad():
        y = Exp.apply(dbl(3))
    assert not y.requires_grad and y.grad_fn is None


def test_forward_runs_without_recording():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(torch.is_grad_enabled())
            inner = x * 2
            seen.append(inner.requires_grad)
            return inner

        @staticmethod
        def backward(ctx, g):
            return g * 2

    out = Probe.apply(dbl(2))
    assert seen == [False, False]
    assert out.grad_fn.name() == "ProbeBackward"


def test_arbitrary_ctx_attributes_reach_backward_and_grad_fn():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.seq = "not the engine's"  # user names never clash with node fields
            ctx.hooks = []
            return x * k

        @staticmethod
        def backward(ctx, g):
            assert ctx.seq == "not the engine's" and ctx.hooks == []
            return g * ctx.k, None

    x = dbl(3)
    y = Scale.apply(x, 2.5)
    assert y.grad_fn.k == 2.5
    assert isinstance(y.grad_fn.ctx, FunctionCtx)
    y.sum().backward()
    assert close(x.grad, np.full(3, 2.5))


# ---------------------------------------------------------------------------
# non-tensor arguments and gradient counts


class ScaleBy(Function):
    @staticmethod
    def forward(ctx, x, k, name="scale"):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_non_tensor_args_have_needs_input_grad_false_and_take_none():
    x = dbl(3)
    y = ScaleBy.apply(x, 3.0)
    assert y.grad_fn.needs_input_grad == (True, False)
    assert len(y.grad_fn.next_functions) == 1
    y.sum().backward()
    assert close(x.grad, np.full(3, 3.0))


def test_keyword_arguments_are_bound_to_forward_positions():
    x = dbl(3)
    y = ScaleBy.apply(x, k=2.0)
    y.sum().backward()
    assert close(x.grad, np.full(3, 2.0))


def test_a_gradient_for_a_non_tensor_input_is_an_error():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    y = Bad.apply(dbl(3), 2.0)
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2, but the "
                                           "corresponding forward input was not a Variable"):
        y.sum().backward()


def test_wrong_number_of_gradients_raises():
    class Two(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g

    y = Two.apply(dbl(3), dbl(3))
    with pytest.raises(RuntimeError, match=r"function TwoBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        y.sum().backward()


def test_extra_trailing_none_gradients_are_allowed():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = dbl(3)
    Extra.apply(x).sum().backward()
    assert close(x.grad, np.full(3, 2.0))


def test_gradient_that_broadcasts_is_summed_and_an_incompatible_one_raises():
    class Wide(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g * torch.ones(2, 3, dtype=torch.float64)

    x = dbl(3)
    Wide.apply(x).backward()
    assert close(x.grad, np.full(3, 2.0))

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return torch.ones(4, dtype=torch.float64)

    with pytest.raises(RuntimeError, match=r"Function WrongBackward returned an invalid gradient at index 0 - got "
                                           r"\[4\] but expected shape compatible with \[3\]"):
        Wrong.apply(dbl(3)).backward()


def test_gradient_is_cast_to_the_input_dtype():
    class Half(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.to(torch.float32)

    x = dbl(3)
    Half.apply(x).sum().backward()
    assert x.grad.dtype == torch.float64


# ---------------------------------------------------------------------------
# multiple outputs, materialize_grads, non-differentiable and dirty outputs


class SplitScale(Function):
    received = None

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        SplitScale.received = (g1, g2)
        return g1 * 2 + g2 * 3


def test_multiple_outputs_each_carry_the_node_with_their_output_nr():
    x = dbl(3)
    a, b = SplitScale.apply(x)
    assert a.grad_fn is b.grad_fn
    assert (a.output_nr, b.output_nr) == (0, 1)
    (a + b).sum().backward()
    assert close(x.grad, np.full(3, 5.0))


def test_unused_output_gradient_is_materialized_as_zeros():
    x = dbl(3)
    a, _ = SplitScale.apply(x)
    a.sum().backward()
    g1, g2 = SplitScale.received
    assert close(g2, np.zeros(3))
    assert close(x.grad, np.full(3, 2.0))


def test_set_materialize_grads_false_passes_none():
    received = []

    class Lazy(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            received.append((g1, g2))
            out = torch.zeros_like(g1 if g1 is not None else g2)
            if g1 is not None:
                out = out + g1 * 2
            if g2 is not None:
                out = out + g2 * 3
            return out

    x = dbl(3)
    _, b = Lazy.apply(x)
    b.sum().backward()
    assert received[0][0] is None
    assert close(x.grad, np.full(3, 3.0))


def test_mark_non_differentiable_output_does_not_require_grad():
    received = []

    class ValueAndMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            ctx.save_for_backward(mask)
            return x * mask, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            received.append(g_mask)
            (mask,) = ctx.saved_tensors
            return g * mask

    x = torch.tensor([-1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y, mask = ValueAndMask.apply(x)
    assert y.requires_grad and not mask.requires_grad and mask.grad_fn is None
    y.sum().backward()
    assert close(received[0], np.zeros(3))
    assert close(x.grad, [0.0, 1.0, 1.0])


def test_integer_outputs_are_not_differentiable():
    class ArgAndMax(Function):
        @staticmethod
        def forward(ctx, x):
            i = x.argmax()
            ctx.i = int(i)
            return x.max(), i

        @staticmethod
        def backward(ctx, g, gi):
            out = torch.zeros(3, dtype=torch.float64)
            out[ctx.i] = g
            return out

    x = torch.tensor([1.0, 5.0, 2.0], dtype=torch.float64, requires_grad=True)
    m, i = ArgAndMax.apply(x)
    assert m.requires_grad and not i.requires_grad
    m.backward()
    assert close(x.grad, [0.0, 1.0, 0.0])


def test_input_returned_unchanged_is_an_alias_with_the_new_history():
    class GradReverse(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return -g

    x = dbl(3)
    y = GradReverse.apply(x)
    assert y is not x
    assert x.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "GradReverseBackward"
    assert close(y, x)
    (y * 2).sum().backward()
    assert close(x.grad, np.full(3, -2.0))


def test_mark_dirty_rebases_the_input_history():
    class MulInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    leaf = dbl(3)
    a = leaf * 1  # a non-leaf, so an in-place change is allowed
    out = MulInplace.apply(a)
    assert out is a
    assert a.grad_fn.name() == "MulInplaceBackward"
    assert a._version == 1
    (a * 3).sum().backward()
    assert close(leaf.grad, np.full(3, 6.0))

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place "
                                           "operation"):
        MulInplace.apply(dbl(3))


def test_mark_dirty_on_a_view_rewrites_the_base_history():
    class AddOneInplace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5  # deliberately not 1, to see it flow into the base

    leaf = dbl(2, 3)
    base = leaf * 1
    row = base[0]
    AddOneInplace.apply(row)
    assert close(base[0], leaf[0] + 1)
    base.sum().backward()
    expect = np.ones((2, 3))
    expect[0] = 5
    assert close(leaf.grad, expect)


def test_dirty_tensor_not_returned_is_an_error():
    class Forgot(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not returned"):
        Forgot.apply(dbl(3) * 1)


# ---------------------------------------------------------------------------
# saved tensors: version checks and freeing


def test_modifying_a_saved_output_in_place_raises_the_version_error():
    x = dbl(3)
    y = Exp.apply(x)
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been "
                                           r"modified by an inplace operation: \[torch.DoubleTensor \[3\]\], which "
                                           r"is output 0 of ExpBackward, is at version 1; expected version 0"):
        y.sum().backward()


def test_modifying_a_saved_input_in_place_raises_the_version_error():
    a = dbl(3)
    b = dbl(3, requires_grad=False)
    out = Mul.apply(a, b)
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.DoubleTensor \[3\]\] is at "
                                           r"version 1; expected version 0 instead"):
        out.sum().backward()


def test_saved_tensors_are_freed_after_backward_unless_retain_graph():
    x = dbl(3)
    y = Exp.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert close(x.grad, 2 * x.exp())
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        Bad.apply(dbl(3))


def test_save_for_backward_accepts_none():
    class MaybeBias(Function):
        @staticmethod
        def forward(ctx, x, bias):
            ctx.save_for_backward(x, bias)
            return x * 2 if bias is None else x * 2 + bias

        @staticmethod
        def backward(ctx, g):
            x, bias = ctx.saved_tensors
            assert bias is None
            return g * 2, None

    x = dbl(3)
    MaybeBias.apply(x, None).sum().backward()
    assert close(x.grad, np.full(3, 2.0))


def test_a_saved_output_makes_no_reference_cycle():
    import weakref
    x = dbl(3)
    gc.disable()
    try:
        y = Exp.apply(x)
        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None  # freed by refcounting alone, as torch saves outputs weakly
    finally:
        gc.enable()


# ---------------------------------------------------------------------------
# higher order


def test_double_backward_through_a_function_written_with_tensor_ops():
    x = dbl(4)
    (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert close(g, 3 * x * x)
    assert g.requires_grad
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert close(gg, 6 * x)


def test_double_backward_through_a_saved_output_revisits_the_node():
    x = dbl(4)
    (g,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert close(gg, x.exp())


def test_once_differentiable_backward_raises_when_differentiated_again():
    class OnceExp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            assert not torch.is_grad_enabled()
            return g * y

    x = dbl(3)
    OnceExp.apply(x).sum().backward()
    assert close(x.grad, x.exp())
    v = dbl(3)
    (g,) = torch.autograd.grad(OnceExp.apply(x), x, grad_outputs=v, create_graph=True)
    assert close(g, v * x.exp())
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        torch.autograd.grad(g.sum(), v)


# ---------------------------------------------------------------------------
# API variants


def test_setup_context_style_function():
    class Sin(Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos()

    x = dbl(3)
    Sin.apply(x).sum().backward()
    assert close(x.grad, x.cos())


def test_vjp_may_be_defined_instead_of_backward_but_not_both():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = dbl(3)
    Twice.apply(x).sum().backward()
    assert close(x.grad, np.full(3, 2.0))

    class Both(Twice):
        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(dbl(3)).sum().backward()


def test_missing_backward_and_legacy_call_raise():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method"):
        NoBackward.apply(dbl(3)).sum().backward()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        NoBackward()(dbl(3))


def test_hooks_on_function_outputs_and_nodes():
    x = dbl(3)
    y = Exp.apply(x)
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    calls = []
    y.grad_fn.register_hook(lambda gin, gout: calls.append(len(gin)))
    y.sum().backward()
    assert close(y.grad, 10 * np.ones(3))  # torch runs retain_grad's hook after the others
    assert close(x.grad, 10 * x.exp())
    assert calls == [1]


def test_grad_of_function_output_with_autograd_grad_and_inputs():
    a, b = dbl(3), dbl(3)
    out = Mul.apply(a, b)
    ga, gb = torch.autograd.grad(out.sum(), (a, b))
    assert close(ga, b) and close(gb, a)
    assert a.grad is None


def test_exports_match_torch_names():
    from mindtorch_v2.autograd.function import FunctionCtx as Ctx, once_differentiable as od
    assert Ctx is FunctionCtx and od is once_differentiable
    assert torch.autograd.Function is Function
    assert issubclass(torch.autograd.GradcheckError, RuntimeError)
