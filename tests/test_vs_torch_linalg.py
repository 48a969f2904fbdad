"""Differential tests for torch.linalg and the top-level linalg names against PyTorch's recorded answers
(values, return types' fields, LinAlgError and other errors, and gradients of gauge-invariant losses).
Regenerate with `python tests/record_goldens.py linalg` where torch is installed (see tests/_goldens.py)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from _goldens import golden_fixtures, GExc, Goldens, GTensor, torch_lib

GOLDEN = Goldens("vs_torch_linalg")
_golden_file, _golden_case = golden_fixtures(GOLDEN)


def _run(L, fn, args):
    try:
        return fn(L, *[L.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args])
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        return e


def _plain(x):
    """Results as plain containers (namedtuples of either library become tuples, field names checked apart)."""
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    return x


def _same(a, b, what, rtol, atol):
    if isinstance(b, GTensor):
        assert isinstance(a, mt.Tensor), f"{what}: expected a Tensor, got {a!r}"
        assert str(a.dtype).replace("torch.", "") == b.dtype, f"{what}: dtype {a.dtype} vs torch {b.dtype}"
        assert tuple(a.shape) == b.shape, f"{what}: shape {tuple(a.shape)} vs torch {b.shape}"
        x = np.asarray(a.detach().numpy())
        if b.data.dtype.kind in "fc":
            np.testing.assert_allclose(x, b.data, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(x, b.data, err_msg=what)
    elif isinstance(b, (tuple, list)):
        assert len(a) == len(b), f"{what}: {len(a)} results vs torch {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{what}[{i}]", rtol, atol)
    else:
        assert a == b, f"{what}: {a!r} vs torch {b!r}"


def compare(fn, *args, rtol=1e-7, atol=1e-9):
    golden = GOLDEN(lambda: _plain(_run(torch_lib(), fn, args)))
    if GOLDEN.recording:
        return
    res = _run(mt, fn, args)
    if isinstance(golden, GExc):
        assert isinstance(res, Exception), f"torch raised {golden}, mindtorch returned {res!r}"
        assert golden.matches(res), f"torch raised {golden}; mindtorch raised {type(res).__name__}({res})"
        for word in ("singular", "positive-definite", "square", "floating point", "Batch element"):
            if word in golden.msg:
                assert word in str(res), f"torch's message {golden.msg!r} has {word!r}; ours: {res}"
        return
    if isinstance(res, Exception):
        raise AssertionError(f"torch returned, mindtorch raised {type(res).__name__}: {res}") from res
    _same(_plain(res), golden, getattr(fn, "__name__", "case"), rtol, atol)


RNG = np.random.default_rng(0)


def mat(*shape, seed=0, cond=True):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if cond and len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a + shape[-1] * np.eye(shape[-1])
    return a


def spd(*shape, seed=0):
    a = mat(*shape, seed=seed, cond=False)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def sym(*shape, seed=0):
    a = mat(*shape, seed=seed, cond=False)
    return a + np.swapaxes(a, -1, -2)


def cmat(*shape, seed=0, cond=True):
    return mat(*shape, seed=seed, cond=cond) + 1j * mat(*shape, seed=seed + 10, cond=False)


def hpd(*shape, seed=0):
    a = cmat(*shape, seed=seed, cond=False)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def herm(*shape, seed=0):
    a = cmat(*shape, seed=seed, cond=False)
    return a + np.conj(np.swapaxes(a, -1, -2))


# ---------------------------------------------------------------------------
# values


VALUE_CASES = {
    "inv": (lambda L, a: L.linalg.inv(a), mat(2, 3, 3)),
    "inv_ex": (lambda L, a: tuple(L.linalg.inv_ex(a)), mat(3, 3)),
    "inverse": (lambda L, a: L.inverse(a), mat(3, 3)),
    "det": (lambda L, a: (L.det(a), L.linalg.det(a), a.det()), mat(2, 4, 4, cond=False)),
    "logdet": (lambda L, a: L.logdet(a), mat(3, 4, 4, cond=False)),
    "slogdet": (lambda L, a: tuple(L.linalg.slogdet(a)), mat(3, 4, 4, cond=False)),
    "slogdet_top": (lambda L, a: tuple(L.slogdet(a)), mat(4, 4, cond=False)),
    "solve_matrix": (lambda L, a, b: L.linalg.solve(a, b), mat(2, 3, 3), mat(3, 2, seed=1)),
    "solve_vector": (lambda L, a, b: L.linalg.solve(a, b), mat(3, 3), mat(1, 3, seed=1)[0]),
    "solve_batch_vector": (lambda L, a, b: L.linalg.solve(a, b), mat(2, 3, 3), mat(2, 3, seed=1)),
    "solve_right": (lambda L, a, b: L.linalg.solve(a, b, left=False), mat(3, 3), mat(2, 3, seed=1)),
    "solve_ex": (lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), mat(3, 3), mat(3, 1, seed=1)),
    "solve_triangular_upper": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), mat(3, 3),
                               mat(3, 2, seed=1)),
    "solve_triangular_lower_right_unit": (
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        mat(2, 3, 3), mat(2, 3, seed=1)),
    "triangular_solve": (lambda L, b, a: tuple(L.triangular_solve(b, a, upper=False, transpose=True)),
                         mat(3, 2, seed=1), mat(3, 3)),
    "cholesky": (lambda L, a: L.linalg.cholesky(a), spd(2, 3, 3)),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(a, upper=True), spd(3, 3)),
    "cholesky_reads_lower": (lambda L, a: L.linalg.cholesky(a), spd(3, 3) + np.triu(np.ones((3, 3)), 1)),
    "cholesky_ex": (lambda L, a: tuple(L.linalg.cholesky_ex(a)), spd(3, 3)),
    "cholesky_solve": (lambda L, b, a: L.cholesky_solve(b, L.linalg.cholesky(a)), mat(3, 2, seed=1), spd(3, 3)),
    "cholesky_solve_upper": (lambda L, b, a: L.cholesky_solve(b, L.linalg.cholesky(a, upper=True), upper=True),
                             mat(3, 2, seed=1), spd(3, 3)),
    "cholesky_inverse": (lambda L, a: L.cholesky_inverse(L.linalg.cholesky(a)), spd(3, 3)),
    "qr_reduced": (lambda L, a: tuple(L.linalg.qr(a)), mat(2, 4, 3)),
    "qr_complete": (lambda L, a: tuple(L.linalg.qr(a, mode="complete")), mat(4, 3)),
    "qr_r": (lambda L, a: L.linalg.qr(a, mode="r")[1], mat(4, 3)),
    "qr_wide": (lambda L, a: tuple(L.linalg.qr(a)), mat(2, 4)),
    "qr_top": (lambda L, a: tuple(L.qr(a)), mat(4, 3)),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), mat(2, 4, 3)),
    "svd_reconstructs": (lambda L, a: (lambda u, s, vh: (u.shape, s, vh.shape, (u * s.unsqueeze(-2)) @ vh))(
        *L.linalg.svd(a, full_matrices=False)), mat(2, 4, 3)),
    "svd_full_shapes": (lambda L, a: tuple(t.shape for t in L.linalg.svd(a)), mat(4, 3)),
    "svd_top_V": (lambda L, a: (lambda u, s, v: (u.shape, s, v.shape, (u * s) @ v.T))(*L.svd(a)), mat(4, 3)),
    "svd_top_some_false": (lambda L, a: tuple(t.shape for t in L.svd(a, some=False)), mat(4, 3)),
    "eigvalsh": (lambda L, a: (L.linalg.eigvalsh(a), L.linalg.eigvalsh(a, UPLO="U")), sym(2, 3, 3) + np.triu(np.ones(3), 1)),
    "eigh_projector": (lambda L, a: (lambda w, v: (w, (v * w.unsqueeze(-2)) @ v.mT))(*L.linalg.eigh(a)), sym(2, 3, 3)),
    "lstsq": (lambda L, a, b: tuple(L.linalg.lstsq(a, b)), mat(5, 3, seed=2), mat(5, 2, seed=3)),
    "lstsq_wide": (lambda L, a, b: tuple(L.linalg.lstsq(a, b)), mat(2, 4, seed=2), mat(2, 2, seed=3)),
    "pinv": (lambda L, a: L.linalg.pinv(a), mat(2, 4, 3)),
    "pinv_hermitian": (lambda L, a: L.linalg.pinv(a, hermitian=True), sym(3, 3)),
    "pinv_rank_deficient": (lambda L, a: L.linalg.pinv(a), np.outer([1.0, 2.0, 3.0], [1.0, -1.0])),
    "pinverse": (lambda L, a: L.pinverse(a), mat(3, 4, seed=2)),
    "matrix_power": (lambda L, a: (L.linalg.matrix_power(a, 3), L.linalg.matrix_power(a, 0),
                                   L.linalg.matrix_power(a, -2), L.matrix_power(a, 2)), mat(2, 3, 3)),
    "matrix_rank": (lambda L, a: (L.linalg.matrix_rank(a), L.linalg.matrix_rank(a, hermitian=False, atol=1.0)),
                    np.stack([np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5]), np.eye(3)])),
    "matrix_exp": (lambda L, a: (L.linalg.matrix_exp(a), L.matrix_exp(a)), 0.5 * mat(2, 3, 3, cond=False)),
    "cross": (lambda L, a, b: (L.linalg.cross(a, b), L.cross(a, b, dim=1)), mat(2, 3, seed=1), mat(2, 3, seed=2)),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), mat(3, seed=1), mat(3, 4, seed=2),
                  mat(4, 2, seed=3)),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), mat(2, 3, seed=1), mat(3, seed=2)),
    "lu_factor": (lambda L, a: tuple(L.linalg.lu_factor(a)), mat(2, 3, 3, cond=False)),
    "lu_factor_tall": (lambda L, a: tuple(L.linalg.lu_factor(a)), mat(4, 3, cond=False)),
    "lu": (lambda L, a: tuple(L.linalg.lu(a)), mat(2, 3, 4, cond=False)),
    "lu_tall": (lambda L, a: tuple(L.linalg.lu(a)), mat(4, 3, cond=False)),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), mat(2, 3, 3, cond=False),
                 mat(3, 2, seed=1)),
    "lu_solve_adjoint_right": (lambda L, a, b: (L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True),
                                                L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT, left=False)),
                               mat(3, 3, cond=False), mat(3, 2, seed=1)),
    "vector_norm": (lambda L, x: tuple(L.linalg.vector_norm(x, o) for o in (2, 1, 0, 3, 0.5, float("inf"),
                                                                             -float("inf"), -1)), mat(2, 3)),
    "vector_norm_dim": (lambda L, x: (L.linalg.vector_norm(x, dim=1), L.linalg.vector_norm(x, 1, (0, 2), True)),
                        mat(2, 3, 4)),
    "matrix_norm": (lambda L, x: tuple(L.linalg.matrix_norm(x, o) for o in ("fro", "nuc", 1, -1, 2, -2,
                                                                             float("inf"), -float("inf"))),
                    mat(2, 3, 4)),
    "matrix_norm_dims": (lambda L, x: (L.linalg.matrix_norm(x, 1, dim=(0, 2), keepdim=True),
                                       L.linalg.matrix_norm(x, "nuc", dim=(2, 0))), mat(2, 3, 4)),
    "norm": (lambda L, x, m: (L.linalg.norm(x), L.linalg.norm(m), L.linalg.norm(m, "nuc"), L.linalg.norm(x, 3),
                              L.linalg.norm(m, 2, dim=(0, 1)), L.linalg.norm(m, dim=1)), mat(3), mat(3, 4)),
    "diagonal": (lambda L, a: (L.linalg.diagonal(a), L.linalg.diagonal(a, offset=1)), mat(2, 3, 4)),
    "kron": (lambda L, a, b: (L.kron(a, b), a.kron(b)), mat(2, 3), mat(2, 2, seed=1)),
    "tensordot": (lambda L, a, b: (L.tensordot(a, b, dims=1), L.tensordot(a, b.permute(1, 0, 2), dims=([0, 1], [1, 0]))),
                  mat(2, 3), mat(3, 2, 4, seed=1)),
    "vdot": (lambda L, a, b: (L.vdot(a, b), a.vdot(b)), mat(3), mat(3, seed=1)),
    "chain_matmul": (lambda L, a, b: L.chain_matmul(a, b, a), mat(3, 3), mat(3, 3, seed=1)),
    "baddbmm": (lambda L, c, a, b: (L.baddbmm(c, a, b, beta=0.5, alpha=2.0), L.addbmm(c[0], a, b)),
                mat(2, 3, 2), mat(2, 3, 4, seed=1), mat(2, 4, 2, seed=2)),
    "addmv_addr": (lambda L, c, m, v: (L.addmv(c, m, v, beta=2), L.addr(m, c, v, alpha=0.5), m.addr(c, v)),
                   mat(3), mat(3, 4, seed=1), mat(4, seed=2)),
    # eig: eigenvalues in LAPACK's order; eigenvectors compared through |V| (their phases are a gauge)
    "eig_real": (lambda L, a: (lambda w, v: (w, v.abs()))(*L.linalg.eig(a)), mat(2, 3, 3, cond=False)),
    "eig_real_spectrum": (lambda L, a: (lambda w, v: (w, v.abs()))(*L.linalg.eig(a)), np.diag([1.0, 2.0, 3.0])),
    "eig_complex": (lambda L, a: (lambda w, v: (w, v.abs(), (v @ L.diag_embed(w) - a @ v).abs().max() < 1e-10))(
        *L.linalg.eig(a)), cmat(2, 3, 3)),
    "eigvals": (lambda L, a: (L.linalg.eigvals(a), L.linalg.eigvals(a.to(L.float32)).dtype == L.complex64),
                mat(3, 3, cond=False)),
    "eigvals_complex": (lambda L, a: L.linalg.eigvals(a), cmat(4, 4, cond=False)),
    "eigvals_inf": (lambda L, a: L.linalg.eigvals(a), np.array([[np.inf, 0.0], [0.0, 1.0]])),
    "eig_empty": (lambda L, a: tuple(t.shape for t in L.linalg.eig(a)), np.zeros((2, 0, 0))),
    # complex inputs
    "inv_complex": (lambda L, a: (L.linalg.inv(a), L.inverse(a)), cmat(2, 3, 3)),
    "det_complex": (lambda L, a: (L.linalg.det(a), tuple(L.linalg.slogdet(a)), L.logdet(a)), cmat(2, 3, 3)),
    "solve_complex": (lambda L, a, b: (L.linalg.solve(a, b), L.linalg.solve(a, b[..., 0], left=True)),
                      cmat(3, 3), cmat(3, 2, seed=1)),
    "solve_triangular_complex": (lambda L, a, b: (L.linalg.solve_triangular(a, b, upper=True),
                                                  L.linalg.solve_triangular(a, b.mT, upper=False, left=False)),
                                 cmat(3, 3), cmat(3, 2, seed=1)),
    "cholesky_complex": (lambda L, a: (L.linalg.cholesky(a), L.linalg.cholesky(a, upper=True),
                                       L.cholesky_inverse(L.linalg.cholesky(a))), hpd(2, 3, 3)),
    "eigh_complex": (lambda L, a: (lambda w, v: (w, v.abs(), (v * w.unsqueeze(-2).to(v.dtype)) @ v.mT.conj()))(
        *L.linalg.eigh(a)), herm(2, 3, 3)),
    "eigvalsh_complex": (lambda L, a: (L.linalg.eigvalsh(a), L.linalg.eigvalsh(a, UPLO="U")), cmat(3, 3)),
    "svd_complex": (lambda L, a: (lambda u, s, vh: (s, u.abs(), vh.abs(), (u * s.unsqueeze(-2).to(u.dtype)) @ vh))(
        *L.linalg.svd(a, full_matrices=False)), cmat(2, 4, 3)),
    "svd_top_complex": (lambda L, a: (lambda u, s, v: (s, (u * s.to(u.dtype)) @ v.mT.conj()))(*L.svd(a)), cmat(3, 4)),
    "qr_complex": (lambda L, a: (tuple(L.linalg.qr(a)), tuple(L.linalg.qr(a.mT))), cmat(4, 3)),
    "lu_complex": (lambda L, a: (tuple(L.linalg.lu(a)), tuple(L.linalg.lu_factor(a[:3])),
                                 L.linalg.lu_solve(*L.linalg.lu_factor(a[:3]), a[:3, :2], adjoint=True)),
                   cmat(4, 3, cond=False)),
    "matrix_exp_complex": (lambda L, a: L.linalg.matrix_exp(a), 0.5 * cmat(3, 3, cond=False)),
    "pinv_complex": (lambda L, a, h: (L.linalg.pinv(a), L.linalg.pinv(h, hermitian=True), L.linalg.matrix_rank(a)),
                     cmat(4, 3), herm(3, 3)),
    "lstsq_complex": (lambda L, a, b: L.linalg.lstsq(a, b).solution, cmat(5, 3, seed=2), cmat(5, 2, seed=3)),
    "norms_complex": (lambda L, x: tuple(L.linalg.vector_norm(x, o) for o in (2, 1, 0, 3, float("inf"))) +
                      tuple(L.linalg.matrix_norm(x, o) for o in ("fro", "nuc", 1, 2, -2, float("inf"))) +
                      (L.linalg.norm(x),), cmat(3, 4)),
    "products_complex": (lambda L, a, b: (L.linalg.multi_dot([a, b, a]), L.linalg.vecdot(a, b.mT),
                                          L.linalg.matrix_power(a[:, :3], 3), L.linalg.cross(a[:, :3], b.mT[:, :3])),
                         cmat(3, 4), cmat(4, 3, seed=1)),
}


def _message(f):
    """The message of the error f raises (compared word for word; the type is compared by the error cases)."""
    try:
        f()
    except RuntimeError as e:
        return str(e)
    return None


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])

VALUE_CASES.update({
    # review mends
    "trace_diagonal_inf_offdiagonal": (lambda L, a: (L.trace(a), L.linalg.diagonal(a), L.linalg.diagonal(a, offset=1)),
                                       np.array([[1.0, np.inf], [np.nan, 2.0]])),
    "lu_factor_ex_info": (lambda L, a: (lambda r: (type(r).__name__, tuple(r)))(L.linalg.lu_factor_ex(a)),
                          np.stack([np.eye(2), SINGULAR])),
    "lu_factor_ex_info_rect": (lambda L, a, b: (tuple(L.linalg.lu_factor_ex(a)), L.linalg.lu_factor_ex(b).info),
                               np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 2.0]]), np.zeros((3, 2))),
    "inv_ex_singular_values": (lambda L, a: tuple(L.linalg.inv_ex(a)), np.stack([SINGULAR, np.zeros((2, 2)), np.eye(2)])),
    "solve_ex_singular_values": (lambda L, a, b: tuple(L.linalg.solve_ex(a, b)), np.stack([SINGULAR, np.zeros((2, 2))]),
                                 np.array([[1.0], [2.0]])),
    "ex_check_errors_messages": (lambda L, a: (_message(lambda: L.linalg.inv_ex(a, check_errors=True)),
                                               _message(lambda: L.linalg.cholesky_ex(-a, check_errors=True)),
                                               _message(lambda: L.linalg.lu_factor_ex(a * 0, check_errors=True)),
                                               _message(lambda: L.linalg.lu_factor(L.stack([a, a * 0])))), np.eye(2)),
    "matrix_power_int": (lambda L, a: (L.linalg.matrix_power(a, 3), L.linalg.matrix_power(a, 0), L.matrix_power(a, 1),
                                       a.matrix_power(2), L.linalg.matrix_power(a.to(L.int32), 2)),
                         np.array([[1, 1], [0, 1]])),
    "vector_norm_empty_messages": (lambda L, a: tuple(_message(lambda: L.linalg.vector_norm(a, o, d))
                                                      for o in (float("inf"), -float("inf"), -1, -1.5)
                                                      for d in (None, 1, -1, (0, 1))) +
                                   tuple(L.linalg.vector_norm(a, o, 0) for o in (float("inf"), -1)), np.zeros((2, 0))),
    "conjugate_transposes": (lambda L, a, b: (a.mH, a.H, a.adjoint(), b.mH, b.adjoint(), a.real.mH, a.real.H),
                             cmat(3, 4), cmat(2, 3, 4)),
    "conjugate_transpose_messages": (lambda L, a: (_message(lambda: a[0, 0].mH), _message(lambda: a[0].H),
                                                   _message(lambda: a.H), _message(lambda: a[0].adjoint())),
                                     mat(2, 3, 4)),
    "return_type_names": (lambda L, a, s: tuple(type(r).__name__ + ":" + repr(r).split("(")[0] for r in (
        L.linalg.svd(a), L.linalg.eigh(s), L.linalg.eig(s), L.linalg.qr(a), L.linalg.slogdet(s), L.linalg.lu_factor(s),
        L.linalg.lu_factor_ex(s), L.linalg.lstsq(a, a), L.linalg.inv_ex(s), L.linalg.cholesky_ex(s),
        L.linalg.solve_ex(s, s), L.linalg.lu(s), L.svd(a), L.qr(a), L.slogdet(s),
        L.triangular_solve(s, s))), mat(3, 2), spd(2, 2)),
    "linalg_has_no_trace": (lambda L: hasattr(L.linalg, "trace"),),
})


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_torch(name):
    fn, *args = VALUE_CASES[name]
    compare(fn, *args)


def test_return_type_fields_match_torch():
    def fields(L, a, s):
        named = [(L.linalg.svd(a), "U S Vh"), (L.linalg.eigh(s), "eigenvalues eigenvectors"), (L.linalg.qr(a), "Q R"),
                 (L.linalg.slogdet(s), "sign logabsdet"), (L.linalg.lu_factor(s), "LU pivots"),
                 (L.linalg.lstsq(a, a), "solution residuals rank singular_values"), (L.linalg.inv_ex(s), "inverse info"),
                 (L.linalg.cholesky_ex(s), "L info"), (L.svd(a), "U S V"), (L.linalg.lu(s), "P L U")]
        return tuple(tuple(tuple(getattr(r, f).shape) for f in names.split()) for r, names in named)
    compare(fields, mat(3, 2), spd(2, 2))


# ---------------------------------------------------------------------------
# errors


ERROR_CASES = {
    "matrix_power_int_negative": (lambda L, a: L.linalg.matrix_power(a, -1), np.array([[1, 1], [0, 1]])),
    "lu_factor_singular": (lambda L, a: L.linalg.lu_factor(a), SINGULAR),
    "inv_ex_check_errors": (lambda L, a: L.linalg.inv_ex(a, check_errors=True), SINGULAR),
    "cholesky_ex_check_errors": (lambda L, a: L.linalg.cholesky_ex(a, check_errors=True), -np.eye(2)),
    "vector_norm_empty_inf": (lambda L, a: L.linalg.vector_norm(a, float("inf")), np.zeros(0)),
    "H_of_3d": (lambda L, a: a.H, np.ones((2, 3, 4))),
    "inv_singular": (lambda L, a: L.linalg.inv(a), np.ones((2, 2))),
    "inv_singular_batch": (lambda L, a: L.linalg.inv(a), np.stack([np.eye(2), np.zeros((2, 2))])),
    "inverse_singular": (lambda L, a: L.inverse(a), np.zeros((3, 3))),
    "solve_singular": (lambda L, a: L.linalg.solve(a, a), np.ones((2, 2))),
    "cholesky_not_pd": (lambda L, a: L.linalg.cholesky(a), -np.eye(2)),
    "cholesky_not_pd_batch": (lambda L, a: L.linalg.cholesky(a), np.stack([np.eye(2), np.diag([1.0, -1.0])])),
    "inv_not_square": (lambda L, a: L.linalg.inv(a), np.ones((2, 3))),
    "det_not_square": (lambda L, a: L.linalg.det(a), np.ones((2, 3))),
    "eigh_not_square": (lambda L, a: L.linalg.eigh(a), np.ones((2, 3))),
    "cholesky_not_square": (lambda L, a: L.linalg.cholesky(a), np.ones((2, 3))),
    "svd_1d": (lambda L, a: L.linalg.svd(a), np.ones(3)),
    "inv_int": (lambda L, a: L.linalg.inv(a), np.eye(2, dtype=np.int64)),
    "svd_int": (lambda L, a: L.linalg.svd(a), np.eye(2, dtype=np.int64)),
    "vector_norm_int": (lambda L, a: L.linalg.vector_norm(a), np.eye(2, dtype=np.int64)),
    "solve_shapes": (lambda L, a, b: L.linalg.solve(a, b), np.eye(2), np.ones(3)),
    "cross_not_3": (lambda L, a: L.linalg.cross(a, a), np.ones(2)),
    "matrix_norm_ord": (lambda L, a: L.linalg.matrix_norm(a, 3), np.ones((2, 2))),
    "matrix_power_not_square": (lambda L, a: L.linalg.matrix_power(a, 2), np.ones((2, 3))),
    "qr_mode": (lambda L, a: L.linalg.qr(a, mode="full"), np.ones((2, 2))),
    "eig_not_square": (lambda L, a: L.linalg.eig(a), np.ones((2, 3))),
    "eig_nan": (lambda L, a: L.linalg.eig(a), np.array([[np.nan, 0.0], [0.0, 1.0]])),
    "eig_phase_dependent_loss": (lambda L, a: L.linalg.eig(a.requires_grad_())[1].real.sum().backward(),
                                 mat(3, 3, seed=1, cond=False)),
    "eigh_phase_dependent_loss": (lambda L, a: L.linalg.eigh(a.requires_grad_())[1].real.sum().backward(),
                                  herm(3, 3)),
    "svd_phase_dependent_loss": (lambda L, a: L.linalg.svd(a.requires_grad_())[0].real.sum().backward(),
                                 cmat(3, 3)),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch(name):
    fn, *args = ERROR_CASES[name]
    compare(fn, *args)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(mt.linalg.LinAlgError, RuntimeError)
    with pytest.raises(mt.linalg.LinAlgError, match="singular"):
        mt.linalg.inv(mt.zeros(2, 2))


# ---------------------------------------------------------------------------
# gradients of gauge-invariant losses (float64), first order


def _w(shape, seed=7):
    return np.random.default_rng(seed).standard_normal(shape)


def _projector_loss(L, u, w):
    """A loss of the column space of u only: invariant under u's gauge (signs, rotations in a tied space)."""
    return ((u @ u.mT) * L.from_numpy(w)).sum()


