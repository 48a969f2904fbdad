"""Linear algebra: matmul (NumPy semantics: batch dims broadcast, 1-D operands
promoted and squeezed back); the decompositions as primitives (cholesky, qr, svd,
eigh, lu, triangular solve, inv, solve, det, slogdet, matrix exp), each with its
VJP as PyTorch defines it; and the rest of numpy.linalg / torch.linalg as
composites on them. Every primitive takes (..., m, n) operands: leading axes are
batch axes, so a batching rule moves the vmapped axis to the front and binds again.

Symmetric inputs (cholesky, eigh): the primitives factor the symmetric part
(a + a^T) / 2, so their VJP (PyTorch's formula, a symmetric matrix) is the exact
derivative; `cholesky(a, symmetrize_input=False)` reads one triangle as LAPACK
(and torch) do, with the same symmetric gradient.
"""
import builtins
import math
import warnings

import numpy as np
import scipy.linalg

from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import broadcast_shapes, move_to_front, sum_to_shape
from .creation import arange, eye
from .elementwise import (abs, add, cast, div, eq, exp, gt, le, ge, log, logical_and, logical_or, lt, mul, ne, neg, pow, sign,
                          sqrt, stop_gradient, sub, where)
from .reduction import max, min, prod, sum
from .shape import broadcast_to, concatenate, expand_dims, reshape, slice_axis, squeeze, swapaxes

__all__ = [
    "matmul_p", "matmul", "dot", "outer", "cholesky_p", "triangular_solve_p", "inv_p", "solve_p", "det_p",
    "slogdet_p", "eigh_p", "svd_p", "qr_p", "lu_p", "expm_p", "matrix_transpose", "diagonal", "trace",
    "tensordot", "vecdot", "cholesky", "cholesky_info", "solve_triangular", "inv", "inv_info", "solve",
    "solve_info", "det", "slogdet", "eigh", "eigvalsh", "svd", "svdvals", "qr", "lu", "lu_factor", "lu_solve",
    "expm", "pinv", "matrix_rank", "matrix_power", "vector_norm", "matrix_norm", "norm", "cross", "multi_dot",
    "lstsq",
]


def _matmul_meta(a, b):
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul: primitive operands must be at least 2-D, got {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    d = _family.same_dtype("matmul", a, b)
    try:
        batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} cannot broadcast: batch dimensions "
                         f"{a.shape[:-2]} and {b.shape[:-2]} differ") from None
    return batch + (a.shape[-2], b.shape[-1]), d


def _mT(x):
    return swapaxes(x, -1, -2)


def _matmul_jvp(ts, out, a, b):
    ta, tb = ts
    res = None
    if ta is not None:
        res = matmul_p.bind(ta, b)
    if tb is not None:
        t = matmul_p.bind(a, tb)
        res = t if res is None else add(res, t)
    return _family.broadcast_to_shape(res, out.shape)


matmul_p = Primitive(
    "matmul", _matmul_meta, vjp_reads=((1,), (0,)), jvp=_matmul_jvp,
    vjp=(lambda g, out, a, b: sum_to_shape(matmul_p.bind(g, _mT(b)), a.shape),
         lambda g, out, a, b: sum_to_shape(matmul_p.bind(_mT(a), g), b.shape)))
def _matmul_batch(vals, bdims):
    """Batch axis first on batched operands, logical ranks aligned; numpy broadcasting does the rest."""
    ranks = [len(v.shape) - (d is not None) for v, d in zip(vals, bdims)]
    rank = builtins.max(ranks)
    args = []
    for v, d, r in zip(vals, bdims, ranks):
        if d is not None:
            v = move_to_front(v, d)
            if r < rank:
                v = reshape(v, (v.shape[0],) + (1,) * (rank - r) + tuple(v.shape[1:]))
        args.append(v)
    return matmul_p.bind(*args), 0


matmul_p.batch = _matmul_batch
@matmul_p.def_impl("cpu")
def _matmul_cpu(a, b):
    if not (a.size and b.size):
        return np.matmul(a, b)
    if a.shape[-1] == 1:
        # an outer product per batch element (what per-example gradients are): numpy's batched
        # matmul has no BLAS path for an inner size of 1 (~4x slower here), and a broadcast
        # multiply ~1.7x slower, than einsum's sum-of-products loop
        return np.einsum("...ik,...kj->...ij", a, b)
    if b.ndim == 2 and a.ndim > 2:
        # a batch of matrices against one matrix: one GEMM over the folded batch, not one per matrix
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2 and b.ndim > 2:
        # one matrix against a batch (a VJP under vmap): fold the batch into the columns of one GEMM
        k, n = b.shape[-2], b.shape[-1]
        cols = np.moveaxis(b, -2, 0).reshape(k, -1)
        return np.moveaxis((a @ cols).reshape((a.shape[0],) + b.shape[:-2] + (n,)), 0, -2)
    return np.matmul(a, b)


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


def dot(a, b):
    return matmul(a, b)


def outer(a, b):
    return matmul(expand_dims(a, 1), expand_dims(b, 0))


# ---------------------------------------------------------------------------
# helpers for the rules (core ops only) and the lowerings


def matrix_transpose(x):
    """x with its last two axes swapped."""
    return swapaxes(x, -1, -2)


