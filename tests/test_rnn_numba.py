"""The recurrent layers' numba loops (the `fast` extra) against their NumPy twins, and the NumPy fallback.

The lowerings choose the faster loop by measurement; these tests force one or the other. The numba loops
differ from NumPy's only by the rounding of tanh (our vectorized tanh against NumPy's SIMD one).
"""
import numpy as np
import pytest

from mindtorch_v2.core.ops import _rnn_kernels, rnn

numba = pytest.importorskip("numba")

TOL = {np.float32: 2e-6, np.float64: 1e-12}


def _force(monkeypatch, fast):
    monkeypatch.setattr(rnn, "_chosen", {})
    monkeypatch.setattr(rnn, "_numba_available", lambda: fast)
    monkeypatch.setattr(rnn, "_faster", lambda numpy_loop, kernel, args: kernel)


def _cases(dtype):
    r = np.random.default_rng(0)
    steps, batch, hidden, proj = 5, 3, 4, 2

    def a(*shape, s=1.0):
        return (s * r.standard_normal(shape)).astype(dtype)
    h0, c0 = a(batch, hidden), a(batch, hidden)
    gx4, w4 = a(steps, batch, 4 * hidden, s=2), a(4 * hidden, hidden, s=0.5)
    gx3, w3, b3 = a(steps, batch, 3 * hidden, s=2), a(3 * hidden, hidden, s=0.5), a(3 * hidden)
    gx1, w1 = a(steps, batch, hidden, s=2), a(hidden, hidden, s=0.5)
    wp, w4p, hp = a(proj, hidden), a(4 * hidden, proj, s=0.5), a(batch, proj)
    g, gp, gh, ghp, gc = a(steps, batch, hidden), a(steps, batch, proj), a(batch, hidden), a(batch, proj), \
        a(batch, hidden)

    def lstm(*args):
        out = rnn._lstm_cpu(*args)
        p = args[4:]
        g_out, g_hn = (gp, ghp) if p else (g, gh)
        return out + rnn._lstm_vjp_cpu(*args[:4], out[0], g_out, g_hn, gc, *p)

    def gru(*args):
        out = rnn._gru_cpu(*args)
        return out + rnn._gru_vjp_cpu(*args[:3], out[0], g, gh, *args[3:])

    def elman(nonlinearity):
        out = rnn._rnn_cpu(gx1, h0, w1, nonlinearity=nonlinearity)
        return out + rnn._rnn_vjp_cpu(gx1, h0, w1, out[0], g, gh, nonlinearity=nonlinearity)
    return {"lstm": lambda: lstm(gx4, h0, c0, w4), "lstm_proj": lambda: lstm(gx4, hp, c0, w4p, wp),
            "gru": lambda: gru(gx3, h0, w3), "gru_bias": lambda: gru(gx3, h0, w3, b3),
            "rnn_tanh": lambda: elman("tanh"), "rnn_relu": lambda: elman("relu")}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numba_loops_equal_the_numpy_loops_up_to_tanh_rounding(monkeypatch, dtype):
    cases = _cases(dtype)
    _force(monkeypatch, False)
    want = {name: run() for name, run in cases.items()}
    _force(monkeypatch, True)
    for name, run in cases.items():
        got = run()
        assert rnn._chosen and all(fn is not key[0] for key, fn in rnn._chosen.items()), "the numba loops ran"
        for i, (x, y) in enumerate(zip(got, want[name])):
            assert x.dtype == y.dtype and x.shape == y.shape, (name, i)
            np.testing.assert_allclose(x, y, rtol=TOL[dtype], atol=TOL[dtype] * np.abs(y).max(),
                                       err_msg=f"{name} result {i}")


def test_numba_tanh_keeps_signed_zeros_infinities_and_nan():
    _rnn_kernels.kernels()  # (compiles _tanh in place)
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -3e-3, 0.0499, 0.0501, 0.7, -19.5, -25.0])
    for low in (False, True):
        got = np.array([_rnn_kernels._tanh(v, low) for v in x])
        np.testing.assert_allclose(got, np.tanh(x), rtol=1e-9 if low else 1e-14)
        assert np.array_equal(np.signbit(got), np.signbit(np.tanh(x)))


