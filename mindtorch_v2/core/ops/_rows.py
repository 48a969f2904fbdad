"""Row loops for the fast extra (numba): sums along contiguous rows in NumPy's own order, and the loops over
rows built on them (sum's short rows, layer norm and its backward, softmax and log_softmax).

NumPy reduces a C-ordered array's last axis one row at a time, so over short rows (a layer norm's 64 features,
an attention row of 32 keys, 10 classes) its per-row calls cost more than the additions: a (256, 64) float32
sum takes ~8 us, a (1024, 32) one ~45 us against ~15 us here. A loop that also normalizes or scales each row
needs that sum with NumPy's bits, because the fast extra must not change a result. `block` and `pairwise` add in
the order of NumPy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src): fewer than 8 elements one after
another; up to 128 in 8 running sums combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
rest one by one; longer rows split at half (rounded down to a multiple of 8) and the halves added. add.reduce
starts from its identity, +0.0 (`row_sum`: a row of -0.0 sums to +0.0). Every other operation in a loop is one
correctly rounded float32 or float64 operation (numba keeps the element type and does not contract a * b + c),
so a loop that repeats a lowering's NumPy arithmetic gives its bits. exp and log stay NumPy's (numba's libm
differs from NumPy's SIMD functions in the last bit). tests/test_row_kernels.py compares every loop with the
NumPy lowering it stands in for, bit for bit.
"""
import functools
import sys
import threading

import numpy as np

from .. import _numba

_BLOCK = 128  # NumPy's PW_BLOCKSIZE
# importing numba costs ~0.4 s, and compiling a loop 0.6-1.6 s per dtype where numba's on-disk cache does not have
# it yet (the first run after an install, or every process where no cache directory is writable): a process that
# has not imported numba for another kernel does so once it has sent this many rows through NumPy's per-row calls
# (~40 ns each: ~0.04 s), so that a short script's few sums stay NumPy's
_ROWS_BEFORE_IMPORT = 1_000_000
_COMPILING = threading.Lock()
_rows_seen = [0]
_ready = []  # [True] once the loops run, [False] without numba


def ready(rows):
    """Whether the row loops should run for `rows` more rows: once numba is imported (by another kernel, or by
    these after _ROWS_BEFORE_IMPORT rows) and installed. The answer does not change a result, only its time."""
    if _ready:
        return _ready[0]
    if "numba" not in sys.modules:
        _rows_seen[0] += rows
        if _rows_seen[0] < _ROWS_BEFORE_IMPORT:
            return False
    _ready.append(_compile_sums())
    return _ready[0]