_mT = matrix_transpose


def _mm(a, b):
    return matmul_p.bind(a, b)


def _eye(n, x):
    return eye(n, dtype=x.dtype, device=x.device)


def diagonal(x, offset=0):
    """The diagonal of the last two axes (at `offset`), as the last axis (no copy semantics needed: arrays are
    immutable)."""
    n, m = x.shape[-2], x.shape[-1]
    rows = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else builtins.min(n + offset, m))
    if offset >= 0:
        x = slice_axis(slice_axis(x, -2, 0, rows), -1, offset, offset + rows)
    else:
        x = slice_axis(slice_axis(x, -2, -offset, -offset + rows), -1, 0, rows)
    return sum(mul(x, _eye(rows, x)), -1)


def trace(x, offset=0):
    """The sum of the diagonal of the last two axes."""
    return sum(diagonal(x, offset), -1)


def _diag_embed(d):
    return mul(expand_dims(d, -1), _eye(d.shape[-1], d))


def _tri_mask(x, k, lower):
    n, m = x.shape[-2], x.shape[-1]
    diff = sub(reshape(arange(m, device=x.device), (1, m)), reshape(arange(n, device=x.device), (n, 1)))
    return le(diff, k) if lower else ge(diff, k)


def _tril(x, k=0):
    return where(_tri_mask(x, k, True), x, 0.0)


def _triu(x, k=0):
    return where(_tri_mask(x, k, False), x, 0.0)


def _sym(x):
    return mul(add(x, _mT(x)), 0.5)


_LINALG_DTYPES = (dt.float32, dt.float64)


def _square_meta(name, a):
    """The checks torch's linalg functions make on a batch of square matrices."""
    _check_float(name, a)
    if a.ndim < 2:
        raise ValueError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                         f"{a.shape[-1]} matrices")


def _check_float(name, a):
    if a.dtype not in _LINALG_DTYPES and a.dtype.category != getattr(dt, "COMPLEX", -1):
        raise TypeError(f"{name}: Expected a floating point or complex tensor as input. Got {a.dtype.scalar_name}")


def _matrix_meta(name, a):
    _check_float(name, a)
    if a.ndim < 2:
        raise ValueError(f"{name}: The input tensor A must have at least 2 dimensions.")


def _front_batch(prim):
    """Batching rule of a one-input primitive on (..., m, n): the vmapped axis first, bind again."""
    def rule(vals, bdims, **params):
        out = prim.bind(move_to_front(vals[0], bdims[0]), **params)
        return out, ((0,) * len(out) if prim.multiple_results else 0)
    return rule


def _two_batch(prim):
    """Batching rule of a two-input primitive whose batch dims broadcast (as matmul's)."""
    def rule(vals, bdims, **params):
        ranks = [len(v.shape) - (d is not None) for v, d in zip(vals, bdims)]
        rank = builtins.max(ranks)
        args = []
        for v, d, r in zip(vals, bdims, ranks):
            if d is not None:
                v = move_to_front(v, d)
                if r < rank:
                    v = reshape(v, (v.shape[0],) + (1,) * (rank - r) + tuple(v.shape[1:]))
            args.append(v)
        out = prim.bind(*args, **params)
        return out, ((0,) * len(out) if prim.multiple_results else 0)
    return rule


def _per_matrix(fn, *arrays, batch):
    """Apply fn to each matrix of the (broadcast) batch; fn returns a tuple of arrays; stacked back."""
    arrays = [np.broadcast_to(a, batch + a.shape[-2:]) for a in arrays]
    results = None
    for idx in np.ndindex(*batch):
        res = fn(*[a[idx] for a in arrays])
        if results is None:
            results = [np.empty(batch + np.shape(r), np.asarray(r).dtype) for r in res]
        for store, r in zip(results, res):
            store[idx] = r
    if results is None:  # an empty batch: fn on zeros gives the per-matrix shapes
        res = fn(*[np.zeros(a.shape[-2:], a.dtype) + np.eye(*a.shape[-2:], dtype=a.dtype) for a in arrays])
        results = [np.empty(batch + np.shape(r), np.asarray(r).dtype) for r in res]
    return results


def _first_zero_pivot(a):
    """LAPACK getrf's info for one square matrix: 1 + the index of the first zero pivot of its LU, else 0."""
    if a.shape[-1] == 0:
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu, _ = scipy.linalg.lu_factor(a, check_finite=False)
    zero = np.flatnonzero(np.diagonal(lu) == 0)
    return int(zero[0]) + 1 if zero.size else 0


# ---------------------------------------------------------------------------
# cholesky: L lower with (a + a^T) / 2 == L L^T; info as LAPACK potrf gives it (0: success, k: the leading
# minor of order k is not positive-definite). PyTorch's cholesky_backward:
#   gA = L^{-T} Phi L^{-1},  Phi = (G + G^T) / 2 with G = tril(L^T gL) (its diagonal counted once)


def _cholesky_meta(a):
    _square_meta("linalg.cholesky", a)
    return (a.shape, a.dtype), (a.shape[:-2], dt.int32)


def _phi(x):
    """tril(x) with its diagonal halved: the lower half of a symmetric matrix's split x = phi + phi^T."""
    return sub(_tril(x), mul(_diag_embed(diagonal(x)), 0.5))


