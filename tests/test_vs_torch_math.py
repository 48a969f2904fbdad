"""Differential tests: the elementary and special functions (torch.asin ... torch.lcm, torch.special) against
PyTorch's recorded answers in tests/goldens/vs_torch_math.{json.gz,npz}.

Cases are functions of a library module `L` (torch or mindtorch_v2) on numpy inputs with fixed values (see
tests/_goldens.py); values, dtypes, errors, in-place and out= forms and gradients (first and second order,
through tests/test_vs_torch_eager.py's gradient trace) are compared. Regenerate where torch is installed with
`python tests/record_goldens.py math`.
"""
import numpy as np
import pytest

import mindtorch_v2 as mt
from _goldens import Goldens, golden_fixtures, torch_lib
from test_vs_torch_eager import _grad_trace, assert_same, compare_with

GOLDEN = Goldens("vs_torch_math")
_golden_file, _golden_case = golden_fixtures(GOLDEN)


compare = compare_with(GOLDEN)


def grads_with(store):
    """`grads` against the goldens of a test module's store (this one's, tests/test_surface_breadth.py's)."""
    def grads(fn, *arrays, second_order=True, seed=0, rtol=None, atol=None):
        """fn's gradients (first order, and second order with create_graph) against torch's."""
        tf, ts = store(lambda: _grad_trace(torch_lib(), fn, arrays, second_order, seed))
        if store.recording:
            return
        mf, ms = _grad_trace(mt, fn, arrays, second_order, seed)
        for order, (m, t) in enumerate(((mf, tf), (ms, ts))):
            if t is None:
                continue
            if m is None and order == 1:
                # a gradient piecewise constant in x (hardshrink's where): torch keeps a graph with zero second
                # derivative, mindtorch's has none. The same numbers.
                assert all(b is None or not np.any(b.data) for b in t), "second order: torch has a graph, mindtorch not"
                continue
            assert m is not None, f"order {order + 1}: torch has gradients, mindtorch none"
            for i, (a, b) in enumerate(zip(m, t)):
                if b is None or not np.any(b.data):
                    assert a is None or not np.any(a.numpy()), f"order {order + 1} grad of input {i}: torch 0"
                    continue
                assert a is not None, f"order {order + 1} grad of input {i}: mindtorch None, torch {b}"
                assert_same(a, b, f"order {order + 1} grad of input {i}", True, rtol, atol)
    return grads


grads = grads_with(GOLDEN)


# ---------------------------------------------------------------------------
# inputs

NP = {"bool": np.bool_, "uint8": np.uint8, "int32": np.int32, "int64": np.int64, "float16": np.float16,
      "float32": np.float32, "float64": np.float64}
DTYPES = list(NP)
SPECIAL_VALUES = [-np.inf, -3.5, -2.0, -1.0, -0.7, -0.0, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5, 2.0, 4.5, 12.0, np.inf, np.nan]


def values(dtype):
    """Every interesting point of the domains (poles, 0, +-1, infinities, nan) in `dtype`."""
    if dtype == "bool":
        return np.array([True, False, True])
    if dtype == "uint8":
        return np.array([0, 1, 2, 3, 7], np.uint8)
    if dtype in ("int32", "int64"):
        return np.array([-3, -1, 0, 1, 2, 5], NP[dtype])
    return np.array(SPECIAL_VALUES, NP[dtype])


def half_tol(dtype):
    return (2e-3, 2e-3) if dtype == "float16" else (None, None)


# ---------------------------------------------------------------------------
# unary functions over every dtype: values, result dtype, or torch's refusal

