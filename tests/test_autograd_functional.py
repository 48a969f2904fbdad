"""torch.autograd.functional: vjp / jvp / jacobian / hessian / vhp / hvp against values recorded with
PyTorch 2.13 (float32 inputs below): result structure (Tensor in -> Tensor out, tuple -> tuple, nested
tuples for the Jacobian and Hessian of tuples), zeros for an input the output does not reach, detached
results unless create_graph=True (then a further grad through them matches PyTorch's), strict-mode and
argument errors with PyTorch's messages, vectorize=True and strategy="forward-mode" equal to the loop."""
import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.autograd.functional as F

ATOL = 1e-5


def T(x, requires_grad=False):
    return torch.tensor(x, requires_grad=requires_grad)


def x_():
    return T([0.5, -1.0, 2.0])


def y_():
    return T([[1.0, 2.0], [3.0, -0.5]])


def check(t, expected, requires_grad=False):
    """t is a float32 Tensor holding `expected`, with (or without) a graph."""
    assert isinstance(t, torch.Tensor), type(t)
    assert t.dtype == torch.float32
    assert t.requires_grad == requires_grad
    e = np.asarray(expected, dtype=np.float32)
    assert tuple(t.shape) == e.shape, (tuple(t.shape), e.shape)
    np.testing.assert_allclose(t.detach().numpy(), e, rtol=1e-5, atol=ATOL)


def as_lists(nested):
    """A tuple of tuples of expected values as PyTorch's forward mode nests its results: lists of lists."""
    return [[np.asarray(e) for e in row] for row in nested]


def check_tree(res, expected, kind=tuple):
    """res has expected's nesting of `kind` (tuples, or lists) with Tensors at the leaves."""
    if isinstance(expected, kind):
        assert type(res) is kind and len(res) == len(expected), (type(res), res)
        for r, e in zip(res, expected):
            check_tree(r, e, kind)
    else:
        check(res, expected)


def f_exp(x):
    return x.exp() * x.sum()


def f_two(x, y):
    return x.sin() * y.sum(), (x ** 2).sum() + y.prod()


def f_scalar(x, y):
    return (x ** 3).sum() * y.sum() + (y ** 2).sum()


def f_cubic(x):
    return (x ** 3).sum() * x.prod()


F_EXP_OUT = [2.4730818, 0.5518192, 11.083584]
F_TWO_OUT = ([2.6368406, -4.6280904, 5.0011358], 2.25)
# jacobian of f_two at (x, y): J[output][input]
F_TWO_JAC = (([[4.826704, 0.0, 0.0], [0.0, 2.9716628, 0.0], [0.0, 0.0, -2.2888076]],
              [[[0.47942555, 0.47942555], [0.47942555, 0.47942555]],
               [[-0.84147096, -0.84147096], [-0.84147096, -0.84147096]],
               [[0.9092974, 0.9092974], [0.9092974, 0.9092974]]]),
             ([1.0, -2.0, 4.0], [[-3.0, -1.5], [-1.0, 6.0]]))
F_EXP_JAC = [[4.1218033, 1.6487212, 1.6487212], [0.36787945, 0.91969866, 0.36787945],
             [7.389056, 7.389056, 18.472641]]
# hessian of f_scalar at (x, y): H[input][input]
F_SCALAR_HESS = (([[16.5, 0.0, 0.0], [0.0, -33.0, 0.0], [0.0, 0.0, 66.0]],
                  [[[0.75, 0.75], [0.75, 0.75]], [[3.0, 3.0], [3.0, 3.0]], [[12.0, 12.0], [12.0, 12.0]]]),
                 ([[[0.75, 3.0, 12.0], [0.75, 3.0, 12.0]], [[0.75, 3.0, 12.0], [0.75, 3.0, 12.0]]],
                  [[[[2.0, 0.0], [0.0, 0.0]], [[0.0, 2.0], [0.0, 0.0]]],
                   [[[0.0, 0.0], [2.0, 0.0]], [[0.0, 0.0], [0.0, 2.0]]]]))
F_CUBIC_HESS = [[-6.0, 9.0, -31.5], [9.0, 12.0, 14.0625], [-31.5, 14.0625, -24.0]]


def test_the_module_is_torch_autograd_functional():
    assert torch.autograd.functional is F
    assert torch.autograd.functional.jacobian is F.jacobian
    assert sorted(F.__all__) == ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# ---------------------------------------------------------------------------
# vjp


