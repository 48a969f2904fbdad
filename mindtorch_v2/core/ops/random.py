"""Random numbers with explicit keys, as in jax.random: `core.random`.

A key is an int64 array of shape (2,): the two 64-bit words (low, high; bit
patterns, so they may read as negative) of the 128-bit key of NumPy's
counter-based Philox4x64 generator. `key(seed)` holds `seed mod 2**128`, the
same 128 bits `np.random.Philox(key=seed)` uses. Every random primitive is a
pure function of its key and static params: the cpu lowering builds a fresh
Philox from the key, so the same key gives the same numbers whatever else ran
before, and different keys give independent streams.

Philox's 256-bit counter separates what a key is used for: samplers count from
word 3 = 0, `split` reads the block at word 3 = 1, `fold_in(key, d)` the block
at word 2 = d, word 3 = 2. So `split(k)` never replays the bits `uniform(k)`
drew. As in JAX, using one key for two samplers correlates them: split first.

    k = key(0)
    k1, k2 = split(k)
    x = normal(k1, (3,)); mask = bernoulli(k2, 0.9, (3,))

Keys are integers, so random ops have no derivative: under `grad` a sample is a
constant. Composites (bernoulli, permutation of an array, uniform bounds) still
pass derivatives through their non-key operands (a traced `p`, `minval`, `x`).
"""
import math
import operator

import numpy as np

from .. import dtypes as _dt
from .. import array as _array
from ..devices import device as _device
from ..primitive import Primitive
from . import _family
from ._family import all_front
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _ix
from .shape import stack

__all__ = [
    "key", "random_split_p", "split", "random_fold_in_p", "fold_in", "random_uniform_p", "uniform",
    "random_normal_p", "normal", "random_truncated_normal_p", "truncated_normal", "random_randint_p", "randint",
    "bernoulli", "random_permutation_p", "permutation",
]

_SAMPLE, _SPLIT, _FOLD_IN = 0, 1, 2   # Philox counter word 3: the counter domains
_MANTISSA_BITS = {"float16": 11, "float32": 24, "float64": 53, "bfloat16": 8, "float8_e4m3fn": 4, "float8_e5m2": 3}


def _philox(k, word2=0, domain=_SAMPLE):
    """The Philox bit generator for key buffer `k` (int64 (2,)) in one counter domain."""
    counter = np.array([0, 0, word2, domain], np.uint64)
    return np.random.Philox(key=k.astype(np.uint64), counter=counter)


_prod = _family.prod


# ---------------------------------------------------------------------------
# validation shared by the meta rules


def _check_key(name, k):
    if k.dtype is not _dt.int64:
        raise TypeError(f"{name}: key must be an int64 array of shape (2,) made by core.random.key, "
                        f"got a {k.dtype.name} array of shape {k.shape}")
    if k.shape != (2,):
        hint = ""
        if k.ndim >= 2 and k.shape[-1] == 2:
            hint = " (a batch of keys from split: pick one, e.g. k1, k2 = split(key))"
        raise ValueError(f"{name}: expected a single key of shape (2,), got shape {k.shape}{hint}")


def _check_shape(name, shape):
    if not isinstance(shape, tuple) or any(
            not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 0 for s in shape):
        raise ValueError(f"{name}: shape must be a tuple of non-negative ints, got {shape!r}")


def _check_dtype(name, dtype, category, what):
    if type(dtype) is not _dt.DType or dtype.category != category:
        got = getattr(dtype, "name", repr(dtype))
        raise TypeError(f"{name}: dtype must be {what}, got {got}")


def _sampler_meta(name, category, what):
    def meta(k, *, shape, dtype):
        _check_key(name, k)
        _check_shape(name, shape)
        _check_dtype(name, dtype, category, what)
        return shape, dtype
    return meta


# ---------------------------------------------------------------------------
# key, split, fold_in


def key(seed, device=None):
    """A key (int64 array of shape (2,)) holding `seed mod 2**128`."""
    seed = _index("key", "seed", seed)
    seed %= 1 << 128
    words = np.array([seed & (2**64 - 1), seed >> 64], np.uint64).view(np.int64)
    dev = _device(device) if device is not None else _array.cpu
    if dev.type == "meta":
        return _array.make(None, (2,), _dt.int64, dev)
    return _creation._const(words, _dt.int64, dev)


