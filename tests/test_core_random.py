"""core.random: explicit-key, counter-based random numbers (jax.random style)."""
import math

import numpy as np
import pytest

from mindtorch_v2 import core

random = core.random

N = 10_000


def arr(x):
    return np.asarray(x)


# ---------------------------------------------------------------------------
# keys


def test_key_is_an_int64_pair_holding_the_seed_mod_2_128():
    k = random.key(0)
    assert (k.shape, k.dtype) == ((2,), core.int64)
    assert arr(random.key(5)).tolist() == [5, 0]
    assert arr(random.key(2**64 + 3)).tolist() == [3, 1]
    assert arr(random.key(-1)).tolist() == [-1, -1]
    assert arr(random.key(np.int32(7))).tolist() == [7, 0]


def test_key_bits_are_numpy_philox_bits():
    # uniform float64 takes the top 53 bits of Philox(key=seed)'s raw stream
    raw = np.random.Philox(key=12345).random_raw(4)
    expected = (raw >> np.uint64(11)).astype(np.float64) * 2.0**-53
    np.testing.assert_array_equal(arr(random.uniform(random.key(12345), (4,), core.float64)), expected)


def test_key_rejects_non_int_seeds():
    with pytest.raises(TypeError, match="seed must be an int"):
        random.key(1.5)
    with pytest.raises(TypeError, match="seed must be an int"):
        random.key(True)
    with pytest.raises(TypeError, match="seed must be an int"):
        random.key("0")


# ---------------------------------------------------------------------------
# determinism


def test_same_key_gives_the_same_numbers():
    k = random.key(42)
    np.testing.assert_array_equal(arr(random.normal(k, (5,))), arr(random.normal(k, (5,))))
    again = random.randint(random.key(42), (5,), 0, 100)
    np.testing.assert_array_equal(arr(random.randint(k, (5,), 0, 100)), arr(again))


def test_numbers_do_not_depend_on_call_order_or_other_calls():
    k1, k2 = random.split(random.key(3))
    a1 = arr(random.uniform(k1, (8,)))
    b1 = arr(random.normal(k2, (8,)))
    random.uniform(random.key(99), (1000,))  # unrelated work in between
    b2 = arr(random.normal(k2, (8,)))
    a2 = arr(random.uniform(k1, (8,)))
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)


def test_different_seeds_give_different_numbers():
    assert not np.array_equal(arr(random.uniform(random.key(0), (4,))), arr(random.uniform(random.key(1), (4,))))


def test_shape_is_an_int_a_tuple_or_empty():
    k = random.key(7)
    assert random.normal(k, (2, 3)).shape == (2, 3)
    assert random.normal(k, 4).shape == (4,)
    assert random.normal(k).shape == ()


# ---------------------------------------------------------------------------
# split and fold_in


def test_split_returns_distinct_keys_that_unpack():
    k = random.key(0)
    ks = random.split(k, 5)
    assert (ks.shape, ks.dtype) == ((5, 2), core.int64)
    rows = {tuple(r) for r in arr(ks).tolist()}
    assert len(rows) == 5 and tuple(arr(k).tolist()) not in rows
    k1, k2 = random.split(k)
    assert (k1.shape, k1.dtype) == ((2,), core.int64)
    np.testing.assert_array_equal(arr(random.split(k)), arr(random.split(k)))


def test_split_keys_give_distinct_uncorrelated_streams():
    k1, k2 = random.split(random.key(0))
    a, b = arr(random.normal(k1, (N,))), arr(random.normal(k2, (N,)))
    assert not np.array_equal(a, b)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05
    parent = arr(random.normal(random.key(0), (N,)))
    assert abs(np.corrcoef(a, parent)[0, 1]) < 0.05


def test_split_num_zero_and_bad_num():
    assert random.split(random.key(0), 0).shape == (0, 2)
    with pytest.raises(ValueError, match="num must be a non-negative int"):
        random.split(random.key(0), -1)
    with pytest.raises(TypeError, match="num must be an int"):
        random.split(random.key(0), 2.0)


def test_fold_in_is_deterministic_and_separates_data():
    k = random.key(1)
    a = arr(random.fold_in(k, 0))
    np.testing.assert_array_equal(a, arr(random.fold_in(k, 0)))
    keys = {tuple(arr(random.fold_in(k, d)).tolist()) for d in range(20)}
    assert len(keys) == 20 and tuple(arr(k).tolist()) not in keys
    # data is taken mod 2**64, as an int or a 0-d integer array
    np.testing.assert_array_equal(arr(random.fold_in(k, -1)), arr(random.fold_in(k, 2**64 - 1)))
    np.testing.assert_array_equal(arr(random.fold_in(k, core.asarray(7))), arr(random.fold_in(k, 7)))
    np.testing.assert_array_equal(arr(random.fold_in(k, core.asarray(7, dtype=core.int32))), arr(random.fold_in(k, 7)))
    # fold_in and split draw from different counter domains
    assert tuple(a.tolist()) not in {tuple(r) for r in arr(random.split(k, 4)).tolist()}


