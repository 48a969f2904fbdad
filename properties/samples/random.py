"""Samples for the random family (core/ops/random.py).

Random primitives take a key (int64, shape (2,)) and static params; keys are
integers, so no derivative checks (diff=(), smooth=False). Keys are drawn over
the whole int64 range, since a key's words are arbitrary 64-bit patterns.
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mindtorch_v2.core import dtypes as dt, random

from . import Sample, register

_INT64 = st.integers(-2**63, 2**63 - 1)
keys = st.tuples(_INT64, _INT64).map(lambda w: np.array(w, np.int64))
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
float_dtypes = st.sampled_from([dt.float16, dt.float32, dt.float64])
int_dtypes = st.sampled_from([dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64])


def _register(prim, strategy):
    register(prim, strategy, key=True)


def _sample(k, **params):
    return Sample(args=(k,), params=params, diff=(), smooth=False)


_register(random.random_split_p, st.builds(lambda k, n: _sample(k, num=n), keys, st.integers(0, 5)))

_register(random.random_fold_in_p, st.builds(
    lambda k, d: Sample(args=(k, np.array(d, np.int64)), diff=(), smooth=False), keys, _INT64))

_register(random.random_uniform_p, st.builds(lambda k, s, d: _sample(k, shape=s, dtype=d), keys, shapes, float_dtypes))

_register(random.random_normal_p, st.builds(lambda k, s, d: _sample(k, shape=s, dtype=d), keys, shapes, float_dtypes))


@st.composite
def _truncated_normal(draw):
    bounds = st.one_of(st.floats(-6, 6), st.just(float("inf")), st.just(float("-inf")))
    lower, upper = sorted(draw(st.lists(bounds, min_size=2, max_size=2, unique=True)))
    return _sample(draw(keys), lower=lower, upper=upper, shape=draw(shapes), dtype=draw(float_dtypes))


_register(random.random_truncated_normal_p, _truncated_normal())


@st.composite
def _randint(draw):
    dtype = draw(int_dtypes)
    info = np.iinfo(dtype.np)
    lo = draw(st.integers(int(info.min), int(info.max)))
    hi = draw(st.integers(lo + 1, int(info.max) + 1))
    return _sample(draw(keys), shape=draw(shapes), minval=lo, maxval=hi, dtype=dtype)


_register(random.random_randint_p, _randint())

_register(random.random_permutation_p, st.builds(lambda k, n: _sample(k, n=n), keys, st.integers(0, 10)))
