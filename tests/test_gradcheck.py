"""torch.autograd.gradcheck / gradgradcheck: pass on correct ops, fail (GradcheckError or False)
on a wrong backward, torch's input checks and messages, and inputs left untouched."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core
from mindtorch_v2.autograd import Function, GradcheckError, gradcheck, gradgradcheck, once_differentiable


def dbl(*shape, requires_grad=True):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=requires_grad)


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


class WrongExp(Exp):
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 1.1


class FirstOrderOnlyExp(Exp):
    """Right first derivative; the saved output is detached, so the second derivative is lost."""

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y.detach()


# ---------------------------------------------------------------------------
# passing


@pytest.mark.parametrize("name, fn, shapes", [
    ("matmul", torch.matmul, [(3, 4), (4, 2)]),
    ("tanh", torch.tanh, [(2, 3)]),
    ("softmax", lambda x: torch.softmax(x, 1), [(2, 4)]),
    ("log_softmax", lambda x: torch.log_softmax(x, 0), [(3, 2)]),
    ("mul_broadcast", lambda a, b: a * b, [(2, 3), (3,)]),
    ("sum_dim", lambda x: x.sum(1), [(3, 4)]),
    ("mean_var", lambda x: x.mean(0) + x.var(0), [(4, 2)]),
    ("sigmoid_pow", lambda x: torch.sigmoid(x) ** 3, [(5,)]),
    ("conv2d", lambda x, w: core.conv(x, w, padding=1), [(1, 2, 4, 4), (3, 2, 3, 3)]),
    ("transpose_reshape", lambda x: x.t().reshape(-1) * 2, [(2, 3)]),
])
def test_gradcheck_passes_on_correct_ops(name, fn, shapes):
    inputs = tuple(dbl(*s) for s in shapes)
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name, fn, shapes", [
    ("matmul", torch.matmul, [(2, 3), (3, 2)]),
    ("tanh", torch.tanh, [(2, 3)]),
    ("softmax", lambda x: torch.softmax(x, -1), [(2, 3)]),
    ("exp_function", Exp.apply, [(4,)]),
    ("mul_sigmoid", lambda a, b: torch.sigmoid(a * b), [(3,), (3,)]),
])
def test_gradgradcheck_passes_on_correct_ops(name, fn, shapes):
    inputs = tuple(dbl(*s) for s in shapes)
    assert gradgradcheck(fn, inputs)


def test_gradcheck_passes_on_a_correct_custom_function_with_multiple_outputs_and_inputs():
    class MulAdd(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            return g1 * b + g2, g1 * a + g2

    assert gradcheck(MulAdd.apply, (dbl(3), dbl(3)))
    assert gradgradcheck(MulAdd.apply, (dbl(3), dbl(3)))


def test_non_tensor_and_non_differentiable_inputs_are_held_fixed():
    x = dbl(3)
    c = dbl(3, requires_grad=False)
    assert gradcheck(lambda a, k, b: a * k + b.exp() * a, (x, 2.5, c))


def test_gradcheck_with_the_same_tensor_passed_twice():
    x = dbl(3)
    assert gradcheck(lambda a, b: a * b, (x, x))


def test_gradcheck_on_a_non_contiguous_view_input():
    base = dbl(3, 4, requires_grad=False)
    view = base.t().detach().requires_grad_()
    assert not view.is_contiguous()
    assert gradcheck(lambda v: v.exp() * 2, (view,))


def test_gradcheck_leaves_inputs_and_their_versions_untouched():
    x = dbl(2, 3)
    before = np.asarray(x.detach()).copy()
    version = x._version
    assert gradcheck(torch.tanh, (x,))
    assert np.array_equal(np.asarray(x.detach()), before)
    assert x._version == version


def test_function_with_materialize_grads_off_passes_the_undefined_grad_check():
    class Lazy(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x.exp()

        @staticmethod
        def backward(ctx, g1, g2):
            out = None
            if g1 is not None:
                out = g1 * 2
            if g2 is not None:
                out = g2 * torch.exp(ctx.saved_x) if out is None else out + g2 * torch.exp(ctx.saved_x)
            return out

        @classmethod
        def run(cls, x):
            y1, y2 = cls.apply(x)
            y1.grad_fn.saved_x = x.detach()
            return y1, y2

    assert gradcheck(Lazy.run, (dbl(3),))


def test_outputs_without_gradient_must_have_zero_numerical_jacobian():
    assert gradcheck(lambda x: (x > 0).to(x.dtype), (dbl(3),))  # piecewise constant: fine
    x = dbl(3)
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * 2, (x,))


def test_gradgradcheck_with_explicit_and_non_contiguous_grad_outputs():
    x = dbl(2, 3)
    v = dbl(2, 3)
    assert gradgradcheck(torch.tanh, (x,), (v,))
    assert gradgradcheck(lambda a: a.exp() * a, (x,), gen_non_contig_grad_outputs=True)


# ---------------------------------------------------------------------------
# failing


def test_wrong_backward_raises_gradcheck_error_with_both_jacobians():
    x = dbl(2, 3)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0") as info:
        gradcheck(WrongExp.apply, (x,))
    msg = str(info.value)
    assert "numerical:tensor(" in msg and "analytical:tensor(" in msg
    assert isinstance(info.value, RuntimeError)


def test_wrong_backward_returns_false_without_raise_exception():
    assert gradcheck(WrongExp.apply, (dbl(3),), raise_exception=False) is False


def test_mismatch_names_the_output_and_input_indices():
    class HalfWrong(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            return g1 * b + g2, g1 * a + 2 * g2  # d(a + b)/db is wrong

    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 1 with respect to input 1"):
        gradcheck(HalfWrong.apply, (dbl(3), dbl(3)))


def test_backward_not_multiplied_by_grad_output():
    class SumIgnoringGrad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return torch.ones(*ctx.shape, dtype=torch.float64)

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(SumIgnoringGrad.apply, (dbl(3),))


def test_gradgradcheck_fails_when_the_second_derivative_is_wrong():
    x = dbl(4)
    assert gradcheck(FirstOrderOnlyExp.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input"):
        gradgradcheck(FirstOrderOnlyExp.apply, (x,))
    assert gradgradcheck(FirstOrderOnlyExp.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_through_once_differentiable_raises():
    class OnceExp(Exp):
        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    with pytest.raises(RuntimeError, match="trying to differentiate twice"):
        gradgradcheck(OnceExp.apply, (dbl(3),))


def test_errors_other_than_gradcheck_error_propagate_with_raise_exception_false():
    class WrongCount(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        gradcheck(WrongCount.apply, (dbl(3), dbl(3)), raise_exception=False)


# ---------------------------------------------------------------------------
# input checks


def test_float32_input_warns_like_torch():
    x = torch.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point"):
        gradcheck(torch.tanh, (x,), raise_exception=False)


def test_float64_inputs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradcheck(torch.tanh, (dbl(3),))


def test_no_input_requiring_grad_is_a_value_error():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        gradcheck(torch.tanh, (dbl(3, requires_grad=False),))


def test_expanded_input_with_stride_zero_is_rejected():
    x = dbl(1, 3, requires_grad=False).expand(4, 3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(torch.tanh, (x,))


def test_single_tensor_input_need_not_be_a_tuple():
    assert gradcheck(torch.tanh, dbl(3))