def test_vjp_tensor_in_tensor_out():
    out, vj = F.vjp(f_exp, x_(), T([1.0, 2.0, -1.0]))
    check(out, F_EXP_OUT)
    check(vj, [-2.5314944, -3.9009378, -16.08816])


def test_vjp_tuple_in_tuple_out():
    out, vj = F.vjp(f_two, (x_(), y_()), (T([1.0, 0.5, 2.0]), T(3.0)))
    check_tree(out, F_TWO_OUT)
    check_tree(vj, ([7.826704, -4.5141687, 7.4223847], [[-7.122715, -2.622715], [-1.1227151, 19.877285]]))


def test_vjp_without_v_for_a_one_element_output():
    out, vj = F.vjp(lambda s: s * s.exp(), T(0.7))
    check(out, 1.4096268)
    check(vj, 3.4233794)


def test_vjp_is_zero_for_an_input_the_output_does_not_use():
    out, vj = F.vjp(lambda x, y: x * 2, (x_(), y_()), T([1.0, 1.0, 1.0]))
    check(out, [1.0, -2.0, 4.0])
    check_tree(vj, ([2.0, 2.0, 2.0], [[0.0, 0.0], [0.0, 0.0]]))


def test_vjp_of_a_constant_output_is_zero():
    out, vj = F.vjp(lambda x: T([1.0, 2.0, 3.0]), x_(), T([1.0, 1.0, 1.0]))
    check(out, [1.0, 2.0, 3.0])
    check(vj, [0.0, 0.0, 0.0])


def test_vjp_differentiates_the_argument_not_the_same_tensor_captured_by_the_function():
    x = x_()
    _, vj = F.vjp(lambda a: a * x, x, T([1.0, 1.0, 1.0]))
    check(vj, [0.5, -1.0, 2.0])  # d(a * x)/da, x held fixed


def test_vjp_keeps_a_float64_output_dtype():
    out, vj = F.vjp(lambda x: x * 2, x_().double(), torch.ones(3))
    assert out.dtype == torch.float64 and vj.dtype == torch.float64
    np.testing.assert_allclose(vj.numpy(), [2.0, 2.0, 2.0])


# ---------------------------------------------------------------------------
# jvp


def test_jvp_tensor_in_tensor_out():
    out, jv = F.jvp(f_exp, x_(), T([1.0, 2.0, -1.0]))
    check(out, F_EXP_OUT)
    check(jv, [5.770524, 1.8393973, 3.6945286])


def test_jvp_tuple_in_tuple_out():
    out, jv = F.jvp(f_two, (x_(), y_()), (T([1.0, 0.5, 2.0]), T([[1.0, 0.0], [2.0, -1.0]])))
    check_tree(out, F_TWO_OUT)
    check_tree(jv, ([5.785555, -0.19711053, -2.7590203], -3.0))


def test_jvp_without_v_for_a_one_element_input():
    out, jv = F.jvp(lambda s: (s * s.exp(), s * 2), T(0.7))
    check_tree(out, (1.4096268, 1.4))
    check_tree(jv, (3.4233794, 2.0))


def test_jvp_is_zero_for_an_output_that_uses_no_input():
    out, jv = F.jvp(lambda x: (x * 2, T([5.0])), x_(), T([1.0, 1.0, 1.0]))
    check_tree(out, ([1.0, -2.0, 4.0], [5.0]))
    check_tree(jv, ([2.0, 2.0, 2.0], [0.0]))


def test_jvp_of_an_integer_v_is_float():
    _, jv = F.jvp(lambda x: x * 2, x_(), torch.tensor([1, 2, 3]))
    check(jv, [2.0, 4.0, 6.0])


# ---------------------------------------------------------------------------
# jacobian


def test_jacobian_tensor_in_tensor_out():
    check(F.jacobian(f_exp, x_()), F_EXP_JAC)


def test_jacobian_of_tuples_is_a_tuple_per_output_of_a_tuple_per_input():
    check_tree(F.jacobian(f_two, (x_(), y_())), F_TWO_JAC)


def test_jacobian_of_tuple_inputs_and_a_tensor_output_is_a_tuple_per_input():
    jac = F.jacobian(lambda x, y: x * y.sum(), (x_(), y_()))
    check_tree(jac, ([[5.5, 0.0, 0.0], [0.0, 5.5, 0.0], [0.0, 0.0, 5.5]],
                     [[[0.5, 0.5], [0.5, 0.5]], [[-1.0, -1.0], [-1.0, -1.0]], [[2.0, 2.0], [2.0, 2.0]]]))


