"""A matrix's transpose copied into C order by 16 x 16 tiles (numba, where installed).

NumPy copies a transposed view element by element along the output's rows, so it reads the source a column at
a time; at power-of-two row lengths those reads fall into a few cache sets and evict each other: 39 us for
(512, 128) float32 here, 149 us for (128, 512), against 20 and 21 by tiles. Each 16 x 16 tile reads 16 rows of
the source and writes 16 rows of the output, all of them cached while the tile is copied, and its loops have
constant bounds, which LLVM unrolls. Used by matmul's swapped GEMM (decompositions._matmul_swapped), whose
result comes out transposed.
"""
import functools

import numpy as np

from .. import _numba

_TILE = 16
_MIN_SIZE = 4096  # below this NumPy's copy is as fast, and it has no dispatch to pay
_KINDS = "biufc"  # what a numba kernel takes (not float16 / ml_dtypes' types: NumPy copies those)


def _transpose_loop(src, out):
    n, m = out.shape
    nf, mf = n - n % 16, m - m % 16
    for i0 in range(0, nf, 16):
        for j0 in range(0, mf, 16):
            for i in range(16):
                for j in range(16):
                    out[i0 + i, j0 + j] = src[j0 + j, i0 + i]
    for i in range(nf):  # the columns past the last full tile
        for j in range(mf, m):
            out[i, j] = src[j, i]
    for i in range(nf, n):  # the rows past it
        for j in range(m):
            out[i, j] = src[j, i]


@functools.cache
def _kernel():
    """_transpose_loop compiled by numba (None without numba)."""
    return _numba.njit(_transpose_loop, boundscheck=False)


def transpose_copy(src, out=None):
    """src.T as a new C-ordered array, or written into `out` (C-ordered, src.T's shape and dtype)."""
    if out is None:
        out = np.empty(src.shape[::-1], src.dtype)
    kernel = None
    if src.size >= _MIN_SIZE and src.dtype.kind in _KINDS and src.dtype.itemsize >= 4 and src.dtype.isnative:
        kernel = _kernel()
    if kernel is None:
        np.copyto(out, src.T)
    else:
        kernel(src, out)
    return out