UNARY = {
    "asin": lambda L, x: L.asin(x), "acos": lambda L, x: L.acos(x), "atan": lambda L, x: L.atan(x),
    "sinh": lambda L, x: L.sinh(x), "cosh": lambda L, x: L.cosh(x), "asinh": lambda L, x: L.asinh(x),
    "acosh": lambda L, x: L.acosh(x), "atanh": lambda L, x: L.atanh(x), "arcsin": lambda L, x: L.arcsin(x),
    "arctanh": lambda L, x: L.arctanh(x), "exp2": lambda L, x: L.exp2(x), "sinc": lambda L, x: L.sinc(x),
    "deg2rad": lambda L, x: L.deg2rad(x), "rad2deg": lambda L, x: L.rad2deg(x), "erfc": lambda L, x: L.erfc(x),
    "erfinv": lambda L, x: L.erfinv(x), "lgamma": lambda L, x: L.lgamma(x), "digamma": lambda L, x: L.digamma(x),
    "i0": lambda L, x: L.i0(x), "frac": lambda L, x: L.frac(x), "signbit": lambda L, x: L.signbit(x),
    "isposinf": lambda L, x: L.isposinf(x), "isneginf": lambda L, x: L.isneginf(x),
    "isreal": lambda L, x: L.isreal(x), "positive": lambda L, x: L.positive(x),
    "nan_to_num": lambda L, x: L.nan_to_num(x), "nan_to_num args": lambda L, x: L.nan_to_num(x, 1.5, 7.0, -8.0),
    "logit": lambda L, x: L.logit(x), "logit eps": lambda L, x: L.logit(x, 0.2),
    "polygamma 0": lambda L, x: L.polygamma(0, x), "polygamma 1": lambda L, x: L.polygamma(1, x),
    "polygamma 3": lambda L, x: L.polygamma(3, x), "mvlgamma 1": lambda L, x: L.mvlgamma(x, 1),
    "mvlgamma 3": lambda L, x: L.mvlgamma(x, 3),
}
SPECIAL_UNARY = ["erf", "erfc", "erfcx", "erfinv", "expit", "logit", "exp2", "expm1", "log1p", "log_ndtr", "ndtr",
                 "ndtri", "gammaln", "digamma", "psi", "i0", "i0e", "i1", "i1e", "sinc", "round", "entr",
                 "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
                 "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                 "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]
for _name in SPECIAL_UNARY:
    UNARY["special." + _name] = (lambda n: lambda L, x: getattr(L.special, n)(x))(_name)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_matches_torch(op, dtype):
    rtol, atol = half_tol(dtype)
    x = values(dtype)
    if op.startswith(("polygamma", "mvlgamma", "special.")) or op in ("digamma", "lgamma", "i0", "erfinv"):
        # the special functions' last digits are their kernels' own (torch's Cephes ports vs scipy's)
        rtol, atol = rtol or 1e-6, atol or 1e-6
    if op.startswith("polygamma") and x.dtype.kind in "iuf":
        # at the poles (negative integers) torch's series gives finite garbage (1.7e16), at +-inf nan (the
        # limit at +inf is 0, which we give): not compared
        x = x[~((x < 0) & (x == np.floor(x)) | np.isinf(x))]
    compare(UNARY[op], x, what=f"{op}({dtype})", rtol=rtol, atol=atol)
    compare(UNARY[op], x[:0], what=f"{op}({dtype} empty)")


@pytest.mark.parametrize("op", ["asin", "sinh", "erfinv", "lgamma", "i0", "frac", "sinc", "nan_to_num", "logit",
                                "exp2", "deg2rad"])
def test_unary_method_inplace_out_match_torch(op):
    x = np.array([-0.7, 0.0, 0.25, 0.5, np.nan], np.float32)
    compare(lambda L, t: getattr(t, op)(), x, what=f"Tensor.{op}")
    compare(lambda L, t: getattr(t, op + "_")(), x, what=f"Tensor.{op}_")
    compare(lambda L, t: getattr(L, op)(t, out=L.empty(5)), x, what=f"{op}(out=)")
    # in place on an integer tensor: the float result cannot be cast back
    compare(lambda L, t: getattr(t, op + "_")(), np.array([1, 2], np.int64), what=f"Tensor.{op}_ on int64")


def test_polygamma_forms_match_torch():
    x = np.array([0.5, 1.0, 2.5, -1.5], np.float64)
    compare(lambda L, t: t.polygamma(2), x, rtol=1e-7, atol=1e-9)
    compare(lambda L, t: t.polygamma_(1), x, rtol=1e-7, atol=1e-9)
    compare(lambda L, t: L.polygamma(1, t, out=L.empty(4, dtype=L.float64)), x, rtol=1e-7, atol=1e-9)
    compare(lambda L, t: L.polygamma(-1, t), x)
    compare(lambda L, t: L.special.polygamma(4, t), x, rtol=1e-7, atol=1e-9)
    compare(lambda L, t: L.special.multigammaln(t, 2), np.array([1.5, 3.0]))
    compare(lambda L, t: t.mvlgamma(2), np.array([1.5, 3.0]))