GRAD_CASES = {
    "inv": (lambda L, a: (L.linalg.inv(a) * L.from_numpy(_w((3, 3)))).sum(), mat(3, 3)),
    "det": (lambda L, a: L.linalg.det(a).sum(), mat(2, 3, 3)),
    "slogdet": (lambda L, a: L.linalg.slogdet(a).logabsdet.sum(), mat(3, 3)),
    "logdet": (lambda L, a: L.logdet(a), spd(3, 3)),
    "solve": (lambda L, a, b: (L.linalg.solve(a, b) * L.from_numpy(_w((2, 3, 2)))).sum(), mat(2, 3, 3),
              mat(3, 2, seed=1)),
    "solve_triangular": (lambda L, a, b: (L.linalg.solve_triangular(a, b, upper=True, left=False) ** 2).sum(),
                         mat(3, 3), mat(2, 3, seed=1)),
    "cholesky": (lambda L, a: (L.linalg.cholesky(a) * L.from_numpy(_w((3, 3)))).sum(), spd(3, 3)),
    "cholesky_upper_nonsym": (lambda L, a: (L.linalg.cholesky(a, upper=True) * L.from_numpy(_w((3, 3)))).sum(),
                              spd(3, 3) + np.tril(np.ones((3, 3)), -1)),
    "qr": (lambda L, a: ((lambda q, r: (q * L.from_numpy(_w((4, 3)))).sum() + (r * L.from_numpy(_w((3, 3), 8))).sum())(
        *L.linalg.qr(a))), mat(4, 3)),
    "qr_wide": (lambda L, a: ((lambda q, r: (q * L.from_numpy(_w((2, 2)))).sum() + (r * L.from_numpy(_w((2, 4), 8))).sum())(
        *L.linalg.qr(a))), mat(2, 4)),
    "svdvals": (lambda L, a: (L.linalg.svdvals(a) * L.from_numpy(np.array([1.0, 2.0, 3.0]))).sum(), mat(4, 3)),
    "svdvals_repeated": (lambda L, a: L.linalg.svdvals(a).sum(), np.eye(3)),
    "svd_S_only_repeated": (lambda L, a: L.linalg.svd(a)[1].sum(), np.eye(3)),
    "svd_gauge_invariant_tall": (lambda L, a: (lambda u, s, vh: _projector_loss(L, u * s.sqrt(), _w((4, 4))) +
                                               _projector_loss(L, vh.mT, _w((3, 3), 8)))(
        *L.linalg.svd(a, full_matrices=False)), mat(4, 3)),
    "svd_gauge_invariant_wide": (lambda L, a: (lambda u, s, vh: _projector_loss(L, u[:, :1], _w((2, 2))) +
                                               (s ** 2).sum())(*L.linalg.svd(a, full_matrices=False)), mat(2, 4)),
    "eigh": (lambda L, a: (lambda w, v: (w ** 2).sum() + _projector_loss(L, v[..., :2], _w((3, 3))))(
        *L.linalg.eigh(a)), sym(3, 3)),
    "eigh_upper": (lambda L, a: (lambda w, v: (w * L.from_numpy(np.arange(3.0))).sum() +
                                 _projector_loss(L, v[..., 1:], _w((3, 3))))(*L.linalg.eigh(a, UPLO="U")),
                   sym(3, 3) + np.tril(np.ones((3, 3)), -1)),
    "eigvalsh_repeated": (lambda L, a: (L.linalg.eigvalsh(a) ** 2).sum(), np.eye(3)),
    "eigh_vectors_repeated_nan": (lambda L, a: _projector_loss(L, L.linalg.eigh(a)[1][:, :1], _w((3, 3))),
                                  np.diag([1.0, 1.0, 2.0])),
    "pinv": (lambda L, a: (L.linalg.pinv(a) * L.from_numpy(_w((3, 4)))).sum(), mat(4, 3)),
    "lstsq": (lambda L, a, b: (L.linalg.lstsq(a, b).solution ** 2).sum(), mat(5, 3, seed=2), mat(5, 2, seed=3)),
    "matrix_exp": (lambda L, a: (L.linalg.matrix_exp(a) * L.from_numpy(_w((3, 3)))).sum(), 0.5 * mat(3, 3, cond=False)),
    "matrix_power_neg": (lambda L, a: L.linalg.matrix_power(a, -2).sum(), mat(3, 3)),
    "lu": (lambda L, a: ((lambda p, l, u: (l * L.from_numpy(_w((3, 3)))).sum() + (u * L.from_numpy(_w((3, 4), 8))).sum())(
        *L.linalg.lu(a))), mat(3, 4, cond=False)),
    "lu_factor_solve": (lambda L, a, b: (L.linalg.lu_solve(*L.linalg.lu_factor(a), b) ** 2).sum(), mat(3, 3),
                        mat(3, 2, seed=1)),
    "norms": (lambda L, a: L.linalg.matrix_norm(a, "nuc") + L.linalg.matrix_norm(a, 2) + L.linalg.matrix_norm(a, -2)
              + L.linalg.matrix_norm(a, 1) + L.linalg.vector_norm(a, 3) + L.linalg.vector_norm(a, float("inf")),
              mat(4, 3)),
    "vector_norm_at_zero": (lambda L, a: L.linalg.vector_norm(a), np.zeros(3)),
    "cross_kron_vdot": (lambda L, a: (L.linalg.cross(a, a.flip(0)) ** 2).sum() + L.kron(a, a).sum() + L.vdot(a, a),
                        mat(3)),
    # eig: losses of the eigenvalues and of |V| (gauge-invariant), real input (complex outputs) and complex input
    "eigvals_real": (lambda L, a: (L.linalg.eigvals(a).abs() ** 2 * L.from_numpy(np.arange(1.0, 4.0))).sum(),
                     mat(3, 3, seed=1, cond=False)),
    "eig_real_abs_vectors": (lambda L, a: (lambda w, v: (v.abs() * L.from_numpy(_w((3, 3)))).sum() + w.real.sum() +
                                           (w.imag ** 2).sum())(*L.linalg.eig(a)), mat(3, 3, seed=1, cond=False)),
    "eig_complex": (lambda L, a: (lambda w, v: (v.abs() * L.from_numpy(_w((2, 3, 3)))).sum() + (w * w).real.sum())(
        *L.linalg.eig(a)), cmat(2, 3, 3)),
    "eig_repeated_eigenvalues_only": (lambda L, a: L.linalg.eigvals(a).real.sum(), np.eye(3)),
    # complex inputs, real losses
    "inv_complex": (lambda L, a: (L.linalg.inv(a) * L.from_numpy(_w((3, 3)))).abs().sum(), cmat(3, 3)),
    "det_slogdet_complex": (lambda L, a: L.linalg.det(a).abs() + L.linalg.slogdet(a).logabsdet * 2 +
                            L.linalg.slogdet(a).sign.angle(), cmat(3, 3)),
    "solve_complex": (lambda L, a, b: (L.linalg.solve(a, b).abs() ** 2).sum(), cmat(3, 3), cmat(3, 2, seed=1)),
    "solve_triangular_complex": (lambda L, a, b: (L.linalg.solve_triangular(a, b, upper=False) ** 2).real.sum(),
                                 cmat(3, 3), cmat(3, 2, seed=1)),
    "cholesky_complex": (lambda L, a: (L.linalg.cholesky(a) * L.from_numpy(_w((3, 3)))).abs().sum(), hpd(3, 3)),
    "eigh_complex": (lambda L, a: (lambda w, v: (w ** 2 * L.from_numpy(np.arange(3.0))).sum() +
                                   (v.abs() * L.from_numpy(_w((3, 3)))).sum())(*L.linalg.eigh(a)), herm(3, 3)),
    "svd_complex_tall": (lambda L, a: (lambda u, s, vh: (s ** 2).sum() + (u.abs() * L.from_numpy(_w((4, 3)))).sum() +
                                       (vh.abs() * L.from_numpy(_w((3, 3), 8))).sum())(
        *L.linalg.svd(a, full_matrices=False)), cmat(4, 3)),
    "svd_complex_wide_products": (lambda L, a: (lambda u, s, vh: ((u * s.to(u.dtype)) @ vh).abs().sum() +
                                                (u @ vh[:, :2]).abs().sum())(*L.linalg.svd(a, full_matrices=False)),
                                  cmat(2, 4)),
    "qr_complex": (lambda L, a: (lambda q, r: (q * L.from_numpy(_w((4, 3)))).abs().sum() +
                                 (r * L.from_numpy(_w((3, 3), 8))).real.sum())(*L.linalg.qr(a)), cmat(4, 3)),
    "qr_complex_wide": (lambda L, a: (lambda q, r: (q * L.from_numpy(_w((2, 2)))).imag.sum() +
                                      (r * L.from_numpy(_w((2, 4), 8))).abs().sum())(*L.linalg.qr(a)), cmat(2, 4)),
    "lu_complex": (lambda L, a: (lambda p, l, u: (l * L.from_numpy(_w((3, 3)))).abs().sum() +
                                 (u * L.from_numpy(_w((3, 4), 8))).real.sum())(*L.linalg.lu(a)), cmat(3, 4, cond=False)),
    "matrix_exp_complex": (lambda L, a: (L.linalg.matrix_exp(a) * L.from_numpy(_w((3, 3)))).abs().sum(),
                           0.5 * cmat(3, 3, cond=False)),
    "pinv_lstsq_complex": (lambda L, a, b: L.linalg.pinv(a).abs().sum() + (L.linalg.lstsq(a, b).solution.abs() ** 2).sum(),
                           cmat(4, 3, seed=2), cmat(4, 2, seed=3)),
    "norms_complex": (lambda L, a: L.linalg.matrix_norm(a, "nuc") + L.linalg.matrix_norm(a, 2) + L.linalg.matrix_norm(a)
                      + L.linalg.matrix_norm(a, 1) + L.linalg.vector_norm(a, 3) + L.linalg.vector_norm(a, float("inf")),
                      cmat(4, 3)),
}


