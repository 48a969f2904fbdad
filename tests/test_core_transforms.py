"""grad / value_and_grad / vjp / jvp / jacrev / jacfwd / hessian over pytrees,
their nesting (higher order, no perturbation confusion) and their errors."""
import math
import re

import numpy as np
import pytest

from mindtorch_v2 import core

a = core.asarray


def vals(tree):
    """Pytree of Arrays -> the same tree of python lists/numbers (None kept)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(vals(t) for t in tree)
    if isinstance(tree, dict):
        return {k: vals(v) for k, v in tree.items()}
    return None if tree is None else tree.tolist()


# ---------------------------------------------------------------------------
# grad and value_and_grad


def test_grad_argnums_int_negative_and_tuple():
    f = lambda x, y: core.sum(x * y ** 2)  # noqa: E731
    x, y = a([1.0, 2.0]), a([3.0, 4.0])
    assert core.grad(f)(x, y).tolist() == [9.0, 16.0]
    assert core.grad(f, argnums=1)(x, y).tolist() == [6.0, 16.0]
    assert core.grad(f, argnums=-1)(x, y).tolist() == [6.0, 16.0]
    gx, gy = core.grad(f, argnums=(0, 1))(x, y)
    assert gx.tolist() == [9.0, 16.0] and gy.tolist() == [6.0, 16.0]
    (gy_only,) = core.grad(f, argnums=(1,))(x, y)
    assert gy_only.tolist() == [6.0, 16.0]


def test_grad_has_aux_and_value_and_grad():
    g, aux = core.grad(lambda x: (core.sum(x ** 2), x * 3), has_aux=True)(a([1.0, 2.0]))
    assert g.tolist() == [2.0, 4.0] and aux.tolist() == [3.0, 6.0]
    v, g = core.value_and_grad(lambda x: core.sum(x ** 2))(a([1.0, 2.0]))
    assert v.item() == 5.0 and g.tolist() == [2.0, 4.0]
    (v, aux), g = core.value_and_grad(lambda x: (core.sum(x ** 2), {"note": "aux"}), has_aux=True)(a([1.0, 2.0]))
    assert v.item() == 5.0 and aux == {"note": "aux"} and g.tolist() == [2.0, 4.0]


def test_grad_over_pytrees_with_none_leaves():
    params = {"w": a([1.0, 2.0]), "b": a([3.0, 4.0]), "c": [a(1.0), None], "d": (a(2.0),)}
    g = core.grad(lambda p: core.sum(p["w"] * p["b"]) + p["c"][0] * p["d"][0])(params)
    assert vals(g) == {"w": [3.0, 4.0], "b": [1.0, 2.0], "c": [2.0, None], "d": (1.0,)}
    g = core.grad(lambda t: t[0] * t[1][0])((a(2.0), [a(3.0)]))
    assert vals(g) == (3.0, [2.0])


def test_grad_accepts_python_and_numpy_floats():
    assert core.grad(lambda x: x * x)(3.0).item() == 6.0
    g = core.grad(lambda x: x * x)(np.float64(3.0))
    assert g.item() == 6.0 and g.dtype is core.float64
    assert core.grad(lambda xs: xs[0] * xs[1])([2.0, 3.0])[0].item() == 3.0


def test_grad_keeps_the_input_dtype():
    assert core.grad(lambda x: core.sum(x * 2.5))(a([1.0], core.float64)).dtype is core.float64
    g = core.grad(lambda x: core.sum(x * 2.5))(a([1.0], core.float16))
    assert g.dtype is core.float16 and g.tolist() == [2.5]


def test_grad_of_unused_or_constant_is_zero():
    assert core.grad(lambda x, y: core.sum(y))(a([2.0, 3.0]), a(1.0)).tolist() == [0.0, 0.0]
    assert core.grad(lambda x: a(1.0))(a(2.0)).item() == 0.0


# ---------------------------------------------------------------------------
# vjp and jvp


def test_vjp_over_tuple_outputs_and_reuse_of_the_pullback():
    out, pull = core.vjp(lambda x, y: (x * y, x + y), a([1.0, 2.0]), a([3.0, 4.0]))
    assert vals(out) == ([3.0, 8.0], [4.0, 6.0])
    gx, gy = pull((a([1.0, 1.0]), a([0.0, 1.0])))
    assert gx.tolist() == [3.0, 5.0] and gy.tolist() == [1.0, 3.0]
    gx2, _ = pull((a([2.0, 2.0]), a([0.0, 0.0])))
    assert gx2.tolist() == [6.0, 8.0]


def test_vjp_has_aux_and_list_outputs():
    out, pull, aux = core.vjp(lambda x: (x * 2, {"k": x}), a([1.0]), has_aux=True)
    assert vals(aux) == {"k": [1.0]}
    (g,) = core.vjp(lambda x: [x, x * 2], a(1.0))[1]([a(1.0), a(1.0)])
    assert g.item() == 3.0


def test_jvp_matches_hand_derivative():
    out, t = core.jvp(lambda x: core.sin(x) * x, (a(1.0, core.float64),), (a(1.0, core.float64),))
    assert out.item() == pytest.approx(math.sin(1.0))
    assert t.item() == pytest.approx(math.cos(1.0) + math.sin(1.0))


def test_jvp_over_dict_inputs_and_outputs_and_aux():
    out, t = core.jvp(lambda d: {"o": d["a"] * d["b"]}, ({"a": a(2.0), "b": a(3.0)},), ({"a": a(1.0), "b": a(0.0)},))
    assert vals(out) == {"o": 6.0} and vals(t) == {"o": 3.0}
    out, t, aux = core.jvp(lambda x: (x * 2, x), (a([1.0]),), (a([1.0]),), has_aux=True)
    assert out.tolist() == [2.0] and t.tolist() == [2.0] and aux.tolist() == [1.0]


def test_jvp_with_integer_primal_has_no_tangent_through_it():
    out, t = core.jvp(lambda x, y: x * y, (a(2), a(3.0)), (a(0), a(1.0)))
    assert out.item() == 6.0 and t.item() == 2.0


def test_jvp_of_ops_without_jvp_rules_uses_the_vjp():
    out, t = core.jvp(lambda x: core.prod(x), (a([2.0, 3.0, 4.0]),), (a([1.0, 0.0, 0.0]),))
    assert out.item() == 24.0 and t.item() == 12.0


# ---------------------------------------------------------------------------
# Jacobians and Hessians


def test_jacrev_and_jacfwd_agree_with_hand_jacobians():
    x = a([1.0, 2.0, 3.0])
    for jac in (core.jacrev, core.jacfwd):
        np.testing.assert_array_equal(np.asarray(jac(lambda v: v ** 2)(x)), np.diag([2.0, 4.0, 6.0]))
        m = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        np.testing.assert_array_equal(np.asarray(jac(lambda v: v @ a(m))(x)), m.T)
        assert jac(lambda v: core.sum(v, 0))(core.ones((2, 3))).shape == (3, 2, 3)
        assert jac(lambda v: v * 3)(a(2.0)).item() == 3.0


def test_jacobians_over_pytrees_and_argnums():
    for jac in (core.jacrev, core.jacfwd):
        jx, jy = jac(lambda x, y: x * y, argnums=(0, 1))(a([1.0, 2.0]), a([3.0, 4.0]))
        assert jx.tolist() == [[3.0, 0.0], [0.0, 4.0]] and jy.tolist() == [[1.0, 0.0], [0.0, 2.0]]
        j = jac(lambda p: p["a"] * p["b"])({"a": a([1.0, 2.0]), "b": a([3.0, 4.0])})
        assert vals(j) == {"a": [[3.0, 0.0], [0.0, 4.0]], "b": [[1.0, 0.0], [0.0, 2.0]]}
        j1, j2 = jac(lambda v: (v * 2, core.sum(v)))(a([1.0, 2.0]))
        assert j1.tolist() == [[2.0, 0.0], [0.0, 2.0]] and j2.tolist() == [1.0, 1.0]
        j, aux = jac(lambda v: (v * 2, v), has_aux=True)(a([1.0]))
        assert j.tolist() == [[2.0]] and aux.tolist() == [1.0]


def test_hessian_matches_hand_derivation():
    assert core.hessian(lambda x: core.sum(x ** 3))(a([1.0, 2.0])).tolist() == [[6.0, 0.0], [0.0, 12.0]]
    assert core.hessian(lambda x: x[0] * x[1] ** 2)(a([1.0, 2.0])).tolist() == [[0.0, 4.0], [4.0, 2.0]]
    h = core.hessian(lambda x: core.prod(x))(a([2.0, 3.0, 4.0]))
    assert h.tolist() == [[0.0, 4.0, 3.0], [4.0, 0.0, 2.0], [3.0, 2.0, 0.0]]
    h = core.hessian(lambda x: core.logsumexp(x))(a([0.0, 0.0]))
    assert h.tolist() == [[0.25, -0.25], [-0.25, 0.25]]
    (hxx, hxy), (hyx, hyy) = core.hessian(lambda x, y: core.sum(x * x * y), argnums=(0, 1))(a([1.0]), a([2.0]))
    assert (hxx.tolist(), hxy.tolist(), hyx.tolist(), hyy.tolist()) == ([[4.0]], [[2.0]], [[2.0]], [[0.0]])
    f = lambda x: core.sum(core.exp(x) * x[0])  # noqa: E731
    np.testing.assert_allclose(np.asarray(core.hessian(f)(a([0.0, 1.0]))), [[2.0, math.e], [math.e, 0.0]], rtol=1e-6)


# ---------------------------------------------------------------------------
# nesting


def test_grad_of_grad_of_grad():
    f = lambda x: x ** 4  # noqa: E731
    x = a(2.0)
    assert core.grad(f)(x).item() == 32.0
    assert core.grad(core.grad(f))(x).item() == 48.0
    assert core.grad(core.grad(core.grad(f)))(x).item() == 24.0 * 2.0
    assert core.grad(core.grad(core.grad(core.grad(f))))(x).item() == 24.0
    g3 = core.grad(core.grad(core.grad(lambda v: v ** 4)))
    assert g3(a(1.5)).item() == pytest.approx(24 * 1.5)


def test_jvp_of_grad_and_grad_of_jvp():
    f = lambda x: x ** 3  # noqa: E731
    out, t = core.jvp(core.grad(f), (a(2.0),), (a(1.0),))
    assert out.item() == 12.0 and t.item() == 12.0
    assert core.grad(lambda x: core.jvp(f, (x,), (a(1.0),))[1])(a(2.0)).item() == 12.0
    g = core.grad(lambda x: core.jvp(lambda y: core.prod(y), (x,), (core.ones(3),))[1])(a([2.0, 3.0, 4.0]))
    assert g.tolist() == [7.0, 6.0, 5.0]


def test_jacobian_of_jacobian():
    for outer in (core.jacfwd, core.jacrev):
        h = outer(core.jacrev(lambda x: core.sum(x ** 3)))(a([1.0, 2.0]))
        assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]]


def test_closures_over_outer_values():
    c, d = a(3.0), a(5.0)
    assert core.grad(lambda x: core.grad(lambda y: x * y)(c))(d).item() == 1.0
    # d/dx [d/dy x*y*y at y=x] = d/dx 2x^2 = 4x
    assert core.grad(lambda x: core.grad(lambda y: x * y * y)(x))(a(3.0)).item() == 12.0


def test_inner_transform_of_a_closure_only_function():
    c, d = a(3.0), a(5.0)
    assert core.grad(lambda x: core.grad(lambda y: x * x)(c))(d).item() == 0.0  # inner gradient is 0
    assert core.grad(lambda x: core.grad(lambda y: x * x * y)(c))(d).item() == 10.0  # d/dx x^2
    assert core.jvp(lambda x: core.grad(lambda y: x * x * y)(c), (d,), (a(1.0),))[1].item() == 10.0
    assert core.grad(lambda x: core.jvp(lambda y: x * y * y, (c,), (a(1.0),))[1])(d).item() == 6.0  # 2c


def test_hessian_vector_product_by_jvp_of_grad():
    _, hv = core.jvp(core.grad(lambda x: core.sum(x ** 3)), (a([1.0, 2.0]),), (a([1.0, 0.0]),))
    assert hv.tolist() == [6.0, 0.0]


def test_no_perturbation_confusion():
    # Siskind & Pearlmutter: d/dx [x * (d/dy (x + y))|_{y=1}] at x=1 is 1 (confusion gives 2)
    one = a(1.0)
    assert core.grad(lambda x: x * core.grad(lambda y: x + y)(one))(one).item() == 1.0
    _, t = core.jvp(lambda x: x * core.jvp(lambda y: x + y, (one,), (one,))[1], (one,), (one,))
    assert t.item() == 1.0
    # mixed modes
    _, t = core.jvp(lambda x: x * core.grad(lambda y: x + y)(one), (one,), (one,))
    assert t.item() == 1.0
    assert core.grad(lambda x: x * core.jvp(lambda y: x + y, (one,), (one,))[1])(one).item() == 1.0


def test_grad_inside_vjp_and_reused_pullbacks():
    (g,) = core.vjp(lambda x: core.grad(lambda y: y ** 3)(x), a(2.0))[1](a(1.0))
    assert g.item() == 12.0


# ---------------------------------------------------------------------------
# errors


def test_grad_of_non_scalar_output_raises_type_error():
    with pytest.raises(TypeError, match=r"scalar output.*\(2,\)"):
        core.grad(lambda x: x * 2)(a([1.0, 2.0]))


def test_grad_of_integer_input_or_output_raises_type_error():
    with pytest.raises(TypeError, match="floating-point or complex inputs.*int64"):
        core.grad(lambda x: x * 2.0)(a(1))
    with pytest.raises(TypeError, match="floating-point or complex inputs"):
        core.grad(lambda x: x * 2.0)(1)
    with pytest.raises(TypeError, match="floating-point output"):
        core.grad(lambda x: core.argmax(x))(a([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating-point or complex inputs"):
        core.jacrev(lambda x: x * 3)(a(2))


def test_mismatched_cotangents_and_tangents_raise():
    pull = core.vjp(lambda x: x * 2, a([1.0, 2.0]))[1]
    with pytest.raises(ValueError, match=r"cotangent shape \(3,\) does not match the output shape \(2,\)"):
        pull(a([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="structure"):
        core.vjp(lambda x: (x, x), a([1.0, 2.0]))[1](a([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"tangent shape \(1,\) does not match primal shape \(2,\)"):
        core.jvp(lambda x: x, (a([1.0, 2.0]),), (a([1.0]),))
    with pytest.raises(TypeError, match="tangent dtype float64"):
        core.jvp(lambda x: x, (a([1.0, 2.0]),), (a([1.0, 2.0], core.float64),))
    with pytest.raises(TypeError, match="tuples or lists"):
        core.jvp(lambda x: x, a(1.0), a(1.0))


def test_bad_argnums_and_aux_raise():
    with pytest.raises(ValueError, match="argnums 2 out of range"):
        core.grad(lambda x: x, argnums=2)(a(2.0))
    with pytest.raises(TypeError, match="pair"):
        core.grad(lambda x: x * 2, has_aux=True)(a(2.0))


def test_python_control_flow_on_concrete_comparisons_works():
    # comparisons have no derivative, so under grad/jvp they give plain (concrete) arrays
    f = lambda x: x * x if x > 0 else -x  # noqa: E731
    assert core.grad(f)(a(3.0)).item() == 6.0
    assert core.grad(f)(a(-2.0)).item() == -1.0
    assert core.jvp(f, (a(-2.0),), (a(1.0),))[1].item() == -1.0


def test_python_conversions_under_grad_read_the_concrete_primal_as_a_constant():
    # as JAX's: grad and jvp trace concrete primals, so bool/float/item work on the traced value itself, and
    # what they give is a Python number: no derivative flows through it
    assert core.grad(lambda x: x if x else -x)(a(1.0)).item() == 1.0
    assert core.grad(lambda x: x if x else -x)(a(0.0)).item() == -1.0
    assert core.grad(lambda x: x * float(x))(a(3.0)).item() == 3.0
    assert core.grad(lambda x: x * x.item())(a(3.0)).item() == 3.0
    assert core.grad(lambda x: (x * x.tolist()[1]).sum())(a([1.0, 2.0])).tolist() == [2.0, 2.0]
    assert core.jvp(lambda x: x * int(x), (a(2.0),), (a(1.0),))[1].item() == 2.0
    assert core.grad(lambda x: core.grad(lambda y: y * float(y))(x) * x)(a(3.0)).item() == 3.0  # nested


@pytest.mark.parametrize("convert, what", [
    (bool, "truth value"), (float, "float()"), (int, "int()"), (lambda x: x.item(), "item()"),
    (lambda x: x.tolist(), "tolist()"),
])
def test_python_conversions_under_vmap_raise_concretization_errors_naming_the_conversion(convert, what):
    with pytest.raises(core.ConcretizationTypeError, match=re.escape(what) + ".*traced by vmap") as info:
        core.vmap(lambda x: x * convert(x.sum()))(a([[1.0, 2.0], [3.0, 4.0]]))
    assert info.value.transform == "vmap"
    with pytest.raises(core.ConcretizationTypeError, match="traced by vmap"):  # vmap inside grad: still batched
        core.grad(lambda x: core.vmap(lambda r: r * convert(r.sum()))(x).sum())(a([[1.0, 2.0], [3.0, 4.0]]))


@pytest.mark.parametrize("transform", [
    lambda f, x: core.grad(lambda x: f(x).sum())(x), lambda f, x: core.vmap(f)(core.stack([x, x])),
    lambda f, x: core.jvp(f, (x,), (core.ones_like(x),))])
def test_a_traced_array_never_becomes_a_numpy_array(transform):
    # it would drop the derivative or the batch silently (it used to become an object array of tracers)
    with pytest.raises(core.ConcretizationTypeError, match="cannot be converted to a numpy array"):
        transform(lambda x: x * np.asarray(x), a([1.0, 2.0]))


@pytest.mark.parametrize("transform, name", [
    (lambda f, x: core.grad(f)(x), "vjp"),
    (lambda f, x: core.jvp(f, (x,), (core.ones_like(x),)), "jvp"),
    (lambda f, x: core.vmap(f)(core.stack([x, x])), "vmap"),
])
def test_a_tracer_used_after_its_transform_returned_raises_naming_the_transform(transform, name):
    leaked = []

    def f(x):
        leaked.append(x)
        return core.sum(x)

    transform(f, core.asarray([1.0, 2.0]))
    with pytest.raises(core.UnexpectedTracerError, match=name) as err:
        core.sin(leaked[0])
    assert "leaked" in str(err.value)


def test_linear_primitives_derive_their_jvp_from_the_op_itself():
    x, t = core.asarray([[1.0, 2.0], [3.0, 4.0]]), core.asarray([[1.0, 0.0], [0.0, 2.0]])
    assert core.reshape_p.linear and core.reshape_p.jvp is not None
    out, tan = core.jvp(lambda v: core.sum(core.transpose(core.reshape(v, (4,)).reshape(2, 2)), 0), (x,), (t,))
    assert np.allclose(np.asarray(tan), np.asarray(t).T.sum(0))
    # linear in x and the updates, not in the indices: the tangent of index_add takes the indices as they are
    idx = core.asarray([0, 0])
    _, tan = core.jvp(lambda a, u: core.index_add(a, idx, u), (x, x), (t, t))
    assert np.allclose(np.asarray(tan), np.asarray(t) + np.array([[1.0, 2.0], [0.0, 0.0]]))