def test_fold_in_rejects_float_data():
    with pytest.raises(TypeError, match="data must be an integer scalar"):
        random.fold_in(random.key(0), core.asarray(1.0))
    with pytest.raises(TypeError, match="data must be an int"):
        random.fold_in(random.key(0), 1.5)


# ---------------------------------------------------------------------------
# uniform


@pytest.mark.parametrize("dtype", [core.float16, core.float32, core.float64])
def test_uniform_is_in_unit_interval_with_uniform_moments(dtype):
    u = random.uniform(random.key(0), (N,), dtype)
    assert u.dtype is dtype
    x = arr(u).astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1 / 12) < 0.005


def test_uniform_bounds():
    x = arr(random.uniform(random.key(1), (N,), minval=-3.0, maxval=5.0))
    assert x.min() >= -3.0 and x.max() < 5.0
    assert abs(x.mean() - 1.0) < 0.1
    # a narrow interval where rounding lo + u * (hi - lo) can reach hi stays half-open
    x = arr(random.uniform(random.key(1), (N,), core.float16, minval=1.0, maxval=1.001))
    assert x.min() >= 1.0 and x.max() < np.float16(1.001)


def test_uniform_with_array_bounds_broadcasts_and_is_differentiable():
    k = random.key(2)
    lo = core.asarray([0.0, 10.0])
    x = arr(random.uniform(k, (3, 2), minval=lo, maxval=20.0))
    assert x.shape == (3, 2) and (x[:, 1] >= 10).all() and (x < 20).all()
    u = arr(random.uniform(k, (3, 2)))
    g = core.grad(lambda lo: core.sum(random.uniform(k, (3, 2), minval=lo, maxval=20.0)))(lo)
    np.testing.assert_allclose(arr(g), (1 - u).sum(0), rtol=1e-5)
    with pytest.raises(ValueError, match="do not broadcast to shape"):
        random.uniform(k, (2,), minval=core.zeros((3, 2)), maxval=1.0)


def test_uniform_rejects_bad_bounds_and_dtypes():
    k = random.key(0)
    with pytest.raises(ValueError, match="minval < maxval"):
        random.uniform(k, (2,), minval=1.0, maxval=1.0)
    with pytest.raises(ValueError, match="finite"):
        random.uniform(k, (2,), minval=0.0, maxval=float("inf"))
    with pytest.raises(TypeError, match="random_uniform: dtype must be a floating-point dtype, got int32"):
        random.uniform(k, (2,), core.int32)


def test_uniform_is_a_constant_under_grad_and_jvp():
    k = random.key(5)
    u = arr(random.uniform(k, (3,)))
    x = core.asarray([1.0, 2.0, 3.0])
    g = core.grad(lambda x: core.sum(x * random.uniform(k, (3,))))(x)
    np.testing.assert_allclose(arr(g), u)
    out, t = core.jvp(lambda x: core.sum(x * random.uniform(k, (3,))), (x,), (core.ones((3,)),))
    np.testing.assert_allclose(float(t), u.sum(), rtol=1e-6)


# ---------------------------------------------------------------------------
# normal and truncated normal


@pytest.mark.parametrize("dtype", [core.float16, core.float32, core.float64])
def test_normal_moments(dtype):
    z = random.normal(random.key(11), (N,), dtype)
    assert z.dtype is dtype
    x = arr(z).astype(np.float64)
    assert abs(x.mean()) < 0.04
    assert abs(x.std() - 1.0) < 0.03
    assert abs(np.mean(x > 1.0) - 0.1587) < 0.015


def test_normal_rejects_integer_dtype():
    with pytest.raises(TypeError, match="random_normal: dtype must be a floating-point dtype, got int64"):
        random.normal(random.key(0), (2,), core.int64)


def _truncated_mean(a, b):
    phi = lambda x: 0.0 if math.isinf(x) else math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    mass = 0.5 * (math.erfc(a / math.sqrt(2)) - math.erfc(b / math.sqrt(2)))  # no cancellation in right tails
    return (phi(a) - phi(b)) / mass


@pytest.mark.parametrize("a, b", [(-2.0, 2.0), (-0.5, 0.3), (1.0, 2.0), (3.0, math.inf), (-math.inf, -4.0),
                                  (8.0, 8.5), (-math.inf, math.inf), (-math.inf, 0.5)])
