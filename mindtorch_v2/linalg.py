"""torch.linalg: checks, errors and return types as PyTorch's; numbers and gradients from core.linalg.

Functions only (torch.linalg has no Tensor methods); every one with out= where torch has it. Singular or
non positive-definite inputs raise LinAlgError (a RuntimeError) with torch's message; the *_ex forms
return LAPACK's info instead.
"""
import math

from . import core
from .eager import return_types as _rt
from .eager.declare import torch_op
from .eager.linalg_ops import (LinAlgError, check_float, check_matrix, check_same_dtype, check_square,
                               cholesky_factor, cholesky_message, det, eig_phase_checked, inv_message, linalg_cross,
                               lu_factor_message, matrix_exp, raise_from_info, solve_message, svd_phase_checked,
                               tensordot)
from .eager.linalg_ops import matrix_power as _matrix_power
from .eager.ops import _t, _w, matmul
from .eager.tensor import _dim

__all__ = [
    "LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "inv_ex", "solve", "solve_ex", "solve_triangular",
    "cholesky", "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "det", "slogdet", "lstsq", "pinv",
    "matrix_power", "matrix_rank", "matrix_exp", "cross", "multi_dot", "vecdot", "lu_factor", "lu_factor_ex",
    "lu_solve", "lu", "diagonal", "matmul", "matrix_transpose", "tensordot", "outer",
]

_L = core.linalg


@torch_op(method=False, out=True)
def inv(A):
    A = check_square("linalg.inv", A)
    res, info = _L.inv_info(A)
    raise_from_info(info, inv_message)
    return _w(res)


@torch_op(method=False, out=True)
def inv_ex(A, *, check_errors=False):
    A = check_square("linalg.inv", A)
    res, info = _L.inv_info(A)
    if check_errors:
        raise_from_info(info, lambda prefix, k: inv_message(prefix, k, "linalg.inv_ex"))
    return _rt.linalg_inv_ex(_w(res), _w(info))


def _solve_args(A, B, left):
    A = check_square("linalg.solve", A)
    B = check_float("linalg.solve", B)
    check_same_dtype("linalg.solve", A, B)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rows = B.shape[-1] if vector or not left else B.shape[-2]
    if rows != A.shape[-1]:
        cols = 1 if vector else B.shape[-1]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {rows}x{cols})")
    return A, B


@torch_op(method=False, out=True)
def solve(A, B, *, left=True):
    A, B = _solve_args(A, B, left)
    x, info = _L.solve_info(A, B, left)
    raise_from_info(info, solve_message)
    return _w(x)


@torch_op(method=False, out=True)
def solve_ex(A, B, *, left=True, check_errors=False):
    A, B = _solve_args(A, B, left)
    x, info = _L.solve_info(A, B, left)
    if check_errors:
        raise_from_info(info, solve_message)
    return _rt.linalg_solve_ex(_w(x), _w(info))


@torch_op(method=False, out=True)
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    A = check_square("linalg.solve_triangular", A)
    B = check_matrix("linalg.solve_triangular", B, "B")
    check_same_dtype("linalg.solve_triangular", A, B)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    return _w(_L.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular))


@torch_op(method=False, out=True)
def cholesky(A, *, upper=False):
    L, info = cholesky_factor("linalg.cholesky", A, upper)
    raise_from_info(info, cholesky_message)
    return L


@torch_op(method=False, out=True)
def cholesky_ex(A, *, upper=False, check_errors=False):
    L, info = cholesky_factor("linalg.cholesky", A, upper)
    if check_errors:
        raise_from_info(info, lambda prefix, k: cholesky_message(prefix, k, "linalg.cholesky_ex"))
    return _rt.linalg_cholesky_ex(L, _w(info))


@torch_op(method=False, out=True)
def qr(A, mode="reduced"):
    A = check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    Q, R = core.linalg.qr(A, "reduced" if mode == "r" else mode)
    if mode == "r":  # torch returns an empty Q
        return _rt.linalg_qr(_w(core.zeros((0,), dtype=A.dtype)), _w(R))
    return _rt.linalg_qr(_w(Q), _w(R))


