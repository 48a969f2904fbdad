"""Differential tests: scans, order statistics and histograms against PyTorch's recorded answers
(tests/goldens/vs_torch_reductions.{json.gz,npz}; record with `python tests/record_goldens.py reductions`).

Values, dtypes, shapes, indices (ties included), gradients, out= pairs and the errors for bad input.
"""
import numpy as np
import pytest

from _goldens import Goldens, golden_fixtures
from test_vs_torch_eager import DTYPES, compare_with, lib_value, sample

GOLDEN = Goldens("vs_torch_reductions")
_golden_file, _golden_case = golden_fixtures(GOLDEN)

NAN = float("nan")


compare = compare_with(GOLDEN)


def _tuple(r):
    return tuple(r) if isinstance(r, tuple) else r


SHAPES = [(2, 3, 4), (5,), (), (0, 3)]


def _ties(dtype, shape, seed):
    a = sample(dtype, shape, seed=seed, low=-2, high=3)
    return np.asarray(np.round(a)) if a.dtype.kind == "f" else a


# ---------------------------------------------------------------------------
# scans


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumprod_cummax_cummin_match_torch(dtype):
    for shape in SHAPES:
        x = _ties(dtype, shape, 11)
        for dim in (0, -1, 2) if 0 not in shape else (0, -1):  # (torch skips the dim check on empty input)
            compare(lambda L, t: L.cumprod(t, dim), x, what=f"cumprod({dtype}{shape}, {dim})")
            compare(lambda L, t: t.cumprod(dim, dtype=L.float64), x, what=f"cumprod({dtype}, dtype)")
            compare(lambda L, t: _tuple(L.cummax(t, dim)), x, what=f"cummax({dtype}{shape}, {dim})")
            compare(lambda L, t: _tuple(t.cummin(dim)), x, what=f"cummin({dtype}{shape}, {dim})")


def test_cummax_cummin_nan_and_ties_match_torch():
    x = np.array([1., 3., 3., NAN, 2., NAN, 5.], np.float32)
    for fn in ("cummax", "cummin"):
        compare(lambda L, t: _tuple(getattr(L, fn)(t, 0)), x, what=fn)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_logcumsumexp_matches_torch(dtype):
    for shape in SHAPES:
        x = sample(dtype, shape, seed=12)
        for dim in (0, -1):
            compare(lambda L, t: L.logcumsumexp(t, dim), x, what=f"logcumsumexp({dtype}{shape}, {dim})")
    if dtype != "int64":
        x = np.array([-1000., 0., -np.inf, 1000., np.inf, 3.], dtype)
        compare(lambda L, t: L.logcumsumexp(t, 0), x, what="logcumsumexp extremes")


def _grad(L, fn, t):
    t = t.clone().requires_grad_(True)
    out = fn(L, t)
    out.backward(L.ones_like(out))
    return out.detach(), t.grad


def test_scan_gradients_match_torch():
    x = np.array([[1.5, 0., 2., -1., 0.], [0.5, 2., -3., 1., 0.25]])
    compare(lambda L, t: _grad(L, lambda L, t: L.cumprod(t, 1), t), x, what="cumprod grad with zeros")
    compare(lambda L, t: _grad(L, lambda L, t: L.cumprod(t, 0), t), x, what="cumprod grad dim 0")
    compare(lambda L, t: _grad(L, lambda L, t: L.cummax(t, 1).values, t), x, what="cummax grad")
    compare(lambda L, t: _grad(L, lambda L, t: L.cummin(t, 1).values, t), x, what="cummin grad")
    compare(lambda L, t: _grad(L, lambda L, t: L.logcumsumexp(t, 1), t), x, what="logcumsumexp grad")


def test_scan_out_and_errors_match_torch():
    x = np.arange(6.).reshape(2, 3)
    compare(lambda L, t: L.cumprod(t, 1, out=L.empty(0, dtype=L.float64)), x, what="cumprod out=")
    compare(lambda L, t: _tuple(L.cummax(t, 1, out=(L.empty(6, dtype=L.float64), L.empty(0, dtype=L.int64)))), x,
            what="cummax out pair")
    compare(lambda L, t: L.logcumsumexp(t, 1, out=L.empty(2, 3, dtype=L.float64)), x, what="logcumsumexp out=")
    compare(lambda L, t: t.clone().cumprod_(1), x, what="cumprod_")
    compare(lambda L, t: L.cumprod(t, 2), x, what="cumprod bad dim")
    compare(lambda L, t: L.cummax(t, -3), x, what="cummax bad dim")


# ---------------------------------------------------------------------------
# nan reductions


