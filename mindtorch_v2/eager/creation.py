"""torch.tensor, zeros, ones, ..., and the random constructors on a global generator."""
import contextlib
import threading

import numpy as np
import threadpoolctl

from .. import core
from ..core import dtypes as _dt
from . import memory_format as _mf
from .declare import tensor_method
from .writeback import apply
from .storage import UntypedStorage
from .tensor import Size, Tensor

__all__ = [
    "get_default_dtype", "set_default_dtype", "Generator", "arange", "asarray", "as_tensor", "bernoulli", "default_generator",
    "empty", "empty_like", "eye", "frombuffer", "from_numpy", "full", "full_like", "initial_seed", "linspace", "manual_seed",
    "multinomial", "normal", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like", "randn",
    "randn_like", "randperm", "seed", "tensor", "zeros", "zeros_like", "layout", "strided",
    "get_default_device", "set_default_device", "get_num_threads", "set_num_threads", "get_num_interop_threads",
    "set_num_interop_threads",
]


def _size(size, size_kw=None):
    """The shape from f(2, 3), f((2, 3)) or f(size=(2, 3))."""
    if size_kw is not None:
        size = (size_kw,)
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    return size


def _finish(value, requires_grad):
    t = Tensor._from_value(value)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying `data` (nested lists, numbers, numpy arrays or tensors)."""
    device = _dev(device)
    if isinstance(data, Tensor):
        value = data.detach()._value()
        value = core.asarray(value, dtype=dtype, device=device)
        return _finish(core.copy(value), requires_grad)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _nested_to_numpy(data)
    if isinstance(data, np.ndarray) and data.dtype == np.float64 and dtype is None:
        dtype = _dt.float64
    return _finish(core.asarray(data, dtype=dtype, device=device), requires_grad)


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _nested_to_numpy(data):
    if isinstance(data, Tensor):
        if data.numel() != 1 and data.ndim:
            return np.asarray(data.detach())
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_nested_to_numpy(x) for x in data]
    return data


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: a tensor from a tensor (shared unless copy=True or a conversion is needed), a storage
    (its bytes read as `dtype`, uint8 by default), a numpy array, a number or nested sequences."""
    dtype = _dt.canonicalize(dtype)
    if isinstance(obj, UntypedStorage):
        buf = obj._storage.c_buffer()
        if buf is None:
            raise RuntimeError("asarray: a meta storage has no bytes to read")
        raw = buf.reshape(-1).view(np.uint8)
        dtype = dtype or _dt.uint8
        if raw.size % dtype.itemsize:
            raise ValueError(f"asarray: {raw.size} bytes do not hold a whole number of {dtype} elements")
        out = Tensor._from_value(core.asarray(raw.view(dtype.np)))
    elif isinstance(obj, Tensor):
        if copy is False and ((dtype is not None and dtype is not obj.dtype) or
                              (device is not None and core.device(device) is not obj.device)):
            raise ValueError("asarray: copy=False, but converting the tensor needs a copy")
        out = obj.to(dtype=dtype, device=device) if (dtype or device) else obj
        if copy and out is obj:
            out = obj.clone()
        return out.requires_grad_(True) if requires_grad and not out.requires_grad else out
    else:
        out = tensor(obj, dtype=dtype, device=_dev(device))
    if device is not None:
        out = out.to(device)
    return out.requires_grad_(True) if requires_grad else out


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    return tensor(data, dtype=dtype, device=_dev(device))


def from_numpy(array):
    """A tensor with the numpy array's dtype (the data is copied: our arrays are immutable)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor._from_value(core.asarray(array))


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor of `count` elements of `dtype` (-1: as many as fit) read from the bytes of `buffer` (any
    object with the buffer protocol) from byte `offset`. PyTorch's shares memory with the buffer; here the
    bytes are copied (arrays are immutable), so later writes to either side do not reach the other."""
    dtype = _dt.canonicalize(dtype)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, itemsize = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0 and (length - offset) % itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                         f"multiple of element size ({itemsize})")
    count = (length - offset) // itemsize if count < 0 else count
    if offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({length} bytes)")
    data = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view, dtype=dtype.np,
                         count=count, offset=offset)
    return _finish(core.asarray(data, dtype=dtype), requires_grad)