def _cholesky_vjp(g, out, a):
    L = out[0]
    G = _tril(_mm(_mT(L), g[0]))
    P = mul(add(G, _mT(_tril(G, -1))), 0.5)
    gA = triangular_solve_p.bind(_mT(L), P, lower=False, unit_diagonal=False)  # L^{-T} P
    return _mT(triangular_solve_p.bind(_mT(L), _mT(gA), lower=False, unit_diagonal=False))  # (L^{-T} gA^T)^T


def _cholesky_jvp(ts, out, a):
    L = out[0]
    X = triangular_solve_p.bind(L, _sym(ts[0]), lower=True, unit_diagonal=False)  # L^{-1} dA
    X = _mT(triangular_solve_p.bind(L, _mT(X), lower=True, unit_diagonal=False))  # L^{-1} dA L^{-T}
    return _mm(L, _phi(X)), None


cholesky_p = Primitive("cholesky", _cholesky_meta, multiple_results=True, vjp=(_cholesky_vjp,),
                       vjp_reads=("out",), jvp=_cholesky_jvp)
cholesky_p.batch = _front_batch(cholesky_p)


@cholesky_p.def_impl("cpu")
def _cholesky_cpu(a):
    s = (a + np.swapaxes(a, -1, -2)) * a.dtype.type(0.5)
    try:
        return np.linalg.cholesky(s), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        pass

    def one(m):
        try:
            return np.linalg.cholesky(m), 0
        except np.linalg.LinAlgError:
            for k in range(1, m.shape[-1] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    return np.full_like(m, np.nan), k
        return np.full_like(m, np.nan), m.shape[-1]
    L, info = _per_matrix(one, s, batch=s.shape[:-2])
    return L, info.astype(np.int32)


# ---------------------------------------------------------------------------
# triangular solve: x with A x = b, reading only A's lower (upper) triangle; unit_diagonal: A's diagonal is
# taken to be ones. BLAS trsm does not check for singularity: a zero pivot gives inf/nan, as in torch.


def _triangular_solve_meta(a, b, *, lower, unit_diagonal):
    _square_meta("linalg.solve_triangular", a)
    _check_float("linalg.solve_triangular", b)
    if b.ndim < 2:
        raise ValueError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                         f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
    d = _family.same_dtype("linalg.solve_triangular", a, b)
    batch = broadcast_shapes("linalg.solve_triangular", a.shape[:-2], b.shape[:-2])
    return batch + b.shape[-2:], d


def _tri_part(x, lower, unit_diagonal):
    k = (-1 if lower else 1) if unit_diagonal else 0
    return _tril(x, k) if lower else _triu(x, k)


def _triangular_solve_vjp_a(g, out, a, b, *, lower, unit_diagonal):
    gb = triangular_solve_p.bind(_mT(a), g, lower=not lower, unit_diagonal=unit_diagonal)
    return sum_to_shape(neg(_tri_part(_mm(gb, _mT(out)), lower, unit_diagonal)), a.shape)


def _triangular_solve_vjp_b(g, out, a, b, *, lower, unit_diagonal):
    return sum_to_shape(triangular_solve_p.bind(_mT(a), g, lower=not lower, unit_diagonal=unit_diagonal), b.shape)


def _triangular_solve_jvp(ts, out, a, b, *, lower, unit_diagonal):
    ta, tb = ts
    rhs = None if tb is None else tb
    if ta is not None:
        t = neg(_mm(_tri_part(ta, lower, unit_diagonal), out))
        rhs = t if rhs is None else add(rhs, t)
    rhs = _family.broadcast_to_shape(rhs, out.shape)
    return triangular_solve_p.bind(a, rhs, lower=lower, unit_diagonal=unit_diagonal)


triangular_solve_p = Primitive(
    "triangular_solve", _triangular_solve_meta, vjp=(_triangular_solve_vjp_a, _triangular_solve_vjp_b),
    vjp_reads=((0, "out"), (0,)), jvp=_triangular_solve_jvp)
triangular_solve_p.batch = _two_batch(triangular_solve_p)


@triangular_solve_p.def_impl("cpu")
def _triangular_solve_cpu(a, b, *, lower, unit_diagonal):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out_shape = batch + b.shape[-2:]
    if 0 in out_shape:
        return np.zeros(out_shape, b.dtype)
    trsm = scipy.linalg.get_blas_funcs("trsm", (a, b))

    def one(m, rhs):
        return (trsm(1.0, m, rhs, side=0, lower=int(lower), trans_a=0, diag=int(unit_diagonal)),)
    with np.errstate(all="ignore"):
        return _per_matrix(one, a, b, batch=batch)[0].astype(b.dtype, copy=False)


# ---------------------------------------------------------------------------
# inverse and solve, with LAPACK's info (0, or 1 + the index of the first zero pivot): the eager layer
# raises torch's LinAlgError from it; inv_ex/solve_ex return it.


def _inv_meta(a):
    _square_meta("linalg.inv", a)
    return (a.shape, a.dtype), (a.shape[:-2], dt.int32)


def _inv_vjp(g, out, a):
    inv = out[0]
    return neg(_mm(_mT(inv), _mm(g[0], _mT(inv))))


inv_p = Primitive("inv", _inv_meta, multiple_results=True, vjp=(_inv_vjp,), vjp_reads=("out",),
                  jvp=lambda ts, out, a: (neg(_mm(out[0], _mm(ts[0], out[0]))), None))
inv_p.batch = _front_batch(inv_p)


def _lapack_call(fn, a, *rest, batch):
    """fn on the whole batch; where LAPACK refuses (a singular matrix), per matrix with info for each."""
    try:
        with np.errstate(all="ignore"):
            return fn(a, *rest), np.zeros(batch, np.int32)
    except np.linalg.LinAlgError:
        pass

    def one(m, *r):
        info = _first_zero_pivot(m)
        if info:
            return np.full(np.shape(fn(np.eye(m.shape[-1], dtype=m.dtype), *r)), np.nan, m.dtype), info
        return fn(m, *r), 0
    res, info = _per_matrix(one, a, *rest, batch=batch)
    return res, info.astype(np.int32)


@inv_p.def_impl("cpu")
def _inv_cpu(a):
    return _lapack_call(np.linalg.inv, a, batch=a.shape[:-2])


def _solve_meta(a, b):
    _square_meta("linalg.solve", a)
    _check_float("linalg.solve", b)
    if b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                         f"({a.shape[-2]}x{a.shape[-1]} and {'x'.join(map(str, b.shape[-2:]))})")
    d = _family.same_dtype("linalg.solve", a, b)
    batch = broadcast_shapes("linalg.solve", a.shape[:-2], b.shape[:-2])
    return (batch + b.shape[-2:], d), (batch, dt.int32)


