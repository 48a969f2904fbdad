"""A 2-D product a @ b as one BLAS GEMM call that writes the C-ordered result itself (scipy.linalg.blas).

A C-ordered (m, n) array is, read in Fortran order, its transpose: so BLAS computing bᵀ aᵀ in Fortran order
writes a @ b in C order, into the caller's buffer, with no copy. NumPy's matmul reaches the same GEMM through
CBLAS, but for nn.Linear's x @ W.T (W C-ordered, so W.T Fortran-ordered) it measured 1230 us at (128, 784) x
(784, 512) float32 here against 1069 us this way; the swapped GEMM (decompositions._matmul_swapped) gets
the same speed but pays a transpose copy of its result (~25 us) and a fresh buffer per call. matmul's lowering
runs this call where it measures fastest with the bits of np.matmul (decompositions._gemm).
"""
import numpy as np
from scipy.linalg import blas as _blas

__all__ = ["gemm_applies", "gemm_c_order"]

_GEMMS = {np.dtype(np.float32): _blas.sgemm, np.dtype(np.float64): _blas.dgemm,
          np.dtype(np.complex64): _blas.cgemm, np.dtype(np.complex128): _blas.zgemm}


def _plain(x):
    return x.flags.c_contiguous or x.flags.f_contiguous


def gemm_applies(a, b):
    """Whether gemm_c_order takes these operands without copying them: 2-D, one dtype BLAS has, each C- or
    Fortran-ordered, and a product of matrices (NumPy computes a vector's with GEMV or its own loop: other
    bits)."""
    return (a.ndim == 2 and b.ndim == 2 and a.shape[0] > 1 and b.shape[1] > 1 and a.dtype == b.dtype
            and a.dtype in _GEMMS and a.dtype.isnative and _plain(a) and _plain(b))


def gemm_c_order(a, b, out=None):
    """a @ b as a new C-ordered array, or written into `out` (a @ b's shape and dtype)."""
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    c = out.T  # (Fortran-ordered where out is C-ordered: BLAS writes into it in place)
    # op(A) = bᵀ: a Fortran-ordered b read transposed, or the Fortran view of a C-ordered b as it is
    if b.flags.f_contiguous:
        A, trans_a = b, 1
    else:
        A, trans_a = b.T, 0
    # op(B) = aᵀ: likewise
    if a.flags.c_contiguous:
        B, trans_b = a.T, 0
    else:
        B, trans_b = a, 1
    r = _GEMMS[a.dtype](1.0, A, B, trans_a=trans_a, trans_b=trans_b, c=c, overwrite_c=1, beta=0.0)
    if r is not c:  # (an `out` that is not C-ordered: BLAS wrote into a copy)
        np.copyto(out, r.T)
    return out
