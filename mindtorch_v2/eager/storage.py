"""Storage: the base buffer of a family of views, and its shared version counter.

`value` is an immutable core value (an Array, or a tracer inside a transform).
Writing replaces `value`; the counter is bumped once per in-place op and is
shared by every Tensor viewing this storage.
"""
from ..core import Array


class VersionCounter:
    __slots__ = ("value",)

    def __init__(self):
        self.value = 0

    def __repr__(self):
        return f"VersionCounter({self.value})"


class Storage:
    __slots__ = ("value", "version", "__weakref__")

    def __init__(self, value):
        self.value = value
        self.version = VersionCounter()

    def nbytes(self):
        return self.value.size * self.value.dtype.itemsize

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
        self.version = storage.version
        self.source_op = source_op


class DataStorage(Storage):
    """torch's `x.data`: the same data (reads and writes go to `target`) under a version counter of its own,
    so writing through it neither bumps x's version nor trips the saved-tensor check."""

    __slots__ = ("target",)

    def __init__(self, target):
        self.target = target.target if type(target) is DataStorage else target
        self.version = VersionCounter()

    @property
    def value(self):
        return self.target.value

    @value.setter
    def value(self, v):
        self.target.value = v
