"""torch's random numbers, drawn as PyTorch's CPU generator draws them.

After `torch.manual_seed(s)`, rand / randn / randint / randperm / normal_ / uniform_ / bernoulli / dropout give
PyTorch's numbers, so a seeded script reproduces a PyTorch run. Two parts, both copied from ATen's CPU code:

- the engine: mt19937 seeded as ATen seeds it (the seed's low 32 bits through init_genrand). NumPy's MT19937
  bit generator runs the same recurrence and tempering, so it is the engine here; its state is always set
  by this module, never by NumPy's own seeding. `random()` is one 32-bit word, `random64()` two (first word
  high). `get_state()` is ATen's CPUGeneratorImplState byte layout (5056 bytes), so states round-trip with
  PyTorch's `torch.get_rng_state()` and checkpoints.
- the transforms, one per ATen kernel, with its bit widths and its order of float operations: a float
  uniform keeps 24 bits of a word (half 11, bfloat16 8), a double 53 bits of random64; randint is a word (or
  random64 for ranges of 2**32 and more) modulo the range; randperm is Fisher-Yates with `random() % (n - i)`;
  randn of 16 or more contiguous elements is Box-Muller over blocks of 16 uniforms (the float32 block copies
  the AVX2 kernel's polynomial log and sincos), fewer is the scalar Box-Muller that caches its second sample
  in the generator; bernoulli with a scalar p and dropout masks compare a 53-bit uniform with p.

Draws run on the host in NumPy, vectorized (randperm's swaps are the one sequential loop). Meta tensors draw
nothing and leave the generator alone. Inside torch.func.vmap with randomness "same" or "different" the draws
come from core's explicit keys (vmap_randomness), as the batching needs one key per example.
"""
import contextlib
import math
import os
import struct
import weakref
import threading

import numpy as np

from .. import core
from ..core import dtypes as _dt
from .creation import _dev, _finish, _size
from .inplace import _zero_gradient_to
from .declare import tensor_method
from .tensor import Tensor
from .writeback import apply

__all__ = [
    "Generator", "bernoulli", "default_generator", "get_rng_state", "initial_seed", "manual_seed", "multinomial",
    "normal", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm", "seed",
    "set_rng_state",
]

_MT_N = 624
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState): the legacy THGenerator pod + the float normal cache
_DEFAULT_SEED = 67280421310721  # ATen's default_rng_seed_val
_U64 = np.uint64
_M32 = _U64(0xFFFFFFFF)


