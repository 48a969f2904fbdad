"""Samples for the linalg family: matmul on (..., n, k) @ (..., k, m) with broadcast batch dims (half the float64
ones with a `col_major` layout hint); linear (x @ wᵀ + b); the decompositions on well-conditioned batches built from a seed (symmetric
positive-definite for cholesky, well separated eigenvalues/singular values for eigh, eig and svd: their
derivatives are ill-conditioned near ties, which the behaviour tests cover). About a third of the float64 samples
are complex128 (unitary factors, Hermitian matrices for cholesky/eigh); the eigenvector and singular vector
outputs are in a fixed phase gauge, so random cotangents are fair."""
import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register
from .elementwise import any_array, broadcast_shapes, floats, sides, size_of


@st.composite
def _matmul(draw):
    ba, bb = draw(broadcast_shapes(2, max_dims=2, max_side=3))
    n, k, m = (draw(sides(3)) for _ in range(3))
    sa, sb = ba + (n, k), bb + (k, m)
    assume(max(size_of(sa), size_of(sb)) <= 36)
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from((np.float32, np.float16, np.int64, np.int32, np.bool_)))
        return Sample((draw(any_array(sa, (dtype,), -2, 2)), draw(any_array(sb, (dtype,), -2, 2))))
    # (the layout hint eager sets for a transposed operand: the same values, each gradient another expression)
    params = {"col_major": (draw(st.booleans()), draw(st.booleans()))} if draw(st.booleans()) else {}
    return Sample((draw(floats(sa, -2, 2)), draw(floats(sb, -2, 2))), params, diff=(0, 1))


register(core.matmul_p, _matmul())


@st.composite
def _linear(draw):
    """linear: x (batch..., in) against w (out, in), with a bias half the time."""
    batch = tuple(draw(st.lists(sides(3), min_size=1, max_size=2), label="batch"))
    k, m = draw(sides(3)), draw(sides(3))
    bias = draw(st.booleans())
    if draw(st.integers(0, 2)) == 2:
        dtype = draw(st.sampled_from((np.float32, np.float16, np.int64)))
        args = (draw(any_array(batch + (k,), (dtype,), -2, 2)), draw(any_array((m, k), (dtype,), -2, 2)))
        return Sample(args + ((draw(any_array((m,), (dtype,), -2, 2)),) if bias else ()))
    args = (draw(floats(batch + (k,), -2, 2)), draw(floats((m, k), -2, 2)))
    args += (draw(floats((m,), -2, 2)),) if bias else ()
    return Sample(args, diff=tuple(range(len(args))))


register(core.linear_p, _linear())


def _rng(draw):
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="matrix seed"))


def _batch(draw):
    return tuple(draw(st.lists(st.integers(1, 2), max_size=2), label="batch"))


def _orthogonal(rng, batch, n, complex_=False):
    x = rng.standard_normal(batch + (n, n))
    if complex_:
        x = x + 1j * rng.standard_normal(batch + (n, n))
    q, r = np.linalg.qr(x)
    d = np.diagonal(r, axis1=-2, axis2=-1)
    return q * (d / np.abs(d))[..., None, :]


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _complex(draw):
    return draw(st.integers(0, 2), label="complex") == 2


def _separated(rng, batch, n, low):
    """n values per batch element, ascending from `low`, at least 0.5 apart."""
    return low + np.cumsum(0.5 + rng.random(batch + (n,)), -1)


def _conditioned(rng, batch, m, n, complex_=False):
    """A random m x n matrix with singular values in [1, 3]: far from rank-deficient."""
    k = min(m, n)
    u = _orthogonal(rng, batch, m, complex_)[..., :k]
    v = _orthogonal(rng, batch, n, complex_)[..., :k]
    s = 1.0 + 2.0 * rng.random(batch + (k,))
    return (u * s[..., None, :]) @ _H(v)


def _eig_matrix(rng, batch, n, complex_):
    """S diag(L) S^{-1} with eigenvalues at least 0.5 apart and S well-conditioned; real: a 2 x 2 rotation
    block gives a complex pair when n >= 2."""
    s = _conditioned(rng, batch, n, n, complex_)
    lam = _separated(rng, batch, n, -2.0)
    if complex_:
        d = np.vectorize(np.diag, signature="(n)->(n,n)")(lam + 1j * rng.standard_normal(lam.shape))
    else:
        d = np.vectorize(np.diag, signature="(n)->(n,n)")(lam)
        if n >= 2:
            d[..., 0, 1], d[..., 1, 0] = 1.0, -1.0  # eigenvalues lam_0 +- i (lam_0 == lam_1 is fine: 0.5 apart)
            d[..., 1, 1] = d[..., 0, 0]
    return s @ d @ np.linalg.inv(s)


