"""The one write point of the eager layer: a Tensor's new value goes into its Storage.

    b = a[1]               # a view of a's storage S: shape (3,), strides (1,), offset 3
    write(b, new)          # S.value = as_strided_scatter(S.value, new, (3,), (1,), 3)
                           # S.version += 1            (a, b and every view see both)
                           # history: a's becomes the as_strided_scatter node (CopySlices),
                           # b's is new's; other views rebuild theirs from a when read

A whole-storage write replaces the value. A view write scatters into the base, in place (donate=True)
when the Storage owns the base buffer alone: copy-on-write, so updating a row of a large tensor costs
O(row). In-place ops, a Function's dirty inputs, grad accumulation and gradcheck's perturbations all
write here, choosing whether the version is bumped and the history recorded.
"""
import functools
import sys
import weakref

from .. import core
from ..core import as_strided_p, as_strided_scatter_p
from . import grad_mode
from .autograd.graph import AccumulateGrad
from .functionalize import is_functionalizing
from .storage import DataStorage, DetachedPartStorage
from .tensor import Tensor, record_node, storage_history

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


def write(self, new, *, bump_version=True, record=True):
    """Write `new` (a Tensor, or a core value, of self's shape and dtype) into self's storage.

    bump_version: count the write on the storage's version counter (every in-place op does; gradcheck's
    perturbations and a Function's dirty inputs, already written by forward, do not).
    record: under grad mode, give self (and its base) the history of the write (see record_history).
    """
    st = self._storage
    if type(st) is DetachedPartStorage:
        raise RuntimeError(
            f"this tensor came from {st.source_op}, which PyTorch returns as a view sharing its input's memory; "
            "here it is a copy (views cannot change dtype), so an in-place write would not reach the input. "
            "Write to the input instead, or clone() this tensor first.")
    val = new._value() if isinstance(new, Tensor) else new
    if type(val) is not core.Array:  # (a traced value: only inside transforms; the eager path pays one check)
        written = grad_mode._state.written
        if written is not None:
            _note_traced_write(written, st)
    if self._full:
        if type(val) is core.Array and val._buf is not None and not val._buf.flags.c_contiguous:
            val = core.copy(val)  # a stored broadcast would make every later view read copy the base
        st.value = val
    else:
        shape, strides, offset = self._geometry()
        donate = _sole_owner(st, val)
        st.value = as_strided_scatter_p.bind(st.value, val, shape=shape, strides=strides, offset=offset,
                                             donate=donate)
    if bump_version:
        st.version.value += 1
    if record and grad_mode.tape_enabled():
        record_history(self, new)


def _note_traced_write(written, st):
    """Inside a torch.func transform: a traced value written over a concrete one is noted, with what it
    replaces (grad_mode.transform_region.check undoes it where the tensor was captured)."""
    target = st.target if isinstance(st, DataStorage) else st
    if type(target.value) is core.Array:
        written.append((weakref.ref(target), target.value, target.version.value))


def record_history(self, new):
    """self (a tensor just written with Tensor `new`) takes new's history; when self is a view, its base's
    history becomes as_strided_scatter(old base, new), recorded without recomputing it (CopySlices)."""
    st = self._storage
    base = self._base
    if base is None:
        if new._rg:
            self._grad_fn, self._output_nr, self._rg = new._grad_fn, new._output_nr, True
        elif self._grad_fn is not None:
            self._grad_fn, self._rg = None, False
        return
    if new._rg or base._rg:
        shape, strides, offset = self._geometry()
        # base's new history: as_strided_scatter(old base, new), recorded without recomputing it; a base not
        # covering its storage in row-major order (after x.t_(), x.as_strided_(...)) is scattered into the
        # storage first and read back with its own geometry after (see tensor.storage_history)
        out = record_node(as_strided_scatter_p,
                          {"shape": shape, "strides": strides, "offset": offset, "donate": False},
                          (storage_history(base), new), (st.value, new._value()), st.value)
        if not base._full:
            bshape, bstrides, boffset = base._geometry()
            out = record_node(as_strided_p, {"shape": bshape, "strides": bstrides, "offset": boffset},
                              (out,), (st.value,), base._value())
            if out._grad_fn is not None:
                out._grad_fn.torch_name = "AsStridedScatterBackward0"  # the name the node has for a row-major base
        base._grad_fn, base._output_nr, base._rg = out._grad_fn, 0, True
        if new._rg:
            self._grad_fn, self._output_nr, self._rg = new._grad_fn, new._output_nr, True
        self._view_version = st.version.value
        if not new._rg:
            self._view_version = -1  # rebuild from the base on next use


# ---------------------------------------------------------------------------
# in-place ops: every check before the single write


def check_result_cast(result, output):
    """torch's same-kind rule for writing a result into an existing tensor (in-place ops, out=)."""
    if result.category > output.category:
        raise RuntimeError(f"result type {result.scalar_name} can't be cast to the desired output type "
                           f"{output.scalar_name}")


def _conform(self, new, name):
    """new (Tensor or number) as self's dtype and shape, or the RuntimeError PyTorch raises."""
    if not isinstance(new, Tensor):
        new = Tensor._wrap(core.asarray(new, dtype=self.dtype, device=self.device))
    if new.dtype is not self.dtype:
        check_result_cast(new.dtype, self.dtype)
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
    if not (grad_mode.tape_enabled() and (self._rg or any(isinstance(a, Tensor) and a._rg for a in others))):
        return self
    return with_history(self) if self._rg else Tensor._from_value(self._value())


def with_history(self):
    """A tensor of self's current value and history (self's own edge, its view history rebuilt if stale),
    with a version counter of its own."""
    t = Tensor._from_value(self._value())
    node, nr = self._edge()
    if type(node) is AccumulateGrad:
        t._acc = node
    else:
        t._grad_fn, t._output_nr = node, nr
    t._rg = True
    return t


def inplace_method(out_of_place, name=None):
    """The in-place method of an out-of-place torch function: x.add_(y) is x written with add(x, y)."""
    name = name or out_of_place.__name__ + "_"

    @functools.wraps(out_of_place)
    def method(self, *args, **kwargs):
        return apply(self, lambda: out_of_place(original(self, args + tuple(kwargs.values())), *args, **kwargs),
                     name)
    method.__name__ = method.__qualname__ = name
    return method
