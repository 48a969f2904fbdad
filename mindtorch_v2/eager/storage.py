"""Storage: the base buffer of a family of views, and its shared version counter.

`value` is an immutable core value (an Array, or a tracer inside a transform).
Writing replaces `value`; the counter is bumped once per in-place op and is
shared by every Tensor viewing this storage.
"""


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