def test_jacobian_of_a_tensor_input_and_tuple_outputs_is_a_tuple_per_output():
    jac = F.jacobian(lambda x: (x * 2, x.sum()), x_())
    check_tree(jac, ([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]], [1.0, 1.0, 1.0]))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_is_zero_for_an_input_the_output_does_not_use(vectorize):
    jac = F.jacobian(lambda x, y: x * 2, (x_(), y_()), vectorize=vectorize)
    check_tree(jac, ([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]], np.zeros((3, 2, 2))))


def test_jacobian_vectorized_equals_the_loop():
    check(F.jacobian(f_exp, x_(), vectorize=True), F_EXP_JAC)
    check_tree(F.jacobian(f_two, (x_(), y_()), vectorize=True), F_TWO_JAC)
    loop = F.jacobian(f_two, (x_(), y_()))
    vec = F.jacobian(f_two, (x_(), y_()), vectorize=True)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(vec[i][j].numpy(), loop[i][j].numpy(), rtol=1e-6, atol=1e-7)


def test_jacobian_forward_mode_equals_reverse_mode_in_pytorchs_list_structure():
    check(F.jacobian(f_exp, x_(), vectorize=True, strategy="forward-mode"), F_EXP_JAC)
    # PyTorch's forward mode builds lists where the reverse mode gives tuples
    check_tree(F.jacobian(f_two, (x_(), y_()), vectorize=True, strategy="forward-mode"),
               as_lists(F_TWO_JAC), kind=list)


# ---------------------------------------------------------------------------
# hessian, vhp, hvp


def test_hessian_of_a_tensor_input():
    check(F.hessian(f_cubic, x_()), F_CUBIC_HESS)


@pytest.mark.parametrize("options", [{}, {"vectorize": True},
                                     {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}])
def test_hessian_of_a_two_input_function_is_a_nested_tuple(options):
    # (PyTorch's forward-over-reverse Hessian also comes back with a grad_fn, though create_graph=False: here it
    # is detached, as every other result without create_graph)
    kind = list if options.get("outer_jacobian_strategy") == "forward-mode" else tuple
    expected = F_SCALAR_HESS if kind is tuple else as_lists(F_SCALAR_HESS)
    check_tree(F.hessian(f_scalar, (x_(), y_()), **options), expected, kind=kind)


def test_hessian_shape_is_the_input_shape_twice():
    check(F.hessian(lambda x: (x ** 3).sum(), T([[2.0]])), [[[[12.0]]]])
    # a one-element output of any shape counts as a scalar
    check(F.hessian(lambda x: (x ** 3).sum().reshape(1, 1), x_()), [[3.0, 0.0, 0.0], [0.0, -6.0, 0.0],
                                                                     [0.0, 0.0, 12.0]])


def test_hessian_is_zero_for_an_input_the_function_does_not_use():
    h = F.hessian(lambda x, y: (x ** 3).sum(), (x_(), y_()))
    check_tree(h, (([[3.0, 0.0, 0.0], [0.0, -6.0, 0.0], [0.0, 0.0, 12.0]], np.zeros((3, 2, 2))),
                   (np.zeros((2, 2, 3)), np.zeros((2, 2, 2, 2)))))


def test_hessian_of_a_linear_function_is_zero():
    check(F.hessian(lambda x: (x * 2).sum(), x_()), np.zeros((3, 3)))


@pytest.mark.parametrize("fn", [F.vhp, F.hvp])
def test_vhp_and_hvp_of_a_tensor_input(fn):
    out, res = fn(f_cubic, x_(), T([1.0, -1.0, 0.5]))
    check(out, -7.125)
    check(res, [-30.75, 4.03125, -57.5625])


@pytest.mark.parametrize("fn", [F.vhp, F.hvp])
def test_vhp_and_hvp_of_tuple_inputs(fn):
    out, res = fn(f_scalar, (x_(), y_()), (T([1.0, -1.0, 0.5]), T([[1.0, 0.0], [2.0, 1.0]])))
    check(out, 53.4375)
    check_tree(res, ([19.5, 45.0, 81.0], [[5.75, 3.75], [7.75, 5.75]]))


