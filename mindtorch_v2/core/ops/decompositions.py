"""The linalg primitives: matmul (the product every rule below is written with) and the decompositions and
solvers (cholesky, triangular solve, inv, solve, det, slogdet, eigh, eig, svd, qr, lu, matrix exp), each with its
meta rule, VJP, JVP, batching rule and cpu lowering. linalg.py builds numpy.linalg / torch.linalg on them and is
the namespace (core.linalg) that exports them. Every primitive takes (..., m, n) operands: leading axes are batch
axes, so a batching rule moves the vmapped axis to the front and binds again.

Complex inputs: the rules follow JAX's convention (a VJP is the transpose of the JVP, never its adjoint). The
linear maps (inv, solve, det, triangular solve, expm) transpose with plain transposes; where the math itself has
an adjoint (A = L L^H, V^H V = I, ...) it is conj(transpose) and written as such. PyTorch's backward formulas are
written in its convention, the conjugate: its B(g) is conj(B(conj g)) here.

Hermitian inputs (cholesky, eigh): the primitives factor the Hermitian part (a + a^H) / 2, so their VJP (PyTorch's
formula, a Hermitian matrix) is the exact derivative; `cholesky(a, symmetrize_input=False)` reads one triangle as
LAPACK (and torch) do, with the same gradient.
"""
import builtins
import time
import warnings
from math import prod as _prod

import numpy as np
import scipy.linalg

from .. import _choice
from .. import dtypes as dt
from ..primitive import Primitive
from . import _family
from ._family import broadcast_shapes, move_to_front, sum_to_shape
from ._blas_gemm import gemm_applies, gemm_c_order
from ._transpose_kernel import transpose_copy
from .creation import arange, eye
from .elementwise import (abs, add, cast, conj, div, eq, ge, imag, le, logical_or, lt, mul, neg, real,
                          stop_gradient, sub, where)
from .layout import diag_embed, diagonal
from .reduction import max, prod, sum
from .shape import broadcast_to, concatenate, expand_dims, reshape, slice_axis, swapaxes

__all__ = [
    "matmul_p", "cholesky_p", "triangular_solve_p", "inv_p", "solve_p", "det_p", "slogdet_p", "eigh_p", "eig_p",
    "svd_p", "qr_p", "lu_p", "expm_p", "matrix_transpose", "linear_p",
]

# `col_major` (a param of matmul, default both False): which operands the caller has laid out column-major, as
# a transposed view (nn.Linear's x @ W.t()). It changes no value, only the expression of that operand's
# gradient: computed as the transpose of the product in the other orientation, it comes out in the operand's own
# layout, as PyTorch's mm backward does from the operands' strides (mm_mat1_backward / mm_mat2_backward). Its
# transpose back to the parameter is then the row-major array itself, where the product in the first
# orientation needed a transpose copy to keep a .grad row-major (0.3-0.6 ms of an MLP step). The eager front end
# sets it from the Tensors' strides; core's own programs leave it off.
_ROW_MAJOR = (False, False)


def _check_col_major(col_major):
    if (type(col_major) is not tuple or len(col_major) != 2
            or not all(isinstance(c, (bool, np.bool_)) for c in col_major)):
        raise TypeError(f"matmul: col_major must be a tuple of two bools (one per operand), got {col_major!r}")


def _matmul_meta(a, b, col_major=_ROW_MAJOR):
    if col_major is not _ROW_MAJOR:
        _check_col_major(col_major)
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


def _matmul_jvp(ts, out, a, b, col_major=_ROW_MAJOR):
    ta, tb = ts
    res = None
    if ta is not None:
        res = matmul_p.bind(ta, b)
    if tb is not None:
        t = matmul_p.bind(a, tb)
        res = t if res is None else add(res, t)
    return _family.broadcast_to_shape(res, out.shape)


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


def _matmul_vjp_a(g, out, a, b, col_major=_ROW_MAJOR):
    if col_major[0]:  # (b gᵀ)ᵀ: laid out as a (see _ROW_MAJOR)
        return sum_to_shape(_mT(matmul_p.bind(b, _mT(g))), a.shape)
    return sum_to_shape(matmul_p.bind(g, _mT(b)), a.shape)


def _matmul_vjp_b(g, out, a, b, col_major=_ROW_MAJOR):
    if b.ndim == 2 and a.ndim > 2:
        # a batch against one matrix (a linear layer on a sequence): the batch folded into the rows of one
        # GEMM, aᵀg summed over the batch in the product itself, rather than a product per matrix and a sum
        rows = _prod(a.shape[:-1])
        a, g = reshape(a, (rows, a.shape[-1])), reshape(g, (rows, b.shape[-1]))
    if col_major[1]:  # (gᵀ a)ᵀ: laid out as b (see _ROW_MAJOR)
        return sum_to_shape(_mT(matmul_p.bind(_mT(g), a)), b.shape)
    return sum_to_shape(matmul_p.bind(_mT(a), g), b.shape)


