"""The Array API's inspection namespace: `core.__array_namespace_info__()` says which devices, dtypes
and capabilities the core has (array_api_compat and the array-api-tests suite read it)."""
from . import dtypes as _dt
from .devices import _BACKENDS, cpu, device as _device

__all__ = ["__array_namespace_info__"]

# the standard's dtype set (bfloat16 and float8 are extras of the core, not standard dtypes)
_STANDARD_DTYPES = (_dt.bool_, _dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32,
                    _dt.uint64, _dt.float32, _dt.float64, _dt.complex64, _dt.complex128)


class Info:
    """What `__array_namespace_info__()` returns."""

    __slots__ = ()

    def capabilities(self):
        # boolean-mask indexing and data-dependent shapes (nonzero, unique) need concrete arrays: they work
        # eagerly, and under transforms raise with a pointer to the fixed-size forms (size=, where).
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return cpu

    def default_dtypes(self, *, device=None):
        self._check(device)
        return {"real floating": _dt.default_float, "complex floating": _dt.default_for_category(_dt.COMPLEX),
                "integral": _dt.default_int, "indexing": _dt.int64}

    def dtypes(self, *, device=None, kind=None):
        self._check(device)
        return {d.name if d is not _dt.bool_ else "bool": d for d in _STANDARD_DTYPES
                if kind is None or _dt.isdtype(d, kind)}

    def devices(self):
        return [_device(t) for t in _BACKENDS]

    def _check(self, device):
        if device is not None and _device(device) not in self.devices():
            raise ValueError(f"__array_namespace_info__: no backend serves device {device}")


def __array_namespace_info__():
    """The Array API inspection namespace of the core."""
    return Info()