@pytest.mark.parametrize("fn", [F.vhp, F.hvp])
def test_vhp_and_hvp_are_zero_for_an_input_the_function_does_not_use(fn):
    out, res = fn(lambda x, y: (x ** 3).sum(), (x_(), y_()), (x_(), y_()))
    check(out, 7.125)
    check_tree(res, ([1.5, 6.0, 24.0], [[0.0, 0.0], [0.0, 0.0]]))


def test_hvp_without_v_for_a_one_element_input():
    out, res = F.hvp(lambda s: s ** 4, T(0.7))
    check(out, 0.2401)
    check(res, 5.88)


def _mlp_loss(W1, b1, W2, b2):
    X = T([[1.0, 2.0, -1.0], [0.5, -0.5, 0.3], [-1.0, 0.0, 2.0], [0.2, 0.1, 0.4]])
    Y = T([[1.0], [0.0], [-1.0], [0.5]])
    h = torch.tanh(X @ W1.t() + b1)
    return ((h @ W2.t() + b2 - Y) ** 2).mean()


def _mlp_params():
    return T([[0.2, -0.4, 0.1], [0.5, 0.3, -0.2]]), T([0.1, -0.1]), T([[0.7, -1.2]]), T([0.05])


@pytest.mark.parametrize("fn", [F.hvp, F.vhp])
def test_hessian_vector_product_of_a_small_network_loss(fn):
    v = (T([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]), T([1.0, -1.0]), T([[0.3, 0.2]]), T([1.0]))
    loss, res = fn(_mlp_loss, _mlp_params(), v)
    check(loss, 2.4494576)
    check_tree(res, ([[-1.4475948, -3.287627, 3.0251389], [-2.1720662, -0.38941479, 0.5405115]],
                     [0.5530408, -3.066104], [[-4.354832, 0.7056465]], [3.7151532]))


def test_hessian_of_a_small_network_loss_in_its_biases():
    W1, b1, W2, b2 = _mlp_params()
    h = F.hessian(lambda b1, b2: _mlp_loss(W1, b1, W2, b2), (b1, b2))
    check_tree(h, (([[-0.06008327, -1.026382], [-1.026382, 0.12324905]], [[1.2313042], [-1.6313443]]),
                   ([[1.2313042, -1.6313443]], [[2.0]])))


# ---------------------------------------------------------------------------
# create_graph


def test_results_are_detached_without_create_graph():
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    out, vj = F.vjp(f_exp, x, T([1.0, 2.0, -1.0]))
    assert not out.requires_grad and out.grad_fn is None and not vj.requires_grad
    assert not F.jacobian(f_exp, x).requires_grad
    assert not F.hessian(f_cubic, x).requires_grad


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_with_create_graph_is_differentiable(vectorize):
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    jac = F.jacobian(lambda x: x ** 3 * x.sum(), x, create_graph=True, vectorize=vectorize)
    check(jac, [[1.25, 0.125, 0.125], [-1.0, 3.5, -1.0], [8.0, 8.0, 26.0]], requires_grad=True)
    g, = torch.autograd.grad(jac.sum(), x)
    check(g, [22.5, 15.75, 69.75])


def test_vjp_with_create_graph_is_differentiable():
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    out, vj = F.vjp(f_exp, x, T([1.0, 2.0, -1.0]), create_graph=True)
    check(out, F_EXP_OUT, requires_grad=True)
    check(vj, [-2.5314944, -3.9009378, -16.08816], requires_grad=True)
    g, = torch.autograd.grad((vj * T([1.0, 2.0, 3.0])).sum() + out.sum(), x)
    check(g, [5.19722, -2.4676223, -76.14278])


def test_jvp_with_create_graph_is_differentiable():
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    out, jv = F.jvp(f_exp, x, T([1.0, 2.0, -1.0]), create_graph=True)
    check(out, F_EXP_OUT, requires_grad=True)
    check(jv, [5.770524, 1.8393973, 3.6945286], requires_grad=True)
    g, = torch.autograd.grad((jv * T([1.0, 2.0, 3.0])).sum(), x)
    check(g, [-13.276404, -15.368134, -7.9633446])


def test_hessian_with_create_graph_is_differentiable():
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    h = F.hessian(f_cubic, x, create_graph=True)
    check(h, F_CUBIC_HESS, requires_grad=True)
    g, = torch.autograd.grad(h.sum(), x)
    check(g, [15.0, 123.0, -12.0])


