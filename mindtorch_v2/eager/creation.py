"""torch.tensor, zeros, ones, ...: the tensor constructors that draw no random numbers (those are in random_ops)."""
import math

import numpy as np
import threadpoolctl

from .. import core
from ..core import dtypes as _dt
from . import memory_format as _mf
from .declare import NamedConstant
from .inplace import check_scalar_fits
from .storage import UntypedStorage
from .tensor import Size, Tensor, _int_sizes

__all__ = [
    "get_default_dtype", "set_default_dtype", "arange", "asarray", "as_tensor",
    "empty", "empty_like", "eye", "frombuffer", "from_numpy", "full", "full_like", "linspace",
    "ones", "ones_like", "tensor", "zeros", "zeros_like", "layout", "strided",
    "get_default_device", "set_default_device", "get_num_threads", "set_num_threads", "get_num_interop_threads",
    "set_num_interop_threads",
]


def _size(size, size_kw=None, op="empty"):
    """The shape from f(2, 3), f((2, 3)) or f(size=(2, 3)), checked as torch's parser and allocator do."""
    if size_kw is not None:
        size = (size_kw,)
    if not size:
        raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
    size = _int_sizes(size, op)
    if any(s < 0 for s in size):
        if op == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if math.prod(size) >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}")
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
    if dtype is not None and isinstance(data, (list, tuple)) and None in _flat(data):
        raise TypeError("must be real number, not NoneType")
    try:
        return _finish(core.asarray(data, dtype=dtype, device=device), requires_grad)
    except TypeError:  # numpy's object arrays: a python int past int64 is torch's parser error
        leaves = _flat(data) if isinstance(data, (list, tuple)) else [data]
        if any(isinstance(x, int) and not -2 ** 63 <= x < 2 ** 63 for x in leaves):
            raise ValueError("Overflow when unpacking long long") from None
        raise
    except OverflowError:  # numpy refuses -1 as uint8; torch wraps what fits its check and refuses the rest
        dtype = _dt.canonicalize(dtype)
        leaves = _flat(data) if isinstance(data, (list, tuple)) else [data]
        for x in leaves:
            check_scalar_fits(x, dtype, parser=True)
        wrapped = np.array(data, dtype=np.int64).astype(dtype.np)
        return _finish(core.asarray(wrapped, device=device), requires_grad)


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


class layout(NamedConstant):
    """A tensor's memory layout, as torch.layout; torch.strided (dense, with strides) is the only one here."""

    __slots__ = ()


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
    return _filled(0, _size(shape, size, "zeros"), dtype, device, requires_grad)


def ones(*shape, size=None, dtype=None, device=None, requires_grad=False):
    return _filled(1, _size(shape, size, "ones"), dtype, device, requires_grad)


def empty(*shape, size=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    size = _size(shape, size, "empty")
    if memory_format is None or memory_format is _mf.contiguous_format:
        return _filled(0, size, dtype, device, requires_grad)
    return _mf.empty_in(size, memory_format, lambda s: _filled(0, s, dtype, device, requires_grad))


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if fill_value is None or isinstance(fill_value, str):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}")
    if dtype is None:
        dtype = _dt.result_type(fill_value) if not isinstance(fill_value, Tensor) else fill_value.dtype
    if not isinstance(fill_value, Tensor):
        dtype = _dt.canonicalize(dtype)
        check_scalar_fits(fill_value, dtype)
        if isinstance(fill_value, int) and dtype.category == _dt.INT:  # -1 as uint8 is 255, as torch's cast
            fill_value = int(np.int64(fill_value).astype(dtype.np))
    size = _size((size,), op="full")
    return _finish(core.full(size, fill_value, dtype=dtype, device=_dev(device)), requires_grad)


def _like(fill):
    def fn(input, dtype=None, device=None, requires_grad=False, memory_format=None):
        def make(shape):
            return _finish(core.full(shape, fill, dtype=dtype or input.dtype, device=device or input.device),
                           requires_grad)
        if input._strides is None and memory_format in (None, _mf.preserve_format, _mf.contiguous_format):
            return make(tuple(input.shape))
        return _mf.like(input, memory_format, make)
    return fn


def _int_arg(v, op, what, pos):
    """v as an int, or the TypeError of torch's argument parser (a float, bool, str or None)."""
    if v.__class__ is int:
        return v
    if isinstance(v, (bool, np.bool_)) or not hasattr(type(v), "__index__"):
        raise TypeError(f"{op}(): argument '{what}' (position {pos}) must be int, not {type(v).__name__}")
    return v.__index__()


zeros_like = _like(0)
ones_like = _like(1)
empty_like = _like(0)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(fill_value)(input, dtype, device, requires_grad, memory_format)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_num(start)} -> {_num(end)}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return _finish(core.arange(start, end, step, dtype=dtype, device=_dev(device)), requires_grad)


def _num(x):
    return repr(x) if isinstance(x, float) and math.isfinite(x) else str(x)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    steps = _int_arg(steps, "linspace", "steps", 3)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(core.linspace(start, end, steps, dtype=dtype, device=_dev(device)), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    n = _int_arg(n, "eye", "n", 1)
    m = n if m is None else _int_arg(m, "eye", "m", 2)
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return _finish(core.eye(n, m, dtype=dtype, device=_dev(device)), requires_grad)
