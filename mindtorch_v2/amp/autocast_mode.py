"""torch.autocast: a region that records, per device type, whether autocast is on and its dtype.

The state lives in eager/autocast_state.py, where the ops of PyTorch's CPU lower-precision list cast their
inputs: matmul and linear inside `autocast("cpu", dtype=torch.bfloat16)` compute in bfloat16. On this
CPU-only package, "cuda" autocast is disabled with PyTorch's warning.
"""
import functools
import warnings

from ..core import dtypes as _dt
from ..eager.autocast_state import DEFAULT_DTYPE as _DEFAULT_DTYPE
from ..eager.autocast_state import table as _table

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled"]

_CPU_DTYPES = (_dt.bfloat16, _dt.float16)


def is_autocast_available(device_type):
    """Whether autocast can be enabled for this device type here: only cpu."""
    return device_type == "cpu"


def is_autocast_enabled(device_type=None):
    """Whether an autocast region for `device_type` (default "cuda", as PyTorch) is active."""
    return _table().get(device_type or "cuda", [False])[0]


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # the old one-argument form set_autocast_enabled(enabled) meant cuda
        device_type, enabled = "cuda", device_type
    _table()[device_type][0] = bool(enabled)


def get_autocast_dtype(device_type):
    """The dtype autocast regions for `device_type` use (bfloat16 for cpu unless one set another)."""
    return _table()[device_type][1]


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): context manager or decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEFAULT_DTYPE:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = _dt.canonicalize(dtype) if dtype is not None else _DEFAULT_DTYPE[device_type]
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled and device_type == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            enabled = False
        elif enabled and device_type in ("mps", "xpu"):
            warnings.warn(f"User provided device_type of '{device_type}', but {device_type.upper()} is not available. "
                          "Disabling")
            enabled = False
        elif enabled and device_type == "cpu" and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.")
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        entry = _table()[self.device]
        self._prev = tuple(entry)
        entry[0], entry[1] = self._enabled, (self.fast_dtype if self._enabled else entry[1])
        return self

    def __exit__(self, *exc):
        _table()[self.device][:] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapper
