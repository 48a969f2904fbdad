"""torch.xpu on a machine without Intel GPUs: PyTorch's answers for a build without XPU."""
__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all", "empty_cache",
           "synchronize", "current_device", "set_device", "get_device_name"]


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """Accepted and dropped, as in PyTorch without XPU."""
    int(seed)


manual_seed_all = manual_seed


def empty_cache():
    pass


def _no_xpu(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


synchronize = current_device = set_device = get_device_name = _no_xpu