def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix():
    """torch 2.13's double-backward path (create_graph=True, as torch.func) gives the cofactors, and their
    gradient; its plain backward gives zeros there (wrong: det is a polynomial), which we do not copy. (Second
    order at rank <= n - 2, e.g. the zero matrix, is nan here: the SVD's derivative at repeated zeros.)"""
    def grads(L, a):
        a.requires_grad_(True)
        g, = L.autograd.grad(L.linalg.det(a).sum(), a, create_graph=True)
        return g, L.autograd.grad((g * L.from_numpy(_w((2, 2, 2)))).sum(), a)[0]
    compare(grads, np.stack([SINGULAR, np.array([[2.0, 1.0], [-4.0, -2.0]])]), rtol=1e-6, atol=1e-8)


def test_det_backward_at_singular_matrices_is_the_cofactor_matrix():
    x = mt.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    mt.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-6)
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=mt.float64, requires_grad=True)
    mt.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]], atol=1e-9)
    x = mt.zeros(2, 3, 3, dtype=mt.float64, requires_grad=True)
    mt.linalg.det(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3, 3)))


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_torch(name):
    fn, *args = GRAD_CASES[name]

    def grads(L, *xs):
        for x in xs:
            x.requires_grad_(True)
        fn(L, *xs).backward()
        return tuple(x.grad for x in xs)
    compare(grads, *args, rtol=1e-6, atol=1e-8)