def test_errors_and_special_cases_match_torch():
    compare(lambda L, t: L.positive(t), np.array([True]))
    compare(lambda L, t: t.float_power_(2), np.array([1.0, 2.0], np.float32))
    compare(lambda L, t: t.float_power_(2), np.array([1.0, 2.0], np.float64))
    compare(lambda L, t: L.float_power(t, 2), np.array([1, 2], np.int32))
    compare(lambda L, t: L.nan_to_num(t), np.array([np.nan, np.inf, -np.inf], np.float16))
    compare(lambda L, t: L.nan_to_num(t), np.array([np.nan, np.inf, -np.inf], np.float64))
    compare(lambda L, t: t.nan_to_num_(posinf=3.0), np.array([np.nan, np.inf, -np.inf], np.float32))
    compare(lambda L, t: L.logit(t, eps=0.25), np.array([0.0, 0.1, 0.5, 0.9, 1.0], np.float32))
    compare(lambda L, t: L.sinc(t), np.array([0.0, 1e-8, -0.5, 3.0], np.float64))
    compare(lambda L, t: L.signbit(t), np.array([-0.0, 0.0, -np.nan, np.nan, -1.0], np.float32))


# ---------------------------------------------------------------------------
# binary functions: dtype pairs (dimensioned, 0-dim, python scalars), values, refusals

BINARY = {
    "atan2": lambda L, a, b: L.atan2(a, b), "arctan2": lambda L, a, b: L.arctan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b), "logaddexp": lambda L, a, b: L.logaddexp(a, b),
    "logaddexp2": lambda L, a, b: L.logaddexp2(a, b), "copysign": lambda L, a, b: L.copysign(a, b),
    "nextafter": lambda L, a, b: L.nextafter(a, b), "ldexp": lambda L, a, b: L.ldexp(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b), "heaviside": lambda L, a, b: L.heaviside(a, b),
    "fmin": lambda L, a, b: L.fmin(a, b), "fmax": lambda L, a, b: L.fmax(a, b),
    "float_power": lambda L, a, b: L.float_power(a, b), "gcd": lambda L, a, b: L.gcd(a, b),
    "lcm": lambda L, a, b: L.lcm(a, b), "bitwise_left_shift": lambda L, a, b: L.bitwise_left_shift(a, b),
    "bitwise_right_shift": lambda L, a, b: L.bitwise_right_shift(a, b), "<<": lambda L, a, b: a << b,
    ">>": lambda L, a, b: a >> b,
    "special.xlogy": lambda L, a, b: L.special.xlogy(a, b), "special.xlog1py": lambda L, a, b: L.special.xlog1py(a, b),
    "special.zeta": lambda L, a, b: L.special.zeta(a, b), "special.gammainc": lambda L, a, b: L.special.gammainc(a, b),
    "special.gammaincc": lambda L, a, b: L.special.gammaincc(a, b),
}
for _k in ("t", "u", "v", "w"):
    for _name in (f"chebyshev_polynomial_{_k}", f"shifted_chebyshev_polynomial_{_k}"):
        BINARY["special." + _name] = (lambda n: lambda L, a, b: getattr(L.special, n)(a, b))(_name)
