"""Padding modules over the trailing 1, 2 or 3 dims (F.pad with a fixed mode)."""
from .. import functional as F
from .module import Module


def _ntuple(padding, n):
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    return tuple(padding)


class _PadNd(Module):
    _mode = "constant"
    _n = 1

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _ntuple(padding, self._n)
        if len(self.padding) != 2 * self._n:
            raise ValueError(f"expected padding of length {2 * self._n}, got {self.padding}")
        self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        if self._mode == "constant":
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _make(name, mode, n):
    if mode == "constant":
        def __init__(self, padding, value):
            _PadNd.__init__(self, padding, value)
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, padding)
    return type(name, (_PadNd,), {"_mode": mode, "_n": n, "__init__": __init__, "__module__": __name__})


ConstantPad1d = _make("ConstantPad1d", "constant", 1)
ConstantPad2d = _make("ConstantPad2d", "constant", 2)
ConstantPad3d = _make("ConstantPad3d", "constant", 3)
ReflectionPad1d = _make("ReflectionPad1d", "reflect", 1)
ReflectionPad2d = _make("ReflectionPad2d", "reflect", 2)
ReflectionPad3d = _make("ReflectionPad3d", "reflect", 3)
ReplicationPad1d = _make("ReplicationPad1d", "replicate", 1)
ReplicationPad2d = _make("ReplicationPad2d", "replicate", 2)
ReplicationPad3d = _make("ReplicationPad3d", "replicate", 3)
CircularPad1d = _make("CircularPad1d", "circular", 1)
CircularPad2d = _make("CircularPad2d", "circular", 2)
CircularPad3d = _make("CircularPad3d", "circular", 3)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