def _split_meta(k, *, num):
    _check_key("random_split", k)
    if not isinstance(num, (int, np.integer)) or isinstance(num, bool) or num < 0:
        raise ValueError(f"random_split: num must be a non-negative int, got {num!r}")
    return (num, 2), _dt.int64


def _per_key(prim):
    """Batched keys: each batch element draws from its own key (independent Philox streams, so the
    draws are one per key by nature); an unbatched key never reaches a rule and gives the same
    numbers to every element."""
    def rule(vals, bdims, **p):
        args, n = all_front(vals, bdims)
        outs = [prim.bind(*[a[i] for a in args], **p) for i in range(n)]
        return stack(outs, 0), 0
    return rule


random_split_p = Primitive("random_split", _split_meta)
random_split_p.def_impl("cpu")(
    lambda k, *, num: _philox(k, domain=_SPLIT).random_raw(2 * num).view(np.int64).reshape(num, 2))
random_split_p.batch = _per_key(random_split_p)


def split(key, num=2):
    """`num` new keys, as an array of shape (num, 2): `k1, k2 = split(key)`."""
    return random_split_p.bind(_key_operand("split", key), num=_index("split", "num", num))


def _fold_in_meta(k, data):
    _check_key("random_fold_in", k)
    if data.dtype.category != _dt.INT or data.shape != ():
        raise TypeError(f"random_fold_in: data must be an integer scalar, got a {data.dtype.name} "
                        f"array of shape {data.shape}")
    return (2,), _dt.int64


random_fold_in_p = Primitive("random_fold_in", _fold_in_meta)
random_fold_in_p.def_impl("cpu")(
    lambda k, data: _philox(k, word2=data.astype(np.uint64), domain=_FOLD_IN).random_raw(2).view(np.int64))
random_fold_in_p.batch = _per_key(random_fold_in_p)


def fold_in(key, data):
    """A new key derived from `key` and the integer `data` (taken mod 2**64), e.g. a step number."""
    key = _key_operand("fold_in", key)
    if isinstance(data, (int, np.integer)) and not isinstance(data, (bool, np.bool_)):
        data = (int(data) + 2**63) % 2**64 - 2**63   # the int64 with the same low 64 bits
        data = _family.scalar_array(data, _dt.int64, key.device)
    elif not _family.is_arraylike(data):
        raise TypeError(f"fold_in: data must be an int or an integer array, got {type(data).__name__}")
    return random_fold_in_p.bind(key, data)


# ---------------------------------------------------------------------------
# uniform: [0, 1) from the top mantissa bits of raw 64-bit draws (exact in every float
# dtype, never 1.0, unlike rounding a float64 draw to float16)


random_uniform_p = Primitive("random_uniform", _sampler_meta("random_uniform", _dt.FLOAT, "a floating-point dtype"))
random_uniform_p.batch = _per_key(random_uniform_p)


