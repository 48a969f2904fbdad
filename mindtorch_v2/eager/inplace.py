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
import sys

import numpy as np

from .. import core
from ..core import dtypes as _dt
from ..core import as_strided_scatter_p
from . import grad_mode
from .autograd.graph import AccumulateGrad
from .dispatch import record_node
from .functionalize import is_functionalizing
from .ops import check_scalar_fits
from .views import _getitem_is_basic, getitem, index_key
from .tensor import Tensor


def _conform(self, new, name):
    """new (Tensor or number) as self's dtype and shape, or the RuntimeError PyTorch raises."""
    if not isinstance(new, Tensor):
        new = Tensor._wrap(core.asarray(new, dtype=self.dtype, device=self.device))
    if new.dtype is not self.dtype:
        if new.dtype.category > self.dtype.category:
            raise RuntimeError(f"result type {_dt_name(new.dtype)} can't be cast to the desired "
                               f"output type {_dt_name(self.dtype)}")
        new = Tensor._wrap(core.cast(new, self.dtype))
    if new._shape != self._shape:
        try:
            ok = core.broadcast_shapes(new._shape, self._shape) == self._shape
        except (ValueError, RuntimeError):
            ok = False
        if not ok:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast shape "
                               f"{list(_broadcast_or(new._shape, self._shape))}")
        new = Tensor._wrap(core.broadcast_to(new, self._shape))
    return new


def _dt_name(d):
    return d.scalar_name


def _broadcast_or(a, b):
    try:
        return core.broadcast_shapes(a, b)
    except (ValueError, RuntimeError):
        return a


def apply(self, compute, name):
    """Run an in-place op: compute() gives the new value of self (out of place)."""
    self._check_inplace()
    if name not in _OVERLAP_ALLOWED:
        _check_no_overlap(self)
    try:
        new = _conform(self, compute(), name)
    except ValueError as e:  # the core's shape errors are RuntimeErrors in torch
        raise RuntimeError(str(e)) from None
    write(self, new)
    return self


# torch writes these into an expanded (self-overlapping) tensor without complaint
_OVERLAP_ALLOWED = frozenset(("fill_", "zero_", "masked_fill_"))


def _check_no_overlap(self):
    """PyTorch refuses to write a tensor whose elements alias each other (an expanded view)."""
    strides = self._strides
    if strides is not None and 0 in strides and self.numel():
        for size, stride in zip(self._shape, strides):
            if stride == 0 and size > 1:
                raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers "
                                   "to a single memory location. Please clone() the tensor before performing the "
                                   "operation.")


def original(self, others=()):
    """self's current value as the input of its own in-place op (with `others`, the op's other arguments).

    PyTorch saves a clone of `self` when an in-place op's backward reads the original (y.mul_(w) reads y for
    w's gradient). Our values are immutable, so the clone is free: a tensor with self's value and history but
    a version counter of its own, which the write that follows does not bump. Nothing is saved, and self is
    returned, when no argument requires grad.
    """
    if not (grad_mode.is_grad_enabled() and (self._rg or any(isinstance(a, Tensor) and a._rg for a in others))):
        return self
    t = Tensor._from_value(self._value())
    if self._rg:
        node, nr = self._edge()
        if type(node) is AccumulateGrad:
            t._acc = node
        else:
            t._grad_fn, t._output_nr = node, nr
        t._rg = True
    return t


# Ownership is read from reference counts, which are exact on the GIL CPython builds we test (3.10-3.13).
# Elsewhere (other interpreters, free-threaded builds, newer versions whose stack references may not
# be counted) every write copies: slower, never wrong.
_REFCOUNTS_EXACT = (sys.implementation.name == "cpython" and sys.version_info < (3, 14)
                    and getattr(sys, "_is_gil_enabled", lambda: True)())