def _tanh_loop():
    """_tanh over an array (float64 results) in a compiled loop, as the kernels inline it."""
    _rnn_kernels.kernels()
    tanh = _rnn_kernels._tanh

    @numba.njit(error_model="numpy")
    def run(x, low):
        out = np.empty(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = tanh(x[i], low)
        return out
    return run


def test_numba_tanh_rounds_to_within_one_float32_ulp_of_numpy():
    # every 509th float32 bit pattern (all exponents, both signs, nan and inf among them), the neighbourhood of
    # the rational's cut at 9.1 and of 9.011 (where tanh starts to round to 1), and the specials
    bits = np.arange(0, 1 << 32, 509, dtype=np.uint64).astype(np.uint32)
    near = [np.float32(c).view(np.uint32) + np.arange(-20000, 20000) for c in (9.1, 9.011)]
    bits = np.concatenate([bits, *near, *(b | np.uint32(1 << 31) for b in near)]).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.2e-38, 3.4e38, -3.4e38, 0.5, 9.01, 9.02], np.float32)])
    y64 = _tanh_loop()(x, True)
    got = y64.astype(np.float32)
    with np.errstate(invalid="ignore"):
        want, exact = np.tanh(x), np.tanh(x.astype(np.float64))
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    got, want, exact, y64, x = got[~nan], want[~nan], exact[~nan], y64[~nan], x[~nan]
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(got[want == 0], want[want == 0]) and np.array_equal(got[np.isinf(x)], want[np.isinf(x)])
    ulps = np.abs(np.abs(got).view(np.int32).astype(np.int64) - np.abs(want).view(np.int32))
    assert ulps.max() <= 1
    assert np.mean(got != exact.astype(np.float32)) < 1e-3  # (rounds as tanh does: 4e-11 relative error)
    inside = (np.abs(x) < 9.1) & (exact != 0)
    assert np.max(np.abs(y64[inside] - exact[inside]) / np.abs(exact[inside])) < 5e-11


def test_numba_tanh_float64_within_1e_15_of_numpy():
    r = np.random.default_rng(4)
    x = np.concatenate([r.uniform(-25, 25, 10 ** 6), np.exp(r.uniform(-740, 3.3, 10 ** 6)) * r.choice([-1, 1], 10 ** 6),
                        r.integers(0, 1 << 64, 10 ** 5, dtype=np.uint64).view(np.float64)])
    got = _tanh_loop()(x, False)
    with np.errstate(invalid="ignore"):
        want = np.tanh(x)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    got, want = got[~nan], want[~nan]
    assert np.array_equal(np.signbit(got), np.signbit(want))
    nonzero = want != 0
    assert np.array_equal(got[~nonzero], want[~nonzero])
    assert np.max(np.abs(got[nonzero] - want[nonzero]) / np.abs(want[nonzero])) < 1e-15


def test_without_numba_the_numpy_loops_run(monkeypatch):
    def no_kernels():
        raise AssertionError("compiled a numba kernel without numba")
    monkeypatch.setattr(rnn, "_chosen", {})
    monkeypatch.setattr(rnn, "_numba_available", lambda: False)
    monkeypatch.setattr(_rnn_kernels, "kernels", no_kernels)
    for name, run in _cases(np.float32).items():
        run()
    assert not rnn._chosen


def test_the_choice_is_made_once_per_signature_and_narrow_dtypes_stay_numpy(monkeypatch):
    calls = []
    monkeypatch.setattr(rnn, "_chosen", {})
    monkeypatch.setattr(rnn, "_faster", lambda numpy_loop, kernel, args: calls.append(1) or numpy_loop)
    cases = _cases(np.float64)
    cases["rnn_tanh"]()
    cases["rnn_tanh"]()
    assert len(calls) == 2  # forward and backward loops, measured once each
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    z = np.zeros((2, 1, 3), bf)
    rnn._rnn_cpu(z, z[0], np.zeros((3, 3), bf), nonlinearity="tanh")
    assert len(calls) == 2


