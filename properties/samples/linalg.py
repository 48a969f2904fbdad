"""Samples for the linalg family: matmul on (..., n, k) @ (..., k, m) with broadcast batch dims; the
decompositions on well-conditioned batches built from a seed (symmetric positive-definite for cholesky,
well separated eigenvalues/singular values for eigh and svd: their derivatives are ill-conditioned near
ties, which the behaviour tests cover)."""
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
    return Sample((draw(floats(sa, -2, 2)), draw(floats(sb, -2, 2))), diff=(0, 1))


register(core.matmul_p, _matmul())


def _rng(draw):
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="matrix seed"))


def _batch(draw):
    return tuple(draw(st.lists(st.integers(1, 2), max_size=2), label="batch"))


def _orthogonal(rng, batch, n):
    q, r = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _separated(rng, batch, n, low):
    """n values per batch element, ascending from `low`, at least 0.5 apart."""
    return low + np.cumsum(0.5 + rng.random(batch + (n,)), -1)


def _conditioned(rng, batch, m, n):
    """A random m x n matrix with singular values in [1, 3]: far from rank-deficient."""
    k = min(m, n)
    u = _orthogonal(rng, batch, m)[..., :k]
    v = _orthogonal(rng, batch, n)[..., :k]
    s = 1.0 + 2.0 * rng.random(batch + (k,))
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


@st.composite
def _square(draw, kind="general", max_n=4):
    rng, batch, n = _rng(draw), _batch(draw), draw(st.integers(1, max_n), label="n")
    if kind == "spd":
        q = _orthogonal(rng, batch, n)
        a = (q * _separated(rng, batch, n, 0.5)[..., None, :]) @ np.swapaxes(q, -1, -2)
        a = a + 0.05 * rng.standard_normal(a.shape)  # not symmetric: the primitive reads the symmetric part
    elif kind == "sym":
        q = _orthogonal(rng, batch, n)
        a = (q * _separated(rng, batch, n, -2.0)[..., None, :]) @ np.swapaxes(q, -1, -2)
        a = a + 0.05 * rng.standard_normal(a.shape)
    elif kind == "small":
        a = 0.5 * rng.standard_normal(batch + (n, n))
    else:
        a = _conditioned(rng, batch, n, n)
    if draw(st.booleans(), label="float32") and kind != "small":
        return Sample((a.astype(np.float32),))
    return Sample((a,), diff=(0,))


register(core.linalg.cholesky_p, _square("spd"))
register(core.linalg.eigh_p, _square("sym"))
register(core.linalg.inv_p, _square())
register(core.linalg.det_p, _square())
register(core.linalg.slogdet_p, _square())
register(core.linalg.expm_p, _square("small"))


@st.composite
def _rect(draw, prim):
    rng, batch = _rng(draw), _batch(draw)
    m, n = draw(st.integers(1, 4), label="m"), draw(st.integers(1, 4), label="n")
    if prim == "svd":
        k = min(m, n)
        u = _orthogonal(rng, batch, m)[..., :k]
        v = _orthogonal(rng, batch, n)[..., :k]
        s = _separated(rng, batch, k, 0.5)[..., ::-1]
        a = (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)
        # full_matrices: the extra columns of U (rows of Vh) are not functions of A; only square then
        params = {"full_matrices": m == n and draw(st.booleans(), label="full_matrices")}
    elif prim == "qr":
        a = _conditioned(rng, batch, m, n)
        params = {"complete": m <= n and draw(st.booleans(), label="complete")}
    else:
        a = _conditioned(rng, batch, m, n)
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
    a = _conditioned(rng, ba, n, n)
    b = rng.standard_normal(bb + (n, k))
    if triangular:
        lower, unit = draw(st.booleans(), label="lower"), draw(st.booleans(), label="unit_diagonal")
        a = a + 3.0 * np.eye(n)  # the triangle alone is well-conditioned too
        return Sample((a, b), {"lower": lower, "unit_diagonal": unit}, diff=(0, 1))
    return Sample((a, b), diff=(0, 1))


register(core.linalg.triangular_solve_p, _solve(True))
register(core.linalg.solve_p, _solve(False))