@torch_op(method=False, out=True)
def svd(A, full_matrices=True, *, driver=None):
    A = check_matrix("linalg.svd", A)
    U, S, Vh = _w(_L.svd(A, full_matrices))
    U, Vh = svd_phase_checked(U, Vh)
    return _rt.linalg_svd(U, S, Vh)


@torch_op(method=False, out=True)
def svdvals(A, *, driver=None):
    A = check_matrix("linalg.svdvals", A)
    return _w(_L.svdvals(A))


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


@torch_op(method=False, out=True)
def eigh(A, UPLO="L"):
    A = check_square("linalg.eigh", A)
    w, V = _w(_L.eigh(A, _uplo(UPLO)))
    return _rt.linalg_eigh(w, eig_phase_checked(V, "linalg_eigh_backward"))


@torch_op(method=False, out=True)
def eigvalsh(A, UPLO="L"):
    A = check_square("linalg.eigvalsh", A)
    return _w(_L.eigvalsh(A, _uplo(UPLO)))


def _eig_input(name, A):
    A = check_square(name, A)
    if not bool(core.all(core.isfinite(A))):
        raise RuntimeError(f"torch.{name}: input tensor should not contain infs or NaNs.")
    return A


@torch_op(method=False, out=True)
def eig(A):
    """(eigenvalues, eigenvectors), complex; unit eigenvectors with their largest component real positive."""
    A = _eig_input("linalg.eig", A)
    L, V = _w(_L.eig(A))
    return _rt.linalg_eig(L, eig_phase_checked(V, "linalg_eig_backward"))


@torch_op(method=False, out=True)
def eigvals(A):
    """The eigenvalues, complex (nan for a matrix with infs or nans, where eig raises)."""
    A = check_square("linalg.eigvals", A)
    return _w(_L.eigvals(A))


@torch_op(method=False, out=True)
def slogdet(A):
    A = check_square("linalg.slogdet", A)
    return _rt.linalg_slogdet(*_w(_L.slogdet(A)))


@torch_op(method=False)
def lstsq(A, B, rcond=None, *, driver=None):
    """torch's cpu default driver 'gelsy': the solution; rank; empty residuals and singular values."""
    A = check_matrix("linalg.lstsq", A)
    B = check_float("linalg.lstsq", B)
    check_same_dtype("linalg.lstsq", A, B)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    x, residuals, rank, S = _L.lstsq(A, B, rcond)
    driver = driver or "gelsy"
    m, n = A.shape[-2:]
    empty = _w(core.zeros((0,), dtype=A.dtype))
    full_rank = bool(core.all(core.eq(rank, min(m, n))).item()) if driver != "gels" else True
    res = _w(residuals) if (driver != "gelsy" and m > n and full_rank) else empty
    rank_out = _w(rank) if driver != "gels" else _w(core.zeros((0,), dtype=core.int64))
    S_out = _w(S) if driver in ("gelsd", "gelss") else empty
    return _rt.linalg_lstsq(_w(x), res, rank_out, S_out)


def _tol(t):
    return _t(t) if t is not None and not isinstance(t, (int, float)) else t


@torch_op(method=False, out=True)
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    A = check_matrix("linalg.pinv", A)
    return _w(_L.pinv(A, atol=_tol(atol), rtol=_tol(rtol), hermitian=hermitian))


@torch_op(method=False, out=True)
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    A = check_matrix("linalg.matrix_rank", A)
    return _w(_L.matrix_rank(A, atol=_tol(atol), rtol=_tol(rtol), hermitian=hermitian))


@torch_op(method=False, out=True)
def matrix_power(A, n):
    return _matrix_power(A, n)


_VECTOR_ORDS = "vector"


@torch_op(method=False, out=True)
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    x = _t(x)
    if dtype is not None:
        x = _w(core.cast(x, dtype))
    x = check_float("linalg.vector_norm", x)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a real number as ord, got {ord}")
    axis = None
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axis = tuple(_dim(d, max(x.ndim, 1)) for d in dims) if x.ndim else None
        if isinstance(dim, int) and axis is not None:
            axis = axis[0]
    if ord < 0 or ord == math.inf:  # max / min (or a sum of inf powers) reduce: no identity for empty axes
        _no_identity_check(x, ord, dim, axis)
    return _w(_L.vector_norm(x, float(ord) if ord not in (0, 1, 2) else ord, axis, keepdim))


