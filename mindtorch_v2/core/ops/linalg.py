"""Linear algebra as numpy.linalg / the Array API / torch.linalg name it: matmul with NumPy semantics (batch dims
broadcast, 1-D operands promoted and squeezed back), products, norms, and the rest as composites of the primitives
in decompositions.py (whose rules are there). This module is the core.linalg namespace: its `__all__` exports the
primitives too.
"""
import builtins
import collections
import math

import numpy as np

from .. import dtypes as dt
from . import _family
from .creation import arange
from .decompositions import (_diag, _diag_embed, _eye, _mH, _mm, _mT, _tril, _triu, cholesky_p, det_p, eig_p,
                             eigh_p, expm_p, inv_p, lu_p, matmul_p, matrix_transpose, qr_p, slogdet_p, solve_p, svd_p,
                             triangular_solve_p)
from .elementwise import (abs, add, cast, conj, div, eq, gt, mul, ne, pow, real, sqrt, stop_gradient, sub, where)
from .layout import diagonal as _layout_diagonal
from .reduction import any, argmax, max, min, sum
from .shape import broadcast_to, concatenate, expand_dims, reshape, slice_axis, squeeze

__all__ = [
    "matmul_p", "matmul", "dot", "outer", "cholesky_p", "triangular_solve_p", "inv_p", "solve_p", "det_p",
    "slogdet_p", "eigh_p", "eig_p", "svd_p", "qr_p", "lu_p", "expm_p", "matrix_transpose", "diagonal", "trace",
    "tensordot", "vecdot", "cholesky", "cholesky_info", "solve_triangular", "inv", "inv_info", "solve",
    "solve_info", "det", "slogdet", "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "lu",
    "lu_factor", "lu_factor_info", "lu_solve", "expm", "pinv", "matrix_rank", "matrix_power", "vector_norm",
    "matrix_norm", "norm", "cross", "multi_dot", "lstsq",
]


