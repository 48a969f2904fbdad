"""The elementary family (core/ops/elementary.py) against NumPy / SciPy: values over each domain and at the
special points (0, -0.0, +-inf, nan), dtypes kept or promoted, derivatives of the holomorphic functions at
complex points (JAX's convention: the VJP of g is g * f'(z), no conjugation), the composites' derivatives at
their masked points, shifts by any amount, vmap against per-slice, meta shapes, and the errors."""
import math

import numpy as np
import pytest
import scipy.special as sc

from mindtorch_v2 import core


def arr(x, dtype=np.float64):
    return core.asarray(np.asarray(x, dtype))


def np_of(a):
    return np.asarray(a.numpy() if hasattr(a, "numpy") else a)


X = np.array([-2.5, -0.75, -0.0, 0.0, 0.3, 1.0, 2.2, np.inf, -np.inf, np.nan])
UNIT = np.array([-0.99, -0.5, -0.0, 0.0, 0.25, 0.9, 1.0, -1.0, 1.5, np.nan])

UNARY = {
    "arcsin": (core.arcsin, np.arcsin, UNIT), "arccos": (core.arccos, np.arccos, UNIT),
    "arctan": (core.arctan, np.arctan, X), "sinh": (core.sinh, np.sinh, X), "cosh": (core.cosh, np.cosh, X),
    "arcsinh": (core.arcsinh, np.arcsinh, X), "arccosh": (core.arccosh, np.arccosh, np.abs(X) + 1),
    "arctanh": (core.arctanh, np.arctanh, UNIT), "exp2": (core.exp2, np.exp2, X), "sinc": (core.sinc, np.sinc, X),
    "deg2rad": (core.deg2rad, np.deg2rad, X), "rad2deg": (core.rad2deg, np.rad2deg, X), "i0": (core.i0, sc.i0, X),
    "signbit": (core.signbit, np.signbit, X), "isposinf": (core.isposinf, np.isposinf, X),
    "isneginf": (core.isneginf, np.isneginf, X), "isnan": (core.isnan, np.isnan, X),
    "isinf": (core.isinf, np.isinf, X), "isreal": (core.isreal, np.isreal, X),
    "nan_to_num": (core.nan_to_num, np.nan_to_num, X), "frac": (core.frac, lambda x: x - np.trunc(x), X),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy_in_float64_and_float32(name):
    fn, ref, x = UNARY[name]
    with np.errstate(all="ignore"):
        for dtype in (np.float64, np.float32):
            out = fn(arr(x, dtype))
            want = np.asarray(ref(x.astype(dtype)))
            assert np_of(out).dtype == want.dtype, name
            np.testing.assert_allclose(np_of(out), want, rtol=1e-6 if dtype == np.float32 else 1e-13,
                                       equal_nan=True)


def test_integer_inputs_become_the_default_float():
    i = arr([1, 2, 3], np.int64)
    for fn in (core.arcsin, core.sinh, core.exp2, core.i0, core.sinc, core.deg2rad):
        assert fn(i).dtype is core.float32
    assert core.arctan2(i, i).dtype is core.float32
    assert core.hypot(arr([3], np.int32), arr([4], np.int32)).dtype is core.float32
    assert core.ldexp(arr([1.0, 2.0], np.float16), arr([-1, 1], np.int64)).dtype is core.float16
    assert core.float_power(i, 2).dtype is core.float64


def test_binary_functions_match_numpy():
    x = np.array([-2.0, -0.0, 0.0, 1.5, np.inf, -np.inf, np.nan, 3.0])
    y = np.array([1.0, -1.0, -0.0, np.nan, 2.0, -np.inf, 1.0, 3.0])
    cases = [(core.arctan2, np.arctan2), (core.hypot, np.hypot), (core.logaddexp, np.logaddexp),
             (core.logaddexp2, np.logaddexp2), (core.copysign, np.copysign), (core.nextafter, np.nextafter),
             (core.fmax, np.fmax), (core.fmin, np.fmin),
             (core.heaviside, lambda a, b: np.nan_to_num(np.heaviside(a, b))),  # nan -> 0, as torch
             (core.float_power, np.float_power), (core.ldexp, lambda a, b: a * np.exp2(b))]
    with np.errstate(all="ignore"):
        for fn, ref in cases:
            np.testing.assert_allclose(np_of(fn(arr(x), arr(y))), ref(x, y), rtol=1e-13, equal_nan=True,
                                       err_msg=fn.__name__)


def test_hypot_and_logaddexp_do_not_overflow():
    big = arr([1e200, -1e300])
    np.testing.assert_allclose(np_of(core.hypot(big, big)), np.hypot([1e200, -1e300], [1e200, -1e300]))
    np.testing.assert_allclose(np_of(core.logaddexp(arr([1000.0, -1000.0]), arr([1000.0, -1001.0]))),
                               np.logaddexp([1000.0, -1000.0], [1000.0, -1001.0]))
    assert np_of(core.logaddexp(arr([-np.inf]), arr([-np.inf])))[0] == -np.inf


def test_copysign_and_signbit_see_negative_zero():
    out = np_of(core.copysign(arr([1.0, 2.0, 3.0]), arr([-0.0, 0.0, -np.nan])))
    np.testing.assert_array_equal(out, [-1.0, 2.0, -3.0])
    np.testing.assert_array_equal(np_of(core.signbit(arr([-0.0, 0.0, -1.0]))), [True, False, True])
    np.testing.assert_array_equal(np_of(core.signbit(arr([0, 1], np.uint8))), [False, False])


def test_integer_ops_match_numpy_and_torch_shift_rules():
    a = np.array([12, -18, 0, 7, -5], np.int64)
    b = np.array([8, 12, 0, -3, 0], np.int64)
    np.testing.assert_array_equal(np_of(core.gcd(arr(a, np.int64), arr(b, np.int64))), np.gcd(a, b))
    np.testing.assert_array_equal(np_of(core.lcm(arr(a, np.int64), arr(b, np.int64))), np.lcm(a, b))
    x = arr([-8, 8, 1, -1, 64], np.int8)
    s = arr([-1, 8, 7, 9, 1], np.int8)
    np.testing.assert_array_equal(np_of(core.left_shift(x, s)), [0, 0, -128, 0, -128])
    np.testing.assert_array_equal(np_of(core.right_shift(x, s)), [-1, 0, 0, -1, 32])
    u = arr([200, 1], np.uint8)
    np.testing.assert_array_equal(np_of(core.right_shift(u, arr([9, 0], np.uint8))), [0, 1])
    np.testing.assert_array_equal(np_of(core.left_shift(u, arr([1, 7], np.uint8))), [144, 128])


def test_wrong_dtypes_raise_naming_the_op():
    f = arr([1.0])
    i = arr([1], np.int64)
    b = arr([True], np.bool_)
    with pytest.raises(TypeError, match="gcd"):
        core.gcd(f, f)
    with pytest.raises(TypeError, match="left_shift"):
        core.left_shift(b, b)
    with pytest.raises(TypeError, match="hypot"):
        core.hypot_p.bind(i, i)
    with pytest.raises(TypeError, match="arcsin"):
        core.arcsin_p.bind(i)
    with pytest.raises(TypeError, match="positive"):
        core.positive(b)
    with pytest.raises(TypeError, match="signbit"):
        core.signbit(arr([1j], np.complex128))
    with pytest.raises(ValueError, match="cannot broadcast"):
        core.hypot(arr([1.0, 2.0]), arr([1.0, 2.0, 3.0]))


def test_nan_to_num_defaults_and_arguments():
    x = arr([np.nan, np.inf, -np.inf, 1.5], np.float16)
    np.testing.assert_array_equal(np_of(core.nan_to_num(x)), [0, 65504, -65504, 1.5])
    np.testing.assert_array_equal(np_of(core.nan_to_num(x, nan=2.0, posinf=3.0, neginf=-3.0)), [2, 3, -3, 1.5])
    z = arr([complex(np.nan, np.inf), 1 + 2j], np.complex128)
    want = np.nan_to_num(np.array([complex(np.nan, np.inf), 1 + 2j]))
    np.testing.assert_array_equal(np_of(core.nan_to_num(z)), want)
    assert core.nan_to_num(arr([1, 2], np.int32)).dtype is core.int32


# ---------------------------------------------------------------------------
# derivatives


def _grad(fn, x):
    return np_of(core.grad(lambda v: core.sum(fn(v)))(arr(x)))


DERIVATIVES = {
    "arcsin": (core.arcsin, lambda x: 1 / np.sqrt(1 - x * x), [-0.6, 0.2, 0.8]),
    "arccos": (core.arccos, lambda x: -1 / np.sqrt(1 - x * x), [-0.6, 0.2, 0.8]),
    "arctan": (core.arctan, lambda x: 1 / (1 + x * x), [-2.0, 0.2, 3.0]),
    "sinh": (core.sinh, np.cosh, [-2.0, 0.2, 3.0]), "cosh": (core.cosh, np.sinh, [-2.0, 0.2, 3.0]),
    "arcsinh": (core.arcsinh, lambda x: 1 / np.sqrt(x * x + 1), [-2.0, 0.2, 3.0]),
    "arccosh": (core.arccosh, lambda x: 1 / np.sqrt(x * x - 1), [1.2, 2.0, 5.0]),
    "arctanh": (core.arctanh, lambda x: 1 / (1 - x * x), [-0.6, 0.2, 0.8]),
    "exp2": (core.exp2, lambda x: np.log(2) * np.exp2(x), [-2.0, 0.2, 3.0]),
    "i0": (core.i0, sc.i1, [-2.0, 0.0, 3.0]),
    "i1": (core.special.i1, lambda x: sc.ivp(1, x), [-2.0, 0.0, 3.0]),
    "i0e": (core.special.i0e, lambda x: sc.i1e(x) - np.sign(x) * sc.i0e(x), [-2.0, 0.5, 3.0]),
    "i1e": (core.special.i1e, lambda x: np.exp(-np.abs(x)) * (sc.ivp(1, x) - np.sign(x) * sc.i1(x)),
            [-2.0, 0.5, 3.0]),
    "sinc": (core.sinc, lambda x: np.where(x == 0, 0.0, (np.cos(np.pi * x) * np.pi * x - np.sin(np.pi * x))
                                           / (np.pi * np.where(x == 0, 1, x) ** 2)), [-1.5, 0.0, 0.3]),
    "frac": (core.frac, np.ones_like, [-1.5, 0.3, 2.7]),
    "nan_to_num": (core.nan_to_num, lambda x: np.isfinite(x).astype(float), [np.inf, 1.0, np.nan, -np.inf]),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_first_derivatives_match_closed_forms(name):
    fn, d, x = DERIVATIVES[name]
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(_grad(fn, x), d(x), rtol=1e-10, atol=1e-12)


def test_i1_second_derivative_is_smooth_through_zero():
    h = 1e-4
    g = core.grad(lambda v: core.sum(core.grad(lambda w: core.sum(core.special.i1(w)))(v)))
    at0 = np_of(g(arr([0.0, 1e-3])))
    fd = (sc.ivp(1, np.array([h, 1e-3 + h]), 2) + sc.ivp(1, np.array([-h, 1e-3 - h]), 2)) / 2
    np.testing.assert_allclose(at0, fd, atol=1e-6)


def test_arctan2_derivative_at_the_origin_is_zero_to_every_order():
    # torch's rule: 1 / (x^2 + y^2) taken as 0 where the sum is 0 (0/0 otherwise); the same rule for grad and jvp
    f = lambda a, b: core.sum(core.arctan2(a, b))  # noqa: E731
    zero = arr([0.0, -0.0, 1e-200])  # 1e-200 squared underflows: also the origin to the rule, as in torch
    gx, gy = core.grad(f, argnums=(0, 1))(zero, zero)
    np.testing.assert_array_equal(np_of(gx), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np_of(gy), [0.0, 0.0, 0.0])
    _, t = core.jvp(f, (zero, zero), (arr([1.0, 1.0, 1.0]), arr([1.0, -2.0, 3.0])))
    assert np_of(t) == 0.0
    h = core.hessian(lambda v: f(v[0], v[1]))(arr([0.0, 0.0]))
    assert np.all(np.isfinite(np_of(h)))
    # off the origin: the closed form, also one order up
    p = np.array([0.3, 0.7])
    h = np_of(core.hessian(lambda v: f(v[0], v[1]))(arr(p)))
    yv, xv = p
    r4 = (xv * xv + yv * yv) ** 2
    np.testing.assert_allclose(h, [[-2 * xv * yv / r4, (yv * yv - xv * xv) / r4],
                                   [(yv * yv - xv * xv) / r4, 2 * xv * yv / r4]])


def test_binary_partials_match_closed_forms():
    x, y = np.array([0.5, -1.5, 2.0]), np.array([1.2, 0.7, -3.0])
    gx, gy = core.grad(lambda a, b: core.sum(core.arctan2(a, b)), argnums=(0, 1))(arr(x), arr(y))
    np.testing.assert_allclose(np_of(gx), y / (x * x + y * y))
    np.testing.assert_allclose(np_of(gy), -x / (x * x + y * y))
    gx, gy = core.grad(lambda a, b: core.sum(core.hypot(a, b)), argnums=(0, 1))(arr(x), arr(y))
    np.testing.assert_allclose(np_of(gx), x / np.hypot(x, y))
    gx, gy = core.grad(lambda a, b: core.sum(core.logaddexp(a, b)), argnums=(0, 1))(arr(x), arr(y))
    np.testing.assert_allclose(np_of(gx), 1 / (1 + np.exp(y - x)))
    np.testing.assert_allclose(np_of(gx) + np_of(gy), 1.0)
    # ties: half each, as the true derivative
    gx, gy = core.grad(lambda a, b: core.sum(core.logaddexp(a, b)), argnums=(0, 1))(arr([1.0]), arr([1.0]))
    assert np_of(gx)[0] == 0.5 and np_of(gy)[0] == 0.5
    gx, gy = core.grad(lambda a, b: core.sum(core.fmax(a, b)), argnums=(0, 1))(arr([1.0, 2.0, np.nan]),
                                                                               arr([1.0, np.nan, 3.0]))
    np.testing.assert_array_equal(np_of(gx), [1.0, 1.0, 0.0])  # ties to the first operand, nan ignored
    np.testing.assert_array_equal(np_of(gy), [0.0, 0.0, 1.0])
    gx, gy = core.grad(lambda a, b: core.sum(core.copysign(a, b)), argnums=(0, 1))(arr([0.0, 2.0, -2.0]),
                                                                                   arr([-1.0, -1.0, 1.0]))
    np.testing.assert_array_equal(np_of(gx), [0.0, -1.0, -1.0])
    np.testing.assert_array_equal(np_of(gy), [0.0, 0.0, 0.0])


HOLOMORPHIC = {
    "arcsin": (core.arcsin, lambda z: 1 / np.sqrt(1 - z * z)), "arccos": (core.arccos, lambda z: -1 / np.sqrt(1 - z * z)),
    "arctan": (core.arctan, lambda z: 1 / (1 + z * z)), "sinh": (core.sinh, np.cosh), "cosh": (core.cosh, np.sinh),
    "arcsinh": (core.arcsinh, lambda z: 1 / np.sqrt(z * z + 1)),
    "arccosh": (core.arccosh, lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1))),
    "arctanh": (core.arctanh, lambda z: 1 / (1 - z * z)), "exp2": (core.exp2, lambda z: np.log(2) * np.exp2(z)),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_complex_derivatives_are_holomorphic_without_conjugation(name):
    fn, d = HOLOMORPHIC[name]
    z = np.array([0.3 + 0.4j, -0.5 + 0.2j, 1.5 - 0.7j])
    out, pullback = core.vjp(fn, arr(z, np.complex128))
    g = np.array([1.0 + 0.0j, 0.5 - 1.0j, -2.0 + 0.3j])
    (cz,) = pullback(arr(g, np.complex128))
    np.testing.assert_allclose(np_of(cz), g * d(z), rtol=1e-10)
    # against a complex central difference of the lowering itself
    h = 1e-6
    fd = (np_of(fn(arr(z + h, np.complex128))) - np_of(fn(arr(z - h, np.complex128)))) / (2 * h)
    np.testing.assert_allclose(d(z), fd, rtol=1e-6)
    _, tangent = core.jvp(fn, (arr(z, np.complex128),), (arr(g, np.complex128),))
    np.testing.assert_allclose(np_of(tangent), g * d(z), rtol=1e-10)


# ---------------------------------------------------------------------------
# transforms and devices


def test_vmap_matches_per_slice():
    x = np.random.default_rng(0).uniform(-0.9, 0.9, size=(3, 4))
    y = np.random.default_rng(1).uniform(0.1, 2.0, size=(4,))
    for fn in (lambda a: core.arctanh(a), lambda a: core.hypot(a, arr(y)), lambda a: core.logaddexp(a, arr(y)),
               lambda a: core.copysign(arr(y), a), lambda a: core.fmax(a, arr(y)), lambda a: core.nan_to_num(a),
               lambda a: core.special.i1e(a), lambda a: core.sinc(a)):
        batched = np_of(core.vmap(fn)(arr(x)))
        np.testing.assert_allclose(batched, np.stack([np_of(fn(arr(r))) for r in x]), rtol=1e-14)
    ix = arr([[1, 2, 3], [4, 5, 6]], np.int32)
    np.testing.assert_array_equal(np_of(core.vmap(lambda a: core.left_shift(a, arr([1, 2, 3], np.int32)))(ix)),
                                  np.left_shift(np_of(ix), [1, 2, 3]))


def test_meta_arrays_give_shapes_and_dtypes_only():
    x = core.zeros((2, 3), dtype=core.float32, device=core.meta)
    y = core.zeros((3,), dtype=core.float32, device=core.meta)
    for out in (core.arcsin(x), core.hypot(x, y), core.logaddexp(x, y), core.copysign(x, y), core.nan_to_num(x),
                core.sinc(x), core.i0(x), core.fmin(x, y)):
        assert out.shape == (2, 3) and out.dtype is core.float32 and out.device is core.meta
    assert core.signbit(x).dtype is core.bool_
    # a derivative rule runs on meta values too
    g = core.grad(lambda v: core.sum(core.arccosh(v)))(x)
    assert g.shape == (2, 3) and g.device is core.meta
