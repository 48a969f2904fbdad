"""Elementwise ops against NumPy: unary math, arithmetic, comparisons, logical and
bitwise ops, where, cast; their dtype rules and errors."""
import math

import numpy as np
import pytest

from mindtorch_v2 import core

X = np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 1.0, 3.7], np.float32)
POS = np.array([0.1, 0.5, 1.0, 2.0, 9.0], np.float32)
UNIT = np.array([-0.9, -0.5, 0.0, 0.3, 0.8], np.float32)


def close(a, b, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, ref, data", [
    ("exp", np.exp, X), ("expm1", np.expm1, X), ("log", np.log, POS), ("log1p", np.log1p, POS),
    ("sqrt", np.sqrt, POS), ("rsqrt", lambda v: 1 / np.sqrt(v), POS), ("sin", np.sin, X),
    ("cos", np.cos, X), ("tan", np.tan, UNIT), ("tanh", np.tanh, X),
    ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), X), ("reciprocal", lambda v: 1 / v, POS),
    ("erf", np.vectorize(math.erf), X), ("neg", np.negative, X), ("abs", np.abs, X),
    ("sign", np.sign, X), ("floor", np.floor, X), ("ceil", np.ceil, X), ("round", np.round, X),
])
def test_unary_float_ops_match_numpy(name, ref, data):
    out = getattr(core, name)(core.asarray(data))
    assert out.dtype is core.float32 and out.shape == data.shape
    close(out, ref(data.astype(np.float64)), rtol=2e-6)