def _no_identity_check(x, ord, dim, axis):
    ord_s = "inf" if ord == math.inf else ("-inf" if ord == -math.inf else ord)
    if axis is None:
        if x.numel() == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord_s} norm on an empty tensor because "
                               "the operation does not have an identity")
        return
    for d, a in zip((dim,) if isinstance(dim, int) else dim, (axis,) if isinstance(axis, int) else axis):
        if x.shape[a] == 0:  # torch's wording, its missing space included
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord_s} norm on the dimension {d}because "
                               "this dimension is empty and the operation does not have an identity")


_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


@torch_op(method=False, out=True)
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    A = _t(A)
    if dtype is not None:
        A = _w(core.cast(A, dtype))
    A = check_float("linalg.matrix_norm", A)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    r, c = (_dim(d, A.ndim) for d in dim)
    if r == c:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return _w(_L.matrix_norm(A, ord, (r, c), keepdim))


@torch_op(method=False, out=True)
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    A = _t(A)
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    if isinstance(ord, str) or (dim is not None and not isinstance(dim, int) and len(dim) == 2) or \
            (dim is None and ord is not None and A.ndim == 2):
        if dim is None:
            dim = (-2, -1)
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@torch_op(method=False, out=True)
def cross(input, other, *, dim=-1):
    return linalg_cross(input, other, dim=dim)


@torch_op(method=False, out=True)
def multi_dot(tensors):
    tensors = [_t(t) for t in tensors]
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        ok = t.ndim == 2 or (t.ndim == 1 and i in (0, len(tensors) - 1))
        if not ok:
            where = "first" if i == 0 else ("last" if i == len(tensors) - 1 else None)
            if where:
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.ndim}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    return _w(_L.multi_dot(tensors))


@torch_op(method=False, out=True)
def vecdot(x, y, *, dim=-1):
    x, y = _t(x), _t(y)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype.scalar_name} and y of type {y.dtype.scalar_name} instead")
    return _w(_L.vecdot(x, y, dim))  # the core's vecdot conjugates x, as torch's


def _lu_factor(name, A, pivot, check_errors):
    A = check_matrix(name, A)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    LU, piv, info = _L.lu_factor_info(A)
    if check_errors:
        raise_from_info(info, lu_factor_message(name), RuntimeError)
    return _w(LU), _w(piv), _w(info)


@torch_op(method=False, out=True)
def lu_factor(A, *, pivot=True):
    """(LU, pivots); a zero pivot raises torch's RuntimeError (lu_factor_ex reports it in info)."""
    return _rt.linalg_lu_factor(*_lu_factor("linalg.lu_factor", A, pivot, True)[:2])


@torch_op(method=False, out=True)
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): info 0, or k where U[k, k] (1-based) is the first zero pivot, as LAPACK's getrf."""
    return _rt.linalg_lu_factor_ex(*_lu_factor("linalg.lu_factor_ex", A, pivot, check_errors))


@torch_op(method=False, out=True)
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    LU = check_square("linalg.lu_solve", LU, "LU")
    B = check_matrix("linalg.lu_solve", B, "B")
    return _w(_L.lu_solve(LU, _t(pivots), B, left=left, adjoint=adjoint))


@torch_op(method=False, out=True)
def lu(A, *, pivot=True):
    A = check_matrix("linalg.lu", A)
    if not pivot:
        raise RuntimeError("linalg.lu: LU without pivoting is not implemented on the CPU")
    return _rt.linalg_lu(*_w(_L.lu(A)))


@torch_op(method=False)
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return _t(A).diagonal(offset, dim1, dim2)


@torch_op(method=False)
def matrix_transpose(A):
    A = _t(A)
    if A.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {A.ndim}-D tensor.")
    return A.transpose(-2, -1)


@torch_op(method=False, out=True)
def outer(x1, x2):
    x1, x2 = _t(x1), _t(x2)
    return _w(core.outer(x1, x2))