@pytest.mark.parametrize("dtype", DTYPES)
def test_nansum_nanmean_match_torch(dtype):
    for shape in SHAPES:
        x = sample(dtype, shape, seed=13)
        if x.dtype.kind == "f" and x.size:
            x.flat[::3] = np.nan
        for kw in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, 1)}):
            compare(lambda L, t: L.nansum(t, **kw), x, what=f"nansum({dtype}{shape}, {kw})")
            compare(lambda L, t: L.nanmean(t, **kw), x, what=f"nanmean({dtype}{shape}, {kw})")
        compare(lambda L, t: L.nansum(t, dtype=L.float64), x, what="nansum dtype")
        compare(lambda L, t: t.nanmean(dtype=L.float64), x, what="nanmean dtype")


def test_nan_reduction_gradients_match_torch():
    x = np.array([[1., NAN, 2.], [NAN, NAN, 3.]])
    compare(lambda L, t: _grad(L, lambda L, t: L.nansum(t, 1), t), x, what="nansum grad")
    compare(lambda L, t: _grad(L, lambda L, t: L.nanmean(t, 1), t), x, what="nanmean grad")


# ---------------------------------------------------------------------------
# order statistics


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_nanmedian_match_torch(dtype):
    for shape in SHAPES:
        x = sample(dtype, shape, seed=14, low=-20, high=20)  # few ties: torch's tie-breaking index is unspecified
        if x.dtype.kind == "f" and x.size:
            x = np.asarray(x + np.arange(x.size).reshape(shape) * 1e-2, x.dtype)
        compare(lambda L, t: L.median(t), x, what=f"median({dtype}{shape})")
        compare(lambda L, t: t.nanmedian(), x, what=f"nanmedian({dtype}{shape})")
        for dim in (0, -1):
            for keep in (False, True):
                compare(lambda L, t: _tuple(L.median(t, dim, keep)), x, what=f"median({dtype}{shape}, {dim})")
                compare(lambda L, t: _tuple(L.nanmedian(t, dim, keepdim=keep)), x, what="nanmedian dim")


def test_median_with_nan_matches_torch():
    x = np.array([[1., NAN, 2., NAN], [4., 3., 2., 1.], [NAN, NAN, NAN, NAN], [5., NAN, 1., 2.]], np.float32)
    compare(lambda L, t: L.median(t), x, what="median nan")
    compare(lambda L, t: L.nanmedian(t), x, what="nanmedian nan")
    compare(lambda L, t: _tuple(L.median(t, 1)), x, what="median nan dim")
    # (the index torch reports for an all-nan slice depends on its selection algorithm: values only there)
    compare(lambda L, t: _tuple(L.nanmedian(t[[0, 1, 3]], 1)), x, what="nanmedian nan dim")
    compare(lambda L, t: L.nanmedian(t, 1).values, x, what="nanmedian all-nan row")


def test_order_statistic_gradients_match_torch():
    x = np.array([[1., 2., 2., 3.], [4., 0.5, 7., 1.]])
    compare(lambda L, t: _grad(L, lambda L, t: L.median(t), t), x, what="median() grad, ties share")
    compare(lambda L, t: _grad(L, lambda L, t: L.median(t, 1).values, t), x, what="median(dim) grad")
    compare(lambda L, t: _grad(L, lambda L, t: L.kthvalue(t, 3, 1).values, t), x, what="kthvalue grad")
    compare(lambda L, t: _grad(L, lambda L, t: L.quantile(t, 0.3, 1), t), x, what="quantile grad")
    y = np.array([[1., 2., 2., 3.], [4., 4., 7., 1.]])
    compare(lambda L, t: _grad(L, lambda L, t: L.mode(t, 1).values, t), y, what="mode grad")