@random_uniform_p.def_impl("cpu")
def _uniform_cpu(k, *, shape, dtype):
    nbits = _MANTISSA_BITS[dtype.name]
    raw = _philox(k).random_raw(_prod(shape))
    u = (raw >> np.uint64(64 - nbits)).astype(np.float64) * (2.0 ** -nbits)
    return u.astype(dtype.np).reshape(shape)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform samples in [minval, maxval) (bounds may be arrays, traced included)."""
    key = _key_operand("uniform", key)
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    shape = _shape_arg("uniform", shape)
    numbers = _is_number(minval) and _is_number(maxval)
    if numbers and not (math.isfinite(minval) and math.isfinite(maxval) and minval < maxval):
        raise ValueError(f"uniform: need finite minval < maxval, got minval={minval}, maxval={maxval}")
    u = random_uniform_p.bind(key, shape=shape, dtype=dtype)
    if numbers and minval == 0 and maxval == 1:
        return u
    if numbers:  # rounding of lo + u * (hi - lo) may reach hi: clamp to keep the interval half-open
        below_hi = np.nextafter(np.asarray(maxval, dtype.np), np.asarray(-np.inf, dtype.np)).item()
        return _ew.minimum(_ew.add(_ew.mul(u, float(maxval - minval)), float(minval)), below_hi)
    lo, hi = (b if _is_number(b) else _ew.cast(_family.as_operand(b), dtype) for b in (minval, maxval))
    out = _ew.add(_ew.mul(u, _ew.sub(hi, lo)), lo)
    if out.shape != shape:
        raise ValueError(f"uniform: minval/maxval of shapes {_shape_of(lo)} and {_shape_of(hi)} "
                         f"do not broadcast to shape {shape}")
    return out


# ---------------------------------------------------------------------------
# normal


random_normal_p = Primitive("random_normal", _sampler_meta("random_normal", _dt.FLOAT, "a floating-point dtype"))
random_normal_p.batch = _per_key(random_normal_p)


@random_normal_p.def_impl("cpu")
def _normal_cpu(k, *, shape, dtype):
    gen = np.random.Generator(_philox(k))
    if dtype is _dt.float64:
        return gen.standard_normal(shape, dtype=np.float64)
    return gen.standard_normal(shape, dtype=np.float32).astype(dtype.np)


def normal(key, shape=(), dtype=None):
    """Standard normal samples; complex dtypes: real and imaginary parts each N(0, 1/2), so E|z|^2 = 1
    (as jax.random.normal and torch.randn)."""
    key = _key_operand("normal", key)
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    shape = _shape_arg("normal", shape)
    if dtype.category == _dt.COMPLEX:
        k_re, k_im = split(key)
        part = dtype.to_real()
        re, im = (_ew.mul(random_normal_p.bind(k, shape=shape, dtype=part), math.sqrt(0.5)) for k in (k_re, k_im))
        return _ew.complex_p.bind(re, im)
    return random_normal_p.bind(key, shape=shape, dtype=dtype)


# ---------------------------------------------------------------------------
# truncated normal: Robert (1995) rejection samplers, exact for any [lower, upper], far
# tails included; a primitive because core has no erfinv for the inverse-CDF composite


def _truncated_normal_meta(k, *, lower, upper, shape, dtype):
    _check_key("random_truncated_normal", k)
    _check_shape("random_truncated_normal", shape)
    _check_dtype("random_truncated_normal", dtype, _dt.FLOAT, "a floating-point dtype")
    if not lower < upper:
        raise ValueError(f"random_truncated_normal: need lower < upper, got lower={lower}, upper={upper}")
    return shape, dtype


random_truncated_normal_p = Primitive("random_truncated_normal", _truncated_normal_meta)
random_truncated_normal_p.batch = _per_key(random_truncated_normal_p)


@random_truncated_normal_p.def_impl("cpu")
def _truncated_normal_cpu(k, *, lower, upper, shape, dtype):
    gen = np.random.Generator(_philox(k))
    a, b, sign = float(lower), float(upper), 1.0
    if b <= 0:  # mirror an interval left of 0 to the right
        a, b, sign = -b, -a, -1.0
    n = _prod(shape)
    out = np.empty(n, np.float64)
    filled = 0
    while filled < n:
        m = max(2 * (n - filled), 16)
        if a <= 0 and b - a >= math.sqrt(2 * math.pi):   # wide interval around 0: plain rejection
            z = gen.standard_normal(m)
            z = z[(a <= z) & (z <= b)]
        elif a <= 0:                                        # narrow interval around 0: uniform proposal
            z = a + (b - a) * gen.random(m)
            z = z[gen.random(m) <= np.exp(-0.5 * z * z)]
        else:
            # Robert's optimal exponential rate alpha and his rule for when a uniform proposal
            # accepts more often; written to avoid a * a overflowing for far tails
            r = a + math.hypot(a, 2.0)
            alpha = 0.5 * r
            if b - a >= 2 / r * math.exp(0.5 - a / r):     # a tail: translated exponential proposal
                e = gen.standard_exponential(m) / alpha
                z = a + e
                z = z[(z <= b) & (gen.random(m) <= np.exp(-0.5 * (e - 2 / r) ** 2))]
            else:                                           # a short interval right of 0
                z = a + (b - a) * gen.random(m)
                z = z[gen.random(m) <= np.exp(-0.5 * (z - a) * (z + a))]
        take = min(len(z), n - filled)
        out[filled:filled + take] = z[:take]
        filled += take
    out = (sign * out).astype(dtype.np)
    lo, hi = np.asarray(lower, dtype.np), np.asarray(upper, dtype.np)
    return np.clip(out, lo, hi).reshape(shape)  # casting may round a sample just past a bound


def truncated_normal(key, lower=-2.0, upper=2.0, shape=(), dtype=None):
    """Standard normal samples conditioned on [lower, upper] (python numbers; +-inf allowed)."""
    key = _key_operand("truncated_normal", key)
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    if not (_is_number(lower) and _is_number(upper)):
        raise TypeError("truncated_normal: lower and upper must be python numbers")
    return random_truncated_normal_p.bind(key, lower=float(lower), upper=float(upper),
                                          shape=_shape_arg("truncated_normal", shape), dtype=dtype)


# ---------------------------------------------------------------------------
# randint


def _randint_meta(k, *, shape, minval, maxval, dtype):
    name = "random_randint"
    _check_key(name, k)
    _check_shape(name, shape)
    _check_dtype(name, dtype, _dt.INT, "an integer dtype")
    if not minval < maxval:
        raise ValueError(f"{name}: need minval < maxval, got minval={minval}, maxval={maxval}")
    info = np.iinfo(dtype.np)
    if minval < info.min or maxval - 1 > info.max:
        raise ValueError(f"{name}: range [{minval}, {maxval}) does not fit in {dtype.name}")
    return shape, dtype


random_randint_p = Primitive("random_randint", _randint_meta)
random_randint_p.def_impl("cpu")(
    lambda k, *, shape, minval, maxval, dtype: np.random.Generator(_philox(k)).integers(
        minval, maxval, size=shape, dtype=np.int64).astype(dtype.np))
random_randint_p.batch = _per_key(random_randint_p)


def randint(key, shape, minval, maxval, dtype=None):
    """Integers drawn uniformly from [minval, maxval) (python ints), default dtype int64."""
    key = _key_operand("randint", key)
    dtype = _dt.canonicalize(dtype) or _dt.int64
    return random_randint_p.bind(key, shape=_shape_arg("randint", shape), minval=_index("randint", "minval", minval),
                                 maxval=_index("randint", "maxval", maxval), dtype=dtype)


# ---------------------------------------------------------------------------
# bernoulli (composite: p enters only through `<`, so a traced p is fine)


def bernoulli(key, p=0.5, shape=None):
    """Bool samples that are True with probability p; shape defaults to p's shape."""
    key = _key_operand("bernoulli", key)
    p = _family.as_operand(p)
    if _family.is_arraylike(p):
        p_shape = p.shape
        dtype = p.dtype if p.dtype.category == _dt.FLOAT else _dt.default_float
    else:
        if not 0 <= p <= 1:
            raise ValueError(f"bernoulli: p must be in [0, 1], got {p}")
        p_shape, dtype = (), _dt.default_float
    shape = p_shape if shape is None else _shape_arg("bernoulli", shape)
    if len(p_shape) > len(shape) or any(d != 1 and d != s for d, s in zip(p_shape[::-1], shape[::-1])):
        raise ValueError(f"bernoulli: p of shape {p_shape} does not broadcast to shape {shape}")
    return _ew.lt(random_uniform_p.bind(key, shape=shape, dtype=dtype), p)