def test_round_is_half_to_even_like_torch():
    assert core.round(core.asarray([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]


def test_sigmoid_is_stable_at_extremes():
    out = np.asarray(core.sigmoid(core.asarray([-1000.0, 0.0, 1000.0])))
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out, [0.0, 0.5, 1.0])


def test_integer_preserving_unary_ops():
    x = core.asarray([-3, 0, 4])
    assert core.floor(x).dtype is core.int64 and core.floor(x).tolist() == [-3, 0, 4]
    assert core.abs(x).tolist() == [3, 0, 4]
    assert core.neg(x).tolist() == [3, 0, -4]
    assert core.sign(x).tolist() == [-1, 0, 1]


INT_A = np.array([-7, -3, -1, 0, 2, 5, 9])
INT_B = np.array([2, -2, 3, -4, 3, -3, 4])
F_A = np.array([-7.5, -3.0, -1.25, 0.0, 2.0, 5.5, 9.0], np.float32)
F_B = np.array([2.0, -2.0, 3.0, -4.0, 0.5, -3.0, 4.0], np.float32)


@pytest.mark.parametrize("name, ref", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("floor_divide", np.floor_divide),
    ("remainder", np.remainder), ("maximum", np.maximum), ("minimum", np.minimum),
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
    ("gt", np.greater), ("ge", np.greater_equal),
])
@pytest.mark.parametrize("a, b", [(INT_A, INT_B), (F_A, F_B)], ids=["int", "float"])
def test_binary_ops_match_numpy(name, ref, a, b):
    out = getattr(core, name)(core.asarray(a), core.asarray(b))
    expected = ref(a, b)
    assert out.dtype.np == expected.dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_remainder_and_floor_divide_follow_python_signs():
    a, b = [-7, 7, -7, 7], [2, 2, -2, -2]
    assert core.remainder(core.asarray(a), core.asarray(b)).tolist() == [x % y for x, y in zip(a, b)]
    assert core.floor_divide(core.asarray(a), core.asarray(b)).tolist() == [x // y for x, y in zip(a, b)]
    fa = [-3.5, 3.5, -3.5, 3.5]
    fb = [2.0, 2.0, -2.0, -2.0]
    assert (core.asarray(fa) % core.asarray(fb)).tolist() == [x % y for x, y in zip(fa, fb)]
    assert (core.asarray(fa) // core.asarray(fb)).tolist() == [x // y for x, y in zip(fa, fb)]
    assert (7 % core.asarray([3, -3])).tolist() == [1, -2]
    assert (7 // core.asarray([2, -2])).tolist() == [3, -4]


def test_integer_division_by_zero_raises():
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        core.asarray([1, 2]) // 0
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        core.asarray([1, 2]) % core.asarray([1, 0])


def test_div_matches_numpy_true_divide():
    close(core.div(core.asarray(F_A), core.asarray(F_B)), F_A / F_B)
    out = core.asarray([-7, 7]) / core.asarray([2, -2])
    assert out.dtype is core.float32 and out.tolist() == [-3.5, -3.5]


def test_pow_dtypes_and_values():
    x = core.asarray([2, 3])
    assert (x ** 2).dtype is core.int64 and (x ** 2).tolist() == [4, 9]
    assert (x ** 2.0).dtype is core.float32 and (x ** 0.5).tolist() == pytest.approx([2 ** 0.5, 3 ** 0.5])
    assert (2 ** x).tolist() == [4, 8]
    assert (2.0 ** x).dtype is core.float32
    close(core.pow(core.asarray(POS), core.asarray(UNIT)), POS.astype(np.float64) ** UNIT, rtol=1e-5)


def test_maximum_minimum_propagate_nan():
    out = core.maximum(core.asarray([np.nan, 1.0]), core.asarray([0.0, np.nan]))
    assert np.all(np.isnan(np.asarray(out)))
    assert core.minimum(core.asarray([1, 5]), 2.5).tolist() == [1.0, 2.5]


def test_comparisons_with_mixed_dtypes_promote_first():
    assert (core.asarray([1, 2]) == 1.0).tolist() == [True, False]
    assert (core.asarray([1, 2]) < 1.5).tolist() == [True, False]
    assert (core.asarray([1, 2], core.uint8) >= core.asarray([2], core.int8)).tolist() == [False, True]
    assert (core.asarray([1.0]) == core.asarray([1.0])).dtype is core.bool_


def test_logical_ops_match_numpy():
    a = np.array([0.0, 0.0, 2.0, -1.0], np.float32)
    b = np.array([0, 3, 0, 1])
    for name, ref in [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                      ("logical_xor", np.logical_xor)]:
        out = getattr(core, name)(core.asarray(a), core.asarray(b))
        assert out.dtype is core.bool_
        np.testing.assert_array_equal(np.asarray(out), ref(a, b))
    assert core.logical_not(core.asarray(a)).tolist() == [True, True, False, False]


def test_bitwise_operators_on_ints_and_bools():
    a, b = core.asarray([6, 3, -1]), core.asarray([3, 5, 4])
    assert (a & b).tolist() == [2, 1, 4]
    assert (a | b).tolist() == [7, 7, -1]
    assert (a ^ b).tolist() == [5, 6, -5]
    assert (~a).tolist() == [-7, -4, 0]
    p, q = core.asarray([True, True, False]), core.asarray([True, False, False])
    assert (p & q).tolist() == [True, False, False]
    assert (p | q).tolist() == [True, True, False]
    assert (p ^ q).tolist() == [False, True, False]
    assert (~p).tolist() == [False, False, True]
    assert (~p).dtype is core.bool_


def test_bitwise_operators_reject_floats():
    with pytest.raises(TypeError, match="integer or bool"):
        core.asarray([1.0]) & core.asarray([1.0])
    with pytest.raises(TypeError, match="integer or bool"):
        ~core.asarray([1.0])


def test_broadcasting_matches_numpy():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 1, 3)
    b = np.arange(4.0, dtype=np.float32).reshape(4, 1)
    out = core.asarray(a) * core.asarray(b)
    assert out.shape == (2, 4, 3)
    np.testing.assert_array_equal(np.asarray(out), a * b)


def test_broadcast_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\) cannot broadcast"):
        core.zeros((2, 3)) + core.zeros((4,))
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        core.mul(core.zeros((3,)), core.zeros((2,)))


@pytest.mark.parametrize("fn", [
    lambda b: b - b, lambda b: -b, lambda b: core.abs(b), lambda b: b // b, lambda b: b % b,
    lambda b: core.floor(b), lambda b: core.sign(b),
])
def test_bool_incompatible_ops_raise_type_error(fn):
    with pytest.raises(TypeError, match="bool"):
        fn(core.asarray([True, False]))


def test_bool_arithmetic_that_torch_allows():
    b = core.asarray([True, False])
    assert (b + b).dtype is core.bool_ and (b + b).tolist() == [True, False]
    assert (b * b).tolist() == [True, False]
    assert (b / core.asarray([True, True])).dtype is core.float32
    assert core.maximum(b, core.asarray([False, True])).tolist() == [True, True]
    assert (b ** 2).dtype is core.int64


def test_where_broadcasts_and_promotes():
    c = core.asarray([[True], [False]])
    out = core.where(c, core.asarray([1.0, 2.0, 3.0]), 0)
    np.testing.assert_array_equal(np.asarray(out), np.where([[True], [False]], [1.0, 2.0, 3.0], 0))
    assert out.dtype is core.float32
    assert core.where(core.asarray([True, False]), 1, 2.5).tolist() == [1.0, 2.5]
    assert core.where(core.asarray([1, 0]), 1, 2).tolist() == [1, 2]  # non-bool condition: truthiness
    with pytest.raises(ValueError, match="where"):
        core.where(core.asarray([True, False, True]), core.zeros((2,)), 0.0)


def test_where_gradient_goes_to_the_chosen_branch():
    c = core.asarray([[True], [False]])
    gx, gy = core.grad(lambda x, y: core.sum(core.where(c, x, y)), argnums=(0, 1))(
        core.asarray([1.0, 2.0, 3.0]), core.asarray(0.0))
    assert gx.tolist() == [1.0, 1.0, 1.0] and gy.item() == 3.0


def test_cast_values_and_dtypes():
    x = core.asarray([1.7, -1.7, 0.0])
    assert core.cast(x, core.int32).tolist() == [1, -1, 0]
    assert core.cast(x, core.bool_).tolist() == [True, True, False]
    assert core.cast(x, "float64").dtype is core.float64
    assert core.cast(x, np.float16).dtype is core.float16
    assert x.astype(core.int64).dtype is core.int64
    assert core.cast(x, core.float32) is x


def test_cast_gradient_returns_input_dtype_and_stops_at_ints():
    g = core.grad(lambda x: core.sum(core.cast(x, core.float64) ** 2))(core.asarray([1.0, 2.0]))
    assert g.dtype is core.float32 and g.tolist() == [2.0, 4.0]
    g = core.grad(lambda x: core.sum(core.cast(core.cast(x, core.int64), core.float32)) + core.sum(x))(
        core.asarray([1.5, 2.0]))
    assert g.tolist() == [1.0, 1.0]


def test_maximum_gradient_splits_ties():
    g = core.grad(lambda u: core.sum(core.maximum(u, core.asarray([1.0, 2.0, 3.0]))))(core.asarray([1.0, 5.0, 0.0]))
    assert g.tolist() == [0.5, 1.0, 0.0]
    g = core.grad(lambda u: core.sum(core.minimum(u, core.asarray([1.0, 2.0]))))(core.asarray([1.0, 5.0]))
    assert g.tolist() == [0.5, 0.0]


def test_elementwise_derivatives_at_known_points():
    g = core.grad
    assert g(lambda x: core.abs(x))(core.asarray(0.0)).item() == 0.0
    assert g(lambda x: core.abs(x))(core.asarray(-2.0)).item() == -1.0
    assert g(lambda x: core.sqrt(x))(core.asarray(4.0)).item() == 0.25
    assert g(lambda x: x ** 2.0)(core.asarray(0.0)).item() == 0.0
    assert g(lambda x: x ** 3)(core.asarray(2.0)).item() == 12.0
    assert g(lambda y: core.asarray(2.0) ** y)(core.asarray(3.0)).item() == pytest.approx(8 * math.log(2))
    assert g(lambda y: core.asarray(0.0) ** y)(core.asarray(2.0)).item() == 0.0
    assert g(lambda x: x % 3.0)(core.asarray(7.5)).item() == 1.0
    assert g(lambda y: core.asarray(7.5) % y)(core.asarray(2.0)).item() == -3.0
    assert g(lambda x: 1.0 / x)(core.asarray(2.0)).item() == -0.25
    assert g(lambda x: core.floor(x))(core.asarray(2.5)).item() == 0.0
    assert g(lambda x: core.stop_gradient(x) * x)(core.asarray(3.0)).item() == 3.0
    assert g(lambda x: core.erf(x))(core.asarray(0.0)).item() == pytest.approx(2 / math.sqrt(math.pi))


def test_elementwise_functions_accept_numpy_and_python_numbers():
    assert core.add(np.array([1, 2], np.int32), 1).dtype is core.int32
    assert core.add(1, 2.5).item() == 3.5
    assert core.exp(0).item() == 1.0
    assert core.exp(np.array([0.0])).dtype is core.float64
    with pytest.raises(TypeError, match="array or a number"):
        core.add(core.asarray([1]), "a")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int8"])
def test_threshold_backward_passes_g_where_out_is_positive_or_nan_and_zero_elsewhere(dtype):
    # relu's derivative (torch's threshold_backward): out <= 0 gives +0 whatever g holds (nan, inf); a nan
    # out passes g, as torch's does; every dtype, on a non-contiguous g
    from mindtorch_v2.core.ops.elementwise import threshold_backward_p
    floating = dtype.startswith(("float", "bfloat"))
    out = np.array([[1.0, -1.0, 0.0], [np.nan if floating else 2, 3.0, -0.0]]).T
    g = np.array([[2.0, np.nan if floating else 5, np.inf if floating else 6], [4.0, -5.0, 7.0]]).T
    got = np.asarray(threshold_backward_p.bind(core.asarray(g.astype(np.float64)).astype(dtype),
                                               core.asarray(out.astype(np.float64)).astype(dtype)))
    want = np.array([[2.0, 0.0, 0.0], [4.0, -5.0, 0.0]]).T
    assert str(got.dtype) == dtype
    np.testing.assert_array_equal(got.astype(np.float64), want)
    assert not np.signbit(got.astype(np.float64)[want == 0]).any()  # +0, as torch's


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_backward_large_arrays_take_the_same_select(dtype):
    # (from 4096 elements the numba loop runs where installed; its numbers are the bit-mask select's)
    from mindtorch_v2.core.ops import elementwise
    rng = np.random.default_rng(0)
    g = rng.standard_normal((64, 100)).astype(dtype)
    out = np.maximum(rng.standard_normal((64, 100)), 0).astype(dtype)
    g[0, :5] = [np.nan, np.inf, -np.inf, -0.0, -1.0]
    out[0, :5] = [0.0, -1.0, np.nan, 0.0, np.nan]
    want = np.where(out <= 0, np.zeros((), dtype), g)
    for gg, oo, ww in ((g, out, want), (g.T, out.T, want.T)):
        got = elementwise._threshold_backward_np(gg, oo)
        assert got.dtype == dtype and np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(ww).tobytes()