def matmul(a, b):
    """Matrix product with NumPy semantics (1-D operands are vectors, batch dims broadcast)."""
    a, b = _family.promote("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands must be at least 1-D, got shapes {a.shape} and {b.shape}")
    if a.ndim >= 2 and b.ndim >= 2:
        return matmul_p.bind(a, b)
    if a.ndim == 1 and b.ndim == 1 and a.shape[0] != b.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned ({a.shape[0]} != {b.shape[0]})")
    a2 = expand_dims(a, 0) if a.ndim == 1 else a
    b2 = expand_dims(b, 1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned ({a2.shape[-1]} != {b2.shape[-2]})")
    out = matmul_p.bind(a2, b2)
    if b.ndim == 1:
        out = squeeze(out, -1)
    if a.ndim == 1:
        out = squeeze(out, -2 if b.ndim != 1 else -1)
    return out


def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the last two axes, as the last axis (the Array API's linalg.diagonal)."""
    return _layout_diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the `offset` diagonal of the last two axes (the Array API's linalg.trace)."""
    d = diagonal(x, offset=offset)
    return sum(d if dtype is None else cast(d, dtype), -1)


def dot(a, b):
    return matmul(a, b)


def outer(a, b):
    """a[i] * b[j] (each entry one exact product, the sign of a zero kept)."""
    a, b = _family.promote("outer", a, b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"outer: expected 1-D arrays, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return mul(expand_dims(a, 1), expand_dims(b, 0))


# ---------------------------------------------------------------------------
# composites (numpy.linalg / the Array API's linalg names; torch's argument conventions live in eager)


def _float_operand(x):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = _family.asarray(x)
    return x


def cholesky(a, upper=False, symmetrize_input=True):
    """The Cholesky factor L (L L^H = a; upper: U = L^H with U^H U = a). symmetrize_input=False reads only
    the lower (upper) triangle of a, as LAPACK does, with the same symmetric gradient."""
    return cholesky_info(a, upper, symmetrize_input)[0]


def _from_triangle(a, lower):
    """The symmetric matrix a's lower (upper) triangle defines, with the gradient of the symmetric part:
    torch reads one triangle and returns a symmetric gradient."""
    t = _tril(a, -1) if lower else _triu(a, 1)
    full = add(add(t, _mH(t)), _diag_embed(real(_diag(a))))  # a Hermitian diagonal is real (LAPACK's reading)
    return add(a, stop_gradient(sub(full, a)))


def cholesky_info(a, upper=False, symmetrize_input=True):
    """(factor, info): info 0 where the factorization succeeded, else k: the leading minor of order k is not
    positive-definite."""
    a = _float_operand(a)
    if not symmetrize_input:
        a = _from_triangle(a, not upper)
    L, info = cholesky_p.bind(a)
    return (_mH(L) if upper else L), info


def solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    """x with a x = b (left) or x a = b (right), a triangular (only that triangle is read)."""
    if left:
        return triangular_solve_p.bind(a, b, lower=not upper, unit_diagonal=unitriangular)
    return _mT(triangular_solve_p.bind(_mT(a), _mT(b), lower=upper, unit_diagonal=unitriangular))


def inv(a):
    """The inverse of each square matrix (nan where singular; see inv_info)."""
    return inv_p.bind(_float_operand(a))[0]


def inv_info(a):
    """(inverse, info): info is 0, or 1 + the index of the first zero pivot of a singular matrix."""
    return inv_p.bind(_float_operand(a))


def _is_vector_rhs(a, b):
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def solve_info(a, b, left=True):
    """(x, info) with a x = b (left) or x a = b; b is a vector (or a batch of them) when b.ndim == 1 or
    b.shape == a.shape[:-1] (torch's rule)."""
    a, b = _family.promote("linalg.solve", a, b)
    if not left:
        x, info = solve_info(_mT(a), _mT(b))
        return _mT(x), info
    if _is_vector_rhs(a, b):
        x, info = solve_p.bind(a, expand_dims(b, -1))
        return squeeze(x, -1), info
    return solve_p.bind(a, b)


def solve(a, b, left=True):
    """x with a x = b (left) or x a = b (nan where a is singular; see solve_info)."""
    return solve_info(a, b, left)[0]


def det(a):
    return det_p.bind(_float_operand(a))


# the standard's named results (tuples still: they unpack and index as before)
SlogdetResult = collections.namedtuple("SlogdetResult", "sign logabsdet")
EighResult = collections.namedtuple("EighResult", "eigenvalues eigenvectors")
EigResult = collections.namedtuple("EigResult", "eigenvalues eigenvectors")
SVDResult = collections.namedtuple("SVDResult", "U S Vh")
QRResult = collections.namedtuple("QRResult", "Q R")


def slogdet(a):
    """(sign, logabsdet) of each square matrix."""
    return SlogdetResult(*slogdet_p.bind(_float_operand(a)))


def eigh(a, UPLO=None):
    """(eigenvalues ascending, eigenvectors as columns); UPLO 'L'/'U' reads that triangle only (torch's
    gradient: symmetric); None uses the symmetric part."""
    a = _float_operand(a)
    if UPLO is not None:
        a = _from_triangle(a, UPLO == "L")
    return EighResult(*eigh_p.bind(a))


def eigvalsh(a, UPLO=None):
    return eigh(a, UPLO)[0]


def eig(a):
    """(eigenvalues, eigenvectors as unit columns), complex, as LAPACK's geev gives them (each column's
    largest component real)."""
    return EigResult(*eig_p.bind(_float_operand(a)))


def eigvals(a):
    """The eigenvalues, complex (their gradient does not depend on the eigenvectors' phases)."""
    return eig_p.bind(_float_operand(a))[0]


def svd(a, full_matrices=True):
    """(U, S, Vh) with a = U diag(S) Vh, S descending."""
    return SVDResult(*svd_p.bind(_float_operand(a), full_matrices=bool(full_matrices)))


def svdvals(a):
    """The singular values, descending (their gradient is U diag(g) Vh: finite for repeated values)."""
    return svd_p.bind(_float_operand(a), full_matrices=False)[1]


def qr(a, mode="reduced"):
    """(Q, R) with a = Q R; mode 'reduced', 'complete', or 'r' (R only)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                         "'r', or 'complete'")
    Q, R = qr_p.bind(_float_operand(a), complete=mode == "complete")
    return R if mode == "r" else QRResult(Q, R)


def lu(a):
    """(P, L, U) with a = P L U."""
    P, L, U, _ = lu_p.bind(_float_operand(a))
    return P, L, U


def lu_factor(a):
    """(LU, pivots): L's strict lower part and U packed in one matrix, LAPACK's 1-based int32 pivots."""
    return lu_factor_info(a)[:2]


def lu_factor_info(a):
    """(LU, pivots, info): info as LAPACK getrf gives it, 0 or the 1-based index k of the first zero U[k, k]."""
    P, L, U, piv = lu_p.bind(_float_operand(a))
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if m > n:
        LU = add(_tril(L, -1), concatenate([U, mul(slice_axis(L, -2, k, m), 0.0)], -2))
    else:
        LU = add(concatenate([_tril(L, -1), mul(slice_axis(U, -1, k, n), 0.0)], -1), U)
    zero = eq(stop_gradient(_diag(U)), 0.0)
    first = argmax(cast(zero, dt.int32), -1) if k else sum(cast(zero, dt.int32), -1)  # the first True, if any
    info = where(any(zero, -1), cast(add(first, 1), dt.int32), 0)
    return LU, piv, cast(info, dt.int32)


def lu_solve(LU, pivots, b, left=True, adjoint=False):
    """x with A x = b (left) or x A = b for A = P L U as lu_factor packs it."""
    n = LU.shape[-1]
    L = add(_tril(LU, -1), _eye(n, LU))
    U = _triu(LU)
    P = _perm_from_pivots(pivots, n, LU)
    if left and not adjoint:  # A x = b: x = U^{-1} L^{-1} P^T b
        y = triangular_solve_p.bind(L, _mm(_mT(P), b), lower=True, unit_diagonal=True)
        return triangular_solve_p.bind(U, y, lower=False, unit_diagonal=False)
    if left:  # A^H x = b: x = P L^{-H} U^{-H} b
        y = triangular_solve_p.bind(_mH(U), b, lower=True, unit_diagonal=False)
        return _mm(P, triangular_solve_p.bind(_mH(L), y, lower=False, unit_diagonal=True))
    return _mH(lu_solve(LU, pivots, _mH(b), left=True, adjoint=not adjoint))  # x A = b  <=>  A^H x^H = b^H


def _perm_from_pivots(pivots, n, like):
    """P (A = P L U) from LAPACK's 1-based row interchanges, built with one-hot compares (no data-dependent
    loop): the interchanges act in order on the rows of the identity."""
    k = pivots.shape[-1]
    rows = arange(n, device=like.device)
    perm = broadcast_to(reshape(rows, (1,) * (pivots.ndim - 1) + (n,)), tuple(pivots.shape[:-1]) + (n,))
    for i in range(k):
        j = sub(slice_axis(pivots, -1, i, i + 1), 1)  # (..., 1)
        pi = slice_axis(perm, -1, i, i + 1)
        pj = sum(where(eq(rows, j), perm, 0), -1, keepdims=True)
        at_i = eq(rows, i)
        at_j = eq(rows, j)
        perm = where(at_i, pj, where(at_j, pi, perm))
    # row r of P^T A is row perm[r] of A: P^T[r, perm[r]] = 1
    onehot = cast(eq(expand_dims(perm, -1), rows), like.dtype)
    return _mT(onehot)


def expm(a):
    """The matrix exponential of each square matrix."""
    return expm_p.bind(_float_operand(a))


def _default_rtol(a, atol_given):
    eps = float(np.finfo(a.dtype.np).eps)
    return 0.0 if atol_given else eps * builtins.max(a.shape[-2], a.shape[-1])


def _tolerance(S_max, atol, rtol, a):
    # array tolerances broadcast against the stack's batch shape a.shape[:-2] (the standard's and torch's),
    # so they get the trailing axis S_max keeps
    atol = expand_dims(atol, -1) if _family.is_arraylike(atol) else atol
    rtol = expand_dims(rtol, -1) if _family.is_arraylike(rtol) else rtol
    if rtol is None:
        rtol = _default_rtol(a, atol is not None and not (isinstance(atol, (int, float)) and atol == 0))
    tol = mul(S_max, rtol)
    if atol is not None:
        tol = where(gt(atol, tol), atol, tol)
    return tol


def pinv(a, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse: singular values at or below max(atol, rtol * largest) count as zero (torch's
    default rtol: eps * max(m, n) when atol is not given)."""
    a = _float_operand(a)
    if _family.prod(a.shape) == 0:  # no entries: the (..., n, m) result is empty too
        return _mH(a)
    if hermitian:
        w, V = eigh_p.bind(a)
        aw = abs(w)
        keep = gt(aw, _tolerance(stop_gradient(max(aw, -1, keepdims=True)), atol, rtol, a)) if w.shape[-1] else aw
        winv = where(keep, div(1.0, where(keep, w, 1.0)), 0.0)
        return _mm(mul(V, cast(expand_dims(winv, -2), V.dtype)), _mH(V))
    U, S, Vh = svd_p.bind(a, full_matrices=False)
    keep = gt(S, _tolerance(stop_gradient(max(S, -1, keepdims=True)), atol, rtol, a))
    Sinv = where(keep, div(1.0, where(keep, S, 1.0)), 0.0)
    return _mm(mul(_mH(Vh), cast(expand_dims(Sinv, -2), a.dtype)), _mH(U))


def matrix_rank(a, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol * largest), as int64."""
    a = _float_operand(a)
    S = abs(eigh_p.bind(a)[0]) if hermitian else svd_p.bind(a, full_matrices=False)[1]
    if _family.prod(S.shape) == 0:  # no singular values (or an empty stack): rank 0 each
        return sum(cast(S, dt.int64), -1)
    return sum(cast(gt(S, _tolerance(max(S, -1, keepdims=True), atol, rtol, a)), dt.int64), -1)


def matrix_power(a, n):
    """a @ a @ ... (n times) by repeated squaring; n < 0 powers the inverse; n == 0 the identity."""
    if n == 0:
        return broadcast_to(_eye(a.shape[-1], a), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    base = a
    while n:
        if n & 1:
            result = base if result is None else _mm(result, base)
        n >>= 1
        if n:
            base = _mm(base, base)
    return result


def vector_norm(x, ord=2, axis=None, keepdims=False):
    """The vector ord-norm over `axis` (None: all): ord any real, inf, -inf or 0 (the count of non-zeros)."""
    x = _float_operand(x)
    ax = x
    if ord == 0:
        return sum(cast(ne(x, 0.0), x.dtype.to_real()), axis, keepdims)
    if ord == math.inf:
        return max(abs(x), axis, keepdims)
    if ord == -math.inf:
        return min(abs(x), axis, keepdims)
    if ord == 1:
        return sum(abs(x), axis, keepdims)
    if ord == 2:
        s = sum(real(mul(ax, conj(ax))), axis, keepdims)  # |x|^2, smooth at 0 for complex x too
        zero = eq(s, 0.0)
        return where(zero, 0.0, sqrt(where(zero, 1.0, s)))  # gradient 0 at 0, as torch
    a = abs(x)
    if ord < 0:
        return pow(sum(pow(a, float(ord)), axis, keepdims), 1.0 / ord)
    s = sum(pow(a, float(ord)), axis, keepdims)
    zero = eq(s, 0.0)
    return where(zero, 0.0, pow(where(zero, 1.0, s), 1.0 / ord))


def matrix_norm(x, ord="fro", axis=(-2, -1), keepdims=False):
    """The matrix norm over the two axes: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2."""
    x = _float_operand(x)
    r, c = (_family.normalize_axis(a, x.ndim, "linalg.matrix_norm") for a in axis)
    if ord == "fro":
        return vector_norm(x, 2, (r, c), keepdims)
    if ord in ("nuc", 2, -2):
        perm = tuple(i for i in range(x.ndim) if i not in (r, c)) + (r, c)
        S = svdvals(_family.transpose_p.bind(x, perm=perm))
        out = sum(S, -1) if ord == "nuc" else (max(S, -1) if ord == 2 else min(S, -1))
        if keepdims:
            for a in sorted((r, c)):
                out = expand_dims(out, a)
        return out
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer_ = (r, c) if ord in (1, -1) else (c, r)
        sums = sum(abs(x), inner, keepdims=True)
        red = max if ord > 0 else min
        out = red(sums, outer_, keepdims=True)
        if not keepdims:
            out = squeeze(out, tuple(sorted((r, c))))
        return out
    raise ValueError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: the 2-norm of the flattened x (ord None, axis None); a vector norm over one axis;
    a matrix norm over two."""
    x = _float_operand(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, 2, None, keepdims)
        axis = tuple(range(x.ndim))
    if isinstance(axis, int):
        axis = (axis,)
    if len(axis) == 1:
        return vector_norm(x, 2 if ord is None else ord, axis[0], keepdims)
    return matrix_norm(x, "fro" if ord is None else ord, tuple(axis), keepdims)


def cross(a, b, axis=-1):
    """The cross product of 3-vectors along `axis` (batch dims broadcast)."""
    a, b = _family.promote("linalg.cross", a, b)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"linalg.cross: inputs dimension {axis} must have length 3. Got {a.shape[axis]} and "
                         f"{b.shape[axis]}")
    c = [slice_axis(a, axis, i, i + 1) for i in range(3)]
    d = [slice_axis(b, axis, i, i + 1) for i in range(3)]
    return concatenate([sub(mul(c[1], d[2]), mul(c[2], d[1])), sub(mul(c[2], d[0]), mul(c[0], d[2])),
                        sub(mul(c[0], d[1]), mul(c[1], d[0]))], axis)


def multi_dot(arrays):
    """The product of a chain of matrices (first may be 1-D, last may be 1-D), in the cheapest order."""
    arrays = list(arrays)
    if len(arrays) == 1:
        return arrays[0]
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vec:
        arrays[0] = expand_dims(arrays[0], 0)
    if last_vec:
        arrays[-1] = expand_dims(arrays[-1], 1)
    dims = [a.shape[0] for a in arrays] + [arrays[-1].shape[1]]
    order = _chain_order(dims)

    def build(i, j):
        if i == j:
            return arrays[i]
        k = order[i][j]
        return matmul(build(i, k), build(k + 1, j))
    out = build(0, len(arrays) - 1)
    if first_vec:
        out = squeeze(out, 0)
    if last_vec:
        out = squeeze(out, -1)
    return out


def _chain_order(dims):
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def vecdot(a, b, axis=-1):
    """sum(conj(a) * b) along `axis` (batch dims broadcast), in the promoted dtype of a and b (the standard's
    and torch.linalg.vecdot's definition)."""
    a, b = _family.promote("vecdot", a, b)
    if a.dtype.category == dt.COMPLEX:
        a = conj(a)
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: the dimensions along axis {axis} differ: {a.shape[axis]} and {b.shape[axis]}")
    return sum(mul(a, b), axis, dtype=a.dtype)


def tensordot(a, b, axes=2):
    """Contraction of a's last `axes` axes with b's first ones (or the axis lists ([a axes], [b axes]))."""
    a, b = _family.promote("tensordot", a, b)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: expects axes to be a non-negative integer")
        ax_a, ax_b = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
    ax_a = tuple(_family.normalize_axis(x, a.ndim, "tensordot") for x in ax_a)
    ax_b = tuple(_family.normalize_axis(x, b.ndim, "tensordot") for x in ax_b)
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: contracted dimensions need to match, but first has size {a.shape[i]} "
                             f"in dim {i} and second has size {b.shape[j]} in dim {j}")
    free_a = tuple(i for i in range(a.ndim) if i not in ax_a)
    free_b = tuple(i for i in range(b.ndim) if i not in ax_b)
    k = _family.prod(a.shape[i] for i in ax_a)
    A = reshape(_family.transpose_p.bind(a, perm=free_a + ax_a), (_family.prod(a.shape[i] for i in free_a), k))
    B = reshape(_family.transpose_p.bind(b, perm=ax_b + free_b), (k, _family.prod(b.shape[i] for i in free_b)))
    return reshape(matmul_p.bind(A, B), tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


def lstsq(a, b, rcond=None):
    """(solution, residuals, rank, singular values) of min ||a x - b||: the minimum-norm solution through the
    pseudo-inverse (torch's gradient for full-rank a); residuals (squared, per column) when m > n and a has
    full rank, else empty; singular values as numpy gives them."""
    a, b = _family.promote("linalg.lstsq", a, b)
    vec = b.ndim == a.ndim - 1
    B = expand_dims(b, -1) if vec else b
    x = _mm(pinv(a, rtol=rcond), B)
    m, n = a.shape[-2:]
    S = svdvals(a)
    rank = matrix_rank(a, rtol=rcond)
    if m > n:
        r = sub(_mm(a, x), B)
        residuals = sum(real(mul(r, conj(r))), -2)
    else:
        residuals = _empty_of(a, (0,))
    if vec:
        x = squeeze(x, -1)
        if m > n:
            residuals = squeeze(residuals, -1)
    return x, residuals, rank, S


def _empty_of(like, shape):
    return mul(reshape(slice_axis(reshape(like, (-1,)), 0, 0, 0), shape), 0.0)
