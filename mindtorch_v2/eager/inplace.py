"""Functionalized in-place ops: compute out of place, write back, bump the version once.

    b = a[1]          # a view: storage S, shape (3,), strides (1,), offset 3
    b.add_(1)         # new = add(b, 1)                      (out of place, recorded)
                      # S.value = as_strided_scatter(S.value, new, (3,), (1,), 3)
                      # S.version += 1                       (a, b and every view see it)
    autograd: a's history becomes the as_strided_scatter node (PyTorch's CopySlices),
    b's history is `new`'s node, other views of S rebuild theirs from a when read.

Every check (leaf rules, dtype cast, broadcast) runs before the single writeback,
so a failing in-place op leaves the data and the version untouched.
"""
import math

import numpy as np

from .. import core
from ..core import dtypes as _dt
from .views import _getitem_is_basic, getitem, index_key
from .tensor import Tensor
from .writeback import apply


# ---------------------------------------------------------------------------
# python numbers written into a tensor

_LIMITS = {d: (np.iinfo(d.np).min, np.iinfo(d.np).max) for d in _dt.INTEGRAL}
_LIMITS[_dt.float16] = (-65504.0, 65504.0)
_LIMITS[_dt.float32] = (float(np.finfo(np.float32).min), float(np.finfo(np.float32).max))


def check_scalar_fits(value, dtype, parser=False):
    """torch's check when a python number is written into a tensor (fill_, masked_fill, setitem): a value out
    of the dtype's range is a RuntimeError (unsigned types accept -max..max for ints; inf and nan pass into
    floating types only)."""
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:  # (parser: torch.tensor's and setitem's)
        raise ValueError("Overflow when unpacking long long") if parser else OverflowError("int too big to convert")
    limits = _LIMITS.get(dtype)
    if limits is None or isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return
    lo, hi = limits
    if dtype.category == _dt.FLOAT:
        ok = not math.isfinite(value) or lo <= value <= hi
    elif isinstance(value, (int, np.integer)) and not dtype.is_signed:
        ok = -hi <= value <= hi
    else:
        ok = lo <= value <= hi  # False for nan
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} without overflow")


_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "float32": "float"}


# ---------------------------------------------------------------------------
# the in-place methods


def _self_or_const(self, value):
    """`value` broadcast to self, keeping self in the graph (with zero gradient) when it requires grad."""
    return _zero_gradient_to(core.broadcast_to(value, self._shape), self) if self._rg else value


def _zero_gradient_to(value, *inputs):
    """value, depending on each input with a zero gradient (an overwritten self; PyTorch's samplers' zero
    derivatives): where() over a condition never true passes each a zero gradient, and the value untouched."""
    never = core.zeros(tuple(value.shape), dtype=_dt.bool_, device=value.device)
    for x in inputs:
        value = core.where(never, x, value)
    return value


def zero_(self):
    return apply(self, lambda: _self_or_const(self, core.zeros(self._shape, self.dtype, self.device)), "zero_")


def fill_(self, value):
    if not isinstance(value, (Tensor, int, float, complex, np.number)):
        raise TypeError(f"fill_() received an invalid combination of arguments - got ({type(value).__name__}), but "
                        "expected one of:\n * (Tensor value)\n * (Number value)")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        full = core.broadcast_to(core.cast(value, self.dtype), self._shape)
    else:
        check_scalar_fits(value, self.dtype)
        full = core.full(self._shape, value, dtype=self.dtype, device=self.device)
    # (torch lets a number, not a tensor, fill an expanded tensor)
    return apply(self, lambda: _self_or_const(self, full), "fill_" if not isinstance(value, Tensor) else "fill_tensor_")


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        src = Tensor._wrap(core.asarray(src, dtype=self.dtype if not isinstance(src, np.ndarray) else None))
    if src.device is not self.device and src.device.type == "meta":
        raise RuntimeError("copy_: cannot copy from a meta tensor: it holds no data")

    def compute():
        value = src if src.device is self.device else Tensor._wrap(core.to_device(src._value(),
                                                                                              self.device))
        if value.dtype is not self.dtype:
            value = Tensor._wrap(core.cast(value, self.dtype))  # copy_ casts freely, unlike other in-place ops
        if value._shape != self._shape:
            value = Tensor._wrap(core.broadcast_to(value, self._shape)) if _broadcasts(value._shape, self._shape) \
                else _raise_copy(value, self)
        return _self_or_const(self, value)
    return apply(self, compute, "copy_")


