"""numba loops over time for the recurrent layers' cpu lowerings (rnn.py chooses them by measurement).

Plain Python functions, compiled with numba.njit by `kernels()` on first use (importing numba costs ~0.3 s).
Each one is the NumPy lowering's loop of the same name in rnn.py, operation for operation in the same order
and the same dtype (constants come as scalars of the array's dtype, every product is rounded where NumPy
rounds it): the results differ only by the rounding of tanh. The per-step products stay BLAS calls
(np.dot into a preallocated output); the pointwise work of a step is one pass with no temporaries.

tanh: numba's libm tanh runs ~15 ns per element, 15x NumPy's SIMD float32 tanh, which would lose all the
gain. `_tanh` is our own branch-free version that LLVM vectorizes, its polynomial steps fused multiply-adds
(core/_numba.intrinsics). For float32 (~0.6 ns per element): x P(x^2) / Q(x^2) in float64, a rational fit of
degree 5 over 5 on |x| <= 9.1 (tools/tanh_rational.py; +-1 beyond, where float32 tanh is), relative error
< 4.3e-11: rounded to float32 it is within 1 ulp of NumPy's float32 tanh for every input (checked on all 2^32)
and the correctly rounded tanh for all but 0.001% of them. It differs from NumPy's by 1 ulp for 1.5% of all
float32 inputs, ~32% of normally distributed ones (NumPy's own rounding, up to 1.37 ulp off; our earlier
exp-based form differed as often). For float64 (~1.1 ns): u / (u + 2) with u = e^2|x| - 1 = 2^k (e^r - 1) + 2^k - 1, by
Cody-Waite reduction 2|x| = k ln 2 + r, a Taylor polynomial of e^r - 1 and 2^k made from its exponent bits:
no cancellation near 0, within 5e-16 relative of NumPy's tanh. The loops know their dtype when compiled (`low`
is a constant), so each dtype's loop holds only its own branch.
"""
import math

import numpy as np

from .. import _numba

_F32 = np.dtype(np.float32)  # (`gx.dtype == _F32` is a constant to numba: each dtype's loop is compiled for it)
# tanh(x) ~ x P(x^2) / Q(x^2) for |x| <= 9.1, highest degree first (tools/tanh_rational.py fits them)
_TANH_P = (3.6485434424950083e-11, 1.1077412376646772e-07, 4.220531574829925e-05, 0.004423326104721636,
           0.14097248767083081, 1.0)
_TANH_Q = (2.936051046218469e-09, 2.597432892897328e-06, 0.0005003271952852852, 0.02919193364947192,
           0.4743058207085262, 1.0)
# (e^r - 1) / r = 1 + r / 2! + ... + r^12 / 13!, highest degree first (for |r| <= ln 2 / 2 the next term is
# under 2e-17 of it)
_EXPM1 = tuple(1.0 / math.factorial(k) for k in range(13, 0, -1))


def _tanh(x, low):
    """tanh(x) in float64; `low`: only float32 accuracy needed (see the module docstring)."""
    if low:
        v = np.float64(x)  # (numba's float(x) would stay float32)
        s = v * v
        p, q = _TANH_P[0], _TANH_Q[0]
        for i in range(1, len(_TANH_P)):  # (unrolled by LLVM)
            p = _fma(p, s, _TANH_P[i])
            q = _fma(q, s, _TANH_Q[i])
        y = v * p / q
        # (float32 tanh is +-1 from |x| = 9.011, and x P / Q overflows from |x| ~ 1e29)
        y = math.copysign(1.0, v) if abs(v) > 9.1 else y
    else:
        a = abs(x)
        z = min(2.0 * a, 40.0)  # (tanh is 1 in float64 from |x| > 19.1: the clamp keeps 2^k in range)
        kf = math.floor(z * 1.4426950408889634 + 0.5)
        r = (z - kf * 0.6931471803691238) - kf * 1.9082149292705877e-10
        em = _EXPM1[0]
        for i in range(1, len(_EXPM1)):
            em = _fma(em, r, _EXPM1[i])
        two_k = _exp2i(min(max(int(kf), 0), 63))  # (the exponent is clamped: int(nan) is undefined)
        u = _fma(two_k, r * em, two_k - 1.0)  # e^z - 1 = 2^k (e^r - 1) + (2^k - 1): no cancellation near 0
        y = math.copysign(u / (u + 2.0), x)
    return y if x == x else x