matmul_p = Primitive(
    "matmul", _matmul_meta, vjp_reads=((1,), (0,)), jvp=_matmul_jvp, vjp=(_matmul_vjp_a, _matmul_vjp_b))
matmul_p.batch = _two_batch(matmul_p)


@matmul_p.def_impl("cpu")
def _matmul_cpu(a, b, out=None, col_major=_ROW_MAJOR):
    if a.ndim == 2 and b.ndim == 2 and a.shape[1] > 1 and a.size and b.size:
        return _gemm(a, b)(a, b, out)  # (out=: only here, where _plain_gemm holds, as jit's buffer plan asks)
    if not (a.size and b.size):
        return np.matmul(a, b)
    if a.shape[-1] == 1:
        # an outer product per batch element (what per-example gradients are): numpy's batched
        # matmul has no BLAS path for an inner size of 1 (~4x slower here), and a broadcast
        # multiply ~1.7x slower, than einsum's sum-of-products loop
        return np.einsum("...ik,...kj->...ij", a, b)
    if b.ndim == 2 and a.ndim > 2:
        # a batch of matrices against one matrix: one GEMM over the folded batch, not one per matrix
        rows = a.reshape(-1, a.shape[-1])
        return _gemm(rows, b)(rows, b).reshape(a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2 and b.ndim > 2:
        # one matrix against a batch (a VJP under vmap): fold the batch into the columns of one GEMM
        k, n = b.shape[-2], b.shape[-1]
        cols = np.moveaxis(b, -2, 0).reshape(k, -1)
        return np.moveaxis(_gemm(a, cols)(a, cols).reshape((a.shape[0],) + b.shape[:-2] + (n,)), 0, -2)
    return np.matmul(a, b)


# ---------------------------------------------------------------------------
# linear: x @ wᵀ (+ b), nn.Linear's product, as PyTorch's addmm / linear. One primitive for the eager front end:
# written as transpose, matmul and add it was three recorded ops and four backward nodes around its GEMMs
# (~120 us of the 440 us of a (8, 32, 64) -> 256 layer forward and backward). Its value is the composite's (the
# lowering makes the same calls), its rules are the composite's rules written out, and a staged program (jit,
# torch.compile) records the composite itself (`staged`), where jit fuses the bias into the next elementwise ops.
# bfloat16 and float8 are the exception: the primitive runs in float32 and rounds once, as PyTorch's addmm (the
# composite would round the product and then the sum), so programs record the primitive for them.


def _linear_meta(x, w, b=None):
    if len(x.shape) < 2 or len(w.shape) != 2:
        raise ValueError(f"linear: x must be at least 2-D and w 2-D, got {x.shape} and {w.shape}")
    if x.shape[-1] != w.shape[1]:
        raise ValueError(f"linear: x {x.shape} and w {w.shape} are not aligned ({x.shape[-1]} != {w.shape[1]})")
    d = _family.same_dtype("linear", x, w) if b is None else _family.same_dtype("linear", x, w, b)
    if b is not None and tuple(b.shape) != (w.shape[0],):
        raise ValueError(f"linear: b must have shape ({w.shape[0]},), got {b.shape}")
    return tuple(x.shape[:-1]) + (w.shape[0],), d


def _linear_composite(x, w, b=None):
    """x @ wᵀ (+ b) in core ops: what a staged program records (wᵀ a column-major view, as nn.Linear's); None
    (the primitive itself) for the narrow floats."""
    if x.dtype.narrow:
        return None
    out = matmul_p.bind(x, swapaxes(w, 0, 1), col_major=(False, True))
    return out if b is None else add(out, b)


def _linear_vjp_x(g, out, x, w, b=None):
    return matmul_p.bind(g, w)  # (the composite's g (wᵀ)ᵀ: the same product)


def _linear_vjp_w(g, out, x, w, b=None):
    # gᵀ x with the batch folded into the rows (the composite's (gᵀ x)ᵀ, transposed back to w's layout)
    if len(x.shape) > 2:
        rows = _prod(x.shape[:-1])
        x, g = reshape(x, (rows, x.shape[-1])), reshape(g, (rows, w.shape[0]))
    return matmul_p.bind(swapaxes(g, 0, 1), x)


def _linear_vjp_b(g, out, x, w, b=None):
    return sum(g, tuple(range(len(g.shape) - 1)))


def _linear_jvp(ts, out, x, w, b=None):
    tx, tw = ts[0], ts[1]
    tb = ts[2] if len(ts) > 2 else None
    res = None if tx is None else linear_p.bind(tx, w)
    if tw is not None:
        t = linear_p.bind(x, tw)
        res = t if res is None else add(res, t)
    if tb is not None:
        res = _family.broadcast_to_shape(tb, out.shape) if res is None else add(res, tb)
    return res


def _linear_batch(vals, bdims, **params):
    x, bx = vals[0], bdims[0]
    if all(d is None for d in bdims[1:]):  # a batch of inputs to one layer: more leading axes of x
        return linear_p.bind(move_to_front(x, bx), *vals[1:]), 0
    # a batch of weights (or biases): the composite per batch element, as one batched matmul
    size = next(v.shape[d] for v, d in zip(vals, bdims) if d is not None)
    x = move_to_front(x, bx) if bx is not None else broadcast_to(expand_dims(x, 0), (size,) + tuple(x.shape))
    lead = tuple(x.shape[1:-1])
    rows = _prod(lead)
    w = move_to_front(vals[1], bdims[1]) if bdims[1] is not None else expand_dims(vals[1], 0)
    out = matmul_p.bind(reshape(x, (size, rows, x.shape[-1])), swapaxes(w, -1, -2))
    if len(vals) > 2:
        b = move_to_front(vals[2], bdims[2]) if bdims[2] is not None else expand_dims(vals[2], 0)
        out = add(out, expand_dims(b, 1))
    return reshape(out, (size,) + lead + (out.shape[-1],)), 0


linear_p = Primitive("linear", _linear_meta, vjp_reads=((1,), (0,), ()), jvp=_linear_jvp,
                     vjp=(_linear_vjp_x, _linear_vjp_w, _linear_vjp_b))
linear_p.batch = _linear_batch
linear_p.staged = _linear_composite


@linear_p.def_impl("cpu")
def _linear_cpu(x, w, b=None):
    out = _matmul_cpu(x, w.T)  # (the composite's calls: the product, then the bias added)
    return out if b is None else np.add(out, b, out=out)


def _plain_gemm(a, b):
    """Whether a product of these avals is one plain GEMM (the branch of _matmul_cpu that takes out=)."""
    return len(a.shape) == 2 and len(b.shape) == 2 and a.shape[1] > 1 and 0 not in a.shape + b.shape


_matmul_cpu.fresh_result = True  # every branch returns a new buffer (or a view only of one)
_matmul_cpu.accepts_out = _plain_gemm


def _gemm(a, b):
    """The lowering of the plain product a @ b (2-D, inner size > 1): np.matmul, or another orientation of the same
    GEMM where it measured faster with np.matmul's bits (_choice.fastest), chosen on the first product of these
    shapes, dtype and layouts and kept. OpenBLAS's speed depends on which operand comes transposed: nn.Linear's
    x @ W.T at (16, 784) x (784, 512) float32 took 307 us by np.matmul and 167 us swapped, and the other way
    round for aᵀ g, the weight's gradient. Eager and jit run the same choice, so their products agree bit for
    bit. Products above _TUNED_MACS multiply-adds (whose orientations differ by a few percent) are not measured,
    nor any once the process has spent its budget (_budget) measuring."""
    key = (a.shape, b.shape, a.dtype, _layout(a), _layout(b))
    f = _GEMMS.get(key)
    if f is None:
        f = _choose_gemm(a, b, key)
        if len(_GEMMS) < _MAX_GEMMS:
            _GEMMS[key] = f
    return f


_GEMMS = {}            # (shapes, dtype, layouts) -> the lowering _gemm chose for them
_MAX_GEMMS = 4096
_TUNED_MACS = 1 << 27
_BLAS_DTYPES = frozenset(map(np.dtype, (np.float32, np.float64, np.complex64, np.complex128)))
# seconds the process may spend measuring in all (each new signature costs about 20 of its products): a
# program whose shapes change every call (sequences of every length) stops measuring once it is spent
_budget = [2.0]


def _layout(x):
    flags = x.flags
    return "C" if flags.c_contiguous else "F" if flags.f_contiguous else None


def _choose_gemm(a, b, key):
    (m, k), n = a.shape, b.shape[1]
    if _budget[0] <= 0 or None in key[3:] or a.dtype not in _BLAS_DTYPES or m * k * n > _TUNED_MACS:
        return _np_matmul  # (float16 has no BLAS GEMM: NumPy's own loop in every orientation, 25x slower to time)
    start = time.perf_counter()
    variants = (_matmul_blas, _matmul_swapped) if gemm_applies(a, b) else (_matmul_swapped,)
    f = _choice.fastest(_np_matmul, variants, np.matmul(a, b), (a, b))[0]
    _budget[0] -= time.perf_counter() - start
    return f


def _np_matmul(a, b, out=None):
    return np.matmul(a, b, out=out)


def _matmul_swapped(a, b, out=None):
    """a @ b as (bᵀ aᵀ)ᵀ, copied to the C order np.matmul gives (a layout the next ops would pay for: an F-ordered
    result met a C-ordered one in a later subtract at 20x its time). The same GEMM with the operands' roles
    exchanged. The copy goes by tiles (_transpose_kernel: 20 against NumPy's 39 us at (128, 512) float32)."""
    return transpose_copy(np.matmul(b.T, a.T), out)


def _matmul_blas(a, b, out=None):
    """a @ b by one BLAS call writing the C-ordered result itself (_blas_gemm: no transpose copy). Offered first:
    where the swapped GEMM only ties with it, its transpose copy is one more pass over the result once a step's
    GEMMs have cooled the caches (at batch 16 x @ W.T the swapped one is 171 us, this one 234 us)."""
    return gemm_c_order(a, b, out)


# ---------------------------------------------------------------------------
# helpers for the rules (core ops only) and the lowerings


def matrix_transpose(x):
    """x with its last two axes swapped."""
    return swapaxes(x, -1, -2)


def _mH(x):
    """The conjugate transpose of the last two axes (the transpose for real x)."""
    return conj(swapaxes(x, -1, -2))


def _mm(a, b):
    return matmul_p.bind(a, b)


def _eye(n, x):
    return eye(n, dtype=x.dtype, device=x.device)


def _diag(x):
    """The main diagonal of the last two axes, as the last axis (layout's gather: no inf * 0 terms)."""
    return diagonal(x, 0, -2, -1)


def _trace(x):
    return sum(_diag(x), -1)


def _diag_embed(d):
    return diag_embed(d, 0, -2, -1)


def _tri_mask(x, k, lower):
    n, m = x.shape[-2], x.shape[-1]
    diff = sub(reshape(arange(m, device=x.device), (1, m)), reshape(arange(n, device=x.device), (n, 1)))
    return le(diff, k) if lower else ge(diff, k)


def _tril(x, k=0):
    return where(_tri_mask(x, k, True), x, 0.0)


def _triu(x, k=0):
    return where(_tri_mask(x, k, False), x, 0.0)


def _herm(x):
    """The Hermitian part (x + x^H) / 2: the projection both ways (its transpose is itself)."""
    return mul(add(x, _mH(x)), 0.5)


def _is_complex(x):
    return x.dtype.category == dt.COMPLEX


def _as(x, like):
    """x cast to like's dtype (real tangents and cotangents meeting complex factors)."""
    return x if x.dtype is like.dtype else cast(x, like.dtype)


# The phase gauge of complex eigenvectors and singular vectors: each column scaled so that its component of
# largest modulus is real (what LAPACK's geev returns; eigh and svd normalize theirs to it). The raw rules
# below give tangents with some other phase (v^H dv imaginary, or 0); the actual output's tangent is
# dv - i v Im(dv_k / v_k) at that component k. Its transpose adds -i e_k Im(s) / v_k to the cotangent, with
# s = diag(V^T gV): zero for losses that do not depend on the phases (torch's condition, checked in eager).


def _largest(V):
    """The one-hot (as V's dtype) of the largest-modulus component of each column, and that component."""
    m = abs(V)
    K = cast(eq(m, max(m, -2, keepdims=True)), V.dtype)
    return K, sum(mul(V, K), -2, keepdims=True)


def _fix_phase(V, dV):
    K, vk = _largest(V)
    theta = imag(div(sum(mul(dV, K), -2, keepdims=True), vk))
    return sub(dV, mul(V, mul(cast(theta, V.dtype), 1j)))


def _fix_phase_T(V, gV, s):
    """The cotangent of the raw tangent from gV, where s = the phase cotangent diag(V^T gV) (+ more)."""
    K, vk = _largest(V)
    return sub(gV, mul(K, div(mul(cast(imag(s), V.dtype), 1j), vk)))


def _normalize_phase(v):
    """numpy: columns of v scaled so their largest-modulus component is real positive."""
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    vk = np.take_along_axis(v, idx, -2)
    mag = np.abs(vk)
    return v * np.where(mag == 0, 1, np.conj(vk) / np.where(mag == 0, 1, mag)), vk


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


# ---------------------------------------------------------------------------
# cholesky: L lower with (a + a^H) / 2 == L L^H; info as LAPACK potrf gives it (0: success, k: the leading
# minor of order k is not positive-definite). JVP (JAX's): dL = L phi(L^{-1} dA L^{-H}); its transpose, PyTorch's
# cholesky_backward in JAX's convention: gA = herm(L^{-T} phi(tril(L^T gL)) conj(L)^{-1}).


def _cholesky_meta(a):
    _square_meta("linalg.cholesky", a)
    return (a.shape, a.dtype), (a.shape[:-2], dt.int32)


def _phi(x):
    """tril(x) with its diagonal halved: the lower half of a symmetric matrix's split x = phi + phi^T."""
    return sub(_tril(x), mul(_diag_embed(_diag(x)), 0.5))


def _cholesky_vjp(g, out, a):
    L = out[0]
    Y = triangular_solve_p.bind(_mT(L), _phi(_mm(_mT(L), g[0])), lower=False, unit_diagonal=False)  # L^{-T} P
    return _herm(_mT(triangular_solve_p.bind(_mH(L), _mT(Y), lower=False, unit_diagonal=False)))  # Y conj(L)^{-1}


def _cholesky_jvp(ts, out, a):
    L = out[0]
    X = triangular_solve_p.bind(L, _herm(ts[0]), lower=True, unit_diagonal=False)  # L^{-1} dA
    X = _mH(triangular_solve_p.bind(L, _mH(X), lower=True, unit_diagonal=False))  # L^{-1} dA L^{-H}
    return _mm(L, _phi(X)), None


cholesky_p = Primitive("cholesky", _cholesky_meta, multiple_results=True, vjp=(_cholesky_vjp,),
                       vjp_reads=("out",), jvp=_cholesky_jvp)
cholesky_p.batch = _front_batch(cholesky_p)


@cholesky_p.def_impl("cpu")
def _cholesky_cpu(a):
    s = (a + np.conj(np.swapaxes(a, -1, -2))) * a.dtype.type(0.5)
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
    """fn on the whole batch; where LAPACK refuses (a singular matrix), per matrix as torch computes it: getrf,
    then getrs on the factors regardless (its inf/nan values), with getrf's info."""
    try:
        with np.errstate(all="ignore"):
            return fn(a, *rest), np.zeros(batch, np.int32)
    except np.linalg.LinAlgError:
        pass

    def one(m, *r):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            lu, piv = scipy.linalg.lu_factor(m, check_finite=False)
            rhs = r[0] if r else np.eye(m.shape[-1], dtype=m.dtype)
            x = scipy.linalg.lu_solve((lu, piv), rhs, check_finite=False)
        zero = np.flatnonzero(np.diagonal(lu) == 0)
        return x.astype(m.dtype, copy=False), (int(zero[0]) + 1 if zero.size else 0)
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
# determinants: d det = tr(C^T dA) with C = adj(A)^T the cofactor matrix (its VJP: g C), d log|det| =
# tr(A^{-1} dA). C = det A^{-T} where A is invertible; where |det| < 100 eps (torch's linalg_det_backward mask)
# it comes from the SVD A = U S Vh, adj = adj(Vh) adj(S) adj(U):
#   C = det(U) det(Vh) conj(U) diag(prod_{j != i} S_j) conj(Vh)
# (finite and exact at singular A: the cofactors of [[1, 2], [2, 4]] are [[4, -2], [-2, 1]]). Both branches
# are computed and selected with `where`: a branch on the values would not trace (the SVD is the price).


def _det_meta(a):
    _square_meta("linalg.det", a)
    return a.shape[:-2], a.dtype


def _inv_T(a):
    return _mT(inv_p.bind(a)[0])


def _cofactor(a, det):
    """adj(a)^T, the derivative of det at a (batched)."""
    U, S, Vh = svd_p.bind(a, full_matrices=False)
    n = S.shape[-1]
    others = prod(where(eq(_eye(n, S), 1.0), 1.0, expand_dims(S, -2)), -1)  # prod_{j != i} S_j, no division
    unit = mul(det_p.bind(U), det_p.bind(Vh))
    singular = mul(expand_dims(expand_dims(unit, -1), -1), _mm(mul(conj(U), _as(expand_dims(others, -2), U)), conj(Vh)))
    eps = float(np.finfo(a.dtype.to_real().np).eps)
    mask = expand_dims(expand_dims(stop_gradient(lt(abs(det), 100.0 * eps)), -1), -1)
    invertible = where(mask, _eye(a.shape[-1], a), a)  # no inf * 0 in the branch `where` drops
    return where(mask, singular, mul(expand_dims(expand_dims(det, -1), -1), _inv_T(invertible)))


det_p = Primitive(
    "det", _det_meta, vjp_reads=(0, "out"),
    vjp=(lambda g, out, a: mul(expand_dims(expand_dims(g, -1), -1), _cofactor(a, out)),),
    jvp=lambda ts, out, a: sum(mul(_cofactor(a, out), ts[0]), (-2, -1)))
det_p.batch = _front_batch(det_p)


@det_p.def_impl("cpu")
def _det_cpu(a):
    return np.linalg.det(a)


# slogdet of complex a: sign = det / |det| (complex), log|det| real. With t = tr(A^{-1} dA):
#   d log|det| = Re t,  d sign = i Im(t) sign;  transposed: gA = (g_log + i Im(g_sign sign)) A^{-T}


def _slogdet_meta(a):
    _square_meta("linalg.slogdet", a)
    return (a.shape[:-2], a.dtype), (a.shape[:-2], a.dtype.to_real())


def _slogdet_vjp(g, out, a):
    c = _as(g[1], a)
    if _is_complex(a):
        c = add(c, mul(_as(imag(mul(g[0], out[0])), a), 1j))
    return mul(expand_dims(expand_dims(c, -1), -1), _inv_T(a))


def _slogdet_jvp(ts, out, a):
    t = _trace(_mm(inv_p.bind(a)[0], ts[0]))
    if not _is_complex(a):
        return None, t
    return mul(out[0], mul(_as(imag(t), a), 1j)), real(t)


slogdet_p = Primitive("slogdet", _slogdet_meta, multiple_results=True, vjp_reads=(0, "out"), vjp=(_slogdet_vjp,),
                      jvp=_slogdet_jvp)
slogdet_p.batch = _front_batch(slogdet_p)


@slogdet_p.def_impl("cpu")
def _slogdet_cpu(a):
    s, l = np.linalg.slogdet(a)
    return s, l


# ---------------------------------------------------------------------------
# eigh: (w ascending, real; V) of the Hermitian part. JAX's eigh JVP, X = V^H dA V:
#   dw = Re diag(X),  dV = V (X / E) (0 on the diagonal),  E_ij = w_j - w_i
# and its transpose, PyTorch's linalg_eig_backward (hermitian case) in JAX's convention:
#   gA = herm(conj(V) (diag(gw) + (V^T gV) / E) V^T)   (the off-diagonal part of V^T gV)
# Complex V is normalized to the phase gauge above, whose term the rules add. With repeated eigenvalues the V
# term is inf/nan (as in torch) unless its numerator is 0: an unused V (a zero cotangent) leaves the eigenvalue
# gradient finite, as torch's undefined gV does.


def _eigh_meta(a):
    _square_meta("linalg.eigh", a)
    return (a.shape[:-1], a.dtype.to_real()), (a.shape, a.dtype)


def _divide_gaps(num, w):
    """num_ij / (w_j - w_i) off the diagonal (0 on it), 0 where num is 0 (no 0/0 for ties nobody asked
    about)."""
    gaps = _as(sub(expand_dims(w, -2), expand_dims(w, -1)), num)
    n = w.shape[-1]
    eye_ = _eye(n, gaps)
    gaps = add(gaps, eye_)
    return where(logical_or(eq(num, 0.0), eq(eye_, 1.0)), 0.0, div(num, gaps))


def _eigh_vjp(g, out, a):
    gw, gV = g
    w, V = out
    if _is_complex(V):
        gV = _fix_phase_T(V, gV, sum(mul(V, gV), -2, keepdims=True))
    X = _mm(_mT(V), gV)
    inner = add(_divide_gaps(mul(sub(X, _mH(X)), 0.5), w), _as(_diag_embed(gw), V))  # its Hermitian part
    return _mm(conj(V), _mm(inner, _mT(V)))


def _eigh_jvp(ts, out, a):
    w, V = out
    X = _mm(_mH(V), _mm(_herm(ts[0]), V))
    dV = _mm(V, _divide_gaps(X, w))
    if _is_complex(V):
        dV = _fix_phase(V, dV)
    return real(_diag(X)), dV


eigh_p = Primitive("eigh", _eigh_meta, multiple_results=True, vjp=(_eigh_vjp,), vjp_reads=("out",),
                   jvp=_eigh_jvp)
eigh_p.batch = _front_batch(eigh_p)


@eigh_p.def_impl("cpu")
def _eigh_cpu(a):
    s = (a + np.conj(np.swapaxes(a, -1, -2))) * a.dtype.type(0.5)
    if s.size == 0:
        return np.zeros(a.shape[:-1], a.real.dtype), np.zeros(a.shape, a.dtype)
    w, v = np.linalg.eigh(s)
    return w, (_normalize_phase(v)[0] if v.dtype.kind == "c" else v)


# ---------------------------------------------------------------------------
# eig: (L, V) complex, eigenvectors as unit columns in LAPACK geev's gauge (largest component real, positive). JVP, with
# X = V^{-1} dA V (JAX's eigenvalue rule; the eigenvector part normalized as the output is):
#   dL = diag(X),  dV0 = V (X / E) (0 on the diagonal),  E_ij = L_j - L_i
#   dV = dV0 - V Re(diag(V^H dV0)) (unit norm), then the phase term
# Its transpose is PyTorch's linalg_eig_backward in JAX's convention, s = diag(V^T gV):
#   gA = V^{-T} (diag(gL) + V^T (gV - conj(V) Re(s)) / E) V^T   (real a: its real part)
# plus the phase term's transpose, zero where torch accepts the loss (Im s = 0).


def _eig_meta(a):
    _square_meta("linalg.eig", a)
    c = a.dtype if _is_complex(a) else a.dtype.to_complex()
    return (a.shape[:-1], c), (a.shape, c)


def _eig_vjp(g, out, a):
    gL, gV = g
    L, V = out
    s = sum(mul(V, gV), -2, keepdims=True)
    gV = _fix_phase_T(V, sub(gV, mul(conj(V), _as(real(s), V))), s)
    inner = add(_divide_gaps(_mm(_mT(V), gV), L), _diag_embed(gL))
    gA = solve_p.bind(_mT(V), _mm(inner, _mT(V)))[0]  # V^{-T} inner V^T
    return gA if _is_complex(a) else real(gA)


def _eig_jvp(ts, out, a):
    L, V = out
    X = solve_p.bind(V, _mm(_as(ts[0], V), V))[0]
    dV = _mm(V, _divide_gaps(X, L))
    dV = sub(dV, mul(V, _as(real(sum(mul(conj(V), dV), -2, keepdims=True)), V)))
    return _diag(X), _fix_phase(V, dV)


eig_p = Primitive("eig", _eig_meta, multiple_results=True, vjp=(_eig_vjp,), vjp_reads=("out",), jvp=_eig_jvp)
eig_p.batch = _front_batch(eig_p)


@eig_p.def_impl("cpu")
def _eig_cpu(a):
    c = np.result_type(a.dtype, np.complex64)
    if a.size == 0:
        return np.zeros(a.shape[:-1], c), np.zeros(a.shape, c)
    bad = ~np.isfinite(a).all((-2, -1))  # LAPACK refuses them; torch's eigvals gives nan (eig raises in eager)
    w, v = np.linalg.eig(np.where(bad[..., None, None], 0, a) if bad.any() else a)
    if bad.any():
        w, v = np.where(bad[..., None], np.nan, w), np.where(bad[..., None, None], np.nan, v)
    # geev's real eigenvectors have no sign rule (it can flip with the QR iteration's path): largest positive
    return w.astype(c, copy=False), _normalize_phase(v.astype(c, copy=False))[0]


# ---------------------------------------------------------------------------
# svd: A = U diag(S) Vh, S descending; k = min(m, n), U and Vh narrowed to k columns/rows for full_matrices.
# JVP: JAX's svd JVP (dS = U^H dA V, F_ij = 1 / (S_j^2 - S_i^2) off the diagonal):
#   dU = U (F o (dS S + S dS^H) + i Im diag(dS) / S),  dV = V (F o (S dS + dS^H S)),  dS_vals = Re diag(dS)
#   m > n: dU += (I - U U^H) dA V / S;  m < n: dV += (I - V V^H) dA^H U / S
# and its transpose, PyTorch's svd_backward in JAX's convention:
#   gA_k = conj(U) [F o (skew(U^T gU) S + S skew(V^T gV)) + diag(gS) + i Im diag(U^T gU) / S] V^T, skew(X) = X - X^H
#   m > n: gA += (I - conj(U) U^T) gU S^{-1} V^T;  m < n: gA += conj(U) S^{-1} gV^T (I - conj(V) V^T)
# Complex U, V are normalized to the phase gauge of U's columns (V's get the same phase); the rules add its term.


def _svd_meta(a, *, full_matrices):
    _matrix_meta("linalg.svd", a)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    b = a.shape[:-2]
    r = a.dtype.to_real()
    if full_matrices:
        return (b + (m, m), a.dtype), (b + (k,), r), (b + (n, n), a.dtype)
    return (b + (m, k), a.dtype), (b + (k,), r), (b + (k, n), a.dtype)


def _svd_vjp(g, out, a, *, full_matrices):
    gU, gS, gVh = g
    U, S, Vh = out
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if full_matrices and m != n:
        U, gU = slice_axis(U, -1, 0, k), slice_axis(gU, -1, 0, k)
        Vh, gVh = slice_axis(Vh, -2, 0, k), slice_axis(gVh, -2, 0, k)
    V, gV = _mH(Vh), _mH(gVh)
    if _is_complex(U):
        gU = _fix_phase_T(U, gU, add(sum(mul(U, gU), -2, keepdims=True), sum(mul(V, gV), -2, keepdims=True)))
    UgU = _mm(_mT(U), gU)
    VgV = _mm(_mT(V), gV)
    num = add(mul(sub(UgU, _mH(UgU)), _as(expand_dims(S, -2), U)), mul(_as(expand_dims(S, -1), U), sub(VgV, _mH(VgV))))
    gA = add(_divide_gaps(num, mul(S, S)), _as(_diag_embed(gS), U))
    if _is_complex(U):
        gA = add(gA, _diag_embed(div(mul(_as(imag(_diag(UgU)), U), 1j), _as(S, U))))
    s_row = _as(expand_dims(S, -2), U)
    if m > n:
        gUS = div(gU, s_row)
        gA = add(_mm(conj(U), gA), sub(gUS, _mm(conj(U), _mm(_mT(U), gUS))))
        return _mm(gA, _mT(V))
    if m < n:
        R = div(gV, s_row)
        gW = _mm(sub(R, _mm(conj(V), _mm(_mT(V), R))), _mT(U))  # the cotangent of dA^H
        return add(_mm(conj(U), _mm(gA, _mT(V))), _mH(gW))
    return _mm(conj(U), _mm(gA, _mT(V)))


def _svd_jvp(ts, out, a, *, full_matrices):
    """JAX's svd JVP on the k leading columns/rows (the extra ones of full_matrices get zero tangents, as
    the VJP ignores their cotangents)."""
    U, S, Vh = out
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if full_matrices and m != n:
        U, Vh = slice_axis(U, -1, 0, k), slice_axis(Vh, -2, 0, k)
    dA = _as(ts[0], U)
    V = _mH(Vh)
    dS = _mm(_mH(U), _mm(dA, V))
    ds = real(_diag(dS))
    s_row = _as(expand_dims(S, -2), U)
    s_col = _as(expand_dims(S, -1), U)
    dSS = mul(dS, s_row)
    SdS = mul(s_col, dS)
    s_inv = _as(where(eq(S, 0.0), 0.0, div(1.0, where(eq(S, 0.0), 1.0, S))), U)
    dU = _mm(U, add(_divide_gaps(add(dSS, _mH(dSS)), mul(S, S)), mul(mul(sub(dS, _mH(dS)), 0.5), _diag_embed(s_inv))))
    dV = _mm(V, _divide_gaps(add(SdS, _mH(SdS)), mul(S, S)))
    if m > n:
        dAV = _mm(dA, V)
        dU = add(dU, div(sub(dAV, _mm(U, _mm(_mH(U), dAV))), s_row))
    if n > m:
        dAU = _mm(_mH(dA), U)
        dV = add(dV, div(sub(dAU, _mm(V, _mm(Vh, dAU))), s_row))
    if _is_complex(U):
        K, uk = _largest(U)
        phase = mul(V, mul(_as(imag(div(sum(mul(dU, K), -2, keepdims=True), uk)), U), 1j))
        dU, dV = _fix_phase(U, dU), sub(dV, phase)
    dVh = _mH(dV)
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
        return eye_u.copy(), np.zeros(b + (k,), a.real.dtype), eye_v.copy()
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    if a.dtype.kind == "c":
        k = builtins.min(m, n)
        uk, vk = _normalize_phase(u[..., :k])
        phase = vk / np.where(vk == 0, 1, np.abs(vk))  # u_k's phase, taken off U's column and Vh's row
        u = np.concatenate([uk, u[..., k:]], -1)
        vh = np.concatenate([vh[..., :k, :] * np.swapaxes(phase, -1, -2), vh[..., k:, :]], -2)
    return u, s, vh


# ---------------------------------------------------------------------------
# qr: A = Q R (Householder, LAPACK's signs; R's diagonal real). The transpose of JAX's qr JVP (PyTorch's
# linalg_qr_backward in JAX's convention), for m >= n (reduced), D = Q^T gQ - gR R^T:
#   gA = (gQ + conj(Q) (tril(D - D^H, -1) - D + i Im diag(D))) R^{-T}
# for m < n, A = [X | Y], R = [U | V]: gY = conj(Q) gV and X's rule with gQ + conj(Y gV^T). Not differentiable for
# complete=True with m > n (Q's extra columns are not determined by A), as in torch.


def _qr_meta(a, *, complete):
    _matrix_meta("linalg.qr", a)
    m, n = a.shape[-2:]
    k = m if complete else builtins.min(m, n)
    b = a.shape[:-2]
    return (b + (m, k), a.dtype), (b + (k, n), a.dtype)


def _qr_square_like_vjp(gQ, gR, Q, R):
    D = sub(_mm(_mT(Q), gQ), _mm(gR, _mT(R)))
    gX = add(neg(D), _tril(sub(D, _mH(D)), -1))
    if _is_complex(Q):  # LAPACK's R has a real diagonal: the tangent's phase term i Im diag(Q^H dA R^{-1})
        gX = add(gX, _diag_embed(mul(_as(imag(_diag(D)), Q), 1j)))
    rhs = add(gQ, _mm(conj(Q), gX))  # gA R^T = rhs  ->  R gA^T = rhs^T
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
    gX = _qr_square_like_vjp(add(gQ, conj(_mm(Y, _mT(gV)))), gU, Q, U)
    return concatenate([gX, _mm(conj(Q), gV)], -1)


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
    return p.astype(a.dtype), l, u, (piv[:k] + 1).astype(np.int32)


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
