"""core.special and torch.special against scipy.special: values over each function's domain, dtypes kept,
derivatives (first order against scipy's own derivative formulas, higher orders against central
differences), vmap against per-slice, meta shapes, and the errors for bad input."""
import math

import numpy as np
import pytest
import scipy.special as sc

import mindtorch_v2 as torch
from mindtorch_v2 import core

SP = core.special
RNG = np.random.default_rng(0)


def arr(x, dtype=np.float64):
    return core.asarray(np.asarray(x, dtype))


def np_of(a):
    return np.asarray(a.numpy() if hasattr(a, "numpy") else a)


# ---------------------------------------------------------------------------
# values: (core function, scipy reference, domain)

UNARY = {
    "erf": (SP.erf, sc.erf, (-4, 4)),
    "erfc": (SP.erfc, sc.erfc, (-4, 10)),
    "erfcx": (SP.erfcx, sc.erfcx, (-3, 30)),
    "erfinv": (SP.erfinv, sc.erfinv, (-0.999, 0.999)),
    "ndtr": (SP.ndtr, sc.ndtr, (-40, 8)),
    "ndtri": (SP.ndtri, sc.ndtri, (1e-6, 1 - 1e-6)),
    "log_ndtr": (SP.log_ndtr, sc.log_ndtr, (-60, 8)),
    "gammaln": (SP.gammaln, sc.gammaln, (0.05, 40)),
    "digamma": (SP.digamma, sc.psi, (0.05, 40)),
    "i0": (SP.i0, sc.i0, (-20, 20)),
    "i0e": (SP.i0e, sc.i0e, (-50, 50)),
    "i1": (SP.i1, sc.i1, (-20, 20)),
    "i1e": (SP.i1e, sc.i1e, (-50, 50)),
    "j0": (SP.j0, sc.j0, (-30, 30)),
    "j1": (SP.j1, sc.j1, (-30, 30)),
    "y0": (SP.y0, sc.y0, (0.05, 30)),
    "y1": (SP.y1, sc.y1, (0.05, 30)),
    "k0": (SP.k0, sc.k0, (0.05, 30)),
    "k1": (SP.k1, sc.k1, (0.05, 30)),
    "k0e": (SP.k0e, sc.k0e, (0.05, 300)),
    "k1e": (SP.k1e, sc.k1e, (0.05, 300)),
    "airy_ai": (SP.airy_ai, lambda x: sc.airy(x)[0], (-10, 5)),
    "expit": (SP.expit, sc.expit, (-30, 30)),
    "logit": (SP.logit, sc.logit, (1e-6, 1 - 1e-6)),
    "entr": (SP.entr, sc.entr, (0, 20)),
    "spherical_bessel_j0": (SP.spherical_bessel_j0, lambda x: sc.spherical_jn(0, x), (-20, 20)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_scipy(name):
    fn, ref, (lo, hi) = UNARY[name]
    x = np.concatenate([np.linspace(lo, hi, 41), RNG.uniform(lo, hi, 20)])
    np.testing.assert_allclose(np_of(fn(arr(x))), ref(x), rtol=1e-12, atol=1e-14, err_msg=name)
    out32 = fn(arr(x, np.float32))
    assert out32.dtype is core.float32
    np.testing.assert_allclose(np_of(out32), ref(x.astype(np.float32)).astype(np.float32), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["erfc", "gammaln", "digamma", "i0", "j0", "entr", "ndtr", "logit"])
def test_integer_and_bool_inputs_give_the_default_float(name):
    fn = UNARY[name][0]
    for x in (np.array([1, 2, 3]), np.array([True, False])):
        out = fn(core.asarray(x))
        assert out.dtype is core.float32
        np.testing.assert_allclose(np_of(out), np_of(fn(arr(x.astype(np.float64)))), rtol=1e-6)


def test_polygamma_and_multigammaln_match_scipy():
    x = np.linspace(0.1, 12, 30)
    for n in range(5):
        np.testing.assert_allclose(np_of(SP.polygamma(n, arr(x))), sc.polygamma(n, x), rtol=1e-10)
    for d in (1, 2, 5):
        a = np.linspace((d - 1) / 2 + 0.05, 20, 17)
        np.testing.assert_allclose(np_of(SP.multigammaln(arr(a), d)), [sc.multigammaln(v, d) for v in a], rtol=1e-10)


def test_binary_functions_match_scipy():
    a = RNG.uniform(0.1, 6, 25)
    x = RNG.uniform(0.0, 8, 25)
    np.testing.assert_allclose(np_of(SP.gammainc(arr(a), arr(x))), sc.gammainc(a, x), rtol=1e-10)
    np.testing.assert_allclose(np_of(SP.gammaincc(arr(a), arr(x))), sc.gammaincc(a, x), rtol=1e-10)
    s = RNG.uniform(1.1, 6, 25)
    np.testing.assert_allclose(np_of(SP.zeta(arr(s), arr(x + 0.1))), sc.zeta(s, x + 0.1), rtol=1e-10)
    y = RNG.uniform(-0.9, 5, 25)
    x0 = np.where(RNG.uniform(size=25) < 0.3, 0.0, x)
    np.testing.assert_allclose(np_of(SP.xlogy(arr(x0), arr(y + 1))), sc.xlogy(x0, y + 1), rtol=1e-12)
    np.testing.assert_allclose(np_of(SP.xlog1py(arr(x0), arr(y))), sc.xlog1py(x0, y), rtol=1e-12)


def test_xlogy_zero_times_a_singular_log_is_zero_unless_nan():
    x = arr([0.0, 0.0, 0.0, 0.0, 1.0])
    y = arr([0.0, -1.0, np.inf, np.nan, 0.0])
    np.testing.assert_array_equal(np_of(SP.xlogy(x, y)), [0.0, 0.0, 0.0, np.nan, -np.inf])
    np.testing.assert_array_equal(np_of(SP.xlog1py(x, arr([-1.0, -2.0, np.inf, np.nan, -1.0]))),
                                  [0.0, 0.0, 0.0, np.nan, -np.inf])


POLYNOMIALS = {
    "chebyshev_polynomial_t": sc.eval_chebyt, "chebyshev_polynomial_u": sc.eval_chebyu,
    "hermite_polynomial_h": sc.eval_hermite, "hermite_polynomial_he": sc.eval_hermitenorm,
    "laguerre_polynomial_l": sc.eval_laguerre, "legendre_polynomial_p": sc.eval_legendre,
    "shifted_chebyshev_polynomial_t": lambda n, x: sc.eval_chebyt(n, 2 * x - 1),
    "shifted_chebyshev_polynomial_u": lambda n, x: sc.eval_chebyu(n, 2 * x - 1),
}


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_polynomials_match_scipy_with_truncated_degrees(name):
    x = np.linspace(-1.2, 1.2, 13)
    for n in (0, 1, 2, 5, 9):
        ref = POLYNOMIALS[name](n, x)
        np.testing.assert_allclose(np_of(getattr(SP, name)(arr(x), n)), ref, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(np_of(getattr(SP, name)(arr(x), n + 0.7)), ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(np_of(getattr(SP, name)(arr(x), -1)), np.zeros_like(x))


def test_chebyshev_third_and_fourth_kinds_by_their_recurrences():
    x = np.linspace(-1, 1, 9)
    v = [np.ones_like(x), 2 * x - 1]
    w = [np.ones_like(x), 2 * x + 1]
    for _ in range(5):
        v.append(2 * x * v[-1] - v[-2])
        w.append(2 * x * w[-1] - w[-2])
    for n in range(7):
        np.testing.assert_allclose(np_of(SP.chebyshev_polynomial_v(arr(x), n)), v[n], atol=1e-12)
        np.testing.assert_allclose(np_of(SP.chebyshev_polynomial_w(arr(x), n)), w[n], atol=1e-12)
        np.testing.assert_allclose(np_of(SP.shifted_chebyshev_polynomial_v(arr((x + 1) / 2), n)), v[n], atol=1e-12)


# ---------------------------------------------------------------------------
# derivatives: first order against closed forms from scipy, second order against central differences

DERIVATIVES = {
    "erfc": (SP.erfc, lambda x: -2 / math.sqrt(math.pi) * np.exp(-x * x), (-3, 3)),
    "erfcx": (SP.erfcx, lambda x: 2 * x * sc.erfcx(x) - 2 / math.sqrt(math.pi), (-2, 20)),
    "erfinv": (SP.erfinv, lambda x: math.sqrt(math.pi) / 2 * np.exp(sc.erfinv(x) ** 2), (-0.95, 0.95)),
    "ndtri": (SP.ndtri, lambda x: math.sqrt(2 * math.pi) * np.exp(sc.ndtri(x) ** 2 / 2), (0.01, 0.99)),
    "log_ndtr": (SP.log_ndtr, lambda x: np.exp(-x * x / 2 - sc.log_ndtr(x)) / math.sqrt(2 * math.pi), (-30, 6)),
    "ndtr": (SP.ndtr, lambda x: np.exp(-x * x / 2) / math.sqrt(2 * math.pi), (-6, 6)),
    "gammaln": (SP.gammaln, sc.psi, (0.1, 20)),
    "digamma": (SP.digamma, lambda x: sc.polygamma(1, x), (0.1, 20)),
    "i0": (SP.i0, sc.i1, (-8, 8)),
    "i0e": (SP.i0e, lambda x: sc.i1e(x) - np.sign(x) * sc.i0e(x), (-8, 8)),
    "i1": (SP.i1, lambda x: (sc.iv(0, x) + sc.iv(2, x)) / 2, (-8, 8)),
    "i1e": (SP.i1e, lambda x: (sc.ive(0, x) + sc.ive(2, x)) / 2 - np.sign(x) * sc.i1e(x), (-8, 8)),
    "j0": (SP.j0, lambda x: -sc.j1(x), (-10, 10)),
    "j1": (SP.j1, lambda x: sc.jvp(1, x), (-10, 10)),
    "y0": (SP.y0, lambda x: sc.yvp(0, x), (0.2, 10)),
    "y1": (SP.y1, lambda x: sc.yvp(1, x), (0.2, 10)),
    "k0": (SP.k0, lambda x: sc.kvp(0, x), (0.2, 10)),
    "k1": (SP.k1, lambda x: sc.kvp(1, x), (0.2, 10)),
    "k0e": (SP.k0e, lambda x: sc.k0e(x) - sc.k1e(x), (0.2, 10)),
    "k1e": (SP.k1e, lambda x: sc.k1e(x) + np.exp(x) * sc.kvp(1, x), (0.2, 10)),
    "entr": (SP.entr, lambda x: -1 - np.log(x), (0.1, 5)),
    "logit": (SP.logit, lambda x: 1 / (x * (1 - x)), (0.05, 0.95)),
    "spherical_bessel_j0": (SP.spherical_bessel_j0, lambda x: sc.spherical_jn(0, x, derivative=True), (-8, 8)),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_first_derivatives_match_closed_forms(name):
    fn, d, (lo, hi) = DERIVATIVES[name]
    x = np.concatenate([np.linspace(lo, hi, 15), [0.0] if lo < 0 < hi else []])
    g = core.vmap(core.grad(fn))(arr(x))
    np.testing.assert_allclose(np_of(g), d(x), rtol=1e-9, atol=1e-11, err_msg=name)


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_second_derivatives_match_central_differences(name):
    fn, d, (lo, hi) = DERIVATIVES[name]
    x = np.linspace(lo, hi, 8)[1:-1]  # not 0: i0e / i1e have a kink there (e^-|x|)
    h = 1e-5
    g2 = core.vmap(core.grad(core.grad(fn)))(arr(x))
    np.testing.assert_allclose(np_of(g2), (d(x + h) - d(x - h)) / (2 * h), rtol=1e-5, atol=1e-6, err_msg=name)


def test_polygamma_derivative_chain_and_multigammaln_gradient():
    x = np.linspace(0.3, 6, 9)
    for n in range(4):
        g = core.vmap(core.grad(lambda t: SP.polygamma(n, t)))(arr(x))
        np.testing.assert_allclose(np_of(g), sc.polygamma(n + 1, x), rtol=1e-10)
    g = core.grad(lambda a: core.sum(SP.multigammaln(a, 3)))(arr(x + 1.5))
    np.testing.assert_allclose(np_of(g), sum(sc.psi(x + 1.5 - j / 2) for j in range(3)), rtol=1e-10)


def test_incomplete_gamma_and_zeta_derivatives_in_their_second_argument():
    a, x = 2.5, np.linspace(0.2, 6, 8)
    g = core.vmap(core.grad(lambda t: SP.gammainc(arr(a), t)))(arr(x))
    np.testing.assert_allclose(np_of(g), np.exp((a - 1) * np.log(x) - x - sc.gammaln(a)), rtol=1e-10)
    g = core.vmap(core.grad(lambda t: SP.gammaincc(arr(a), t)))(arr(x))
    np.testing.assert_allclose(np_of(g), -np.exp((a - 1) * np.log(x) - x - sc.gammaln(a)), rtol=1e-10)
    g = core.vmap(core.grad(lambda q: SP.zeta(arr(3.0), q)))(arr(x))
    np.testing.assert_allclose(np_of(g), -3.0 * sc.zeta(4.0, x), rtol=1e-10)


def test_sinc_derivatives_at_zero_are_the_series_ones():
    g = core.grad
    np.testing.assert_allclose(np_of(g(g(core.sinc))(arr(0.0))), -math.pi ** 2 / 3, rtol=1e-12)
    np.testing.assert_allclose(np_of(g(g(SP.spherical_bessel_j0))(arr(0.0))), -1 / 3, rtol=1e-12)
    np.testing.assert_allclose(np_of(g(g(g(g(SP.spherical_bessel_j0))))(arr(0.0))), 1 / 5, rtol=1e-12)
    assert np_of(g(core.sinc)(arr(0.0))) == 0.0


def test_xlogy_gradients_at_zero():
    gx, gy = core.grad(lambda x, y: core.sum(SP.xlogy(x, y)), argnums=(0, 1))(arr([0.0, 0.0, 2.0]),
                                                                              arr([0.5, 0.0, 3.0]))
    np.testing.assert_allclose(np_of(gx), [math.log(0.5), 0.0, math.log(3.0)])
    np.testing.assert_allclose(np_of(gy), [0.0, np.nan, 2.0 / 3.0])  # x / y, torch's (and JAX's): 0/0 at (0, 0)


def test_vmap_matches_per_slice_for_binary_and_parametrised_functions():
    x = arr(RNG.uniform(0.2, 3, (4, 5)))
    n = arr(RNG.integers(0, 6, (4, 5)).astype(np.float64))
    out = core.vmap(SP.chebyshev_polynomial_t)(x, n)
    for i in range(4):
        np.testing.assert_allclose(np_of(out[i]), np_of(SP.chebyshev_polynomial_t(x[i], n[i])))
    out = core.vmap(lambda t: SP.polygamma(2, t), in_axes=1, out_axes=1)(x)
    np.testing.assert_allclose(np_of(out), sc.polygamma(2, np_of(x)), rtol=1e-10)
    out = core.vmap(SP.gammainc, in_axes=(None, 0))(arr(1.5), x)
    np.testing.assert_allclose(np_of(out), sc.gammainc(1.5, np_of(x)), rtol=1e-10)


def test_meta_arrays_give_shapes_and_dtypes_only():
    x = core.zeros((3, 4), dtype=core.float32, device="meta")
    for fn in (SP.erfcx, SP.gammaln, SP.i1e, SP.k1, SP.entr, SP.ndtr, lambda t: SP.polygamma(2, t),
               lambda t: SP.multigammaln(t, 3), lambda t: SP.legendre_polynomial_p(t, 3)):
        out = fn(x)
        assert out.shape == (3, 4) and out.dtype is core.float32 and out.device.type == "meta"


# ---------------------------------------------------------------------------
# errors


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="negative"):
        SP.polygamma(-1, arr([1.0]))
    with pytest.raises(TypeError, match="int"):
        SP.polygamma(1.5, arr([1.0]))
    with pytest.raises(ValueError, match="cannot broadcast"):
        SP.zeta(arr([1.0, 2.0]), arr([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        SP.erfc(core.asarray(np.array([1 + 1j])))


def test_torch_special_errors_follow_torch():
    with pytest.raises(RuntimeError, match="does not support negative n"):
        torch.polygamma(-1, torch.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        torch.special.bessel_j0(torch.tensor([1.0], dtype=torch.float16))
    with pytest.raises(NotImplementedError, match="round"):
        torch.special.round(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="boolean"):
        torch.mvlgamma(torch.tensor([True]), 2)


def test_torch_special_names_are_the_torch_functions():
    x = torch.tensor([0.3, 1.7])
    assert torch.special.expit(x).tolist() == torch.sigmoid(x).tolist()
    assert torch.special.gammaln(x).tolist() == torch.lgamma(x).tolist()
    assert torch.special.psi(x).tolist() == torch.digamma(x).tolist()
    assert torch.special.multigammaln(x + 1, 2).tolist() == torch.mvlgamma(x + 1, 2).tolist()
    for name in ("erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "i0", "sinc", "logit", "xlogy", "softmax",
                 "log_softmax", "logsumexp", "round"):
        assert callable(getattr(torch.special, name))
    out = torch.empty(2)
    assert torch.special.erfcx(x, out=out) is out