def test_truncated_normal_stays_in_bounds_with_the_right_mean(a, b):
    x = arr(random.truncated_normal(random.key(4), a, b, (N,), core.float64))
    assert x.min() >= a and x.max() <= b
    assert abs(x.mean() - _truncated_mean(a, b)) < 0.03


def test_truncated_normal_defaults_and_errors():
    z = random.truncated_normal(random.key(0), shape=(N,))
    assert z.dtype is core.float32 and -2 <= arr(z).min() and arr(z).max() <= 2
    assert abs(arr(z).std() - 0.8796) < 0.03
    with pytest.raises(ValueError, match="lower < upper"):
        random.truncated_normal(random.key(0), 1.0, 1.0)
    with pytest.raises(TypeError, match="python numbers"):
        random.truncated_normal(random.key(0), core.asarray(0.0), 1.0)


# ---------------------------------------------------------------------------
# randint


def test_randint_range_and_coverage():
    x = random.randint(random.key(0), (N,), -3, 7)
    assert (x.shape, x.dtype) == ((N,), core.int64)
    assert set(arr(x).tolist()) == set(range(-3, 7))


@pytest.mark.parametrize("dtype", [core.uint8, core.int8, core.int16, core.int32, core.int64])
def test_randint_dtypes_and_full_ranges(dtype):
    info = np.iinfo(dtype.np)
    x = random.randint(random.key(1), (1000,), int(info.min), int(info.max) + 1, dtype)
    assert x.dtype is dtype
    assert arr(x).min() < 0 if info.min < 0 else True


def test_randint_errors():
    k = random.key(0)
    with pytest.raises(ValueError, match="minval < maxval"):
        random.randint(k, (2,), 5, 5)
    with pytest.raises(ValueError, match=r"does not fit in uint8"):
        random.randint(k, (2,), 0, 257, core.uint8)
    with pytest.raises(TypeError, match="random_randint: dtype must be an integer dtype, got float32"):
        random.randint(k, (2,), 0, 3, core.float32)
    with pytest.raises(TypeError, match="random_randint: dtype must be an integer dtype, got bool_"):
        random.randint(k, (2,), 0, 2, core.bool_)
    with pytest.raises(TypeError, match="minval must be an int"):
        random.randint(k, (2,), 0.5, 3)


# ---------------------------------------------------------------------------
# bernoulli


def test_bernoulli_rate_dtype_and_extremes():
    k = random.key(8)
    b = random.bernoulli(k, 0.3, (N,))
    assert b.dtype is core.bool_ and b.shape == (N,)
    assert abs(arr(b).mean() - 0.3) < 0.015
    assert not arr(random.bernoulli(k, 0.0, (100,))).any()
    assert arr(random.bernoulli(k, 1.0, (100,))).all()
    assert random.bernoulli(k).shape == ()


def test_bernoulli_with_array_p_uses_its_shape_and_broadcasts():
    k = random.key(9)
    p = core.asarray([0.1, 0.9])
    assert random.bernoulli(k, p).shape == (2,)
    b = arr(random.bernoulli(k, p, (N, 2)))
    assert abs(b[:, 0].mean() - 0.1) < 0.02 and abs(b[:, 1].mean() - 0.9) < 0.02
    with pytest.raises(ValueError, match=r"p of shape \(2,\) does not broadcast to shape \(3,\)"):
        random.bernoulli(k, p, (3,))
    with pytest.raises(ValueError, match="does not broadcast to shape"):
        random.bernoulli(k, core.zeros((2, 1)), (2,))


def test_bernoulli_with_traced_p_under_grad():
    k = random.key(10)
    p = core.asarray([0.2, 0.5, 0.9], dtype=core.float64)
    mask = arr(random.bernoulli(k, p))
    g = core.grad(lambda p: core.sum(core.where(random.bernoulli(k, p), p, 0.0)))(p)
    np.testing.assert_array_equal(arr(g), mask.astype(np.float64))


def test_bernoulli_rejects_p_outside_unit_interval():
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        random.bernoulli(random.key(0), 1.5)


# ---------------------------------------------------------------------------
# permutation


def test_permutation_of_n_is_a_permutation():
    p = random.permutation(random.key(0), 100)
    assert (p.shape, p.dtype) == ((100,), core.int64)
    assert sorted(arr(p).tolist()) == list(range(100))
    assert arr(p).tolist() != list(range(100))
    assert random.permutation(random.key(0), 0).shape == (0,)


def test_permutation_of_an_array_shuffles_along_axis():
    x = np.arange(12.0).reshape(4, 3)
    k = random.key(1)
    rows = arr(random.permutation(k, core.asarray(x)))
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    perm = arr(random.permutation(k, 4))
    np.testing.assert_array_equal(rows, x[perm])
    cols = arr(random.permutation(random.key(2), core.asarray(x), axis=1))
    assert sorted(map(tuple, cols.T.tolist())) == sorted(map(tuple, x.T.tolist()))


