"""Storage: the base buffer of a family of views, and its shared version counter.

`value` is an immutable core value (an Array, or a tracer inside a transform).
Writing replaces `value`; the counter is bumped once per in-place op and is
shared by every Tensor viewing this storage.
"""
import numpy as np

from ..core import Array, asarray, bitcast, stop_gradient
from .grad_mode import _state as _grad_state
from ..core import uint8 as _uint8


class VersionCounter:
    __slots__ = ("value",)

    def __init__(self):
        self.value = 0

    def __repr__(self):
        return f"VersionCounter({self.value})"


class Storage:
    __slots__ = ("value", "_version", "inference", "__weakref__")

    def __init__(self, value):
        self.value = value
        self._version = None
        self.inference = _grad_state.inference  # made inside torch.inference_mode: an inference tensor

    @property
    def version(self):
        """The VersionCounter shared by every tensor viewing this storage. Made on first use: most op
        results are never written, viewed or saved, and an unread counter of 0 is the same as none."""
        counter = self._version
        if counter is None:
            counter = self._version = VersionCounter()
        return counter

    def nbytes(self):
        return self.value.size * self.value.dtype.itemsize

    def c_buffer(self):
        """The numpy buffer holding this storage's elements in C order (None on meta): what data_ptr points
        into. A buffer laid out otherwise (a transpose's result, an F-ordered numpy input) is replaced once by
        a C-ordered copy of the same value: a change of representation, not a write, so the version stays.
        The buffer is exported (read-only from then on), so no in-place op reuses memory behind a pointer."""
        value = self.value
        if type(value) is not Array:
            raise RuntimeError("cannot access the data pointer of a tensor whose value is traced "
                               "(inside a torch.func transform)")
        if value.device.type == "meta":
            return None
        if value.device.type != "cpu":
            raise RuntimeError(f"data_ptr: only cpu and meta storages have an address here, not {value.device}")
        buf = np.asarray(value)
        if not buf.flags.c_contiguous:
            self.value = asarray(np.ascontiguousarray(buf), dtype=value.dtype, device=value.device)
            buf = np.asarray(self.value)
        return buf

    def __reduce__(self):
        """Pickle as a plain Storage of the current value (a new version counter on load). Pickle's memo
        then gives every tensor viewing this storage in one pickle the same storage back."""
        value = self.value
        if type(value) is not Array:
            raise RuntimeError("cannot pickle a tensor whose value is traced (inside a torch.func transform)")
        return (Storage, (value,))


class DetachedPartStorage(Storage):
    """The storage of a tensor PyTorch would make a view of another dtype (z.real, view_as_real(z),
    x.view(torch.int32)) that is a copy here: views share one base of one dtype. Reading works; writing
    raises (writeback.write checks), since the write would not reach the tensor it came from."""

    __slots__ = ("source_op",)

    def __init__(self, storage, source_op):
        self.value = storage.value
        self._version = storage.version
        self.inference = storage.inference
        self.source_op = source_op


class BitcastStorage(Storage):
    """`x.view(dtype)` of a tensor covering its whole storage: the same bytes read as `dtype`. Reads bitcast
    the target's current value, writes bitcast back into it, and the version counter is the target's, so
    the two tensors are views of each other as in PyTorch."""

    __slots__ = ("target", "dtype")

    def __init__(self, target, dtype):
        self.target, self.dtype = target, dtype
        self._version = target.version
        self.inference = target.inference

    @property
    def value(self):
        return bitcast(self.target.value, self.dtype)

    @value.setter
    def value(self, v):
        self.target.value = bitcast(v, self.target.value.dtype)


class DataStorage(Storage):
    """torch's `x.data`: the same data (reads and writes go to `target`) under a version counter of its own,
    so writing through it neither bumps x's version nor trips the saved-tensor check. With share_version, the
    target's counter (what `x.detach()` reads through inside a torch.func transform).

    Inside a transform (the value traced) a read is the value's stop_gradient: `.data` and `.detach()` have no
    derivative there, as in PyTorch."""

    __slots__ = ("target",)

    def __init__(self, target, share_version=False):
        self.target = target.target if type(target) is DataStorage else target
        self._version = target.version if share_version else None
        self.inference = target.inference

    @property
    def value(self):
        v = self.target.value
        return v if type(v) is Array else stop_gradient(v)

    @value.setter
    def value(self, v):
        self.target.value = v


class UntypedStorage:
    """torch's `tensor.untyped_storage()`: the bytes of a Storage (every tensor viewing it shares them)."""

    __slots__ = ("_storage",)

    def __init__(self, storage):
        self._storage = storage

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0, *, size=None):
        """The first `nbytes` bytes of a file as a uint8 storage (torch.UntypedStorage.from_file). The bytes are
        read once (`shared=True`, writing back to the file, is not supported: our storages are immutable)."""
        if shared:
            raise RuntimeError("UntypedStorage.from_file(shared=True) is not supported: mindtorch_v2's storages "
                               "are immutable values and cannot write through to a file")
        nbytes = size if size is not None else nbytes
        data = np.fromfile(filename, dtype=np.uint8, count=nbytes if nbytes else -1)
        if nbytes and data.size < nbytes:
            raise RuntimeError(f"unable to read {nbytes} bytes from {filename}: the file has {data.size}")
        return cls(Storage(asarray(data)))

    def untyped(self):
        return self

    _untyped = untyped  # (TypedStorage's older spelling, which libraries still call)

    def __getitem__(self, key):
        """A byte range as a new storage (torch shares it; here bytes are values, so it is the same data)."""
        if not isinstance(key, slice):
            buf = self._storage.c_buffer()
            return int(buf.reshape(-1).view(np.uint8)[key])
        buf = self._storage.c_buffer()
        return UntypedStorage(Storage(asarray(buf.reshape(-1).view(np.uint8)[key])))

    def nbytes(self):
        return self._storage.nbytes()

    size = nbytes
    __len__ = nbytes

    def element_size(self):
        return 1

    @property
    def dtype(self):
        return _uint8

    @property
    def device(self):
        return self._storage.value.device

    def data_ptr(self):
        """The address of the first byte (0 for an empty or meta storage, as torch). The address changes
        when the storage is written: an in-place op gives the storage a new value here."""
        buf = self._storage.c_buffer()
        if buf is None or buf.nbytes == 0:
            return 0
        return buf.__array_interface__["data"][0]

    def cpu(self):
        """The storage on the cpu (itself: a storage elsewhere would be copied; there is no accelerator)."""
        if self.device.type != "cpu":
            raise NotImplementedError(f"UntypedStorage.cpu: copying a {self.device.type} storage is not supported")
        return self

    def tolist(self):
        buf = self._storage.c_buffer()
        if buf is None:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return buf.reshape(-1).view(np.uint8).tolist()

    def __repr__(self):
        return f"UntypedStorage(nbytes={self.nbytes()}, device={self.device})"
