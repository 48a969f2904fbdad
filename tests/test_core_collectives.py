"""Core collectives under vmap(axis_name=...): values against NumPy, VJPs against central differences of the
sum over ranks (the convention of psum's transpose), JVP against VJP, nesting with another named axis, meta
shapes, and the unbound-axis error. The MPI side (spmd == vmap) is in tests/test_distributed.py."""
import numpy as np
import pytest

from mindtorch_v2 import core

N = 3
rng = np.random.default_rng(0)
XS = rng.standard_normal((N, 6, 2))
PERM = ((0, 1), (1, 2), (2, 0))

CASES = {
    "psum": (lambda x: core.psum(x, "i"), lambda xs: np.broadcast_to(xs.sum(0), xs.shape)),
    "pmean": (lambda x: core.pmean(x, "i"), lambda xs: np.broadcast_to(xs.mean(0), xs.shape)),
    "pmax": (lambda x: core.pmax(x, "i"), lambda xs: np.broadcast_to(xs.max(0), xs.shape)),
    "pmin": (lambda x: core.pmin(x, "i"), lambda xs: np.broadcast_to(xs.min(0), xs.shape)),
    "all_gather": (lambda x: core.all_gather(x, "i", axis=1),
                   lambda xs: np.broadcast_to(np.stack(list(xs), 1), (N,) + (6, N, 2))),
    "all_gather_tiled": (lambda x: core.all_gather(x, "i", axis=0, tiled=True),
                         lambda xs: np.broadcast_to(xs.reshape(N * 6, 2), (N, N * 6, 2))),
    "psum_scatter": (lambda x: core.psum_scatter(x, "i", scatter_dimension=0, tiled=True),
                     lambda xs: xs.sum(0).reshape(N, 2, 2)),
    "all_to_all_untiled": (lambda x: core.all_to_all(x[:N], "i", 0, 1),  # x[:N]: one row per rank, to a new axis 1
                           lambda xs: np.stack([np.stack([xs[s, r] for s in range(N)], 1) for r in range(N)])),
    "all_to_all": (lambda x: core.all_to_all(x, "i", 0, 1, tiled=True),
                   lambda xs: np.stack([np.concatenate([xs[s, 2 * r:2 * r + 2] for s in range(N)], 1)
                                        for r in range(N)])),
    "ppermute": (lambda x: core.ppermute(x, "i", PERM), lambda xs: xs[[2, 0, 1]]),
    "ppermute_partial": (lambda x: core.ppermute(x, "i", ((0, 1),)),
                         lambda xs: np.stack([np.zeros_like(xs[0]), xs[0], np.zeros_like(xs[0])])),
    "axis_index": (lambda x: core.axis_index("i") * x, lambda xs: xs * np.arange(N)[:, None, None]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_under_vmap_matches_numpy(name):
    f, ref = CASES[name]
    got = np.asarray(core.vmap(f, axis_name="i")(core.asarray(XS)))
    np.testing.assert_allclose(got, ref(XS), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"pmax", "pmin"}) + ["pmax", "pmin"])
def test_vjp_matches_central_differences_of_the_sum_over_ranks(name):
    f, _ = CASES[name]
    w = rng.standard_normal(np.asarray(core.vmap(f, axis_name="i")(core.asarray(XS))).shape[1:])

    def per_rank(x):
        return core.sum(core.tanh(f(x)) * core.asarray(w))

    total = lambda xs: float(np.sum(np.asarray(core.vmap(per_rank, axis_name="i")(core.asarray(xs)))))  # noqa: E731
    g = np.asarray(core.vmap(core.grad(per_rank), axis_name="i")(core.asarray(XS)))
    v = rng.standard_normal(XS.shape)
    eps = 1e-6
    fd = (total(XS + eps * v) - total(XS - eps * v)) / (2 * eps)
    assert abs(fd - np.sum(g * v)) < 1e-6 * max(1.0, abs(fd))
    # JVP agrees with the VJP: <J v, 1> summed over ranks
    _, t = core.jvp(lambda xs: core.vmap(per_rank, axis_name="i")(xs), (core.asarray(XS),), (core.asarray(v),))
    assert abs(float(np.sum(np.asarray(t))) - np.sum(g * v)) < 1e-9 * max(1.0, abs(fd))


def test_collectives_over_an_outer_axis_inside_an_inner_vmap():
    xs = rng.standard_normal((2, 3, 4))  # outer axis "i" (2), inner axis "j" (3)
    f = lambda x: core.psum(x, "i") * 10 + core.psum(x, "j")  # noqa: E731
    got = np.asarray(core.vmap(core.vmap(f, axis_name="j"), axis_name="i")(core.asarray(xs)))
    ref = xs.sum(0, keepdims=True) * 10 + xs.sum(1, keepdims=True)
    np.testing.assert_allclose(got, np.broadcast_to(ref, xs.shape), rtol=1e-12)
    g = core.vmap(core.vmap(lambda x: core.all_gather(x, "i", axis=0), axis_name="j"), axis_name="i")(
        core.asarray(xs))
    np.testing.assert_allclose(np.asarray(g)[1, 2], xs[:, 2])


def test_unbatched_values_enter_the_named_axis():
    out = core.vmap(lambda x: core.psum(core.ones(()), "i") + 0 * x, axis_name="i")(core.asarray(XS))
    assert np.all(np.asarray(out) == N)


def test_meta_rule_gives_shapes_and_clear_errors():
    xs = core.zeros((N, 4, 2), device="meta")
    out = core.vmap(lambda x: core.all_gather(x, "i", axis=1, tiled=True), axis_name="i")(xs)
    assert out.shape == (N, 4, 2 * N) and out.device.type == "meta"
    with pytest.raises(ValueError, match="psum_scatter: dimension 0 of shape"):
        core.vmap(lambda x: core.psum_scatter(x, "i", tiled=True), axis_name="i")(core.zeros((N, 4, 2)))
    with pytest.raises(ValueError, match="ppermute: perm"):
        core.vmap(lambda x: core.ppermute(x, "i", ((0, 5),)), axis_name="i")(core.asarray(XS))


def test_an_unbound_axis_name_raises_NameError():
    with pytest.raises(NameError, match="psum: unbound axis name: 'k'"):
        core.psum(core.asarray(XS), "k")
    with pytest.raises(NameError, match="unbound axis name"):
        core.vmap(lambda x: core.pmax(x, "k"), axis_name="i")(core.asarray(XS))