for _name in ("hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
    BINARY["special." + _name] = (lambda n: lambda L, a, b: getattr(L.special, n)(a, b))(_name)

PAIRS = [("float32", "float32"), ("float64", "float32"), ("int64", "int64"), ("int32", "float32"),
         ("uint8", "int64"), ("bool", "bool"), ("float16", "float16"), ("int16", "int16")]
_GRID_A = np.array([[-2.0, -1.0, -0.0, 0.0, 0.5, 3.0]] * 2)
_GRID_B = np.array([[1.0, -0.5, 2.0, 0.0, 0.5, 4.0], [-1.0, 3.0, -0.0, 1.0, np.nan, np.inf]])


def _pair(da, db):
    def cast(a, d):
        if d == "bool":
            return a > 0
        if d in ("uint8", "int16", "int32", "int64"):
            return np.nan_to_num(np.abs(a) if d == "uint8" else a, posinf=5).astype(d)
        return a.astype(d)
    return cast(_GRID_A, da), cast(_GRID_B, db)


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_matches_torch(op, pair):
    fn = BINARY[op]
    a, b = _pair(*pair)
    rtol, atol = half_tol(pair[0])
    if op.startswith("special.") and not op.startswith("special.x"):
        rtol, atol = rtol or 1e-5, atol or 1e-5
    if op == "special.zeta":
        b = np.where(np.isinf(b), 5, b).astype(b.dtype)  # zeta(x, inf): torch nan, the limit 0 here
    compare(fn, a, b, what=f"{op}{pair}", rtol=rtol, atol=atol)
    compare(fn, a[0], b[0, :1], what=f"{op}{pair} broadcast", rtol=rtol, atol=atol)
    compare(fn, a, b[0, 4].copy().reshape(()), what=f"{op}{pair} with a 0-dim other", rtol=rtol, atol=atol)
    for s in (2, 0.5, True):
        compare(lambda L, x: fn(L, x, s), a, what=f"{op}({pair[0]}, {s!r})", rtol=rtol, atol=atol)


SHIFTS = [np.array([-8, -1, 0, 1, 7, 100], np.int64), np.array([0, 1, 7, 8, 255], np.uint8),
          np.array([-128, -3, 0, 5, 127], np.int8)]


@pytest.mark.parametrize("i", range(len(SHIFTS)))
def test_shifts_by_any_amount_match_torch(i):
    x = SHIFTS[i]
    for s in (-1, 0, 1, 3, 7, 8, 63, 64, 100):
        compare(lambda L, t: t << s, x, what=f"{x.dtype} << {s}")
        compare(lambda L, t: t >> s, x, what=f"{x.dtype} >> {s}")
    compare(lambda L, t: 3 << t, np.array([0, 1, 4], x.dtype))
    compare(lambda L, t: 64 >> t, np.array([0, 1, 4], x.dtype))

    def ishift(L, t):
        t <<= 2
        t >>= 1
        return t
    compare(ishift, x)


@pytest.mark.parametrize("op", ["atan2", "hypot", "copysign", "nextafter", "ldexp", "xlogy", "gcd", "lcm",
                                "bitwise_left_shift", "bitwise_right_shift", "heaviside", "float_power",
                                "logaddexp", "fmax"])
def test_binary_method_inplace_out_match_torch(op):
    ints = op in ("gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift")
    dtype = np.int64 if ints else (np.float64 if op == "float_power" else np.float32)
    a = np.array([4, -6, 0, 9], dtype)
    b = np.array([6, 4, 3, 2], dtype)
    compare(lambda L, x, y: getattr(x, op)(y), a, b, what=f"Tensor.{op}")
    compare(lambda L, x, y: getattr(x, op + "_")(y) if hasattr(x, op + "_") else "none", a, b, what=f"Tensor.{op}_")
    compare(lambda L, x, y: getattr(L, op)(x, y, out=L.empty(4, dtype=x.dtype)), a, b, what=f"{op}(out=)")


def test_polynomials_degree_rules_match_torch():
    x = np.array([-1.0, -0.3, 0.0, 0.3, 1.0, 2.0], np.float64)
    n = np.array([-1.0, 0.0, 1.0, 2.5, 5.0, 7.0], np.float64)
    for name in [k for k in BINARY if "polynomial" in k]:
        compare(BINARY[name], x, n, what=name, rtol=1e-7, atol=1e-7)
        compare(lambda L, t: BINARY[name](L, t, 3), x, what=name + " (n = 3)", rtol=1e-7, atol=1e-7)


# ---------------------------------------------------------------------------
# gradients (float64), first and second order, at ordinary points and at the special ones each rule handles

GRAD = {
    "asin": (lambda L, x: x.asin(), [[-0.7, 0.1, 0.5]]),
    "acos": (lambda L, x: x.acos(), [[-0.7, 0.1, 0.5]]),
    "atan": (lambda L, x: x.atan(), [[-2.0, 0.1, 3.0]]),
    "sinh": (lambda L, x: x.sinh(), [[-2.0, 0.1, 3.0]]),
    "cosh": (lambda L, x: x.cosh(), [[-2.0, 0.1, 3.0]]),
    "asinh": (lambda L, x: x.asinh(), [[-2.0, 0.1, 3.0]]),
    "acosh": (lambda L, x: x.acosh(), [[1.2, 2.0, 5.0]]),
    "atanh": (lambda L, x: x.atanh(), [[-0.7, 0.1, 0.5]]),
    "exp2": (lambda L, x: x.exp2(), [[-2.0, 0.1, 3.0]]),
    "sinc": (lambda L, x: x.sinc(), [[-1.3, 0.2, 0.4]]),
    "sinc at 0": (lambda L, x: x.sinc(), [[-1.3, 0.0, 0.4]]),
    "deg2rad": (lambda L, x: x.deg2rad(), [[-2.0, 0.1, 3.0]]),
    "rad2deg": (lambda L, x: x.rad2deg(), [[-2.0, 0.1, 3.0]]),
    "erfc": (lambda L, x: x.erfc(), [[-2.0, 0.1, 3.0]]),
    "erfinv": (lambda L, x: x.erfinv(), [[-0.7, 0.1, 0.5]]),
    "lgamma": (lambda L, x: x.lgamma(), [[-2.5, 0.4, 3.0]]),
    "digamma": (lambda L, x: x.digamma(), [[-2.5, 0.4, 3.0]]),
    "polygamma": (lambda L, x: x.polygamma(2), [[-2.5, 0.4, 3.0]]),
    "mvlgamma": (lambda L, x: x.mvlgamma(3), [[1.2, 2.0, 5.0]]),
    "i0": (lambda L, x: x.i0(), [[-2.0, 0.0, 3.0]]),
    "frac": (lambda L, x: x.frac(), [[-2.3, 0.1, 3.6]]),
    "logit": (lambda L, x: x.logit(), [[0.1, 0.5, 0.8]]),
    "logit eps": (lambda L, x: x.logit(0.2), [[0.1, 0.5, 0.85]]),
    "nan_to_num": (lambda L, x: (x.log() * 1).nan_to_num(), [[0.0, 0.5, 2.0]]),
    "atan2": (lambda L, x, y: L.atan2(x, y), [[-2.0, 0.3, 1.0], [1.0, -0.5, 2.0]]),
    "hypot": (lambda L, x, y: L.hypot(x, y), [[-2.0, 0.3, 1.0], [1.0, -0.5, 2.0]]),
    "logaddexp": (lambda L, x, y: L.logaddexp(x, y), [[-2.0, 0.3, 1.0], [1.0, 0.3, 2.0]]),
    "logaddexp2": (lambda L, x, y: L.logaddexp2(x, y), [[-2.0, 0.3, 1.0], [1.0, 0.3, 2.0]]),
    "copysign": (lambda L, x, y: L.copysign(x, y), [[-2.0, 0.3, 1.0], [1.0, -0.5, 2.0]]),
    "ldexp": (lambda L, x, y: L.ldexp(x, y), [[-2.0, 0.3, 1.0], [1.0, -0.5, 2.0]]),
    "xlogy": (lambda L, x, y: L.xlogy(x, y), [[0.0, 0.3, 1.0], [0.7, 0.5, 2.0]]),
    "fmax": (lambda L, x, y: L.fmax(x, y), [[-2.0, 0.3, 1.0], [1.0, 0.3, 0.5]]),
    "fmin": (lambda L, x, y: L.fmin(x, y), [[-2.0, 0.3, 1.0], [1.0, 0.3, 0.5]]),
    "float_power": (lambda L, x, y: L.float_power(x, y), [[0.5, 1.3, 2.0], [1.0, -0.5, 2.0]]),
    "special.erfcx": (lambda L, x: L.special.erfcx(x), [[-2.0, 0.1, 3.0]]),
    "special.log_ndtr": (lambda L, x: L.special.log_ndtr(x), [[-9.0, 0.1, 3.0]]),
    "special.ndtr": (lambda L, x: L.special.ndtr(x), [[-2.0, 0.1, 3.0]]),
    "special.ndtri": (lambda L, x: L.special.ndtri(x), [[0.1, 0.5, 0.8]]),
    "special.i0e": (lambda L, x: L.special.i0e(x), [[-2.0, 0.3, 3.0]]),
    "special.i1": (lambda L, x: L.special.i1(x), [[-2.0, 0.0, 3.0]]),
    "special.i1e": (lambda L, x: L.special.i1e(x), [[-2.0, 0.0, 3.0]]),
    "special.entr": (lambda L, x: L.special.entr(x), [[0.1, 0.5, 3.0]]),
    "special.xlog1py": (lambda L, x, y: L.special.xlog1py(x, y), [[0.0, 0.3, 1.0], [-0.5, 0.5, 2.0]]),
    "special.zeta": (lambda L, x, y: L.special.zeta(x.detach(), y), [[2.0, 3.5, 4.0], [1.0, 0.5, 2.0]]),
    "special.gammainc": (lambda L, x, y: L.special.gammainc(x.detach(), y), [[2.0, 3.5, 1.0], [1.0, 0.5, 2.0]]),
    "special.gammaincc": (lambda L, x, y: L.special.gammaincc(x.detach(), y), [[2.0, 3.5, 1.0], [1.0, 0.5, 2.0]]),
    "special.multigammaln": (lambda L, x: L.special.multigammaln(x, 2), [[1.2, 2.0, 5.0]]),
}


@pytest.mark.parametrize("op", sorted(GRAD))
def test_gradients_match_torch(op):
    fn, inputs = GRAD[op]
    # torch: no second derivative in zeta / gammainc(c) ("not implemented"), nan for sinc's at 0 (ours: 0)
    second = op not in ("special.zeta", "special.gammainc", "special.gammaincc", "sinc at 0")
    grads(fn, *[np.array(v) for v in inputs], second_order=second, rtol=1e-7, atol=1e-9)



# ---------------------------------------------------------------------------
# complex inputs: the holomorphic functions torch supports, and torch's refusals elsewhere

COMPLEX_VALUES = np.array([0.3 + 0.4j, -1.2 + 0.5j, 2.0 - 1.0j, 0.0 + 0.0j, -0.5 - 2.0j, 1.0 + 0.0j])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "exp2", "sinc",
                                "arcsin", "isreal", "isposinf", "signbit", "erfc", "lgamma", "frac", "deg2rad",
                                "nan_to_num", "logit", "special.expit", "special.erfcx", "special.i0e",
                                "special.entr"])