def _backward_inputs(r, dtype, proj, steps=5, batch=3, hidden=4):
    """c0, g_cn, g_out, g_hn, w_hh, w_r of a backward loop (a projection to 2, or none)."""
    p = 2 if proj else hidden
    c0, g_cn = r.standard_normal((2, batch, hidden)).astype(dtype)
    g_out = r.standard_normal((steps, batch, p)).astype(dtype)
    g_hn = r.standard_normal((batch, p)).astype(dtype)
    w_hh = r.standard_normal((4 * hidden, p)).astype(dtype)
    w_r = r.standard_normal((p, hidden)).astype(dtype) if proj else np.empty((0, 0), dtype)
    return c0, g_cn, g_out, g_hn, w_hh, w_r


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("proj", [False, True])
def test_lstm_backward_and_cell_loops_equal_numpy_bit_for_bit(dtype, proj):
    # no tanh inside these two loops: the same operations in the same order give the same bits
    r = np.random.default_rng(1)
    a = np.tanh(r.standard_normal((5, 3, 16))).astype(dtype)
    c0, g_cn, g_out, g_hn, w_hh, w_r = _backward_inputs(r, dtype, proj)
    kernels = _rnn_kernels.kernels()
    cs = rnn._lstm_cells_loop(a, c0)
    assert np.array_equal(kernels["_lstm_cells_loop"](a, c0), cs)
    tc = np.tanh(cs[1:])
    want = rnn._lstm_backward_loop(a, cs, tc, g_out, g_hn, g_cn, w_hh, w_r, proj)
    got = kernels["_lstm_backward_loop"](a, cs, tc, g_out, g_hn, g_cn, w_hh, w_r, proj)
    for x, y in zip(got if proj else got[:3], want if proj else want[:3]):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_the_kernels_transposed_copy():
    w = np.arange(37 * 19, dtype=np.float32).reshape(37, 19)
    _rnn_kernels.kernels()
    t = _rnn_kernels._transposed(w)
    assert t.flags.c_contiguous and np.array_equal(t, w.T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("proj", [False, True])
@pytest.mark.parametrize("has_g", [False, True])
def test_lstm_saved_activations_loop_equals_numpy_bit_for_bit(dtype, proj, has_g):
    r = np.random.default_rng(2)
    acts = np.tanh(r.standard_normal((5, 3, 24))).astype(dtype)
    c0, g_cn, g_out, g_hn, w_hh, w_r = _backward_inputs(r, dtype, proj)
    g_acts = r.standard_normal(acts.shape).astype(dtype) if has_g else np.empty((0, 0, 0), dtype)
    args = (acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, w_r, proj, has_g)
    want = rnn._lstm_saved_backward_loop(*args)
    got = _rnn_kernels.kernels()["_lstm_saved_backward_loop"](*args)
    for x, y in zip(got if proj else got[:3], want if proj else want[:3]):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_lstm_activations_cotangent_zero_broadcast_takes_the_short_path_with_the_same_values():
    r = np.random.default_rng(3)
    gx = r.standard_normal((4, 2, 12))
    h0, c0 = r.standard_normal((2, 2, 3))
    w = r.standard_normal((12, 3)) * 0.5
    out, h, c, acts = rnn._lstm_cpu(gx, h0, c0, w)
    g_out, g_hn, g_cn = r.standard_normal(out.shape), r.standard_normal(h.shape), r.standard_normal(c.shape)
    broadcast = np.broadcast_to(np.zeros((), acts.dtype), acts.shape)
    short = rnn._lstm_vjp_cpu(acts, c0, w, g_out, g_hn, g_cn, broadcast, saved=True)
    full = rnn._lstm_vjp_cpu(acts, c0, w, g_out, g_hn, g_cn, np.zeros(acts.shape), saved=True)
    for x, y in zip(short, full):
        np.testing.assert_allclose(x, y, rtol=1e-15, atol=1e-15)
    # and both equal the form that recomputes the gates from the output sequence
    for x, y in zip(short, rnn._lstm_vjp_cpu(gx, h0, c0, w, out, g_out, g_hn, g_cn)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_the_zero_check_of_the_activations_cotangent_counts_negative_zero_as_nonzero():
    assert rnn._is_zero(np.zeros((3, 4), np.float32))
    assert rnn._is_zero(np.broadcast_to(np.zeros((), np.float32), (5, 3)))
    assert rnn._is_zero(np.zeros((4, 6))[:, ::2])
    assert not rnn._is_zero(np.broadcast_to(np.float32(-0.0), (5, 3)))
    assert not rnn._is_zero(np.array([0.0, -0.0]))
    assert not rnn._is_zero(np.array([0, 1e-45], np.float32))
    assert not rnn._is_zero(np.eye(3)[:, ::2])