_fma, _exp2i = _numba.fma, _numba.exp2i  # (compiled: core/_numba.intrinsics, bound by kernels())


def _lstm_forward_loop(gx, h0, c0, w_hh, scale, shift, w_r, proj):
    steps, batch, g4 = gx.shape
    hidden = g4 // 4
    low = gx.dtype == _F32
    out = np.empty((steps, batch, h0.shape[1]), gx.dtype)
    c = c0.copy()
    gates = np.empty((batch, g4), gx.dtype)
    m = np.empty((batch, hidden), gx.dtype)
    acts = np.empty((steps, batch, 6 * hidden), gx.dtype)
    w_t, w_rt = _transposed(w_hh), _transposed(w_r)
    h = h0
    for t in range(steps):
        np.dot(h, w_t, gates)
        dst = m if proj else out[t]
        for b in range(batch):
            for j in range(g4):
                v = _cast(gx, _tanh((gates[b, j] + gx[t, b, j]) * scale[j], low)) * scale[j] + shift[j]
                gates[b, j] = v
                acts[t, b, j] = v
            for j in range(hidden):
                cj = gates[b, hidden + j] * c[b, j] + gates[b, j] * gates[b, 2 * hidden + j]
                c[b, j] = cj
                tcj = _cast(gx, _tanh(cj, low))
                acts[t, b, g4 + j] = cj
                acts[t, b, g4 + hidden + j] = tcj
                dst[b, j] = gates[b, 3 * hidden + j] * tcj
        if proj:
            np.dot(m, w_rt, out[t])
        h = out[t]
    return out, c, acts


def _bptt_state(like, g_out, g_hn, g_cn, steps, batch, hidden):
    """A backward loop's buffers, in like's dtype: d pre-activation, each step's dh, dh, dc and dm."""
    dtype = like.dtype
    return (np.empty((steps, batch, 4 * hidden), dtype), np.empty(g_out.shape, dtype), g_hn.copy(), g_cn.copy(),
            np.empty((batch, hidden), dtype))


def _seed_step(t, g_out, w_r, proj, dh, dhs, dm):
    """A backward step's start: dh += the output's cotangent at t; dm = dh carried back through the projection
    (dh itself without one; dhs keeps each step's dh for the projection's weight gradient)."""
    for b in range(dh.shape[0]):
        for j in range(dh.shape[1]):
            dh[b, j] += g_out[t, b, j]
    if proj:
        dhs[t] = dh
        np.dot(dh, w_r, dm)
    else:
        dm[:] = dh


