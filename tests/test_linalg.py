"""core.linalg and torch.linalg against NumPy/SciPy: values on batches, vmap against per-slice results,
torch's error types, and gradients that stay finite where torch's do (repeated eigenvalues)."""
import numpy as np
import pytest
import scipy.linalg

import mindtorch_v2 as torch
from mindtorch_v2 import core

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)
B = RNG.standard_normal((2, 4, 3))
SPD = A @ np.swapaxes(A, -1, -2)
L = core.linalg


def close(x, y, **kw):
    np.testing.assert_allclose(np.asarray(x), y, rtol=1e-9, atol=1e-10, **kw)


def test_values_match_numpy_and_scipy():
    close(L.inv(core.asarray(A)), np.linalg.inv(A))
    close(L.solve(core.asarray(A), core.asarray(B)), np.linalg.solve(A, B))
    close(L.det(core.asarray(A)), np.linalg.det(A))
    close(L.cholesky(core.asarray(SPD)), np.linalg.cholesky(SPD))
    close(L.eigvalsh(core.asarray(SPD)), np.linalg.eigvalsh(SPD))
    close(L.svdvals(core.asarray(B)), np.linalg.svd(B, compute_uv=False))
    close(L.expm(core.asarray(A[0] * 0.1)), scipy.linalg.expm(A[0] * 0.1))
    close(L.solve_triangular(core.asarray(A[0]), core.asarray(B[0]), upper=True),
          scipy.linalg.solve_triangular(A[0], B[0], lower=False))
    P, Lo, U = L.lu(core.asarray(A[0]))
    p, l, u = scipy.linalg.lu(A[0])
    close(P, p), close(Lo, l), close(U, u)
    LU, piv = L.lu_factor(core.asarray(A[0]))
    lu, spiv = scipy.linalg.lu_factor(A[0])
    close(LU, lu)
    np.testing.assert_array_equal(np.asarray(piv), spiv + 1)
    close(L.lu_solve(LU, piv, core.asarray(B[0])), np.linalg.solve(A[0], B[0]))
    close(L.pinv(core.asarray(B)), np.linalg.pinv(B))
    close(L.matrix_power(core.asarray(A), -3), np.linalg.matrix_power(A, -3))
    close(L.matrix_norm(core.asarray(B), "nuc"), np.linalg.norm(B, "nuc", axis=(-2, -1)))
    close(L.tensordot(core.asarray(A), core.asarray(B), ([0, 1], [0, 1])), np.tensordot(A, B, ([0, 1], [0, 1])))


@pytest.mark.parametrize("fn", [L.inv, L.det, L.svdvals, L.eigvalsh, L.expm, lambda a: L.qr(a)[1],
                                lambda a: L.lu(a)[2], lambda a: L.slogdet(a)[1],
                                lambda a: L.solve(a, core.asarray(B[0]))])
def test_vmap_matches_per_slice(fn):
    x = core.asarray(np.swapaxes(SPD * 0.1, 0, 1))  # batch axis 1
    out = core.vmap(fn, in_axes=1)(x)
    expected = np.stack([np.asarray(fn(core.asarray(SPD[i] * 0.1))) for i in range(2)])
    close(out, expected)


def test_errors_are_torchs():
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        torch.linalg.cholesky(-torch.eye(3))
    with pytest.raises(RuntimeError, match="square matrices"):
        torch.linalg.inv(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.linalg.det(torch.eye(2, dtype=torch.int64))
    info = torch.linalg.inv_ex(torch.zeros(2, 2, 2)).info
    assert info.tolist() == [1, 1]


def test_eigenvalue_gradients_stay_finite_at_ties():
    a = torch.eye(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.eigh(a).eigenvalues.sum().backward()
    close(a.grad.numpy(), np.eye(3))
    b = torch.eye(3, dtype=torch.float64, requires_grad=True)
    torch.linalg.svd(b).S.sum().backward()
    close(b.grad.numpy(), np.eye(3))


def test_second_order_through_decompositions():
    x = core.asarray(SPD[0] * 0.1)
    h = core.hessian(lambda a: core.sum(L.eigvalsh(a) ** 3) + L.slogdet(a)[1])(x)
    assert h.shape == (4, 4, 4, 4) and np.all(np.isfinite(np.asarray(h)))