def test_permutation_passes_gradients_to_the_array():
    k = random.key(3)
    x = core.asarray(np.arange(6.0).reshape(3, 2))
    first = int(arr(random.permutation(k, 3))[0])
    g = arr(core.grad(lambda x: core.sum(random.permutation(k, x)[0]))(x))
    expected = np.zeros((3, 2))
    expected[first] = 1
    np.testing.assert_array_equal(g, expected)


def test_permutation_rejects_scalars():
    with pytest.raises(TypeError, match="at least one dimension"):
        random.permutation(random.key(0), core.asarray(3.0))


# ---------------------------------------------------------------------------
# bad keys and shapes, on every op


OPS = {
    "split": lambda k: random.split(k),
    "fold_in": lambda k: random.fold_in(k, 1),
    "uniform": lambda k: random.uniform(k, (2,)),
    "normal": lambda k: random.normal(k, (2,)),
    "truncated_normal": lambda k: random.truncated_normal(k, -1.0, 1.0, (2,)),
    "randint": lambda k: random.randint(k, (2,), 0, 5),
    "bernoulli": lambda k: random.bernoulli(k, 0.5, (2,)),
    "permutation": lambda k: random.permutation(k, 3),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_bad_key_dtype_is_a_type_error(op):
    with pytest.raises(TypeError, match=r"key must be an int64 array of shape \(2,\).*got a float32"):
        OPS[op](core.asarray([0.0, 1.0]))


@pytest.mark.parametrize("op", sorted(OPS))
def test_bad_key_shape_is_a_value_error(op):
    with pytest.raises(ValueError, match=r"expected a single key of shape \(2,\), got shape \(3,\)"):
        OPS[op](core.asarray([0, 1, 2]))


def test_a_batch_of_keys_gets_a_hint():
    with pytest.raises(ValueError, match=r"got shape \(3, 2\).*batch of keys from split"):
        random.normal(random.split(random.key(0), 3), (2,))


def test_a_plain_int_is_not_a_key():
    with pytest.raises(TypeError, match=r"expected a key array made by core.random.key"):
        random.uniform(0, (2,))


def test_a_numpy_key_is_accepted():
    np.testing.assert_array_equal(arr(random.uniform(np.array([5, 0]), (3,))), arr(random.uniform(random.key(5), (3,))))


def test_bad_shapes():
    k = random.key(0)
    with pytest.raises(ValueError, match=r"shape must be a tuple of non-negative ints, got \(2, -1\)"):
        random.normal(k, (2, -1))
    with pytest.raises(TypeError, match="shape must be an int or a sequence of ints"):
        random.normal(k, (2.5,))
    with pytest.raises(TypeError, match="hashable"):
        random.random_uniform_p.bind(k, shape=[2], dtype=core.float32)  # lists are not static params


# ---------------------------------------------------------------------------
# meta device, registry, namespace


def test_every_op_runs_on_meta_with_the_cpu_shapes():
    cpu_key, meta_key = random.key(0), random.key(0, device="meta")
    assert meta_key.device is core.meta
    for name, op in OPS.items():
        c, m = op(cpu_key), op(meta_key)
        assert m.device is core.meta, name
        assert (m.shape, m.dtype) == (c.shape, c.dtype), name
    m = random.permutation(meta_key, core.zeros((5, 2), device="meta"))
    assert (m.shape, m.device) == ((5, 2), core.meta)
    k1, k2 = random.split(meta_key)
    assert k1.shape == (2,) and k1.device is core.meta


def test_meta_rules_raise_on_meta_too():
    meta_key = random.key(0, device="meta")
    with pytest.raises(TypeError, match="floating-point dtype"):
        random.normal(meta_key, (2,), core.int64)
    with pytest.raises(ValueError, match="minval < maxval"):
        random.randint(meta_key, (2,), 3, 1)


def test_random_primitives_are_registered_without_derivatives():
    prims = {n: p for n, p in core.primitives().items() if n.startswith("random_")}
    assert set(prims) == {"random_split", "random_fold_in", "random_uniform", "random_normal",
                          "random_truncated_normal", "random_randint", "random_permutation"}
    assert all(p.vjp is None for p in prims.values())
    assert set(prims.values()) <= {v for v in vars(core.random).values() if isinstance(v, core.Primitive)}


@pytest.mark.xfail(not hasattr(core, "random"), strict=True,
                   reason="core/__init__.py needs `from .ops import random` to expose core.random")
def test_core_random_is_the_module():
    assert core.random is random
    assert arr(core.random.key(0)).tolist() == [0, 0]
