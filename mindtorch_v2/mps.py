"""torch.mps on a machine without Apple's Metal: queries answer, anything needing the device raises PyTorch's error."""
__all__ = ["is_available", "device_count", "manual_seed", "seed", "synchronize", "empty_cache", "get_rng_state",
           "set_rng_state", "current_allocated_memory", "driver_allocated_memory", "recommended_max_memory"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Accepted and dropped, as in PyTorch without MPS."""
    int(seed)


def _without(what):
    def fn(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")
    return fn


seed = get_rng_state = set_rng_state = _without("getDefaultGenerator")
synchronize = _without("deviceSynchronize")
empty_cache = _without("emptyCache")
current_allocated_memory = _without("getCurrentAllocatedMemory")
driver_allocated_memory = _without("getDriverAllocatedMemory")
recommended_max_memory = _without("getRecommendedMaxMemory")