def _broadcasts(src, dst):
    try:
        return core.broadcast_shapes(src, dst) == tuple(dst)
    except (ValueError, RuntimeError):
        return False


def _raise_copy(src, dst):
    raise RuntimeError(f"The size of tensor a ({dst._shape[-1] if dst._shape else 1}) must match the size of "
                       f"tensor b ({src._shape[-1] if src._shape else 1}) at non-singleton dimension "
                       f"{len(dst._shape) - 1}: cannot copy shape {list(src._shape)} into {list(dst._shape)}")


def setitem(self, key, value):
    """self[key] = value: a view write for basic keys, a scatter for tensor / mask keys."""
    if not isinstance(value, (Tensor, int, float, complex, np.number, np.ndarray)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {self._desc().split()[0]}")
    if key is False:  # torch writes nothing (and bumps no version) for x[False] = v
        return
    if isinstance(value, Tensor) and value._shape[:1] == (1,):
        value = _strip_leading_ones(value)
    if self.dtype.category == _dt.INT and not isinstance(value, (Tensor, np.ndarray)):
        check_scalar_fits(value, self.dtype, parser=True)  # torch converts the value before it reads the index
    basic = _getitem_is_basic(key)
    if not basic:
        key = index_key(self, key)
    if isinstance(value, Tensor) and value.dtype is not self.dtype and _index_put(key, basic):
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{self.dtype.scalar_name} for the destination and {value.dtype.scalar_name} for the source.")
    if basic:
        view = self[key]
        copy_(view, value if isinstance(value, Tensor) else _scalar_like(value, view))
        return
    if _masked_fill(self, key, value):
        return
    self._check_inplace()
    # the flat positions key selects, read with the eager getitem (torch's placement of advanced dims)
    positions = Tensor._from_value(core.reshape(core.arange(self.numel(), device=self.device), self._shape))
    positions = getitem(positions, key)._value()
    value = value if isinstance(value, Tensor) else _scalar_like(value, self)
    flat_pos = core.reshape(positions, (-1,))
    try:
        vals = core.broadcast_to(value, tuple(positions.shape))
    except (ValueError, RuntimeError):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._shape)} cannot be broadcast to "
                           f"indexing result of shape {list(positions.shape)}") from None

    def compute():
        flat = core.reshape(self, (-1,))
        return core.reshape(core.scatter(flat, 0, flat_pos, core.reshape(vals, (-1,))), self._shape)
    apply(self, lambda: Tensor._wrap(compute()), "__setitem__")


def _masked_fill(self, key, value):
    """self[mask] = a scalar (or 0-d tensor), mask a bool tensor over self's leading dims: written as
    where(mask, value, self), whose shape does not depend on the mask's values (labels[labels == pad] = -100
    compiles; the positions a scatter needs are data-dependent). False where the key is anything else."""
    if not (isinstance(key, Tensor) and key.dtype is _dt.bool_ and key._shape == self._shape[:len(key._shape)]
            and key._shape and (not isinstance(value, (Tensor, np.ndarray)) or not np.shape(value)
                                if not isinstance(value, Tensor) else not value._shape)):
        return False
    self._check_inplace()
    fill = value if isinstance(value, Tensor) else _scalar_like(value, self)
    mask = key.reshape(key._shape + (1,) * (len(self._shape) - len(key._shape)))
    apply(self, lambda: Tensor._wrap(core.where(mask, core.cast(fill, self.dtype), self)), "__setitem__")
    return True


def _index_put(key, basic):
    """Whether torch writes self[key] with index_put (which, unlike copy_, refuses a value of another dtype):
    keys with index tensors, lists or bool scalars inside a tuple; a 0-dim integer tensor counts as an int."""
    keys = key if isinstance(key, tuple) else (key,)
    if basic:
        return isinstance(key, tuple) and any(isinstance(k, (bool, np.bool_)) for k in keys)
    return not all(_getitem_is_basic(k) or isinstance(k, Tensor) and not k._shape and k.dtype.category == _dt.INT
                   for k in keys)


def _strip_leading_ones(value):
    """value without its leading size-1 dims: torch's setitem accepts t[0] = tensor([x])."""
    shape = value._shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.reshape(shape[k:])


def _scalar_like(value, like):
    if like.dtype.category != _dt.FLOAT:
        check_scalar_fits(value, like.dtype, parser=True)
    elif isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:  # (a float too large is inf, no error)
        raise ValueError("Overflow when unpacking long long")
    return Tensor._wrap(core.asarray(value, dtype=like.dtype if not isinstance(value, np.ndarray) else None,
                                     device=like.device))