def block(a, lo, n):
    """The sum of a[lo:lo + n], 1 <= n <= 128, in NumPy's pairwise order (its identity not added: row_sum)."""
    if n < 8:
        res = a[lo]
        for i in range(lo + 1, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = lo + 8
    end = lo + n - n % 8
    while i < end:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < lo + n:
        res += a[i]
        i += 1
    return res


def pairwise(a, lo, n, stack, sums):
    """The sum of a[lo:lo + n], n > 128: NumPy's recursion (each half's sum, then the two added), run over an
    explicit stack (numba's on-disk cache crashes on loading a recursive function's callers). stack: (3, 64)
    int64 scratch (start, size, phase of each pending split; phase 0: left half next, 1: right half next, 2: add
    the halves); sums: (64,) scratch of a's dtype, the finished sums. (A split halves n: 64 levels never come.)"""
    top, done = 0, 0
    stack[0, 0], stack[1, 0], stack[2, 0] = lo, n, 0
    while top >= 0:
        m = stack[1, top]
        if m <= _BLOCK:
            sums[done] = block(a, stack[0, top], m)
            done += 1
            top -= 1
            continue
        phase = stack[2, top]
        if phase == 2:
            sums[done - 2] = sums[done - 2] + sums[done - 1]
            done -= 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        stack[2, top] = phase + 1
        top += 1
        stack[0, top] = stack[0, top - 1] + (0 if phase == 0 else half)
        stack[1, top] = half if phase == 0 else m - half
        stack[2, top] = 0
    return sums[0]


def scratch(a):
    """The (stack, sums) pairwise needs, for sums of a's dtype."""
    return np.empty((3, 64), np.int64), np.empty(64, a.dtype)


def row_sum(a, lo, n, work):
    """np.add.reduce of a[lo:lo + n] (n >= 1): the pairwise sum after add's identity, +0.0 (which turns a
    -0.0 sum into +0.0 and leaves every other value as it is). work: scratch(a), for rows over 128."""
    s = block(a, lo, n) if n <= _BLOCK else pairwise(a, lo, n, work[0], work[1])
    if s == 0:
        s = abs(s)
    return s


def layer_norm_loop(x, nf, eps, one, out, sq):
    """out = layer_norm(x) over rows of n = len(sq) (x, out flat); sq: a row of scratch."""
    n = sq.shape[0]
    work = scratch(x)
    for r in range(x.shape[0] // n):
        lo = r * n
        mean = row_sum(x, lo, n, work) / nf
        for j in range(n):
            c = x[lo + j] - mean
            out[lo + j] = c
            sq[j] = c * c
        rr = one / np.sqrt(row_sum(sq, 0, n, work) / nf + eps)
        for j in range(n):
            out[lo + j] = out[lo + j] * rr


def layer_norm_backward_loop(g, x, nf, eps, one, out, xhat, t):
    """out = layer_norm_backward(g, x) over rows of n = len(xhat) (g, x, out flat); xhat, t: rows of scratch.
    (Its first lines repeat layer_norm_loop's on purpose: the centering as one function inlined into both made this
    loop 2.3x slower, 29 -> 68 us at (256, 64), as a call 44 us; LLVM no longer vectorized the loops after it.)"""
    n = xhat.shape[0]
    work = scratch(x)
    for r in range(x.shape[0] // n):
        lo = r * n
        mean = row_sum(x, lo, n, work) / nf
        for j in range(n):
            c = x[lo + j] - mean
            xhat[j] = c
            t[j] = c * c
        rr = one / np.sqrt(row_sum(t, 0, n, work) / nf + eps)
        for j in range(n):
            xhat[j] = xhat[j] * rr
            t[j] = g[lo + j] * xhat[j]
        mean_g = row_sum(g, lo, n, work) / nf
        mean_gx = row_sum(t, 0, n, work) / nf
        for j in range(n):
            out[lo + j] = rr * ((g[lo + j] - mean_g) - xhat[j] * mean_gx)


@functools.cache
def layer_norm_loops():
    """(layer_norm_loop, layer_norm_backward_loop) compiled, or None without numba."""
    if not _compile_sums():
        return None
    return tuple(_numba.njit(f, boundscheck=False) for f in (layer_norm_loop, layer_norm_backward_loop))


@functools.cache
def _compile_sums():
    """Whether numba is installed; if so, block, pairwise and row_sum are replaced by their compiled forms, which
    the loops read when they compile (block and row_sum inlined: a call per row costs more than a short row's
    additions). The loops live in this file with the sums they inline: numba's on-disk cache is keyed by the
    file of the function it compiles, so a loop cached from another file would keep an old sum."""
    global block, pairwise, row_sum, scratch
    if not _numba.available():
        return False
    with _COMPILING:  # (threads meeting their first short rows at once: one compiles, the others wait)
        if not hasattr(block, "py_func"):
            compiled = (_numba.njit(block, boundscheck=False, inline="always"), _numba.njit(scratch, inline="always"),
                        _numba.njit(pairwise, boundscheck=False), _numba.njit(row_sum, boundscheck=False, inline="always"))
            block, scratch, pairwise, row_sum = compiled
    return True


def row_sums_loop(x, n, out):
    """out[r] = np.add.reduce of row r of x (flat, rows of n)."""
    work = scratch(x)
    for r in range(out.shape[0]):
        out[r] = row_sum(x, r * n, n, work)


@functools.cache
def row_sums():
    """row_sums_loop compiled, or None without numba."""
    if not _compile_sums():
        return None
    return _numba.njit(row_sums_loop, boundscheck=False)


def softmax_shift_loop(x, n, nan, s):
    """s = x minus its row's max over rows of n (flat); where that max is inf or nan, minus the nan given
    (NumPy's positive quiet nan, which softmax's _shifted puts there; inf - inf would give x86's negative one).
    The order of the max decides only the sign of a zero max, taken as -0.0, so it runs as four running maxima
    (a compare-and-select each, no branch) and a separate check for nan."""
    for r in range(x.shape[0] // n):
        v = x[r * n:(r + 1) * n]
        out = s[r * n:(r + 1) * n]
        m0 = m1 = m2 = m3 = v[0]
        seen_nan = False
        end = n - n % 4
        for j in range(0, end, 4):
            a, b, c, d = v[j], v[j + 1], v[j + 2], v[j + 3]
            m0 = a if a > m0 else m0
            m1 = b if b > m1 else m1
            m2 = c if c > m2 else m2
            m3 = d if d > m3 else m3
            seen_nan |= (a != a) | (b != b) | (c != c) | (d != d)
        for j in range(end, n):
            a = v[j]
            m0 = a if a > m0 else m0
            seen_nan |= a != a
        m0 = m1 if m1 > m0 else m0
        m2 = m3 if m3 > m2 else m2
        m = m2 if m2 > m0 else m0
        if seen_nan or m - m != 0:  # a nan, or an infinite max
            m = nan
        elif m == 0:  # -0.0 (_shifted's too): which zero the max is depends on the order
            m = -abs(m)
        for j in range(n):
            out[j] = v[j] - m


def softmax_scale_loop(e, n):
    """e divided in place by its row sums (np.add.reduce's bits) over rows of n (flat)."""
    work = scratch(e)
    for r in range(e.shape[0] // n):
        total = row_sum(e, r * n, n, work)
        v = e[r * n:(r + 1) * n]
        for j in range(n):
            v[j] = v[j] / total


def row_sub_loop(s, n, c):
    """s minus c[r] in place, over rows r of n (flat)."""
    for r in range(c.shape[0]):
        v = s[r * n:(r + 1) * n]
        for j in range(n):
            v[j] = v[j] - c[r]


@functools.cache
def softmax_loops():
    """(softmax_shift_loop, softmax_scale_loop, row_sums_loop, row_sub_loop) compiled, or None without numba
    (row_sums_loop: sum's own, row_sums())."""
    if not _compile_sums():
        return None
    shift, scale, sub = (_numba.njit(f, boundscheck=False) for f in (softmax_shift_loop, softmax_scale_loop,
                                                                      row_sub_loop))
    return shift, scale, row_sums(), sub