class layout:
    """A tensor's memory layout, as torch.layout; torch.strided (dense, with strides) is the only one here."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name  # the module-level object of that name: unpickles as the same layout


strided = layout("strided")


def get_default_dtype():
    """The floating-point dtype factory functions use when none is given (float32 at start)."""
    return _dt.default_float


def set_default_dtype(d):
    """Set the default floating-point dtype (float16, float32 or float64)."""
    d = _dt.canonicalize(d)
    if d.category != _dt.FLOAT:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _dt.default_float = d


def _dev(device):
    """`device`, or when None the default device (`with torch.device(...)`, set_default_device), or None."""
    return device if device is not None else core.Device.get_default()


def set_default_device(device):
    """Make factory functions called without a device create on `device` (None: back to cpu); per thread."""
    core.Device.set_default(device)


def get_default_device():
    """The device factory functions create on when given none."""
    return core.Device.get_default() or core.cpu


# ---------------------------------------------------------------------------
# threads: the BLAS pool NumPy's matmul and linalg run on, set at run time through threadpoolctl


def get_num_threads():
    """The number of threads of the BLAS library (OpenBLAS, MKL, ...) NumPy is linked to."""
    pools = threadpoolctl.threadpool_info()
    counts = [p["num_threads"] for p in pools if p["user_api"] == "blas"]
    return max(counts) if counts else 1


def set_num_threads(n):
    """Set the BLAS thread pool's size (PyTorch's intra-op threads); it stays until changed again."""
    n = int(n)
    if n <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, but got {n}")
    threadpoolctl.threadpool_limits(limits=n, user_api="blas")


_interop_threads = [None]


def get_num_interop_threads():
    """Inter-op parallelism: ops here run one after another, so this only reports what was set (else 1)."""
    return _interop_threads[0] or 1


def set_num_interop_threads(n):
    """Recorded for get_num_interop_threads; as in PyTorch, it may be set only once."""
    n = int(n)
    if n <= 0:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, but got {n}")
    if _interop_threads[0] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop_threads[0] = n


def _filled(fill, shape, dtype, device, requires_grad):
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    return _finish(core.full(shape, fill, dtype=dtype, device=_dev(device)), requires_grad)


def zeros(*shape, size=None, dtype=None, device=None, requires_grad=False):
    return _filled(0, _size(shape, size), dtype, device, requires_grad)


def ones(*shape, size=None, dtype=None, device=None, requires_grad=False):
    return _filled(1, _size(shape, size), dtype, device, requires_grad)


def empty(*shape, size=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    size = _size(shape, size)
    if memory_format is None or memory_format is _mf.contiguous_format:
        return _filled(0, size, dtype, device, requires_grad)
    return _mf.empty_in(size, memory_format, lambda s: _filled(0, s, dtype, device, requires_grad))


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _dt.result_type(fill_value) if not isinstance(fill_value, Tensor) else fill_value.dtype
    return _finish(core.full(tuple(size), fill_value, dtype=dtype, device=_dev(device)), requires_grad)


def _like(fill):
    def fn(input, dtype=None, device=None, requires_grad=False, memory_format=None):
        def make(shape):
            return _finish(core.full(shape, fill, dtype=dtype or input.dtype, device=device or input.device),
                           requires_grad)
        if input._strides is None and memory_format in (None, _mf.preserve_format, _mf.contiguous_format):
            return make(tuple(input.shape))
        return _mf.like(input, memory_format, make)
    return fn


zeros_like = _like(0)
ones_like = _like(1)
empty_like = _like(0)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(fill_value)(input, dtype, device, requires_grad, memory_format)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    return _finish(core.arange(start, end, step, dtype=dtype, device=_dev(device)), requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    return _finish(core.linspace(start, end, steps, dtype=dtype, device=_dev(device)), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _finish(core.eye(n, m, dtype=dtype, device=_dev(device)), requires_grad)


# ---------------------------------------------------------------------------
# random numbers from a global generator over core's explicit keys


class Generator:
    """torch.Generator: a core random key advanced (split) by every draw."""

    def __init__(self, device="cpu"):
        self.device = core.device(device)
        self._seed = 67280421310721
        self._key = core.random.key(self._seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._key = core.random.key(self._seed)
        return self

    def seed(self):
        self.manual_seed(int(np.random.SeedSequence().entropy) % (2 ** 63))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return Tensor._from_value(self._key)

    def set_state(self, state):
        self._key = state._value() if isinstance(state, Tensor) else core.asarray(state)
        return self

    def next_key(self):
        self._key, sub = core.random.split(self._key)
        return sub


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator (returns it)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


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


def _key(generator, device=None):
    """The next key of the generator, on `device` (a meta key draws shapes only, never numbers)."""
    stack = getattr(_vmap_rng, "stack", None)
    if stack:
        entry = stack[-1]
        if entry[0] == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                               "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                               "operation out of vmap")
        entry[1], k = core.random.split(entry[1])
        return k
    k = (generator or default_generator).next_key()
    device = _dev(device)
    if device is not None:
        device = core.device(device)
        if device is not k.device:
            k = core.to_device(k, device)
    return k


def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    value = core.random.uniform(_key(generator, device), _size(shape, size), dtype=dtype)
    return _finish(value, requires_grad)


def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    dtype = _dt.canonicalize(dtype) or _dt.default_float
    value = core.random.normal(_key(generator, device), _size(shape, size), dtype=dtype)
    return _finish(value, requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """randint(high, size), randint(low, high, size), or the same by keyword."""
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
    draw = _dt.int64 if dtype.category != _dt.INT else dtype  # bool and float results: drawn as integers
    value = core.random.randint(_key(generator, device), _size(size), low, high, dtype=draw)
    if draw is not dtype:
        value = core.cast(value, dtype)
    return _finish(value, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    value = core.random.permutation(_key(generator, device), int(n))
    if dtype is not None:
        value = core.cast(value, dtype)
    return _finish(value, requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False):
    return rand(*input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):
    return randn(*input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low, high=None, dtype=None, device=None, requires_grad=False):
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device)


def normal(mean, std=1.0, size=None, *, generator=None):
    if size is not None:
        return randn(*size, generator=generator) * std + mean
    shape = core.broadcast_shapes(*[tuple(getattr(x, "shape", ())) for x in (mean, std)])
    return randn(*shape, generator=generator) * std + mean


def bernoulli(input, p=None, *, generator=None):
    probs = input if p is None else p
    u = rand(*input.shape, generator=generator, dtype=input.dtype)
    return (u < probs).to(input.dtype)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    probs = np.asarray(input.detach(), dtype=np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    keys = np.asarray(core.random.randint(_key(generator), (rows.shape[0],), 0, 2 ** 62))
    out = []
    for row, k in zip(rows, keys):
        rng = np.random.Generator(np.random.Philox(int(k)))
        p = row / row.sum()
        if not replacement and num_samples > np.count_nonzero(p):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        out.append(rng.choice(len(p), size=num_samples, replace=replacement, p=p))
    res = np.asarray(out, dtype=np.int64).reshape(probs.shape[:-1] + (num_samples,))
    return Tensor._from_value(core.asarray(res))


# in-place random fills: the draw is computed out of place, then written back like any in-place op


def _draw(self, generator):
    return _key(generator, self.device), tuple(self.shape)


@tensor_method
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    k, shape = _draw(self, generator)
    return apply(self, lambda: core.random.uniform(k, shape, dtype=self.dtype, minval=a, maxval=b), "uniform_")


@tensor_method
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    k, shape = _draw(self, generator)
    return apply(self, lambda: core.add(core.mul(core.random.normal(k, shape, dtype=self.dtype), std), mean),
                 "normal_")


@tensor_method
def bernoulli_(self, p=0.5, *, generator=None):
    k, shape = _draw(self, generator)
    probs = p._value() if isinstance(p, Tensor) else p
    return apply(self, lambda: core.cast(core.lt(core.random.uniform(k, shape), probs), self.dtype), "bernoulli_")


_RANDOM_HIGH = {"bool_": 2, "uint8": 2 ** 8, "int8": 2 ** 7, "int16": 2 ** 15, "int32": 2 ** 31, "int64": 2 ** 63 - 1,
                "float16": 2 ** 11 + 1, "float32": 2 ** 24 + 1, "float64": 2 ** 53 + 1}


@tensor_method
def random_(self, low=0, high=None, *, generator=None):
    """Integers in [low, high), by default [0, the largest exactly representable value] of the dtype."""
    if high is None:
        low, high = 0, (low if low else _RANDOM_HIGH[self.dtype.name])
    k, shape = _draw(self, generator)
    return apply(self, lambda: core.cast(core.random.randint(k, shape, low, high), self.dtype), "random_")


@tensor_method
def exponential_(self, lambd=1.0, *, generator=None):
    k, shape = _draw(self, generator)
    return apply(self, lambda: core.div(core.neg(core.log1p(core.neg(core.random.uniform(k, shape, dtype=self.dtype)))),
                                        lambd), "exponential_")


@tensor_method("bernoulli")
def _bernoulli_method(self, p=None, generator=None):
    return bernoulli(self, p, generator=generator)