# ---------------------------------------------------------------------------
# permutation: a primitive, because argsort of random floats has ties (float32 keys collide
# among a few thousand items) that a stable sort would break by index, biasing the result


def _permutation_meta(k, *, n):
    _check_key("random_permutation", k)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"random_permutation: n must be a non-negative int, got {n!r}")
    return (n,), _dt.int64


random_permutation_p = Primitive("random_permutation", _permutation_meta)
random_permutation_p.def_impl("cpu")(lambda k, *, n: np.random.Generator(_philox(k)).permutation(n))
random_permutation_p.batch = _per_key(random_permutation_p)


def permutation(key, x, axis=0):
    """A random permutation of range(x) for an int x, else x shuffled along `axis`."""
    key = _key_operand("permutation", key)
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return random_permutation_p.bind(key, n=int(x))
    x = _family.as_operand(x)
    if not _family.is_arraylike(x) or x.ndim == 0:
        raise TypeError("permutation: x must be an int or an array with at least one dimension")
    axis = _family.normalize_axis(axis, x.ndim, "permutation")
    return _ix.take(x, random_permutation_p.bind(key, n=x.shape[axis]), axis=axis)


# ---------------------------------------------------------------------------
# argument helpers


def _key_operand(name, k):
    if _family.is_arraylike(k):
        return k
    if isinstance(k, np.ndarray):
        return _family.asarray(k)
    raise TypeError(f"{name}: expected a key array made by core.random.key(seed), got {type(k).__name__}")


def _index(name, what, v):
    try:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int, got {type(v).__name__}") from None


def _shape_arg(name, shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(_index(name, "shape entries", s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a sequence of ints, got {shape!r}") from None


def _is_number(v):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _shape_of(v):
    return v.shape if _family.is_arraylike(v) else ()