@st.composite
def _square(draw, kind="general", max_n=4):
    rng, batch, n = _rng(draw), _batch(draw), draw(st.integers(1, max_n), label="n")
    c = _complex(draw)
    if kind in ("spd", "sym"):
        q = _orthogonal(rng, batch, n, c)
        a = (q * _separated(rng, batch, n, 0.5 if kind == "spd" else -2.0)[..., None, :]) @ _H(q)
        a = a + 0.05 * rng.standard_normal(a.shape)  # not Hermitian: the primitive reads the Hermitian part
    elif kind == "eig":
        a = _eig_matrix(rng, batch, n, c)
    elif kind == "small":
        a = 0.5 * rng.standard_normal(batch + (n, n))
        if c:
            a = a + 0.5j * rng.standard_normal(a.shape)
    elif kind == "singular":  # rank n - 1, the other singular values apart: det's cofactor (SVD) branch
        c = False  # complex svd's phase term divides by the zero singular value at second order
        u, v = _orthogonal(rng, batch, n), _orthogonal(rng, batch, n)
        sv = np.concatenate([_separated(rng, batch, n - 1, 0.5)[..., ::-1], np.zeros(batch + (1,))], -1)
        a = (u * sv[..., None, :]) @ _H(v)
    else:
        a = _conditioned(rng, batch, n, n, c)
    if draw(st.booleans(), label="single") and kind not in ("small", "singular"):
        return Sample((a.astype(np.complex64 if c else np.float32),))
    return Sample((a,), diff=(0,))


register(core.linalg.cholesky_p, _square("spd"))
register(core.linalg.eigh_p, _square("sym"))
register(core.linalg.inv_p, _square())
register(core.linalg.det_p, st.one_of(_square(), _square("singular")))
register(core.linalg.slogdet_p, _square())
register(core.linalg.expm_p, _square("small"))
register(core.linalg.eig_p, _square("eig"))


@st.composite
def _rect(draw, prim):
    rng, batch = _rng(draw), _batch(draw)
    m, n = draw(st.integers(1, 4), label="m"), draw(st.integers(1, 4), label="n")
    c = _complex(draw)
    if prim == "svd":
        k = min(m, n)
        u = _orthogonal(rng, batch, m, c)[..., :k]
        v = _orthogonal(rng, batch, n, c)[..., :k]
        s = _separated(rng, batch, k, 0.5)[..., ::-1]
        a = (u * s[..., None, :]) @ _H(v)
        # full_matrices: the extra columns of U (rows of Vh) are not functions of A; only square then
        params = {"full_matrices": m == n and draw(st.booleans(), label="full_matrices")}
    elif prim == "qr":
        a = _conditioned(rng, batch, m, n, c)
        params = {"complete": m <= n and draw(st.booleans(), label="complete")}
    else:
        a = _conditioned(rng, batch, m, n, c)
        params = {}
    return Sample((a,), params, diff=(0,))


register(core.linalg.svd_p, _rect("svd"))
register(core.linalg.qr_p, _rect("qr"))
register(core.linalg.lu_p, _rect("lu"))


@st.composite
def _solve(draw, triangular):
    rng = _rng(draw)
    ba, bb = draw(broadcast_shapes(2, max_dims=2, max_side=2))
    n, k = draw(st.integers(1, 3), label="n"), draw(st.integers(1, 3), label="k")
    c = _complex(draw)
    a = _conditioned(rng, ba, n, n, c)
    b = rng.standard_normal(bb + (n, k)) + (1j * rng.standard_normal(bb + (n, k)) if c else 0)
    if triangular:
        lower, unit = draw(st.booleans(), label="lower"), draw(st.booleans(), label="unit_diagonal")
        a = a + 3.0 * np.eye(n)  # the triangle alone is well-conditioned too
        return Sample((a, b), {"lower": lower, "unit_diagonal": unit}, diff=(0, 1))
    return Sample((a, b), diff=(0, 1))


register(core.linalg.triangular_solve_p, _solve(True))
register(core.linalg.solve_p, _solve(False))