@pytest.mark.parametrize("dtype", DTYPES)
def test_kthvalue_mode_match_torch(dtype):
    for shape in [(3, 4), (6,), ()]:
        x = sample(dtype, shape, seed=15, low=-30, high=30)
        if x.dtype.kind == "f" and x.size:
            x = np.asarray(x + np.arange(x.size).reshape(shape) * 1e-2, x.dtype)
        for k in (1, 2, 3):
            compare(lambda L, t: _tuple(L.kthvalue(t, k)), x, what=f"kthvalue({dtype}{shape}, {k})")
            compare(lambda L, t: _tuple(t.kthvalue(k, 0, True)), x, what=f"kthvalue({dtype}, dim 0)")
        m = _ties(dtype, shape, 16)
        for dim in (0, -1):
            compare(lambda L, t: _tuple(L.mode(t, dim)), m, what=f"mode({dtype}{shape}, {dim})")
            compare(lambda L, t: _tuple(t.mode(dim, keepdim=True)), m, what=f"mode keepdim({dtype})")


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_torch(method):
    rng = np.random.default_rng(17)
    for dtype in ("float32", "float64"):
        for shape in [(3, 5), (7,), (), (2, 3, 4)]:
            x = rng.normal(size=shape).astype(dtype)
            for q in (0.0, 0.25, 0.5, 1 / 3, 1.0, np.array([0.1, 0.5, 0.9], dtype)):
                for kw in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
                    compare(lambda L, t: L.quantile(t, lib_value(L, q), interpolation=method, **kw), x,
                            what=f"quantile({dtype}{shape}, {q}, {method}, {kw})")
            y = np.array(x)
            if y.size > 1:
                y.flat[::2] = np.nan
            compare(lambda L, t: L.nanquantile(t, 0.4, interpolation=method), y, what=f"nanquantile {method}")
            compare(lambda L, t: L.quantile(t, 0.4, interpolation=method), y, what=f"quantile nan {method}")
            if y.ndim:
                compare(lambda L, t: t.nanquantile(lib_value(L, np.array([0.3, 0.7], dtype)), dim=-1,
                                                    interpolation=method), y, what=f"nanquantile dim {method}")


def test_aminmax_var_mean_std_mean_match_torch():
    for dtype in DTYPES:
        for shape in [(2, 3), (), (4,)]:
            x = sample(dtype, shape, seed=18)
            compare(lambda L, t: _tuple(L.aminmax(t)), x, what=f"aminmax({dtype}{shape})")
            compare(lambda L, t: _tuple(t.aminmax(dim=0, keepdim=True)), x, what=f"aminmax dim({dtype})")
            compare(lambda L, t: _tuple(L.aminmax(t, keepdim=True)), x, what=f"aminmax keepdim({dtype})")
    x = sample("float32", (3, 4), seed=19)
    for fn in ("var_mean", "std_mean"):
        compare(lambda L, t: getattr(L, fn)(t), x, what=fn)
        compare(lambda L, t: getattr(L, fn)(t, 1), x, what=fn)
        compare(lambda L, t: getattr(L, fn)(t, 1, True, True), x, what=fn)
        compare(lambda L, t: getattr(L, fn)(t, False), x, what=fn)
        compare(lambda L, t: getattr(L, fn)(t, dim=(0, 1), correction=0, keepdim=True), x, what=fn)


def test_order_statistic_errors_and_out_match_torch():
    x = np.arange(6.).reshape(2, 3)
    e = np.zeros((2, 0))
    i = np.array([3, 1, 2])
    cases = {
        "median empty dim": lambda L, t: L.median(L.zeros(2, 0), 1),
        "median empty all": lambda L, t: L.median(L.zeros(0)),
        "median empty keeps dim 0": lambda L, t: _tuple(L.median(L.zeros(2, 0), 0)),
        "median bad dim": lambda L, t: L.median(t, 2),
        "median out pair": lambda L, t: _tuple(L.median(t, 1, out=(L.empty(0, dtype=L.float64),
                                                                    L.empty(0, dtype=L.int64)))),
        "kthvalue k too big": lambda L, t: L.kthvalue(t, 4),
        "kthvalue k zero": lambda L, t: L.kthvalue(t, 0),
        "kthvalue out pair": lambda L, t: _tuple(L.kthvalue(t, 2, 1, out=(L.empty(2, dtype=L.float64),
                                                                         L.empty(2, dtype=L.int64)))),
        "mode empty": lambda L, t: L.mode(L.zeros(0)),
        "mode out pair": lambda L, t: _tuple(L.mode(t, 0, out=(L.empty(3, dtype=L.float64), L.empty(3, dtype=L.int64)))),
        "quantile int": lambda L, t: L.quantile(L.tensor([1, 2]), 0.5),
        "quantile half": lambda L, t: L.quantile(t.half(), 0.5),
        "quantile q range": lambda L, t: L.quantile(t, 1.5),
        "quantile q tensor range": lambda L, t: L.quantile(t, L.tensor([0.5, 2.], dtype=L.float64)),
        "quantile q dtype": lambda L, t: L.quantile(t, L.tensor([0.5])),
        "quantile q 2d": lambda L, t: L.quantile(t, L.tensor([[0.5]], dtype=L.float64)),
        "quantile empty": lambda L, t: L.quantile(L.zeros(0), 0.5),
        "quantile interpolation": lambda L, t: L.quantile(t, 0.5, interpolation="foo"),
        "quantile out": lambda L, t: L.quantile(t, 0.5, 1, out=L.empty(2, dtype=L.float64)),
        "nanmean int": lambda L, t: L.nanmean(L.tensor([1, 2])),
        "aminmax empty": lambda L, t: L.aminmax(L.zeros(0)),
        "aminmax empty dim": lambda L, t: L.aminmax(L.zeros(2, 0), dim=1),
        "aminmax out": lambda L, t: _tuple(L.aminmax(t, dim=1, out=(L.empty(2, dtype=L.float64),
                                                                    L.empty(2, dtype=L.float64)))),
        "logcumsumexp int": lambda L, t: L.logcumsumexp(L.tensor([1, 2]), 0),
    }
    for name, fn in cases.items():
        compare(fn, x, what=name)
    del e, i