def _sole_owner(st, val):
    """True when nothing but this Storage holds its cpu buffer, so writing it in place is unobservable.

    `val` (the value being written) may itself be a transient view of the buffer (`x[0] = x[0]`);
    numpy's assignment handles that overlap.
    """
    if is_functionalizing() or not _REFCOUNTS_EXACT:
        return False
    v = st.value
    if type(v) is not core.Array or v._buf is None:
        return False
    buf = v._buf
    # references: st.value, the local `v`, getrefcount's argument; for the buffer: v._buf, `buf`, the
    # argument, plus one when `val` is a view of it
    extra = 1 if type(val) is core.Array and _views_buffer(val._buf, buf) else 0
    return sys.getrefcount(v) <= 3 and sys.getrefcount(buf) <= 3 + extra and buf.base is None \
        and buf.flags.writeable and buf.flags.c_contiguous


def _views_buffer(arr, buf):
    """Whether numpy array `arr` is a (possibly indirect) view of `buf`."""
    for _ in range(4):
        arr = getattr(arr, "base", None)
        if arr is None:
            return False
        if arr is buf:
            return True
    return False


def write(self, new):
    """Write Tensor `new` (self's shape and dtype) into self's storage; bump the version; fix up history."""
    st = self._storage
    val = new._value()
    if self._full:
        if type(val) is core.Array and val._buf is not None and not val._buf.flags.c_contiguous:
            val = core.copy(val)  # a stored broadcast would make every later view read copy the base
        st.value = val
    else:
        shape, strides, offset = self._geometry()
        donate = _sole_owner(st, val)
        st.value = as_strided_scatter_p.bind(st.value, val, shape=shape, strides=strides, offset=offset,
                                             donate=donate)
    st.version.value += 1
    if not grad_mode.is_grad_enabled():
        return
    base = self._base
    if base is None:
        if new._rg:
            self._grad_fn, self._output_nr, self._rg = new._grad_fn, new._output_nr, True
        elif self._grad_fn is not None:
            self._grad_fn, self._rg = None, False
        return
    if new._rg or base._rg:
        shape, strides, offset = self._geometry()
        # base's new history: as_strided_scatter(old base, new), recorded without recomputing it
        out = record_node(as_strided_scatter_p,
                          {"shape": shape, "strides": strides, "offset": offset, "donate": False},
                          (base, new), (base._value(), val), st.value)
        base._grad_fn, base._output_nr, base._rg = out._grad_fn, 0, True
        if new._rg:
            self._grad_fn, self._output_nr, self._rg = new._grad_fn, new._output_nr, True
        self._view_version = st.version.value
        if not new._rg:
            self._view_version = -1  # rebuild from the base on next use


# ---------------------------------------------------------------------------
# the in-place methods


def _self_or_const(self, value):
    """`value` broadcast to self, keeping self in the graph (with zero gradient) when it requires grad."""
    if self._rg:
        return core.where(core.full_like(self._value(), True, dtype=_dt.bool_), value, self)
    return value


def _method(out_of_place):
    def method(self, *args, **kwargs):
        return apply(self, lambda: out_of_place(original(self, args + tuple(kwargs.values())), *args, **kwargs),
                     out_of_place.__name__ + "_")
    method.__name__ = out_of_place.__name__ + "_"
    return method


def zero_(self):
    return apply(self, lambda: _self_or_const(self, core.zeros(self._shape, self.dtype, self.device)), "zero_")


def fill_(self, value):
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
    if key is False:  # torch writes nothing (and bumps no version) for x[False] = v
        return
    if isinstance(value, Tensor) and value._shape[:1] == (1,):
        value = _strip_leading_ones(value)
    basic = _getitem_is_basic(key)
    if not basic:
        key = index_key(self, key)
    if isinstance(value, Tensor) and value.dtype is not self.dtype and _index_put(key, basic):
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dt_name(self.dtype)} for the destination and {_dt_name(value.dtype)} for the source.")
    if basic:
        view = self[key]
        copy_(view, value if isinstance(value, Tensor) else _scalar_like(value, view))
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
    if isinstance(value, (str, bytes)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {like._desc().split()[0]}")
    check_scalar_fits(value, like.dtype)
    return Tensor._wrap(core.asarray(value, dtype=like.dtype if not isinstance(value, np.ndarray) else None,
                                     device=like.device))