def _lstm_saved_backward_loop(acts, c0, w_hh, g_out, g_hn, g_cn, g_acts, w_r, proj, has_g):
    steps, batch, h6 = acts.shape
    hidden = h6 // 6
    one = acts.dtype.type(1)
    dpre, dhs, dh, dc, dm = _bptt_state(acts, g_out, g_hn, g_cn, steps, batch, hidden)
    for t in range(steps - 1, -1, -1):
        _seed_step(t, g_out, w_r, proj, dh, dhs, dm)
        for b in range(batch):
            for j in range(hidden):
                ij, fj = acts[t, b, j], acts[t, b, hidden + j]
                gj, oj = acts[t, b, 2 * hidden + j], acts[t, b, 3 * hidden + j]
                tcj = acts[t, b, 5 * hidden + j]
                cp = c0[b, j] if t == 0 else acts[t - 1, b, 4 * hidden + j]
                u = one - tcj * tcj
                ki, kf, ko = (one - ij) * ij, (one - fj) * fj, (one - oj) * oj
                kg = one - gj * gj
                dcj = dc[b, j] + dm[b, j] * (oj * u)
                if has_g:
                    dcj += g_acts[t, b, 5 * hidden + j] * u + g_acts[t, b, 4 * hidden + j]
                di = ki * gj * dcj
                df = kf * cp * dcj
                dg = kg * ij * dcj
                do = ko * tcj * dm[b, j]
                if has_g:
                    di += g_acts[t, b, j] * ki
                    df += g_acts[t, b, hidden + j] * kf
                    dg += g_acts[t, b, 2 * hidden + j] * kg
                    do += g_acts[t, b, 3 * hidden + j] * ko
                dpre[t, b, j] = di
                dpre[t, b, hidden + j] = df
                dpre[t, b, 2 * hidden + j] = dg
                dpre[t, b, 3 * hidden + j] = do
                dc[b, j] = dcj * fj
        np.dot(dpre[t], w_hh, dh)
    return dpre, dh, dc, dhs


def _lstm_cells_loop(a, c0):
    steps, batch, g4 = a.shape
    hidden = g4 // 4
    half = a.dtype.type(0.5)
    cs = np.empty((steps + 1, batch, hidden), a.dtype)
    cs[0] = c0
    for t in range(steps):
        for b in range(batch):
            for j in range(hidden):
                ig = (a[t, b, j] * half + half) * a[t, b, 2 * hidden + j]
                cs[t + 1, b, j] = (a[t, b, hidden + j] * half + half) * cs[t, b, j] + ig
    return cs


def _lstm_backward_loop(a, cs, tc, g_out, g_hn, g_cn, w_hh, w_r, proj):
    steps, batch, g4 = a.shape
    hidden = g4 // 4
    one, half, quarter = a.dtype.type(1), a.dtype.type(0.5), a.dtype.type(0.25)
    dpre, dhs, dh, dc, dm = _bptt_state(a, g_out, g_hn, g_cn, steps, batch, hidden)
    for t in range(steps - 1, -1, -1):
        _seed_step(t, g_out, w_r, proj, dh, dhs, dm)
        for b in range(batch):
            for j in range(hidden):
                ti, tf = a[t, b, j], a[t, b, hidden + j]
                tg, to = a[t, b, 2 * hidden + j], a[t, b, 3 * hidden + j]
                tcj = tc[t, b, j]
                dcj = dc[b, j] + dm[b, j] * ((one - tcj * tcj) * (to * half + half))
                dpre[t, b, j] = (one - ti * ti) * quarter * tg * dcj
                dpre[t, b, hidden + j] = (one - tf * tf) * quarter * cs[t, b, j] * dcj
                dpre[t, b, 2 * hidden + j] = (one - tg * tg) * (ti * half + half) * dcj
                dpre[t, b, 3 * hidden + j] = (one - to * to) * quarter * tcj * dm[b, j]
                dc[b, j] = dcj * (tf * half + half)
        np.dot(dpre[t], w_hh, dh)
    return dpre, dh, dc, dhs


def _gru_forward_loop(gxs, h0, w_t, b, has_b, half):
    steps, batch, g3 = gxs.shape
    hidden = g3 // 3
    two = 2 * hidden
    low = gxs.dtype == _F32
    out = np.empty((steps, batch, hidden), gxs.dtype)
    gh = np.empty((batch, g3), gxs.dtype)
    rz = np.empty(two, gxs.dtype)
    h = h0
    for t in range(steps):
        np.dot(h, w_t, gh)
        for i in range(batch):
            if has_b:
                for j in range(g3):
                    gh[i, j] += b[j]
            for j in range(two):
                rz[j] = _cast(gxs, _tanh(gxs[t, i, j] + gh[i, j], low)) * half + half
            for j in range(hidden):
                n = _cast(gxs, _tanh(rz[j] * gh[i, two + j] + gxs[t, i, two + j], low))
                out[t, i, j] = (h[i, j] - n) * rz[hidden + j] + n
        h = out[t]
    return out