@pytest.mark.parametrize("fn", [F.vhp, F.hvp])
def test_vhp_and_hvp_with_create_graph_are_differentiable(fn):
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    out, res = fn(f_cubic, x, T([1.0, -1.0, 0.5]), create_graph=True)
    check(out, -7.125, requires_grad=True)
    check(res, [-30.75, 4.03125, -57.5625], requires_grad=True)
    g, = torch.autograd.grad(res.sum(), x)
    check(g, [-90.75, 81.75, -105.0])


@pytest.mark.parametrize("fn", [F.vhp, F.hvp])
def test_strict_vhp_and_hvp_with_create_graph_accept_a_quadratic(fn):
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    out, res = fn(lambda x: (x ** 2).sum(), x, x_(), create_graph=True, strict=True)
    check(out, 5.25, requires_grad=True)
    check(res, [1.0, -2.0, 4.0], requires_grad=True)


# ---------------------------------------------------------------------------
# strict mode


def test_strict_vjp_rejects_an_input_the_output_does_not_use():
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode."):
        F.vjp(lambda x, y: x * 2, (x_(), y_()), T([1.0, 1.0, 1.0]), strict=True)


def test_strict_rejects_an_output_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        F.vjp(lambda x: T([1.0, 2.0, 3.0]), x_(), T([1.0, 1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="Output 1 of the user-provided function does not require gradients"):
        F.jvp(lambda x: (x * 2, T([5.0])), x_(), T([1.0, 1.0, 1.0]), strict=True)


def test_strict_jvp_rejects_an_input_the_output_does_not_use():
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        F.jvp(lambda x, y: x * 2, (x_(), y_()), (x_(), y_()), strict=True)


def test_strict_jacobian_names_the_output_and_the_unused_input():
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode."):
        F.jacobian(lambda x, y: x * 2, (x_(), y_()), strict=True)
    check(F.jacobian(lambda x: x * 2, x_(), strict=True), np.eye(3) * 2)


def test_strict_with_create_graph_rejects_a_gradient_without_a_graph():
    # the gradient of a linear output is a constant: it cannot depend on the inputs
    x = T([0.5, -1.0, 2.0], requires_grad=True)
    msg = "The jacobian of the user-provided function is independent of input {}. This is not allowed in strict " \
          "mode when create_graph=True."
    with pytest.raises(RuntimeError, match=msg.format(1)):  # PyTorch names the output's index here
        F.jacobian(lambda x: (x ** 2, x * 2), x_(), strict=True, create_graph=True)
    with pytest.raises(RuntimeError, match=msg.format(0)):
        F.vjp(lambda x, y: x * 2 + y, (x, x_()), x_(), create_graph=True, strict=True)
    with pytest.raises(RuntimeError, match=msg.format(0)):
        F.jvp(lambda x: x * 2, x, x_(), create_graph=True, strict=True)


def test_strict_hessian_rejects_a_linear_function_and_an_unused_input():
    with pytest.raises(RuntimeError, match="While computing the hessian, found that the jacobian of the "
                                           "user-provided function with respect to input 0 is independent"):
        F.hessian(lambda x: (x * 2).sum(), x_(), strict=True)
    with pytest.raises(RuntimeError, match="with respect to input 1 is independent of the input"):
        F.hessian(lambda x, y: (x ** 3).sum(), (x_(), y_()), strict=True)


def test_strict_vhp_and_hvp_reject_a_linear_part_and_an_unused_input():
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0"):
        F.vhp(lambda x, y: (x * 2).sum() + (y ** 2).sum(), (x_(), y_()), (x_(), y_()), strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1"):
        F.hvp(lambda x, y: (x ** 3).sum(), (x_(), y_()), (x_(), y_()), strict=True)


def test_strict_hvp_and_vhp_name_their_stage_when_the_gradient_only_reaches_a_captured_tensor():
    w = T([1.0, 2.0, 3.0], requires_grad=True)  # the gradient is w: it has a graph, yet does not depend on x
    with pytest.raises(RuntimeError, match="The hessian of the user-provided function is independent of entry 0 in "
                                           "the grad_jacobian. This is not allowed in strict mode as it prevents "
                                           "from using the double backward trick"):
        F.hvp(lambda x: (x * w).sum(), x_(), x_(), strict=True)
    with pytest.raises(RuntimeError, match="The jacobian of the user-provided function is independent of input 0. "
                                           "This is not allowed in strict mode."):
        F.vhp(lambda x: (x * w).sum(), x_(), x_(), strict=True)
    out, res = F.hvp(lambda x: (x * w).sum(), x_(), x_())
    check(out, 4.5)
    check(res, [0.0, 0.0, 0.0])


def test_strict_is_refused_with_vectorize_and_with_forward_mode():
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"):
        F.jacobian(f_exp, x_(), strict=True, vectorize=True)
    with pytest.raises(RuntimeError, match='`strict=True` and `strategy="forward-mode"` are not supported'):
        F.jacobian(f_exp, x_(), strict=True, vectorize=True, strategy="forward-mode")


# ---------------------------------------------------------------------------
# argument errors


def test_v_of_the_wrong_shape_or_length():
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be torch.Size\(\[3\]\) but got "
                                           r"torch.Size\(\[2\]\).$"):
        F.vjp(f_exp, x_(), T([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"Entry 1 in v has invalid size: should be torch.Size\(\[\]\) but got "
                                           r"torch.Size\(\[1\]\)."):
        F.vjp(f_two, (x_(), y_()), (T([1.0, 0.5, 2.0]), T([3.0])))
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be torch.Size\(\[3\]\)"):
        F.jvp(f_exp, x_(), T([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"Entry 0 in v has invalid size"):
        F.vhp(f_scalar, (x_(), y_()), (T([1.0, -1.0]), T([[1.0, 0.0], [2.0, 1.0]])))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1."):
        F.vjp(f_two, (x_(), y_()), (T([1.0, 0.5, 2.0]),))
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        F.vjp(f_exp, x_(), (T([1.0, 0.5, 2.0]), T(1.0)))


def test_v_is_required_unless_the_vector_has_one_element():
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function returns a single "
                                           "Tensor with a single element"):
        F.vjp(f_exp, x_())
    for fn in (F.jvp, F.vhp, F.hvp):
        with pytest.raises(RuntimeError, match="v can only be None if the input to the user-provided function is "
                                               "a single Tensor with a single element"):
            fn(f_scalar, (x_(), y_()))


def test_non_tensor_inputs_outputs_and_v_are_type_errors():
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor or a tuple of Tensors but "
                                        "the given inputs has type <class 'list'>."):
        F.vjp(f_exp, [1.0, 2.0], T([1.0, 1.0]))
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor or a tuple of Tensors "
                                        "but the value at index 1 has type <class 'float'>."):
        F.jacobian(f_two, (x_(), 3.0))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must be either a "
                                        "Tensor or a tuple of Tensors but the given outputs of the user-provided "
                                        "function has type <class 'float'>."):
        F.vjp(lambda x: 3.0, x_())
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hessian must be "
                                        "either a Tensor or a tuple of Tensors but the value at index 1"):
        F.hessian(lambda x: (x.sum(), 3.0), x_())
    with pytest.raises(TypeError, match="The v given to vjp must be either a Tensor or a tuple of Tensors but the "
                                        "given v has type <class 'list'>."):
        F.vjp(f_exp, x_(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("call", [
    lambda: F.vjp(lambda x: x * 2, T([1, 2]), T([1, 1])),
    lambda: F.jacobian(lambda x: x * 2, T([1, 2])),
    lambda: F.hessian(lambda x: (x ** 2).sum(), T([1, 2])),
    lambda: F.hvp(lambda x: (x ** 2).sum(), T([1, 2]), T([1, 1])),
])
def test_integer_inputs_cannot_require_grad(call):
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        call()


def test_hessian_vhp_and_hvp_need_a_single_one_element_tensor():
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        F.hessian(f_exp, x_())
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        F.hessian(lambda x: (x.sum(), x.sum()), x_())
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hvp should contain a "
                                           "single element"):
        F.hvp(f_exp, x_(), x_())
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to vhp should contain a "
                                           "single element"):
        F.vhp(f_exp, x_(), x_())
    with pytest.raises(RuntimeError, match="The function given to vhp should return a single Tensor"):
        F.vhp(lambda x: (x.sum(),), x_(), x_())


def test_strategy_errors():
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode". '
                                             'Hint'):
        F.jacobian(f_exp, x_(), strategy="sideways")
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode".$'):
        F.hessian(f_cubic, x_(), outer_jacobian_strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(f_exp, x_(), strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.hessian(f_cubic, x_(), outer_jacobian_strategy="forward-mode")
    with pytest.raises(NotImplementedError, match='`create_graph=True` and `strategy="forward-mode"` are not '
                                                  'supported together'):
        F.jacobian(f_exp, x_(), create_graph=True, vectorize=True, strategy="forward-mode")
