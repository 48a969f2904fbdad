"""core's layout composites against NumPy, and their derivatives and batching (they have no rules of
their own: these check that the primitives they are built from give the right ones)."""
import numpy as np
import pytest
import scipy.linalg

from mindtorch_v2 import core

RNG = np.random.default_rng(1)


def _eq(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(indexing):
    a, b, c = np.arange(3.0), np.arange(2.0), np.arange(4.0)
    for got, want in zip(core.meshgrid(a, b, c, indexing=indexing), np.meshgrid(a, b, c, indexing=indexing)):
        _eq(got, want)
    with pytest.raises(ValueError, match="indexing"):
        core.meshgrid(a, indexing="zz")


def test_rot90_matches_numpy_for_every_k_and_plane():
    x = RNG.normal(size=(2, 3, 4))
    for k in range(-5, 6):
        for axes in ((0, 1), (1, 2), (2, 0), (-1, -2)):
            _eq(core.rot90(x, k, axes), np.rot90(x, k, axes))
    with pytest.raises(ValueError, match="differ"):
        core.rot90(x, 1, (0, 0))


def test_diff_matches_numpy_with_prepend_append_and_bool():
    x = RNG.normal(size=(3, 5))
    for n in range(0, 7):
        for axis in (0, 1, -1):
            _eq(core.diff(x, n, axis), np.diff(x, n, axis))
    _eq(core.diff(x, 2, 1, prepend=1.5, append=x[:, :2]), np.diff(x, 2, 1, prepend=1.5, append=x[:, :2]))
    b = RNG.integers(0, 2, size=7).astype(bool)
    np.testing.assert_array_equal(core.diff(b), np.diff(b))


def test_repeat_matches_numpy_with_ints_counts_and_traced_counts():
    x = RNG.normal(size=(2, 3))
    _eq(core.repeat(x, 2), np.repeat(x, 2))
    _eq(core.repeat(x, 3, axis=1), np.repeat(x, 3, axis=1))
    _eq(core.repeat(x, [1, 0, 2], axis=1), np.repeat(x, [1, 0, 2], axis=1))
    _eq(core.repeat(x, core.asarray([1, 0, 2]), axis=1, total_repeat_length=3), np.repeat(x, [1, 0, 2], axis=1))
    # traced counts: the length must be given, as in jnp
    f = core.vmap(lambda r: core.repeat(core.asarray([10.0, 20.0]), r, total_repeat_length=3))
    _eq(f(core.asarray([[1, 2], [3, 0]])), [[10, 20, 20], [10, 10, 10]])
    with pytest.raises(TypeError, match="total_repeat_length"):
        core.vmap(lambda r: core.repeat(core.asarray([10.0, 20.0]), r))(core.asarray([[1, 2]]))
    g = core.grad(lambda v: core.sum(core.repeat(v, [2, 1, 0]) * core.arange(3.0)))(core.asarray([1.0, 1.0, 1.0]))
    _eq(g, [1.0, 2.0, 0.0])


def test_atleast_nd_match_numpy():
    for x in (np.float64(2.0), np.arange(3.0), np.ones((2, 3)), np.ones((2, 1, 3))):
        for fn, nfn in ((core.atleast_1d, np.atleast_1d), (core.atleast_2d, np.atleast_2d),
                        (core.atleast_3d, np.atleast_3d)):
            assert fn(np.asarray(x)).shape == nfn(x).shape


def test_joins_and_splits_match_numpy():
    a, b = RNG.normal(size=(3,)), RNG.normal(size=(3, 2))
    _eq(core.column_stack([a, b]), np.column_stack([a, b]))
    _eq(core.dstack([b, b]), np.dstack([b, b]))
    _eq(core.hstack([a, a]), np.hstack([a, a]))
    _eq(core.vstack([a, a]), np.vstack([a, a]))
    x = RNG.normal(size=(4, 6, 2))
    for spec in (1, 3, 5, [1, 3], [-2, 10], []):
        for got, want in zip(core.array_split(x, spec, 1), np.array_split(x, spec, 1)):
            _eq(got, want)
    for fn, nfn in ((core.hsplit, np.hsplit), (core.vsplit, np.vsplit), (core.dsplit, np.dsplit)):
        for got, want in zip(fn(x, 2), nfn(x, 2)):
            _eq(got, want)
    with pytest.raises(ValueError, match="equal"):
        core.split(x, 5, 1)
    parts = core.unstack(x, 1)
    assert len(parts) == 6 and parts[0].shape == (4, 2)


def test_block_diag_matches_scipy_layout():
    a, b, c = np.float64(2.0), RNG.normal(size=(3,)), RNG.normal(size=(2, 2))
    _eq(core.block_diag(np.asarray(a), b, c), scipy.linalg.block_diag(a, b, c))
    g = core.grad(lambda m: core.sum(core.block_diag(m, m) * 3.0))(core.asarray(c))
    _eq(g, np.full((2, 2), 6.0))


def test_index_grids_and_logspace_match_numpy():
    for n, k, m in ((3, 0, None), (3, 1, 5), (4, -2, 2), (0, 0, 3)):
        for fn, nfn in ((core.tril_indices, np.tril_indices), (core.triu_indices, np.triu_indices)):
            for got, want in zip(fn(n, k, m), nfn(n, k, m)):
                np.testing.assert_array_equal(got, want)
    _eq(core.logspace(0, 2, 5, dtype=core.float64), np.logspace(0, 2, 5))
    _eq(core.logspace(-1, 3, 4, endpoint=False, base=2.0, dtype=core.float64),
        np.logspace(-1, 3, 4, endpoint=False, base=2.0))
    assert core.logspace(0, 1, 3).dtype is core.float32


def test_cartesian_prod_and_combinations():
    a, b = np.array([1, 2]), np.array([3, 4, 5])
    np.testing.assert_array_equal(core.cartesian_prod(a, b), [[i, j] for i in a for j in b])
    np.testing.assert_array_equal(core.combinations(np.array([1, 2, 3]), 2), [[1, 2], [1, 3], [2, 3]])
    assert core.combinations(np.array([1, 2, 3]), 2, with_replacement=True).shape == (6, 2)
    assert core.combinations(np.array([1, 2, 3]), 4).shape == (0, 4)


def test_diagonal_diag_embed_and_diagonal_scatter_agree_with_numpy():
    x = RNG.normal(size=(3, 4, 5))
    for off in (-3, -1, 0, 2, 6):
        for a1, a2 in ((0, 1), (2, 0), (-1, 1)):
            d = np.diagonal(x, off, a1, a2)
            _eq(core.diagonal(x, off, a1, a2), d)
            src = RNG.normal(size=d.shape)
            got = np.asarray(core.diagonal_scatter(x, src, off, a1, a2))
            _eq(np.diagonal(got, off, a1, a2), src)
            changed = np.asarray(core.diagonal_scatter(np.zeros_like(x), np.ones_like(src), off, a1, a2)) != 0
            _eq(got[~changed], x[~changed])  # everything off the diagonal is x's
    v = RNG.normal(size=(2, 3))
    e = np.asarray(core.diag_embed(v, 1))
    assert e.shape == (2, 4, 4)
    _eq(np.diagonal(e, 1, -2, -1), v)
    assert np.count_nonzero(e) == np.count_nonzero(v)


def test_scatter_forms_are_linear_in_both_inputs():
    x = core.asarray(RNG.normal(size=(3, 4)))
    s = core.asarray(RNG.normal(size=(3,)))
    w = core.asarray(RNG.normal(size=(3, 4)))
    for f in (lambda x, s: core.diagonal_scatter(x, s, 0),
              lambda x, s: core.select_scatter(x, s, 1, 2),
              lambda x, s: core.slice_scatter(x, core.reshape(s, (3, 1)), 1, 1, 2)):
        gx, gs = core.grad(lambda x, s: core.sum(f(x, s) * w), (0, 1))(x, s)
        out = np.asarray(f(x, s))
        replaced = np.asarray(f(core.zeros((3, 4)), core.ones((3,)))) != 0
        _eq(gx, np.where(replaced, 0.0, np.asarray(w)))
        _eq(gs, np.asarray(w)[replaced])
        assert out.shape == (3, 4)
    with pytest.raises(ValueError, match="source shape"):
        core.select_scatter(x, core.zeros((4,)), 1, 0)
    with pytest.raises(IndexError, match="out of range"):
        core.select_scatter(x, s, 1, 4)


def test_index_put_and_masked_scatter_match_numpy():
    x = RNG.normal(size=(4, 3))
    rows, cols = np.array([0, 2, 0]), np.array([1, 1, 1])
    want = x.copy()
    np.add.at(want, (rows, cols), 1.0)
    _eq(core.index_put(x, (rows, cols), 1.0, accumulate=True), want)
    want = x.copy()
    want[np.array([1, 3])] = np.arange(3.0)
    _eq(core.index_put(x, (np.array([1, -1]),), np.arange(3.0)), want)
    mask = x > 0
    src = np.arange(12.0)
    want = x.copy()
    want[mask] = src[:mask.sum()]
    _eq(core.masked_scatter(x, mask, src), want)
    with pytest.raises(ValueError, match="fewer"):
        core.masked_scatter(x, np.ones((4, 3), bool), np.arange(3.0))
    with pytest.raises(IndexError, match="out of bounds"):
        core.index_put(x, (np.array([4]),), 1.0)