def _init_genrand(seed):
    """mt19937's 624-word state for `seed` (its low 32 bits), as ATen's mt19937(seed) and init_genrand."""
    key = np.empty(_MT_N, dtype=np.uint32)
    x = seed & 0xFFFFFFFF
    key[0] = x
    for j in range(1, _MT_N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        key[j] = x
    return key


def _seed_value(seed):
    """A seed as ATen's uint64: negative ints wrap, as torch.manual_seed(-1) does; other types are int()ed."""
    seed = int(seed)
    if seed < -2 ** 63 or seed >= 2 ** 64:
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


_events = [0]  # draws, seeds and state changes of any Generator so far (torch.compile's trace checks this)
_generators = weakref.WeakSet()  # every live Generator (a trace puts back the state of each)


def rng_events():
    """How many times any Generator has drawn, been seeded or had its state set (a trace that sees this
    change would replay one draw, or lose a reseed: torch.compile breaks the graph there)."""
    return _events[0]


def generator_states():
    """The state of every live Generator, for restore_generators (a torch.compile trace that drew runs
    again eagerly, from the same states)."""
    return [(g, g._mt.state, g._seed, g._fresh, g._normal, g._normal_float) for g in list(_generators)]


def restore_generators(states):
    for g, mt, seed, fresh, normal, normal_float in states:
        g._mt.state = mt
        g._seed, g._fresh, g._normal, g._normal_float = seed, fresh, normal, normal_float


class Generator:
    """torch.Generator: PyTorch's CPU generator (mt19937 and a cached normal sample)."""

    def __init__(self, device="cpu"):
        self.device = core.device(device)
        self._mt = np.random.MT19937()
        self.manual_seed(_DEFAULT_SEED)
        _generators.add(self)

    def manual_seed(self, seed):
        """Seed the engine (and drop the cached normal sample); returns the generator."""
        self._seed = _seed_value(seed)
        self._set_engine(_init_genrand(self._seed), _MT_N)
        self._fresh = True  # ATen keeps next_ = 0 until the first twist; only get_state can tell
        self._normal = None  # the second Box-Muller sample of normal_distribution<double>
        self._normal_float = None  # ATen's float cache: no CPU kernel fills it, kept for the state bytes
        return self

    def seed(self):
        """Seed from the OS entropy source; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def _set_engine(self, key, pos):
        _events[0] += 1
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    # the two draws of ATen's CPUGeneratorImpl, n at a time
    def _random(self, n):
        """n words of random(): uint64 values below 2**32."""
        if n:
            self._fresh = False
            _events[0] += 1
        return self._mt.random_raw(n)

    def _random64(self, n):
        """n values of random64(): two words each, the first the high half."""
        w = self._random(2 * n).reshape(n, 2)
        return (w[:, 0] << _U64(32)) | w[:, 1]

    def get_state(self):
        """The state as a uint8 tensor in ATen's CPUGeneratorImplState layout (torch.get_rng_state's bytes)."""
        _note_state(self)
        st = self._mt.state["state"]
        pos = int(st["pos"])
        if pos >= _MT_N:  # a twist is due on the next draw: ATen's left_ == 1
            left, nxt = 1, (0 if self._fresh else _MT_N)
        else:
            left, nxt = _MT_N + 1 - pos, pos
        buf = bytearray(_STATE_BYTES)
        struct.pack_into("<QiiQ", buf, 0, self._seed, left, 1, nxt)
        buf[24:24 + 8 * _MT_N] = np.asarray(st["key"], dtype="<u8").tobytes()
        if self._normal is not None:
            struct.pack_into("<d", buf, 5024, self._normal)  # normal_y
            struct.pack_into("<i", buf, 5040, 1)  # normal_is_valid
        if self._normal_float is not None:
            struct.pack_into("<f?", buf, 5048, self._normal_float, True)
        return Tensor._from_value(core.asarray(np.frombuffer(bytes(buf), dtype=np.uint8)))

    def set_state(self, new_state):
        """Restore a state from get_state (ours or PyTorch's); returns the generator."""
        _note_state(self)
        if not isinstance(new_state, Tensor) or new_state.dtype is not _dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(np.asarray(new_state.detach()).reshape(-1)).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {len(raw)}")
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", raw, 0)
        nxt &= 0xFFFFFFFF
        if not (seeded and 0 < left <= _MT_N and nxt <= _MT_N):
            raise RuntimeError("Invalid mt19937 state")
        if raw == np.asarray(self.get_state()._value()).tobytes():
            return self  # (the state it has: no change, none counted: a checkpoint's recompute with no draw)
        key = np.frombuffer(raw, dtype="<u8", count=_MT_N, offset=24).astype(np.uint32)
        self._set_engine(key, _MT_N if left == 1 else nxt)
        self._seed = seed
        self._fresh = left == 1 and nxt == 0
        (normal_y,), (valid,) = struct.unpack_from("<d", raw, 5024), struct.unpack_from("<i", raw, 5040)
        self._normal = normal_y if valid else None
        f, fvalid = struct.unpack_from("<f?", raw, 5048)
        self._normal_float = f if fvalid else None
        return self

    def next_key(self):
        """A core random key made from one random64 draw (for code that needs explicit keys, e.g. vmap)."""
        return core.random.key(int(self._random64(1)[0]) >> 1)

    def __repr__(self):
        return "<torch._C.Generator object>"


default_generator = Generator()
default_generator.seed()  # PyTorch seeds its default CPU generator nondeterministically at start


def manual_seed(seed):
    """Seed the global generator (returns it)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the global generator nondeterministically; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The global generator's state (a uint8 tensor, PyTorch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the global generator from a get_rng_state() tensor (ours or PyTorch's)."""
    default_generator.set_state(new_state)


# ---------------------------------------------------------------------------
# the transforms of ATen's CPU kernels (TransformationHelper.h, DistributionsHelper.h,
# native/cpu/DistributionTemplates.h): NumPy arrays out, in the order ATen fills memory

_F32 = np.float32
_DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
# float8 has no random kernel in PyTorch; here it is drawn in float32 and rounded, as half is
_FLOATING = frozenset(_DIGITS) | {"float8_e4m3fn", "float8_e5m2"}


def _fma32(a, b, c):
    """float32 a * b + c rounded once, as the FMA the kernels are compiled to (the float64 sum is exact
    but for a rounding that lands on a float32 tie, about once in 2**29)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(_F32)


def _two_product(a, b):
    """a * b as p + e exactly (Dekker's split; no overflow for the magnitudes drawn here)."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split - (a * split - a)
    bh = b * split - (b * split - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma64(a, b, c):
    """float64 a * b + c with one rounding, as the FMA the kernels are compiled to: the exact product and sum
    by error-free transforms (off only when that last addition rounds differently, very rarely)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    p, e = _two_product(a, b)
    s = p + c
    bp = s - p
    t = (p - (s - bp)) + (c - bp)  # TwoSum: p + c == s + t exactly
    return s + (t + e)


def _libm(fn, x):
    """fn (math.log, cos, sin) per element: ATen's double kernels call glibc, whose results NumPy's SIMD
    versions miss by an ulp in about 1 case in 600; this keeps PyTorch's bits at ~0.1 s per million."""
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


def _uniform_bits(g, n, dtype):
    """uniform_real_distribution(0, 1)'s x: the low 53 bits of random64() for double, else the low 24 bits of
    random() (half and bfloat16 draw in float, rounded when stored), scaled to [0, 1)."""
    if dtype is _dt.float64:
        return (g._random64(n) & _U64(2 ** 53 - 1)).astype(np.float64) * 2.0 ** -53
    return (g._random(n) & _U64(2 ** 24 - 1)).astype(_F32) * _F32(2.0 ** -24)


def _uniform(g, n, dtype, low=0.0, high=1.0):
    """uniform_(low, high): x * (to - from) + from, fused, in double for double and in float (from and to as
    floats) otherwise, rounded to the dtype; a value that rounds up to `to` becomes `from`, so the range stays
    [from, to)."""
    if dtype.category == _dt.COMPLEX:  # the real view filled
        real = _dt.float64 if dtype is _dt.complex128 else _dt.float32
        return _uniform(g, 2 * n, real, low, high).view(dtype.np)
    x = _uniform_bits(g, n, dtype)
    if dtype is _dt.float64:
        out = _fma64(x, high - low, low)
    else:
        lo, hi = _F32(low), _F32(high)
        out = _fma32(x, hi - lo, lo).astype(dtype.np)
    lo, hi = np.asarray(low, dtype.np), np.asarray(high, dtype.np)
    return np.where(out == hi, lo, out)


# float32 Box-Muller over blocks of 16 (normal_fill_16_AVX2): log256_ps and sincos256_ps of avx_mathfun.h,
# Cephes polynomials in single precision, with the multiply-adds the compiler fuses

_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)


def _log256(x):
    x = np.maximum(x, np.array(0x00800000, np.int32).view(_F32))  # no denormals
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    x = ((bits & ~0x7F800000) | np.array(0.5, _F32).view(np.int32)).view(_F32)  # mantissa in [0.5, 1)
    small = x < _F32(0.707106781186547524)
    x = (x - _F32(1)) + np.where(small, x, _F32(0))
    e = e - small.astype(_F32)
    z = x * x
    y = np.full_like(x, _F32(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = _fma32(y, x, _F32(p))
    y = _fma32(y * x, z, e * _F32(-2.12194440e-4))
    y = _fma32(-z, _F32(0.5), y)
    return _fma32(e, _F32(0.693359375), x + y)


def _sincos256(x):
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)  # truncation, as cvttps
    j = (j + 1) & ~1
    y = j.astype(_F32)
    sign_sin ^= (j & 4) != 0
    sign_cos = (~(j - 2) & 4) != 0
    first = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):  # extended-precision x mod pi/4
        x = _fma32(y, _F32(dp), x)
    z = x * x
    yc = _fma32(_F32(2.443315711809948E-005), z, _F32(-1.388731625493765E-003))
    yc = _fma32(yc, z, _F32(4.166664568298827E-002))
    yc = _fma32(yc * z, z, -(z * _F32(0.5))) + _F32(1)
    ys = _fma32(_F32(-1.9515295891E-4), z, _F32(8.3321608736E-3))
    ys = _fma32(ys, z, _F32(-1.6666654611E-1))
    ys = _fma32(ys * z, x, x)
    s, c = np.where(first, ys, yc), np.where(first, yc, ys)
    return np.where(sign_sin, -s, s), np.where(sign_cos, -c, c)


def _fill16_float32(u, mean, std):
    u1, u2 = _F32(1) - u[:, :8], u[:, 8:]
    radius = np.sqrt(_F32(-2) * _log256(u1))
    s, c = _sincos256(_F32(2.0 * math.pi) * u2)
    mean, std = _F32(mean), _F32(std)
    return np.concatenate([_fma32(radius * c, std, mean), _fma32(radius * s, std, mean)], axis=1)


def _fill16_double(u, mean, std):
    """normal_fill_16<double>: libm's log, cos and sin in double precision."""
    u1, u2 = 1.0 - u[:, :8], u[:, 8:]
    radius = np.sqrt(-2.0 * _libm(math.log, u1))
    theta = 2.0 * math.pi * u2
    return np.concatenate([_fma64(radius * _libm(math.cos, theta), std, mean),
                           _fma64(radius * _libm(math.sin, theta), std, mean)], axis=1)


def _normal_fill(g, n, dtype, mean, std):
    """normal_fill: n >= 16 uniforms, Box-Muller per block of 16 (u[j] and u[j + 8] pair up); when n is not a
    multiple of 16 the last 16 values are drawn again and recomputed as one block. Half and bfloat16 are
    filled in float32 and rounded (PyTorch's tail block differs for them: see _normal)."""
    double = dtype is _dt.float64
    fill = (lambda u: _fill16_double(u, float(mean), float(std))) if double else \
        (lambda u: _fill16_float32(u, mean, std))
    u = _uniform_bits(g, n, _dt.float64 if double else _dt.float32)
    whole = n // 16 * 16
    out = np.empty(n, dtype=np.float64 if double else _F32)
    out[:whole] = fill(u[:whole].reshape(-1, 16)).reshape(-1)
    if n % 16:
        out[n - 16:] = fill(_uniform_bits(g, 16, _dt.float64 if double else _dt.float32).reshape(1, 16)).reshape(-1)
    return out.astype(dtype.np)


def _normal_scalar(g, n, mean, std):
    """normal_distribution<double>, one element at a time: a Box-Muller pair from two 53-bit uniforms gives
    r cos(theta) now and caches r sin(theta) in the generator for the next call (of any size)."""
    out = np.empty(n, dtype=np.float64)
    start = 0
    if n and g._normal is not None:
        out[0], g._normal, start = g._normal, None, 1
        _events[0] += 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = _uniform_bits(g, 2 * pairs, _dt.float64).reshape(pairs, 2)
        r = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
        theta = 2.0 * math.pi * u[:, 0]
        both = np.stack([r * _libm(math.cos, theta), r * _libm(math.sin, theta)], axis=1).reshape(-1)
        out[start:] = both[:n - start]
        if (n - start) % 2:
            g._normal = float(both[-1])
    return _fma64(out, std, mean)


def _normal(g, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """normal_(mean, std) of n elements: the block fill for 16 or more contiguous elements, else scalar. A
    complex tensor is filled as its real view with std / sqrt(2) (unit variance overall), as ATen does."""
    if dtype.category == _dt.COMPLEX:
        real = _dt.float64 if dtype is _dt.complex128 else _dt.float32
        return _normal(g, 2 * n, real, mean, std / math.sqrt(2), contiguous).view(dtype.np)
    if n >= 16 and contiguous:
        return _normal_fill(g, n, dtype, mean, std)
    return _normal_scalar(g, n, mean, std).astype(dtype.np)


def _bernoulli_scalar(g, n, p):
    """bernoulli_(p) for a number p: a 53-bit uniform < p per element (bernoulli_distribution<double>)."""
    return _uniform_bits(g, n, _dt.float64) < p


def _checked_probs(p, shape):
    """bernoulli's tensor probabilities as NumPy, broadcast to shape, after ATen's range check."""
    values = p.detach()
    # (a value traced by grad or jvp: its concrete primal, as .tolist() gives; under vmap the key path draws)
    values = np.asarray(values.tolist(), dtype=p.dtype.np) if isinstance(p._value(), core.Tracer) else np.asarray(values)
    probs = np.broadcast_to(values, shape)
    if ((probs < 0) | (probs > 1)).any():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    return probs


def _bernoulli_tensor(g, probs):
    """bernoulli_(p) for a tensor p: a uniform of p's precision (53 bits for double, else 24) < p."""
    if probs.dtype == np.float64:
        return _uniform_bits(g, probs.size, _dt.float64).reshape(probs.shape) < probs
    return _uniform_bits(g, probs.size, _dt.float32).reshape(probs.shape) < probs.astype(_F32)


_NARROW_INT = {"bool_", "uint8", "int8", "int16", "int32"}


def _random_from_to(g, n, dtype, low, range_):
    """random_(low, low + range): random() % range + low, or random64() for ranges of 2**32 and more (on
    int64, double, float and bfloat16 tensors; narrower types always take one word)."""
    wide = range_ >= 2 ** 32 and dtype.name in ("int64", "float64", "float32", "bfloat16")
    v = g._random64(n) if wide else g._random(n)
    r = (v % _U64(range_)).astype(np.int64) if range_ < 2 ** 63 else (v % _U64(range_)).view(np.int64)
    return (r + np.int64(low)).astype(dtype.np)


def _random_default(g, n, dtype):
    """random_() without bounds: [0, 2**digits] for floating dtypes, [0, max] for integers, a bit for bool."""
    name = dtype.name
    if name in ("int64", "float64"):
        v = g._random64(n)
    else:
        v = g._random(n)
    if name == "bool_":
        return (v & _U64(1)).astype(bool)
    if name in _DIGITS:
        return (v % _U64(2 ** _DIGITS[name] + 1)).astype(np.int64).astype(dtype.np)
    return (v % _U64(int(np.iinfo(dtype.np).max) + 1)).astype(dtype.np)


def _randperm(g, n):
    """randperm(n): Fisher-Yates from the front, swapping i with i + random() % (n - i) (ATen's randperm_cpu
    for n below 2**32 / 20; above, the inside-out shuffle with random64() % (i + 1))."""
    if n < 2 ** 32 // 20:
        z = (g._random(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=_U64)).tolist()
        perm = list(range(n))
        for i, zi in enumerate(z):
            j = i + zi
            perm[i], perm[j] = perm[j], perm[i]
        return np.asarray(perm, dtype=np.int64)
    z = (g._random64(n) % np.arange(1, n + 1, dtype=_U64)).tolist()
    perm = [0] * n
    for i, zi in enumerate(z):
        perm[i] = perm[zi]
        perm[zi] = i
    return np.asarray(perm, dtype=np.int64)


def _exponential(g, n, dtype, lambd):
    """exponential_(lambd): -1 / lambd * log1p(-u) with a 53-bit uniform u (exponential_distribution<double>)."""
    u = _uniform_bits(g, n, _dt.float64)
    return (-1.0 / lambd * _libm(math.log1p, -u)).astype(dtype.np)


# ---------------------------------------------------------------------------
# drawing into a value: the global (or given) generator on the host; core keys inside vmap; nothing on meta

_vmap_rng = threading.local()


@contextlib.contextmanager
def vmap_randomness(mode, key):
    """Inside torch.func.vmap: random draws use `key` (batched for "different"), or raise ("error")."""
    stack = _vmap_rng.__dict__.setdefault("stack", [])
    stack.append([mode, key])
    try:
        yield
    finally:
        stack.pop()


_traced_rng = threading.local()  # entry: [key, used] while torch.compile traces (traced_randomness)


@contextlib.contextmanager
def traced_randomness(key):
    """While torch.compile traces: draws from the default generator split `key` (a traced input of the program,
    a fresh key from the default generator each call) instead of advancing the generator, so a compiled step
    with dropout draws anew every call. As PyTorch's compiled random ops, the numbers are not eager's stream.
    Yields [key, used, state]: whether any draw took a key, and whether the code read or set the default
    generator's state (fork_rng, a checkpoint's preserve_rng_state: with draws too, it needs eager's stream).
    Explicit generators are not covered: their draws advance them, which the trace sees as a graph break."""
    prev = getattr(_traced_rng, "entry", None)
    entry = _traced_rng.entry = [key, False, False]  # key, used, the default generator's state read or set
    try:
        yield entry
    finally:
        _traced_rng.entry = prev


def _note_state(generator):
    entry = getattr(_traced_rng, "entry", None)
    if entry is not None and generator is default_generator:
        entry[2] = True


def _traced_key(generator):
    """The next key of the compile trace's randomness, for a draw from the default generator; else None."""
    entry = getattr(_traced_rng, "entry", None)
    if entry is None or (generator is not None and generator is not default_generator):
        return None
    entry[0], k = core.random.split(entry[0])
    entry[1] = True
    return k


def _transform_key(generator):
    """The key a draw takes inside vmap (its randomness) or a torch.compile trace (for the default generator),
    else None: the generator draws."""
    k = _vmap_key()
    return _traced_key(generator) if k is None else k


def _vmap_key():
    """The next key of the innermost vmap's randomness, or None outside vmap."""
    stack = getattr(_vmap_rng, "stack", None)
    if not stack:
        return None
    entry = stack[-1]
    if entry[0] == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                           "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                           "operation out of vmap")
    entry[1], k = core.random.split(entry[1])
    return k


def _check_generator(generator):
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator or default_generator


def _draw(shape, dtype, device, generator, host, keyed):
    """The value of a random op: host(generator, n) -> NumPy (ATen's stream), keyed(key) under vmap, zeros on
    meta (a shape only; the generator does not advance)."""
    k = _transform_key(generator)
    if k is not None:
        return keyed(k)
    g = _check_generator(generator)
    device = core.device(_dev(device) or core.cpu)
    if device.type == "meta":
        return core.full(shape, 0, dtype=dtype, device=device)
    n = math.prod(shape)
    value = core.asarray(np.asarray(host(g, n)).reshape(shape), dtype=dtype)
    return value if device is core.cpu else core.to_device(value, device)


def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    dtype = _float_dtype(dtype, "check_uniform_bounds")
    shape = _size(shape, size, "rand")
    value = _draw(shape, dtype, device, generator, lambda g, n: _uniform(g, n, dtype),
                  lambda k: core.random.uniform(k, shape, dtype=dtype))
    return _finish(value, requires_grad)


def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    dtype = _float_dtype(dtype, "normal_kernel_cpu")
    shape = _size(shape, size, "randn")
    value = _draw(shape, dtype, device, generator, lambda g, n: _normal(g, n, dtype),
                  lambda k: core.random.normal(k, shape, dtype=dtype))
    return _finish(value, requires_grad)


def _float_dtype(dtype, op):
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    if dtype.name not in _FLOATING and dtype.category != _dt.COMPLEX:
        raise RuntimeError(f"\"{op}\" not implemented for '{_torch_name(dtype)}'")
    return dtype


_TORCH_TYPE_NAMES = {"bool_": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                     "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                     "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_C_TYPE_NAMES = {"bool_": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short",
                 "int32": "int", "int64": "long", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "float32": "float", "float64": "double"}


def _torch_name(dtype):
    return _TORCH_TYPE_NAMES.get(dtype.name, dtype.name)


def _from_to(dtype, low, high):
    """ATen's checks of random_(from, to) (and randint): returns (from, range)."""
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    name = dtype.name
    if name in _DIGITS:
        limit = 2 ** _DIGITS[name]
        if low < -limit or low > limit:
            raise RuntimeError(f"from is out of bounds for {_C_TYPE_NAMES[name]}")
        if high - 1 < -limit or high - 1 > limit:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE_NAMES[name]}")
    elif name in _C_TYPE_NAMES:
        info = (0, 1) if name == "bool_" else (int(np.iinfo(dtype.np).min), int(np.iinfo(dtype.np).max))
        if not info[0] <= low <= info[1]:
            raise RuntimeError(f"from is out of bounds for {_C_TYPE_NAMES[name]}")
        if not info[0] <= high - 1 <= info[1]:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE_NAMES[name]}")
    else:
        raise RuntimeError(f"\"random_from_to_kernel_cpu\" not implemented for '{_torch_name(dtype)}'")
    return low, high - low


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None, requires_grad=False,
            out=None):
    """randint(high, size), randint(low, high, size), or the same by keyword: random_(low, high) on a new tensor."""
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif args:
        raise TypeError(f"randint() takes at most 3 positional arguments ({len(args) + 1} given)")
    if high is None or size is None:
        raise TypeError("randint() missing required arguments: 'high' and 'size'")
    low = 0 if low is None else low
    dtype = _dt.canonicalize(dtype) or _dt.int64
    shape = _size((size,), op="randint")
    base, range_ = _from_to(dtype, low, high)
    draw = _dt.int64 if dtype.category != _dt.INT else dtype
    value = _draw(shape, dtype, device, generator, lambda g, n: _random_from_to(g, n, dtype, base, range_),
                  lambda k: core.cast(core.random.randint(k, shape, base, base + range_, dtype=draw), dtype))
    return _finish(value, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtype = _dt.canonicalize(dtype) or _dt.int64
    if dtype.name in _DIGITS and n > 2 ** _DIGITS[dtype.name] + 1:
        raise RuntimeError(f"n cannot be greater than 2^{_DIGITS[dtype.name]}+1 for {_C_TYPE_NAMES[dtype.name]} "
                           f"type.")
    value = _draw((n,), dtype, device, generator, lambda g, m: _randperm(g, m).astype(dtype.np),
                  lambda k: core.cast(core.random.permutation(k, n), dtype))
    return _finish(value, requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input, low, high=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                   requires_grad=requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """torch.normal: numbers with `size`, or tensors broadcast together (a standard draw, times std, plus mean,
    as ATen's normal_out does)."""
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not m_t and not s_t:
        if size is None:
            raise TypeError("normal() missing required argument 'size' when mean and std are numbers")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        t = _new_random(size, dtype, device)
        return _finish(t.normal_(mean, std, generator=generator)._value(), requires_grad)
    if s_t and not isinstance(std._value(), core.Tracer) and bool((std < 0).any()):  # (traced: not checkable)
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not s_t and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    ref = mean if m_t else std
    shape = core.broadcast_shapes(*[tuple(x.shape) for x in (mean, std) if isinstance(x, Tensor)])
    draw = randn(tuple(shape), generator=generator, dtype=ref.dtype, device=ref.device) if s_t else \
        _new_random(shape, ref.dtype, ref.device).normal_(0.0, std, generator=generator)
    tracked = [x for x in (mean, std) if isinstance(x, Tensor) and x.requires_grad]
    if not tracked:
        return draw * std + mean if s_t else draw + mean
    from .grad_mode import no_grad  # noqa: PLC0415
    with no_grad():
        value = draw * std + mean if s_t else draw + mean
    # PyTorch's normal has zero gradients for mean and std (not the reparameterized ones)
    return _zero_gradient_to(value, *tracked)


def _new_random(size, dtype, device):
    from .creation import empty
    return empty(_size((size,) if isinstance(size, int) else (tuple(size),)), dtype=dtype, device=device)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws with probabilities `input` (or the number p), in input's dtype."""
    from .creation import empty_like
    return empty_like(input).bernoulli_(input if p is None else p, generator=generator)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the rows of `input` (non-negative weights): with replacement, ATen's binary search of
    a 53-bit uniform in the normalized cumulative sum; without (or one sample), the top-k of p / q with
    q ~ Exp(1) from exponential_."""
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if isinstance(input._value(), core.Tracer):  # (traced weights under vmap or torch.compile: the trace's key)
        if input.dtype.category != _dt.FLOAT:
            raise RuntimeError("multinomial only supports floating-point dtypes for input")
        if num_samples <= 0:
            raise RuntimeError("cannot sample n_sample <= 0 samples")
        if not replacement and num_samples > input.shape[-1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        k = _transform_key(generator)
        if k is not None:
            return Tensor._from_value(_keyed_multinomial(k, input._value(), num_samples, replacement))
    probs = np.asarray(input.detach())
    if probs.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input")
    rows = probs.reshape(-1, probs.shape[-1])
    n_cat = rows.shape[1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if (rows < 0).any() or not np.isfinite(rows).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _check_generator(generator)
    if not replacement or num_samples == 1:
        q = _exponential(g, rows.size, input.dtype, 1.0).reshape(rows.shape)
        with np.errstate(divide="ignore"):
            score = (rows / q).astype(rows.dtype)
        if num_samples == 1:
            res = np.argmax(score, axis=1)[:, None]
        else:
            res = np.argsort(-score, axis=1, kind="stable")[:, :num_samples]
    else:
        acc = np.float64 if rows.dtype == np.float64 else _F32
        cum = np.cumsum(rows.astype(acc), axis=1, dtype=acc)
        cum = cum / cum[:, -1:]
        cum[:, -1] = 1
        u = _uniform_bits(g, rows.shape[0] * num_samples, _dt.float64).reshape(rows.shape[0], num_samples)
        res = np.stack([np.searchsorted(c.astype(np.float64), uu, side="right") for c, uu in zip(cum, u)])
        res = np.minimum(res, n_cat - 1)
    res = np.asarray(res, dtype=np.int64).reshape(probs.shape[:-1] + (num_samples,))
    return Tensor._from_value(core.asarray(res))


def _keyed_multinomial(key, p, n, replacement):
    """multinomial's draw from a key, in core ops (the same methods as the host's: the top n of p / q with
    q ~ Exp(1) without replacement or for one sample, else an inverse-CDF search of uniforms); int64 indices.
    Weights are not checked here (traced): PyTorch's compiled multinomial does not check them either."""
    shape = tuple(p.shape)
    if not replacement or n == 1:
        q = core.neg(core.log1p(core.neg(core.random.uniform(key, shape, dtype=p.dtype))))
        score = core.div(p, q)
        idx = core.expand_dims(core.argmax(score, axis=-1), -1) if n == 1 else core.topk(score, n)[1]
    else:
        cum = core.cumsum(p, axis=-1)
        cum = core.div(cum, core.static_slice(cum, (slice(None),) * (len(shape) - 1) + (slice(-1, None),)))
        u = core.random.uniform(key, shape[:-1] + (n,), dtype=p.dtype)
        idx = core.minimum(core.searchsorted(cum, u, side="right"), shape[-1] - 1)
    return core.cast(idx, _dt.int64)


# ---------------------------------------------------------------------------
# in-place random fills: ATen's kernels fill memory in order, so a non-contiguous tensor's numbers are drawn
# in the order of its strides, then written back like any in-place op


def _memory_order(self):
    """The permutation of self's dims from the largest stride to the smallest (the order ATen fills)."""
    strides = self.stride()
    dims = [d for d in range(self.ndim)]
    return tuple(sorted(dims, key=lambda d: (-strides[d] if self.shape[d] != 1 else 0, d)))


def _fill(self, name, host, keyed, generator=None):
    """Write a draw into self: host(g, n, contiguous) gives the numbers in memory order."""
    shape = tuple(self.shape)

    def compute():
        k = _transform_key(generator)
        if k is not None:
            return keyed(k, shape)
        if self.device.type == "meta":
            return core.full(shape, 0, dtype=self.dtype, device=self.device)
        g = _check_generator(generator)
        order = _memory_order(self)
        contiguous = self.is_contiguous()
        data = np.asarray(host(g, math.prod(shape), contiguous)).reshape([shape[d] for d in order])
        value = core.asarray(np.transpose(data, np.argsort(order)), dtype=self.dtype)
        return value if self.device is core.cpu else core.to_device(value, self.device)
    return apply(self, compute, name)


def _check_float_tensor(self, kernel):
    if self.dtype.name not in _FLOATING and self.dtype.category != _dt.COMPLEX:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_torch_name(self.dtype)}'")


@tensor_method
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with numbers from [a, b)."""
    _check_float_tensor(self, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    dtype = self.dtype
    return _fill(self, "uniform_", lambda g, n, c: _uniform(g, n, dtype, a, b),
                 lambda k, shape: core.random.uniform(k, shape, dtype=dtype, minval=a, maxval=b), generator)


@tensor_method
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal numbers of the given mean and standard deviation."""
    _check_float_tensor(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    dtype = self.dtype
    return _fill(self, "normal_", lambda g, n, c: _normal(g, n, dtype, mean, std, c),
                 lambda k, shape: core.add(core.mul(core.random.normal(k, shape, dtype=dtype), std), mean),
                 generator)


@tensor_method
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability p (a number, or a tensor broadcast to self), else 0."""
    if isinstance(p, Tensor):
        if p.dtype.category != _dt.FLOAT:
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_torch_name(p.dtype)}'")
        pv = p._value()
        # probabilities traced by torch.compile or vmap: drawn from the trace's key (checked when concrete)
        probs = None if isinstance(pv, core.Tracer) else _checked_probs(p, tuple(self.shape))

        def host(g, n, c):
            probs_now = probs if probs is not None else _checked_probs(p, tuple(self.shape))
            return _bernoulli_tensor(g, np.ascontiguousarray(np.transpose(probs_now, _memory_order(self))))
        return _fill(self, "bernoulli_", host,
                     lambda k, shape: core.cast(core.lt(core.random.uniform(k, shape), pv), self.dtype), generator)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(self, "bernoulli_", lambda g, n, c: _bernoulli_scalar(g, n, p),
                 lambda k, shape: core.cast(core.lt(core.random.uniform(k, shape), p), self.dtype), generator)


@tensor_method
def random_(self, low=0, high=None, *, generator=None):
    """Integers in [low, high); random_(to) is [0, to); random_() is [0, 2**mantissa] for floating dtypes and
    [0, max] for integers."""
    dtype = self.dtype
    if high is None and low == 0 and not isinstance(low, bool):
        host = lambda g, n, c: _random_default(g, n, dtype)  # noqa: E731
        lo, hi = 0, (2 if dtype is _dt.bool_ else (2 ** _DIGITS[dtype.name] + 1 if dtype.name in _DIGITS
                                                    else int(np.iinfo(dtype.np).max) + 1))
    else:
        if high is None:
            low, high = 0, low
        base, range_ = _from_to(dtype, low, high)
        host = lambda g, n, c: _random_from_to(g, n, dtype, base, range_)  # noqa: E731
        lo, hi = base, base + range_
    draw = _dt.int64 if dtype.category != _dt.INT else dtype
    return _fill(self, "random_", host,
                 lambda k, shape: core.cast(core.random.randint(k, shape, lo, min(hi, 2 ** 63 - 1), dtype=draw),
                                            dtype), generator)


@tensor_method
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential numbers of rate lambd."""
    _check_float_tensor(self, "exponential_cpu")
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    dtype = self.dtype
    return _fill(self, "exponential_", lambda g, n, c: _exponential(g, n, dtype, lambd),
                 lambda k, shape: core.div(core.neg(core.log1p(core.neg(core.random.uniform(k, shape, dtype=dtype)))),
                                           lambd), generator)


@tensor_method("bernoulli")
def _bernoulli_method(self, p=None, generator=None):
    return bernoulli(self, p, generator=generator)
