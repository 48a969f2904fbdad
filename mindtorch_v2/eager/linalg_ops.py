"""Linear algebra under torch's names: the top-level functions PyTorch keeps (torch.det, torch.inverse,
torch.svd with its old V convention, ...) and the checks, errors and return types that torch.linalg
(mindtorch_v2/linalg.py) shares with them. The numbers and the gradients are core.linalg's.
"""
import warnings

from .autocast_state import lower_precision
from .. import core
from ..core import dtypes as _dt
from . import grad_mode, promotion as _promotion, return_types
from .autograd.function import Function
from .declare import tensor_method, torch_op
from .ops import _t, _w, bmm, mv, outer
from .tensor import Tensor, _dim

__all__ = [
    "det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
    "pinverse", "matrix_power", "matrix_exp", "triangular_solve", "cross", "chain_matmul", "tensordot", "vdot",
    "kron", "baddbmm", "addbmm", "addmv", "addr",
]

_L = core.linalg


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a decomposition or solve failed on the values of its input (a singular or
    non positive-definite matrix)."""


# ---------------------------------------------------------------------------
# torch's checks (RuntimeError, before any work) and its LinAlgError from LAPACK's info


def check_float(name, A):
    A = _t(A)
    if A.dtype.category == _dt.FLOAT and A.dtype in (_dt.float32, _dt.float64):
        return A
    if A.dtype.category == getattr(_dt, "COMPLEX", None):
        return A
    raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {A.dtype.scalar_name}")


def check_matrix(name, A, what="A"):
    A = check_float(name, A)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    return A


def check_square(name, A, what="A"):
    A = check_matrix(name, A, what)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    return A


def check_same_dtype(name, A, B):
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype.scalar_name} and B of type {B.dtype.scalar_name} instead")


def raise_from_info(info, message, error=LinAlgError):
    """error(message(prefix, k)) for the first batch element whose info k is non-zero (torch's wording:
    prefix = '(Batch element i): ' when the input is batched)."""
    flat = info.reshape(-1).tolist()
    for i, k in enumerate(flat):
        if k:
            prefix = f"(Batch element {i}): " if info.ndim else ""
            raise error(message(prefix, k))


def inv_message(prefix, k, name="linalg.inv"):
    return (f"{name}: {prefix}The diagonal element {k} is zero, the inversion could not be completed "
            "because the input matrix is singular.")


def solve_message(prefix, k):
    return "torch.linalg.solve: The solver failed because the input matrix is singular."


def cholesky_message(prefix, k, name="linalg.cholesky"):
    return (f"{name}: {prefix}The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


# ---------------------------------------------------------------------------
# torch's refusal of losses that depend on the phases of complex eigenvectors / singular vectors. The core's
# rules differentiate the phase-normalized outputs exactly; torch instead raises in backward when
# Im diag(V^H gV) (svd: Im diag(U^H gU) + Im diag(V^H gV)) is not ~0. Identity nodes check that here, on the
# gradients in torch's convention, with torch's tolerances.


def lu_factor_message(name):
    """torch's error for a zero pivot of U (a RuntimeError, not a LinAlgError), for `name`."""
    return lambda prefix, k: (f"torch.{name}: {prefix}U[{k},{k}] is zero and using it on lu_solve would result in a "
                              "division by zero. If you still want to perform the factorization, consider calling "
                              "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _phase_dependence(V, gV):
    return core.imag(_L.diagonal(core.matmul(core.conj(_L.matrix_transpose(V)), gV)))


def _close(a, b, rtol, atol):
    """torch.allclose on core arrays."""
    return bool(core.all(core.le(core.abs(core.sub(a, b)), core.add(atol, core.mul(rtol, core.abs(b))))))


class _EigPhaseCheck(Function):
    @staticmethod
    def forward(ctx, V, name):
        ctx.name = name
        ctx.save_for_backward(V)
        return V.clone()

    @staticmethod
    def backward(ctx, gV):
        V, = ctx.saved_tensors
        d = _phase_dependence(V.detach(), gV.detach())
        if not _close(d, core.zeros_like(d), 1e-2, 1e-3):
            raise RuntimeError(f"{ctx.name}: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")
        return gV, None


class _SvdPhaseCheck(Function):
    @staticmethod
    def forward(ctx, U, Vh):
        ctx.save_for_backward(U, Vh)
        return U.clone(), Vh.clone()

    @staticmethod
    def backward(ctx, gU, gVh):
        U, Vh = (t.detach() for t in ctx.saved_tensors)
        k = min(U.shape[-1], Vh.shape[-2])
        du = _phase_dependence(U[..., :k], gU.detach()[..., :k]) if gU is not None else None
        dv = (_phase_dependence(core.conj(core.matrix_transpose(Vh[..., :k, :])),
                                core.conj(core.matrix_transpose(gVh.detach()[..., :k, :])))
              if gVh is not None else None)
        if du is None and dv is None:
            return gU, gVh
        du = core.zeros_like(dv) if du is None else du
        dv = core.zeros_like(du) if dv is None else dv
        if not _close(du, core.neg(dv), 1e-2, 1e-2):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase "
                               "term, making it ill-defined.")
        return gU, gVh