def test_complex_unary_matches_torch(op, dtype):
    rtol, atol = (1e-5, 1e-6) if dtype == "complex64" else (1e-10, 1e-10)
    compare(UNARY[op], COMPLEX_VALUES.astype(dtype), what=f"{op}({dtype})", rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["atan2", "hypot", "logaddexp", "copysign", "xlogy", "fmax", "float_power", "gcd",
                                "heaviside", "special.zeta"])
def test_complex_binary_matches_torch(op):
    a = COMPLEX_VALUES.astype(np.complex64)
    compare(BINARY[op], a, a[::-1].copy(), what=f"{op}(complex64)", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "exp2", "sinc"])
def test_complex_gradients_match_torch(op):
    """PyTorch's convention (the conjugate Wirtinger derivative) at the eager boundary."""
    def trace(L):
        z = L.from_numpy(COMPLEX_VALUES[:3].copy()).requires_grad_()
        out = getattr(L, op)(z)
        (out.abs() ** 2).sum().backward()
        return z.grad
    compare(trace, what=f"grad {op}", rtol=1e-9, atol=1e-10)


def test_complex_nan_to_num_and_logaddexp_edges_match_torch():
    z = np.array([complex(np.nan, np.inf), complex(-np.inf, 1.0), 1 + 2j], np.complex64)
    compare(lambda L, t: L.nan_to_num(t), z)
    compare(lambda L, t: L.nan_to_num(t, 1.0, 2.0, -3.0), z.astype(np.complex128))
    a = np.array([1 + 1j, complex(-np.inf, 0), 3 - 1j], np.complex128)
    b = np.array([1000 + 2j, complex(-np.inf, 0), 3 - 1j], np.complex128)
    compare(lambda L, x, y: L.logaddexp(x, y), a, b, rtol=1e-10, atol=1e-10)


def test_complex_float_power_matches_torch():
    z = np.array([1 + 1j, 2 - 1j, -0.5 + 0j], np.complex64)
    compare(lambda L, t: L.float_power(t, 2), z, rtol=1e-10, atol=1e-10)
    compare(lambda L, t: L.float_power(L.tensor([1.0, 2.0, 3.0]), t), z, rtol=1e-6, atol=1e-6)
    compare(lambda L, t: t.float_power_(2), z)
    compare(lambda L, t: t.float_power_(2), z.astype(np.complex128), rtol=1e-10, atol=1e-10)
    compare(lambda L, t: t.float_power_(t), np.array([1.5, 2.0]), rtol=1e-10, atol=1e-10)
    compare(lambda L, t, u: t.float_power_(u), np.array([1.5, 2.0]), z[:2])
