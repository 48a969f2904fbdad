"""The two polynomials of the fast pass in mindtorch_v2/core/ops/elementwise.py's float32 erf (`_erf32_loop`).

    python tools/erf_pieces.py fit           # their coefficients, fitted again (NumPy and SciPy, a second)
    python tools/erf_pieces.py check         # every float32 bit pattern: the kernel against scipy.special.erf
    python tools/erf_pieces.py check plain   # the same with the fast pass's a * b + c never fused (a cpu
                                             # without FMA), instead of the llvm.fmuladd the kernel uses

fit: on |x| < CUT, erf(x) / x = P(z), z = x^2, P of degree 13; on CUT <= |x| < END, erf(x) = Q(|x| - MID), MID
the middle of that range, Q of degree 12; beyond END erf rounds to +-1 in float32. Each is interpolated at
Chebyshev points of its range (in z for P) to scipy's float64 erf, converted to powers in long double and rounded
to float64. Their error against scipy's float64 erf is ~1e-11 relative, far above float64 rounding but far
below the float32 ulp (~6e-8): the kernel rounds y (1 -+ DELTA) to float32, and where the two differ (scipy's
value could round either way: ~0.4% of GELU's inputs) it takes the exact table path (`_erf32_table`).

check: `_erf` on float32 against scipy.special.erf on the same float32 values, all 2^32 bit patterns in chunks
of 2^25 (|x| < 4.5 is half of them): the number whose bytes differ (the contract: 0; nan compares to nan), and how
many took the exact path.
"""
import sys
import time

import numpy as np
import scipy.special as sc
from numpy.polynomial import chebyshev as cheb
from numpy.polynomial import polynomial as poly

CUT, END = 2.25, 3.92
NEAR_DEGREE, FAR_DEGREE = 13, 12
MID = (CUT + END) / 2


def _powers(c, scale, shift):
    """Chebyshev coefficients in t -> power coefficients in v (long double), t = scale * v + shift."""
    out, power = np.zeros(len(c), np.longdouble), np.ones(1, np.longdouble)
    for ck in cheb.cheb2poly(np.asarray(c, np.longdouble)):
        out[:len(power)] += ck * power
        power = poly.polymul(power, np.array([shift, scale], np.longdouble))
    return out


def fit():
    """(P, Q): power coefficients, lowest first, float64."""
    big = CUT * CUT

    def near(t):  # erf(x) / x at z = (t + 1) big / 2
        z = (t + 1) * big / 2
        x = np.sqrt(z)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(z > 0, sc.erf(x) / x, 2 / np.sqrt(np.pi))

    half = (END - CUT) / 2
    p = _powers(cheb.chebinterpolate(near, NEAR_DEGREE), 2 / np.longdouble(big), -1)
    q = _powers(cheb.chebinterpolate(lambda t: sc.erf(MID + half * t), FAR_DEGREE), 1 / np.longdouble(half), 0)
    return p.astype(np.float64), q.astype(np.float64)


def errors(p, q, points=4_000_000):
    """The largest relative error of each piece, evaluated in float64 by Horner, against scipy's float64 erf."""
    x = np.linspace(0, END, points + 1)[1:]
    ref = sc.erf(x)
    got = np.where(x < CUT, x * poly.polyval(x * x, p), poly.polyval(x - MID, q))
    err = np.abs(got - ref) / ref
    return float(err[x < CUT].max()), float(err[x >= CUT].max())


def check(plain=False, chunk=1 << 25):
    from mindtorch_v2.core.ops import elementwise as ew
    kernel = ew._erf32_kernel()
    if plain:
        import numba
        ew._fma = numba.njit(lambda a, b, c: a * b + c, inline="always")
        kernel = numba.njit(ew._erf32_loop, error_model="numpy")
    table = ew._erf32_table()
    bad = slow = 0
    start = time.perf_counter()
    for lo in range(0, 1 << 32, chunk):
        x = np.arange(lo, lo + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
        out = np.empty_like(x)
        slow += kernel(x, table, out)
        with np.errstate(invalid="ignore"):
            want = sc.erf(x)
        same = out.view(np.uint32) == want.view(np.uint32)
        same |= np.isnan(out) & np.isnan(want)
        bad += int(x.size - np.count_nonzero(same))
        if lo % (1 << 30) == 0 and lo:
            print(f"  {lo >> 30} / 4 ({time.perf_counter() - start:.0f} s): {bad} differ", flush=True)
    print(f"all {1 << 32} float32 inputs ({'a * b + c' if plain else 'fmuladd'}, "
          f"{time.perf_counter() - start:.0f} s): {bad} differ from scipy.special.erf in their bytes; "
          f"{slow} took the exact path")
    return bad


def main(args):
    if args[:1] == ["check"]:
        return check("plain" in args)
    p, q = fit()
    near, far = errors(p, q)
    print(f"largest relative error against scipy's float64 erf: {near:.3g} below {CUT}, {far:.3g} above")
    for name, c in (("P", p), ("Q", q)):
        print(f"{name} (highest degree first):", ", ".join(repr(float(v)) for v in c[::-1]))
    from mindtorch_v2.core.ops import elementwise as ew
    same = (ew._ERF32_CUT, ew._ERF32_END) == (CUT, END) and ew._ERF32_NEAR == tuple(p[::-1]) \
        and ew._ERF32_FAR == tuple(q[::-1])
    print("elementwise.py's _ERF32_NEAR and _ERF32_FAR:", "the same" if same else "DIFFERENT")


if __name__ == "__main__":
    main(sys.argv[1:])