def _solve_vjp_a(g, out, a, b):
    gb = solve_p.bind(_mT(a), g[0])[0]
    return sum_to_shape(neg(_mm(gb, _mT(out[0]))), a.shape)


def _solve_vjp_b(g, out, a, b):
    return sum_to_shape(solve_p.bind(_mT(a), g[0])[0], b.shape)


def _solve_jvp(ts, out, a, b):
    ta, tb = ts
    rhs = tb
    if ta is not None:
        t = neg(_mm(ta, out[0]))
        rhs = t if rhs is None else add(rhs, t)
    return solve_p.bind(a, _family.broadcast_to_shape(rhs, out[0].shape))[0], None


solve_p = Primitive("solve", _solve_meta, multiple_results=True, vjp=(_solve_vjp_a, _solve_vjp_b),
                    vjp_reads=((0, "out"), (0,)), jvp=_solve_jvp)
solve_p.batch = _two_batch(solve_p)


@solve_p.def_impl("cpu")
def _solve_cpu(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if 0 in b.shape:
        return np.zeros(b.shape, b.dtype), np.zeros(batch, np.int32)
    return _lapack_call(np.linalg.solve, a, b, batch=batch)


# ---------------------------------------------------------------------------
# determinants: d det = det tr(A^{-1} dA), d log|det| = tr(A^{-1} dA)


def _det_meta(a):
    _square_meta("linalg.det", a)
    return a.shape[:-2], a.dtype


def _inv_T(a):
    return _mT(inv_p.bind(a)[0])


det_p = Primitive(
    "det", _det_meta, vjp_reads=(0, "out"),
    vjp=(lambda g, out, a: mul(expand_dims(expand_dims(mul(g, out), -1), -1), _inv_T(a)),),
    jvp=lambda ts, out, a: mul(out, trace(_mm(inv_p.bind(a)[0], ts[0]))))
det_p.batch = _front_batch(det_p)


@det_p.def_impl("cpu")
def _det_cpu(a):
    return np.linalg.det(a)


def _slogdet_meta(a):
    _square_meta("linalg.slogdet", a)
    return (a.shape[:-2], a.dtype), (a.shape[:-2], a.dtype)


slogdet_p = Primitive(
    "slogdet", _slogdet_meta, multiple_results=True, vjp_reads=(0,),
    vjp=(lambda g, out, a: mul(expand_dims(expand_dims(g[1], -1), -1), _inv_T(a)),),
    jvp=lambda ts, out, a: (None, trace(_mm(inv_p.bind(a)[0], ts[0]))))
slogdet_p.batch = _front_batch(slogdet_p)


@slogdet_p.def_impl("cpu")
def _slogdet_cpu(a):
    s, l = np.linalg.slogdet(a)
    return s, l


# ---------------------------------------------------------------------------
# eigh: (w ascending, V) of the symmetric part. PyTorch's linalg_eig_backward (hermitian case):
#   gA = V (diag(gw) + skew(V^T gV) / E) V^T,  E_ij = w_j - w_i (1 on the diagonal), skew(X) = (X - X^T) / 2
# With repeated eigenvalues the V term is inf/nan (as in torch) unless its numerator is 0: an unused V (a
# zero cotangent) leaves the eigenvalue gradient finite, as torch's undefined gV does.


def _eigh_meta(a):
    _square_meta("linalg.eigh", a)
    return (a.shape[:-1], a.dtype), (a.shape, a.dtype)


def _divide_gaps(num, w):
    """num_ij / (w_j - w_i) off the diagonal (0 on it), 0 where num is 0 (no 0/0 for ties nobody asked
    about)."""
    gaps = sub(expand_dims(w, -2), expand_dims(w, -1))
    n = w.shape[-1]
    eye_ = _eye(n, gaps)
    gaps = add(gaps, eye_)
    return where(logical_or(eq(num, 0.0), eq(eye_, 1.0)), 0.0, div(num, gaps))


def _eigh_vjp(g, out, a):
    gw, gV = g
    w, V = out
    X = _mm(_mT(V), gV)
    inner = add(_divide_gaps(mul(sub(X, _mT(X)), 0.5), w), _diag_embed(gw))
    return _mm(V, _mm(inner, _mT(V)))


def _eigh_jvp(ts, out, a):
    w, V = out
    X = _mm(_mT(V), _mm(_sym(ts[0]), V))
    dw = diagonal(X)
    off = sub(X, _diag_embed(dw))
    return dw, _mm(V, _divide_gaps(off, w))


eigh_p = Primitive("eigh", _eigh_meta, multiple_results=True, vjp=(_eigh_vjp,), vjp_reads=("out",),
                   jvp=_eigh_jvp)
eigh_p.batch = _front_batch(eigh_p)


@eigh_p.def_impl("cpu")
def _eigh_cpu(a):
    s = (a + np.swapaxes(a, -1, -2)) * a.dtype.type(0.5)
    if s.size == 0:
        return np.zeros(a.shape[:-1], a.dtype), np.zeros(a.shape, a.dtype)
    return np.linalg.eigh(s)


# ---------------------------------------------------------------------------
# svd: A = U diag(S) Vh, S descending. PyTorch's svd_backward (real case), k = min(m, n), U and Vh narrowed to
# k columns/rows for full_matrices:
#   gA_k = (skew(U^T gU) S_j + S_i skew(V^T gV)) / E + diag(gS),  E_ij = S_j^2 - S_i^2, skew(X) = X - X^T
#   m > n: gA = U gA_k Vh + (I - U U^T) gU S^{-1} Vh;  m < n: gA = U gA_k Vh + U S^{-1} gVh (I - V V^T)


def _svd_meta(a, *, full_matrices):
    _matrix_meta("linalg.svd", a)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    b = a.shape[:-2]
    if full_matrices:
        return (b + (m, m), a.dtype), (b + (k,), a.dtype), (b + (n, n), a.dtype)
    return (b + (m, k), a.dtype), (b + (k,), a.dtype), (b + (k, n), a.dtype)


def _svd_vjp(g, out, a, *, full_matrices):
    gU, gS, gVh = g
    U, S, Vh = out
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if full_matrices and m != n:
        U, gU = slice_axis(U, -1, 0, k), slice_axis(gU, -1, 0, k)
        Vh, gVh = slice_axis(Vh, -2, 0, k), slice_axis(gVh, -2, 0, k)
    V, gV = _mT(Vh), _mT(gVh)
    UgU = _mm(_mT(U), gU)
    VgV = _mm(_mT(V), gV)
    num = add(mul(sub(UgU, _mT(UgU)), expand_dims(S, -2)), mul(expand_dims(S, -1), sub(VgV, _mT(VgV))))
    gA = add(_divide_gaps(num, mul(S, S)), _diag_embed(gS))
    if m > n:
        gUS = div(gU, expand_dims(S, -2))
        gA = add(_mm(U, gA), sub(gUS, _mm(U, _mm(_mT(U), gUS))))
        return _mm(gA, Vh)
    if m < n:
        SgVh = div(gVh, expand_dims(S, -1))
        gA = add(_mm(gA, Vh), sub(SgVh, _mm(_mm(SgVh, V), Vh)))
        return _mm(U, gA)
    return _mm(U, _mm(gA, Vh))


def _svd_jvp(ts, out, a, *, full_matrices):
    """JAX's svd JVP on the k leading columns/rows (the extra ones of full_matrices get zero tangents, as
    the VJP ignores their cotangents)."""
    U, S, Vh = out
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if full_matrices and m != n:
        U, Vh = slice_axis(U, -1, 0, k), slice_axis(Vh, -2, 0, k)
    dA = ts[0]
    V = _mT(Vh)
    dS = _mm(_mT(U), _mm(dA, V))
    ds = diagonal(dS)
    s_row = expand_dims(S, -2)
    s_col = expand_dims(S, -1)
    dSS = mul(dS, s_row)
    SdS = mul(s_col, dS)
    s_inv = where(eq(S, 0.0), 0.0, div(1.0, where(eq(S, 0.0), 1.0, S)))
    dU = _mm(U, add(_divide_gaps(add(dSS, _mT(dSS)), mul(S, S)), mul(mul(sub(dS, _mT(dS)), 0.5), _diag_embed(s_inv))))
    dV = _mm(V, _divide_gaps(add(SdS, _mT(SdS)), mul(S, S)))
    if m > n:
        dAV = _mm(dA, V)
        dU = add(dU, div(sub(dAV, _mm(U, _mm(_mT(U), dAV))), s_row))
    if n > m:
        dAU = _mm(_mT(dA), U)
        dV = add(dV, div(sub(dAU, _mm(V, _mm(Vh, dAU))), s_row))
    dVh = _mT(dV)
    if full_matrices and m != n:
        if m > n:
            dU = concatenate([dU, mul(slice_axis(out[0], -1, k, m), 0.0)], -1)
        else:
            dVh = concatenate([dVh, mul(slice_axis(out[2], -2, k, n), 0.0)], -2)
    return dU, ds, dVh


svd_p = Primitive("svd", _svd_meta, multiple_results=True, vjp=(_svd_vjp,), vjp_reads=("out",), jvp=_svd_jvp)
svd_p.batch = _front_batch(svd_p)


@svd_p.def_impl("cpu")
def _svd_cpu(a, *, full_matrices):
    m, n = a.shape[-2:]
    if a.size == 0:
        b = a.shape[:-2]
        k = builtins.min(m, n)
        eye_u = np.broadcast_to(np.eye(m, m if full_matrices else k, dtype=a.dtype), b + (m, m if full_matrices else k))
        eye_v = np.broadcast_to(np.eye(n if full_matrices else k, n, dtype=a.dtype), b + (n if full_matrices else k, n))
        return eye_u.copy(), np.zeros(b + (k,), a.dtype), eye_v.copy()
    return np.linalg.svd(a, full_matrices=full_matrices)


# ---------------------------------------------------------------------------
# qr: A = Q R (Householder, LAPACK's signs). PyTorch's linalg_qr_backward, for m >= n (reduced):
#   M = R gR^T - gQ^T Q;  gA = (gQ + Q copyltu(M)) R^{-T},  copyltu(M) = tril(M, -1) + tril(M, -1)^T + diag(M)
# for m < n, A = [X | Y], R = [U | V]: gY = Q gV and X's rule with gQ + Y gV^T. Not differentiable for
# complete=True with m > n (Q's extra columns are not determined by A), as in torch.


def _qr_meta(a, *, complete):
    _matrix_meta("linalg.qr", a)
    m, n = a.shape[-2:]
    k = m if complete else builtins.min(m, n)
    b = a.shape[:-2]
    return (b + (m, k), a.dtype), (b + (k, n), a.dtype)


def _qr_square_like_vjp(gQ, gR, Q, R):
    M = sub(_mm(R, _mT(gR)), _mm(_mT(gQ), Q))
    low = _tril(M, -1)
    copyltu = add(add(low, _mT(low)), _diag_embed(diagonal(M)))
    rhs = add(gQ, _mm(Q, copyltu))  # gA R^T = rhs  ->  R gA^T = rhs^T
    return _mT(triangular_solve_p.bind(R, _mT(rhs), lower=False, unit_diagonal=False))


def _qr_vjp(g, out, a, *, complete):
    gQ, gR = g
    Q, R = out
    m, n = a.shape[-2:]
    if m >= n:
        if complete and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        return _qr_square_like_vjp(gQ, gR, Q, R)
    Y = slice_axis(a, -1, m, n)
    U, gU = slice_axis(R, -1, 0, m), slice_axis(gR, -1, 0, m)
    gV = slice_axis(gR, -1, m, n)
    gX = _qr_square_like_vjp(add(gQ, _mm(Y, _mT(gV))), gU, Q, U)
    return concatenate([gX, _mm(Q, gV)], -1)


qr_p = Primitive("qr", _qr_meta, multiple_results=True, vjp=(_qr_vjp,), vjp_reads=(0, "out"))
qr_p.batch = _front_batch(qr_p)


@qr_p.def_impl("cpu")
def _qr_cpu(a, *, complete):
    m, n = a.shape[-2:]
    if a.size == 0:
        b = a.shape[:-2]
        k = m if complete else builtins.min(m, n)
        return np.broadcast_to(np.eye(m, k, dtype=a.dtype), b + (m, k)).copy(), np.zeros(b + (k, n), a.dtype)
    return np.linalg.qr(a, mode="complete" if complete else "reduced")


# ---------------------------------------------------------------------------
# lu: A = P L U with partial pivoting (L unit lower m x k, U upper k x n), and LAPACK's 1-based pivots (int32).
# PyTorch's linalg_lu_backward; for the square part (P^T A = L U):
#   g(P^T A) = L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}
# wide (m < n), U = [U1 | U2]: U2 = L^{-1} P^T A2, so gA2 = P L^{-T} gU2 and gL gains -L^{-T} gU2 U2^T;
# tall (m > n), L = [L1; L2]: L2 = (P^T A)_2 U^{-1}, so g(P^T A)_2 = gL2 U^{-T} and gU gains -L2^T gL2 U^{-T}.


def _lu_meta(a):
    _matrix_meta("linalg.lu", a)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    b = a.shape[:-2]
    return (b + (m, m), a.dtype), (b + (m, k), a.dtype), (b + (k, n), a.dtype), (b + (k,), dt.int32)


def _lu_square_vjp(gL, gU, L, U):
    X = add(_tril(_mm(_mT(L), gL), -1), _triu(_mm(gU, _mT(U))))
    X = triangular_solve_p.bind(_mT(L), X, lower=False, unit_diagonal=True)  # L^{-T} X
    return _mT(triangular_solve_p.bind(U, _mT(X), lower=False, unit_diagonal=False))  # X U^{-T}


def _lu_vjp(g, out, a):
    _, gL, gU, _ = g
    P, L, U, _ = out
    m, n = a.shape[-2:]
    if m == n:
        g_pa = _lu_square_vjp(gL, gU, L, U)
    elif m < n:
        U1, U2 = slice_axis(U, -1, 0, m), slice_axis(U, -1, m, n)
        gU1, gU2 = slice_axis(gU, -1, 0, m), slice_axis(gU, -1, m, n)
        g2 = triangular_solve_p.bind(_mT(L), gU2, lower=False, unit_diagonal=True)  # L^{-T} gU2
        g1 = _lu_square_vjp(sub(gL, _mm(g2, _mT(U2))), gU1, L, U1)
        g_pa = concatenate([g1, g2], -1)
    else:
        L1, L2 = slice_axis(L, -2, 0, n), slice_axis(L, -2, n, m)
        gL1, gL2 = slice_axis(gL, -2, 0, n), slice_axis(gL, -2, n, m)
        g2 = _mT(triangular_solve_p.bind(U, _mT(gL2), lower=False, unit_diagonal=False))  # gL2 U^{-T}
        g1 = _lu_square_vjp(gL1, sub(gU, _mm(_mT(L2), g2)), L1, U)
        g_pa = concatenate([g1, g2], -2)
    return _mm(P, g_pa)


lu_p = Primitive("lu", _lu_meta, multiple_results=True, vjp=(_lu_vjp,), vjp_reads=("out",))
lu_p.batch = _front_batch(lu_p)


def _lu_one(a):
    m, n = a.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, l, u = scipy.linalg.lu(a, check_finite=False)
        piv = scipy.linalg.lu_factor(a, check_finite=False)[1] if m == n else _pivots_of(p)
    k = builtins.min(m, n)
    return p, l, u, (piv[:k] + 1).astype(np.int32)


def _pivots_of(p):
    """LAPACK's row interchanges (0-based) that give permutation matrix p (A = P L U)."""
    m = p.shape[0]
    perm = list(np.argmax(p, axis=0))  # row i of P^T A is row perm[i] of A
    cur = list(range(m))
    pos = list(range(m))
    piv = np.zeros(m, np.int64)
    for i in range(m):
        j = pos[perm[i]]
        piv[i] = j
        ri, rj = cur[i], cur[j]
        cur[i], cur[j] = rj, ri
        pos[rj], pos[ri] = i, j
    return piv


@lu_p.def_impl("cpu")
def _lu_cpu(a):
    m, n = a.shape[-2:]
    if a.size == 0:
        b, k = a.shape[:-2], builtins.min(m, n)
        return (np.broadcast_to(np.eye(m, dtype=a.dtype), b + (m, m)).copy(),
                np.broadcast_to(np.eye(m, k, dtype=a.dtype), b + (m, k)).copy(), np.zeros(b + (k, n), a.dtype),
                np.broadcast_to(np.arange(1, k + 1, dtype=np.int32), b + (k,)).copy())
    return tuple(_per_matrix(_lu_one, a, batch=a.shape[:-2]))


# ---------------------------------------------------------------------------
# matrix exponential. The derivative of exp at A in direction E is the top-right block of exp([[A, E], [0, A]])
# (Mathias 1996); the VJP is the same with A^T: it binds expm_p again, so it nests to any order.


def _expm_meta(a):
    _square_meta("linalg.matrix_exp", a)
    return a.shape, a.dtype


def _expm_block(a, e):
    n = a.shape[-1]
    z = mul(a, 0.0)
    top = concatenate([a, e], -1)
    bottom = concatenate([z, a], -1)
    big = expm_p.bind(concatenate([top, bottom], -2))
    return slice_axis(slice_axis(big, -2, 0, n), -1, n, 2 * n)


expm_p = Primitive("expm", _expm_meta, vjp_reads=(0,), vjp=(lambda g, out, a: _expm_block(_mT(a), g),),
                   jvp=lambda ts, out, a: _expm_block(a, ts[0]))
expm_p.batch = _front_batch(expm_p)


@expm_p.def_impl("cpu")
def _expm_cpu(a):
    if a.size == 0:
        return np.zeros(a.shape, a.dtype)
    return scipy.linalg.expm(a).astype(a.dtype, copy=False)


# ---------------------------------------------------------------------------
# composites (numpy.linalg / the Array API's linalg names; torch's argument conventions live in eager)


def _float_operand(x):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = _family.asarray(x)
    return x


def cholesky(a, upper=False, symmetrize_input=True):
    """The Cholesky factor L (L L^T = a; upper: U = L^T with U^T U = a). symmetrize_input=False reads only
    the lower (upper) triangle of a, as LAPACK does, with the same symmetric gradient."""
    return cholesky_info(a, upper, symmetrize_input)[0]


def _from_triangle(a, lower):
    """The symmetric matrix a's lower (upper) triangle defines, with the gradient of the symmetric part:
    torch reads one triangle and returns a symmetric gradient."""
    t = _tril(a) if lower else _triu(a)
    full = sub(add(t, _mT(t)), _diag_embed(diagonal(a)))
    return add(a, stop_gradient(sub(full, a)))


def cholesky_info(a, upper=False, symmetrize_input=True):
    """(factor, info): info 0 where the factorization succeeded, else k: the leading minor of order k is not
    positive-definite."""
    a = _float_operand(a)
    if not symmetrize_input:
        a = _from_triangle(a, not upper)
    L, info = cholesky_p.bind(a)
    return (_mT(L) if upper else L), info


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


def slogdet(a):
    """(sign, log|det|) of each square matrix."""
    return slogdet_p.bind(_float_operand(a))


def eigh(a, UPLO=None):
    """(eigenvalues ascending, eigenvectors as columns); UPLO 'L'/'U' reads that triangle only (torch's
    gradient: symmetric); None uses the symmetric part."""
    a = _float_operand(a)
    if UPLO is not None:
        a = _from_triangle(a, UPLO == "L")
    return eigh_p.bind(a)


def eigvalsh(a, UPLO=None):
    return eigh(a, UPLO)[0]


def svd(a, full_matrices=True):
    """(U, S, Vh) with a = U diag(S) Vh, S descending."""
    return svd_p.bind(_float_operand(a), full_matrices=bool(full_matrices))


def svdvals(a):
    """The singular values, descending (their gradient is U diag(g) Vh: finite for repeated values)."""
    return svd_p.bind(_float_operand(a), full_matrices=False)[1]


def qr(a, mode="reduced"):
    """(Q, R) with a = Q R; mode 'reduced', 'complete', or 'r' (R only)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                         "'r', or 'complete'")
    Q, R = qr_p.bind(_float_operand(a), complete=mode == "complete")
    return R if mode == "r" else (Q, R)


def lu(a):
    """(P, L, U) with a = P L U."""
    P, L, U, _ = lu_p.bind(_float_operand(a))
    return P, L, U


def lu_factor(a):
    """(LU, pivots): L's strict lower part and U packed in one matrix, LAPACK's 1-based int32 pivots."""
    P, L, U, piv = lu_p.bind(_float_operand(a))
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if m > n:
        LU = add(_tril(L, -1), concatenate([U, mul(slice_axis(L, -2, k, m), 0.0)], -2))
    else:
        LU = add(concatenate([_tril(L, -1), mul(slice_axis(U, -1, k, n), 0.0)], -1), U)
    return LU, piv


def lu_solve(LU, pivots, b, left=True, adjoint=False):
    """x with A x = b (left) or x A = b for A = P L U as lu_factor packs it."""
    n = LU.shape[-1]
    L = add(_tril(LU, -1), _eye(n, LU))
    U = _triu(LU)
    P = _perm_from_pivots(pivots, n, LU)
    if left and not adjoint:  # A x = b: x = U^{-1} L^{-1} P^T b
        y = triangular_solve_p.bind(L, _mm(_mT(P), b), lower=True, unit_diagonal=True)
        return triangular_solve_p.bind(U, y, lower=False, unit_diagonal=False)
    if left:  # A^T x = b: x = P L^{-T} U^{-T} b
        y = triangular_solve_p.bind(_mT(U), b, lower=True, unit_diagonal=False)
        return _mm(P, triangular_solve_p.bind(_mT(L), y, lower=False, unit_diagonal=True))
    return _mT(lu_solve(LU, pivots, _mT(b), left=True, adjoint=not adjoint))


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
    if hermitian:
        w, V = eigh_p.bind(a)
        aw = abs(w)
        keep = gt(aw, _tolerance(stop_gradient(max(aw, -1, keepdims=True)), atol, rtol, a)) if w.shape[-1] else aw
        winv = where(keep, div(1.0, where(keep, w, 1.0)), 0.0)
        return _mm(mul(V, expand_dims(winv, -2)), _mT(V))
    U, S, Vh = svd_p.bind(a, full_matrices=False)
    if S.shape[-1] == 0:
        return _mT(a)
    keep = gt(S, _tolerance(stop_gradient(max(S, -1, keepdims=True)), atol, rtol, a))
    Sinv = where(keep, div(1.0, where(keep, S, 1.0)), 0.0)
    return _mm(mul(_mT(Vh), expand_dims(Sinv, -2)), _mT(U))


def matrix_rank(a, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol * largest), as int64."""
    a = _float_operand(a)
    S = abs(eigh_p.bind(a)[0]) if hermitian else svd_p.bind(a, full_matrices=False)[1]
    if S.shape[-1] == 0:
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
        return sum(cast(ne(x, 0.0), x.dtype), axis, keepdims)
    if ord == math.inf:
        return max(abs(x), axis, keepdims)
    if ord == -math.inf:
        return min(abs(x), axis, keepdims)
    if ord == 1:
        return sum(abs(x), axis, keepdims)
    if ord == 2:
        s = sum(mul(ax, ax), axis, keepdims)
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
    """sum(a * b) along `axis` (batch dims broadcast)."""
    a, b = _family.promote("vecdot", a, b)
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: the dimensions along axis {axis} differ: {a.shape[axis]} and {b.shape[axis]}")
    return sum(mul(a, b), axis)


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
        residuals = sum(mul(r, r), -2)
    else:
        residuals = _empty_of(a, (0,))
    if vec:
        x = squeeze(x, -1)
        if m > n:
            residuals = squeeze(residuals, -1)
    return x, residuals, rank, S


def _empty_of(like, shape):
    return mul(reshape(slice_axis(reshape(like, (-1,)), 0, 0, 0), shape), 0.0)
