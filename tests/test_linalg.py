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


# ---------------------------------------------------------------------------
# eig and complex inputs


def test_eig_decomposes_and_fixes_the_phase_of_each_eigenvector():
    a = np.random.default_rng(3).standard_normal((2, 4, 4))
    w, v = (np.asarray(x) for x in core.linalg.eig(core.asarray(a)))
    assert w.dtype == v.dtype == np.complex128
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0)
    vk = np.take_along_axis(v, np.argmax(np.abs(v), -2)[..., None, :], -2)
    np.testing.assert_allclose(vk.imag, 0.0, atol=1e-14)
    assert (vk.real > 0).all()


def test_eig_under_vmap_matches_per_matrix():
    a = np.random.default_rng(4).standard_normal((3, 3, 3))
    batched = core.vmap(core.linalg.eigvals)(core.asarray(a))
    for i in range(3):
        np.testing.assert_allclose(np.asarray(batched)[i], np.asarray(core.linalg.eigvals(core.asarray(a[i]))))


def test_eigvals_gradient_is_the_transposed_left_right_projector():
    # d lambda_i = (V^{-1} dA V)_ii: grad of Re sum(lambda) is the identity, whatever the eigenvectors
    a = np.random.default_rng(5).standard_normal((3, 3))
    g = core.grad(lambda x: core.sum(core.real(core.linalg.eigvals(x))))(core.asarray(a))
    np.testing.assert_allclose(np.asarray(g), np.eye(3), atol=1e-12)


def test_complex_det_grad_in_jax_convention_and_cholesky_factor_l_lh():
    rng = np.random.default_rng(6)
    b = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a = b @ b.conj().T + 3 * np.eye(3)
    f = lambda x: core.sum(core.real(core.linalg.det(x)))  # noqa: E731 - holomorphic det: grad = det A^{-T}
    g = np.asarray(core.grad(f)(core.asarray(a)))
    np.testing.assert_allclose(g, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10)
    L = np.asarray(core.linalg.cholesky(core.asarray(a)))
    np.testing.assert_allclose(L @ L.conj().T, a, atol=1e-12)