# ---------------------------------------------------------------------------
# histograms


def test_histc_matches_torch():
    cases = [
        (np.array([1., 2, 1, 4], np.float32), {"bins": 4, "min": 0, "max": 3}),
        (np.array([0., 0.1, 0.2, 0.3, 0.7, 1.0], np.float32), {"bins": 10, "min": 0, "max": 1}),
        (np.array([0., 0.1, 0.2, 0.3, 0.7, 1.0], np.float64), {"bins": 10, "min": 0, "max": 1}),
        (np.array([2., 2.], np.float32), {"bins": 4}),
        (np.zeros(0, np.float32), {"bins": 3}),
        (np.random.default_rng(20).normal(size=(50,)).astype(np.float32), {}),
        (np.random.default_rng(21).normal(size=(4, 25)).astype(np.float64), {"bins": 7}),
        (np.random.default_rng(22).uniform(0, 1, size=(200,)).astype(np.float32), {"bins": 10, "min": 0, "max": 1}),
        (np.arange(0., 1.01, 0.05, dtype=np.float32), {"bins": 20, "min": 0, "max": 1}),
        (np.array([1, 2, 1]), {}),
        (np.array([1., 2.], np.float32), {"bins": -1}),
        (np.array([1., 2.], np.float32), {"bins": 4, "min": 3, "max": 1}),
        (np.array([1., 2., np.inf], np.float32), {"bins": 3}),
    ]
    for x, kw in cases:
        compare(lambda L, t: L.histc(t, **kw), x, what=f"histc({x.dtype}{x.shape}, {kw})")
        compare(lambda L, t: t.histc(**kw), x, what="Tensor.histc")
    x = np.arange(4.)
    compare(lambda L, t: L.histc(t, 4, 0, 3, out=L.empty(0, dtype=L.float64)), x, what="histc out=")


def test_bincount_matches_torch():
    cases = [
        (np.array([1, 1, 3]), {}),
        (np.array([1, 1, 3]), {"weights": np.array([.5, .5, 1.], np.float32), "minlength": 6}),
        (np.array([1, 1, 3]), {"weights": np.array([1, 2, 3])}),
        (np.array([1, 1, 3]), {"weights": np.array([.5, .5, 1.], np.float16)}),
        (np.array([1, 1, 3]), {"weights": np.array([.5, .5, 1.])}),
        (np.array([1, 1, 3], np.uint8), {}),
        (np.array([1, 1, 3], np.int32), {"minlength": 2}),
        (np.zeros(0, np.int64), {}),
        (np.zeros(0, np.int64), {"minlength": 3}),
        (np.array([1, -1, 3]), {}),
        (np.array([[1, 1, 3]]), {}),
        (np.array([1., 1, 3]), {}),
        (np.array([True, False]), {}),
        (np.array([1, 2]), {"minlength": -1}),
        (np.array([1, 2]), {"weights": np.array([1.])}),
    ]
    for x, kw in cases:
        compare(lambda L, t: L.bincount(t, **{k: lib_value(L, v) for k, v in kw.items()}), x,
                what=f"bincount({x.dtype}{x.shape}, {kw})")
        compare(lambda L, t: t.bincount(**{k: lib_value(L, v) for k, v in kw.items()}), x, what="Tensor.bincount")


# ---------------------------------------------------------------------------
# half precision accumulates in float32


def test_half_precision_reductions_accumulate_in_float32():
    x = np.full(3, 60000., np.float16)
    compare(lambda L, t: t.sum(), x, what="float16 sum overflows in the result")
    compare(lambda L, t: t.cumsum(0), x, what="float16 cumsum")
    y = np.full(3000, 0.1, np.float16)
    compare(lambda L, t: t.sum(), y, what="float16 long sum")
    compare(lambda L, t: t.cumsum(0)[-1], y, what="float16 long cumsum")
    compare(lambda L, t: t.prod(), np.full(40, 1.1, np.float16), what="float16 prod")
    compare(lambda L, t: L.cumprod(t, 0)[-1], np.full(40, 1.1, np.float16), what="float16 cumprod")
    compare(lambda L, t: L.nansum(t), y, what="float16 nansum")
