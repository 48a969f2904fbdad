"""torch.cpu: the one device this package computes on."""
import types
import warnings

from .amp import autocast_mode as _autocast_mode
from .amp import grad_scaler as _grad_scaler

__all__ = ["is_available", "is_initialized", "device_count", "current_device", "set_device", "synchronize",
           "Stream", "Event", "StreamContext", "stream", "current_stream", "amp"]


def is_available():
    return True


def is_initialized():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    """A no-op, as in PyTorch: there is one cpu device."""


def synchronize(device=None):
    """A no-op: every op here has finished when it returns."""


class Stream:
    """The CPU's only stream; work on it is already synchronous."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def synchronize(self):
        pass

    def query(self):
        return True


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_current = Stream()


def current_stream(device=None):
    return _current


class StreamContext:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class _CpuAutocast(_autocast_mode.autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class _CpuGradScaler(_grad_scaler.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


# torch.cpu.amp: the deprecated spellings of torch.amp's cpu autocast and scaler
amp = types.SimpleNamespace(autocast=_CpuAutocast, GradScaler=_CpuGradScaler)
_CpuAutocast.__name__ = _CpuAutocast.__qualname__ = "autocast"
_CpuGradScaler.__name__ = _CpuGradScaler.__qualname__ = "GradScaler"