def _tracks_phase(V):
    return V.dtype.category == _dt.COMPLEX and V.requires_grad and grad_mode.tape_enabled()


def eig_phase_checked(V, name):
    """V behind torch's backward check of phase-dependent losses (complex V recorded for autograd)."""
    return _EigPhaseCheck.apply(V, name) if _tracks_phase(V) else V


def svd_phase_checked(U, Vh):
    return _SvdPhaseCheck.apply(U, Vh) if _tracks_phase(U) else (U, Vh)


# ---------------------------------------------------------------------------
# the conjugate transposes: Tensor.mH, Tensor.H (2-D only), Tensor.adjoint(); torch's errors and 0-D warnings


def _conj_transpose(x, what, zero_d_warning):
    if x.ndim == 0:
        warnings.warn(zero_d_warning, UserWarning, stacklevel=3)
        return x.conj()
    if x.ndim < 2:
        raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got {x.ndim}-D tensor.")
    return x.transpose(-2, -1).conj()


def _mH(self):
    return _conj_transpose(self, "tensor.mH", "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().")


def _H(self):
    if self.ndim not in (0, 2):
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.{hint}")
    return _conj_transpose(self, "tensor.H", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")


@tensor_method
def adjoint(self):
    """The conjugate transpose of the last two dimensions (torch.Tensor.adjoint)."""
    return _conj_transpose(self, "tensor.adjoint()", "adjoint() is deprecated on 0-D tensors. Consider using "
                           "x.conj().")


tensor_method(property(_mH), "mH")
tensor_method(property(_H), "H")


# ---------------------------------------------------------------------------
# the top-level names


@torch_op(out=True)
def det(input):
    A = check_square("linalg.det", input)
    return _w(_L.det(A))


@torch_op
def logdet(input):
    """log(det): nan for a negative determinant, -inf for a singular matrix (torch.logdet)."""
    A = check_square("logdet", input)
    sign, logabs = _L.slogdet(A)
    if A.dtype.category == _dt.COMPLEX:  # log det = log|det| + i arg(det)
        return _w(core.add(core.cast(logabs, A.dtype), core.log(sign)))
    return _w(core.where(core.lt(sign, 0.0), float("nan"), logabs))


@torch_op
def slogdet(input):
    A = check_square("linalg.slogdet", input)
    return return_types.slogdet(*_w(_L.slogdet(A)))


@torch_op(out=True)
def inverse(input):
    A = check_square("linalg.inv", input)
    res, info = _L.inv_info(A)
    raise_from_info(info, inv_message)
    return _w(res)


def cholesky_factor(name, A, upper):
    A = check_square(name, A)
    L, info = _L.cholesky_info(A, upper=upper, symmetrize_input=False)
    return _w(L), info


@torch_op(out=True)
def cholesky(input, upper=False):
    """The deprecated torch.cholesky (upper= instead of torch.linalg.cholesky's)."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                  "future PyTorch release.", UserWarning, stacklevel=2)
    L, info = cholesky_factor("linalg.cholesky", input, upper)
    raise_from_info(info, cholesky_message)
    return L


@torch_op(out=True)
def cholesky_solve(input, input2, upper=False):
    """x with A x = input, A = L L^T given its factor input2 (upper: A = U^T U)."""
    B = check_matrix("cholesky_solve", input, "B")
    F = check_square("cholesky_solve", input2)
    check_same_dtype("cholesky_solve", B, F)
    FH = core.conj(_L.matrix_transpose(F))
    if upper:
        y = _L.solve_triangular(FH, B, upper=False)
        return _w(_L.solve_triangular(F, y, upper=True))
    y = _L.solve_triangular(F, B, upper=False)
    return _w(_L.solve_triangular(FH, y, upper=True))


@torch_op(out=True)
def cholesky_inverse(input, upper=False):
    F = check_square("cholesky_inverse", input)
    n = F.shape[-1]
    eye = core.broadcast_to(core.eye(n, dtype=F.dtype), tuple(F.shape))
    return cholesky_solve(_w(eye), F, upper)


@torch_op(out=True)
def qr(input, some=True):
    A = check_matrix("linalg.qr", input)
    return return_types.qr(*_w(_L.qr(A, "reduced" if some else "complete")))


@torch_op(out=True)
def svd(input, some=True, compute_uv=True):
    """The old API: V (not Vh); some=True the reduced factors; compute_uv=False gives zero U and V."""
    A = check_matrix("linalg.svd", input)
    U, S, Vh = _L.svd(A, full_matrices=not some)
    if not compute_uv:
        return return_types.svd(_w(core.zeros_like(core.stop_gradient(U))), _w(S),
                         _w(core.zeros_like(core.stop_gradient(_L.matrix_transpose(Vh)))))
    U, Vh = svd_phase_checked(_w(U), _w(Vh))
    return return_types.svd(U, _w(S), _w(core.conj(_L.matrix_transpose(Vh))))


@torch_op
def pinverse(input, rcond=1e-15):
    A = check_matrix("linalg.pinv", input)
    return _w(_L.pinv(A, rtol=rcond))


@torch_op(out=True)
def matrix_power(input, n):
    """input multiplied n times (integer matrices too); n < 0 powers the inverse (floating point only)."""
    A = _t(input)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if n < 0:
        A = inverse(A)
        n = -n
    res = _w(_L.matrix_power(A, n))
    return res.clone() if res is A else res  # n == 1: a new tensor, as torch's


@torch_op
def matrix_exp(input):
    A = check_square("linalg.matrix_exp", input)
    return _w(_L.expm(A))


@torch_op(out=True)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """The deprecated torch.triangular_solve: (solution of op(A) X = input, a copy of A)."""
    B = check_matrix("triangular_solve", input, "B")
    A = check_square("triangular_solve", A)
    check_same_dtype("triangular_solve", B, A)
    M = _L.matrix_transpose(A) if transpose else A
    X = _L.solve_triangular(M, B, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.triangular_solve(_w(X), A.clone())


@torch_op(out=True)
def cross(input, other, dim=None):
    """torch.cross: with dim=None the first dimension of size 3 (deprecated default), else as linalg.cross."""
    a, b = _t(input), _t(other)
    if dim is None:
        shape = core.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return linalg_cross(a, b, dim=dim)


def linalg_cross(input, other, *, dim=-1):
    a, b = _promotion.promote(_t(input), _t(other))
    if a.ndim != b.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    d = _dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    return _w(_L.cross(a, b, d))


@torch_op(method=False, out=True)
def chain_matmul(*matrices):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for m in matrices:
        if _t(m).ndim != 2:
            raise RuntimeError(f"Tensor dimension is {_t(m).ndim}, expected 2 instead.")
    return _w(_L.multi_dot([_t(m) for m in matrices]))


@torch_op(method=False, out=True)
def tensordot(a, b, dims=2):
    a, b = _t(a), _t(b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if not isinstance(dims, int):
        da, db = dims
        dims = ([da] if isinstance(da, int) else list(da), [db] if isinstance(db, int) else list(db))
    try:
        return _w(_L.tensordot(a, b, dims if isinstance(dims, int) else (tuple(dims[0]), tuple(dims[1]))))
    except ValueError as e:  # the core's shape errors are torch's RuntimeError
        raise RuntimeError(str(e).removeprefix("tensordot: ")) from None


@torch_op(out=True)
def vdot(input, other):
    a, b = _t(input), _t(other)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           "have the same number of elements, but got " f"{a.shape[0]} and {b.shape[0]} elements "
                           "respectively")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a.dtype.scalar_name} and "
                           f"{b.dtype.scalar_name}")
    conj = getattr(core, "conj", None)
    if conj is not None and a.dtype.category == getattr(_dt, "COMPLEX", None):
        a = _w(conj(a))
    return _w(core.sum(core.mul(a, b)))


@torch_op(out=True)
def kron(input, other):
    a, b = _t(input), _t(other)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ea, eb = [], []
    for x, y in zip(sa, sb):
        ea += [x, 1]
        eb += [1, y]
    prod = core.mul(core.reshape(a, tuple(ea)), core.reshape(b, tuple(eb)))
    return _w(core.reshape(prod, tuple(x * y for x, y in zip(sa, sb))))


def _scaled_sum(input, prod, beta, alpha):
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # input is ignored (its nan and inf too), as in torch
        return prod + _w(core.zeros(tuple(input.shape), dtype=prod.dtype))
    return prod + (input if beta == 1 else input * beta)


@torch_op(inplace=True, out=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    (input,) = lower_precision(_t(input))
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


@torch_op(inplace=True, out=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    (input,) = lower_precision(_t(input))
    return _scaled_sum(input, bmm(batch1, batch2).sum(0), beta, alpha)


@torch_op(inplace=True, out=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _scaled_sum(_t(input), mv(mat, vec), beta, alpha)


@torch_op(inplace=True, out=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return _scaled_sum(_t(input), outer(vec1, vec2), beta, alpha)