def _gru_backward_loop(k, kgh, z, g_out, g_hn, w_hh):
    steps, batch, hidden = z.shape
    dgx = np.empty(k.shape, k.dtype)
    dgh = np.empty(k.shape, k.dtype)
    dh = g_hn.copy()
    back = np.empty((batch, hidden), k.dtype)
    for t in range(steps - 1, -1, -1):
        for i in range(batch):
            for j in range(hidden):
                dhj = dh[i, j] + g_out[t, i, j]
                dh[i, j] = dhj
                for q in range(3):
                    dgx[t, i, q, j] = k[t, i, q, j] * dhj
                    dgh[t, i, q, j] = kgh[t, i, q, j] * dhj
        np.dot(dgh[t].reshape(batch, 3 * hidden), w_hh, back)
        for i in range(batch):
            for j in range(hidden):
                dh[i, j] = dh[i, j] * z[t, i, j] + back[i, j]
    return dgx, dgh, dh


def _rnn_forward_loop(gx, h0, w_t, relu):
    steps, batch, hidden = gx.shape
    low = gx.dtype == _F32
    zero = gx.dtype.type(0)
    out = np.empty(gx.shape, gx.dtype)
    h = h0
    for t in range(steps):
        new = out[t]
        np.dot(h, w_t, new)
        for b in range(batch):
            for j in range(hidden):
                v = new[b, j] + gx[t, b, j]
                if relu:
                    new[b, j] = v if (v >= zero or v != v) else zero  # (nan stays nan, as relu)
                else:
                    new[b, j] = _cast(gx, _tanh(v, low))
        h = new
    return out


def _rnn_backward_loop(k, g_out, g_hn, w_hh):
    steps, batch, hidden = k.shape
    dpre = np.empty_like(k)
    dh = g_hn.copy()
    for t in range(steps - 1, -1, -1):
        for b in range(batch):
            for j in range(hidden):
                dh[b, j] += g_out[t, b, j]
                dpre[t, b, j] = dh[b, j] * k[t, b, j]
        np.dot(dpre[t], w_hh, dh)
    return dpre, dh


def _transposed(w):
    """A C-ordered copy of w.T (BLAS multiplies by a transposed view 4x slower at (8, 64) x (64, 256); NumPy's
    transposing copy takes 10 us for (256, 64))."""
    out = np.empty((w.shape[1], w.shape[0]), w.dtype)
    for i0 in range(0, w.shape[0], 16):  # (in 16 x 16 tiles)
        for j0 in range(0, w.shape[1], 16):
            for j in range(j0, min(j0 + 16, w.shape[1])):
                for i in range(i0, min(i0 + 16, w.shape[0])):
                    out[j, i] = w[i, j]
    return out


def _cast(like, v):
    """v rounded to the dtype of the array `like`."""
    return like.dtype.type(v)


_NAMES = ("_lstm_forward_loop", "_lstm_backward_loop", "_lstm_saved_backward_loop", "_lstm_cells_loop", "_gru_forward_loop", "_gru_backward_loop",
          "_rnn_forward_loop", "_rnn_backward_loop")
_compiled = None


def kernels():
    """{name: compiled kernel}, compiled on first call (each kernel compiles per dtype on its first run)."""
    global _compiled
    if _compiled is None:
        jit = _numba.njit  # (the on-disk cache saves the ~1 s compile of each in later processes)
        g = globals()
        g["_fma"], g["_exp2i"] = _numba.intrinsics()
        g["_tanh"] = jit(_tanh, inline="always")
        g["_cast"] = jit(_cast, inline="always")
        g["_seed_step"] = jit(_seed_step, inline="always")
        g["_bptt_state"] = jit(_bptt_state, inline="always")
        g["_transposed"] = jit(_transposed)
        _compiled = {name: jit(g[name]) for name in _NAMES}
    return _compiled
