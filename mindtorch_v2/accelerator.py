"""torch.accelerator: there is none here (the CPU is not an accelerator in PyTorch's sense)."""
__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "current_device_idx",
           "set_device_index", "set_device_idx", "synchronize", "current_stream", "set_stream", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "reset_peak_memory_stats", "device_index"]


def is_available():
    return False


def current_accelerator(check_available=False):
    """None: no accelerator is present."""
    return None


def device_count():
    return 0


def _none(*args, **kwargs):
    raise RuntimeError("Cannot access accelerator device when none is available.")


current_device_index = current_device_idx = set_device_index = set_device_idx = synchronize = _none
current_stream = set_stream = empty_cache = memory_allocated = max_memory_allocated = _none
memory_reserved = max_memory_reserved = memory_stats = reset_peak_memory_stats = _none


class device_index:
    """with torch.accelerator.device_index(None): a no-op; any index needs an accelerator."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _none()
        return self

    def __exit__(self, *exc):
        return False
