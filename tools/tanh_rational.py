"""The rational approximation in the float32 branch of mindtorch_v2/core/ops/_rnn_kernels.py's `_tanh`.

    python tools/tanh_rational.py fit     # its coefficients, fitted again (NumPy alone, a few seconds)
    python tools/tanh_rational.py check   # every float32 bit pattern against np.tanh (numba, a few minutes)

fit: tanh(x) ~ x P(s) / Q(s), s = x^2, on |x| <= 9.1 (beyond, tanh rounds to +-1 in float32), P and Q of degree
5 with P(0) = Q(0) = 1 (tanh x = x exactly for tiny x). Near-minimax in relative error: the linearized problem
(min of |g Q - P| / (g Q_last), g(s) = tanh(sqrt s) / sqrt s) solved by weighted least squares in a Chebyshev
basis, again and again with Lawson's reweighting (each point's weight times its error) until the largest error
stops falling. Reference values in long double.

check: the float64 value `_tanh(x, True)` returns, rounded to float32, against np.tanh's float32 result for all
2^32 inputs: the largest distance in ulps (the contract: at most 1; nan, signed zeros and +-inf exactly), how
many differ from NumPy and from the correctly rounded tanh (NumPy's float64 tanh rounded), and the largest
relative error of the float64 value on |x| < 9.1.
"""
import sys
import time

import numpy as np
from numpy.polynomial import chebyshev as cheb
from numpy.polynomial import polynomial as poly

CUT, DEGREE = 9.1, 5


def fit(cut=CUT, m=DEGREE, n=DEGREE, points=4000, rounds=400):
    """(P, Q, largest relative error on the grid): coefficients of s^0, s^1, ... in long double."""
    big = cut * cut
    t = np.concatenate([[-1.0], -np.cos(np.pi * (np.arange(points) + 0.5) / points), [1.0]])  # s = (t + 1) big / 2
    a = np.sqrt((t.astype(np.longdouble) + 1) * big / 2)
    g = np.ones_like(a)
    g[1:] = np.tanh(a[1:]) / a[1:]
    g = g.astype(np.float64)
    tm, tn = cheb.chebvander(t, m), cheb.chebvander(t, n)
    at0 = cheb.chebvander(np.array([-1.0]), max(m, n))[0]  # (each basis polynomial at s = 0)
    pb, qb = tm[:, 1:] - tm[:, :1] * at0[1:m + 1], tn[:, 1:] - tn[:, :1] * at0[1:n + 1]  # (P(0) = Q(0) = 1 built in)
    weight, q_last, best = np.full(len(t), 1.0 / len(t)), np.ones(len(t)), (np.inf, None, None)
    for k in range(rounds):
        row = np.sqrt(weight) / (g * np.abs(q_last))
        x = np.linalg.lstsq(np.hstack([-pb, g[:, None] * qb]) * row[:, None], (1.0 - g) * row, rcond=None)[0]
        pc = np.concatenate([[1 - at0[1:m + 1] @ x[:m]], x[:m]])
        qc = np.concatenate([[1 - at0[1:n + 1] @ x[m:]], x[m:]])
        q_last = tn @ qc
        err = np.abs((tm @ pc) / q_last - g) / g
        if err.max() < best[0]:
            best = (err.max(), pc, qc)
        if k >= 5:
            weight = weight * err / (weight * err).sum()
    err, pc, qc = best

    def in_s(c):  # Chebyshev coefficients in t = 2 s / big - 1 -> monomial coefficients in s
        out, power = np.zeros(len(c), np.longdouble), np.ones(1, np.longdouble)
        for ck in cheb.cheb2poly(c.astype(np.longdouble)):
            out[:len(power)] += ck * power
            power = poly.polymul(power, np.array([-1, 2 / np.longdouble(big)]))
        return out / out[0]
    return in_s(pc), in_s(qc), err


def horner_error(p, q, cut=CUT, points=2_000_000):
    """The largest relative error of x P(x^2) / Q(x^2) evaluated in float64 (coefficients rounded) on (0, cut]."""
    x = np.linspace(0, cut, points + 1)[1:]
    s = x * x
    pv, qv = np.zeros_like(s), np.zeros_like(s)
    for cp, cq in zip(p[::-1].astype(np.float64), q[::-1].astype(np.float64)):
        pv, qv = pv * s + cp, qv * s + cq
    want = np.tanh(x.astype(np.longdouble))
    return float(np.max(np.abs((x * pv / qv - want) / want)))


def check(chunk=1 << 24):
    import numba

    from mindtorch_v2.core.ops import _rnn_kernels
    _rnn_kernels.kernels()
    tanh = _rnn_kernels._tanh

    @numba.njit(error_model="numpy")
    def compare(bits, want, exact, acc, hist):
        # acc: worst ulps, x there, differ from NumPy, differ from rounded tanh, worst float64 rel. error, x there,
        # broken contract
        x = bits.view(np.float32)
        for i in range(x.shape[0]):
            y64 = tanh(x[i], True)
            y, w = np.float32(y64), want[i]
            if y != y or w != w or y == 0 or w == 0 or np.signbit(y) != np.signbit(w):
                same = (y != y and w != w) or (y == w and np.signbit(y) == np.signbit(w))
                acc[2] += not same
                acc[6] += not same
                continue
            d = abs(np.int64(np.float32(abs(y)).view(np.int32)) - np.int64(np.float32(abs(w)).view(np.int32)))
            hist[min(d, 3)] += 1
            acc[2] += d > 0
            acc[6] += d > 1
            if d > acc[0]:
                acc[0], acc[1] = d, x[i]
            acc[3] += np.float32(exact[i]) != y
            if abs(x[i]) < 9.1:
                e = abs(y64 - exact[i]) / abs(exact[i])
                if e > acc[4]:
                    acc[4], acc[5] = e, x[i]

    acc, hist, start = np.zeros(7), np.zeros(4, np.int64), time.perf_counter()
    for lo in range(0, 1 << 32, chunk):
        bits = np.arange(lo, lo + chunk, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        with np.errstate(invalid="ignore"):
            compare(bits, np.tanh(x), np.tanh(x.astype(np.float64)), acc, hist)
    n = 1 << 32
    print(f"all {n} float32 inputs ({time.perf_counter() - start:.0f} s): at most {acc[0]:.0f} ulp from np.tanh "
          f"(first at x = {acc[1]!r}); broken contract: {acc[6]:.0f}\n"
          f"differ from np.tanh: {acc[2]:.0f} ({100 * acc[2] / n:.2f}%); from the correctly rounded tanh: "
          f"{acc[3]:.0f} ({100 * acc[3] / n:.3f}%); finite nonzero results {hist[0]} equal, {hist[1]} 1 ulp apart, "
          f"{hist[2] + hist[3]} more\nlargest relative error of the float64 value on |x| < 9.1: {acc[4]:.3g} "
          f"(x = {acc[5]!r})")


def main(what):
    if what == "check":
        return check()
    p, q, err = fit()
    print(f"largest relative error: {err:.3g} on the grid, {horner_error(p, q):.3g} evaluated in float64")
    for name, c in (("P", p), ("Q", q)):
        print(f"{name} (highest degree first):", ", ".join(repr(float(v)) for v in c[::-1].astype(np.float64)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fit")
