"""torch.cpu: the one device this package computes on."""
import types

from .amp import deprecated_spellings

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


# torch.cpu.amp: the deprecated spellings of torch.amp's cpu autocast and scaler
amp = types.SimpleNamespace(**dict(zip(("autocast", "GradScaler"), deprecated_spellings("cpu"))))
