"""torch.cuda on a machine without CUDA: every answer is PyTorch's for a CPU-only build.

Queries answer (is_available False, device_count 0, memory counters 0); seeding is accepted and dropped,
as PyTorch queues it for a CUDA initialization that never comes; anything that needs a GPU raises
PyTorch's AssertionError "Torch not compiled with CUDA enabled".
"""
from . import amp

__all__ = [
    "amp", "is_available", "device_count", "is_initialized", "init", "current_device", "set_device",
    "get_device_name", "get_device_capability", "get_device_properties", "synchronize", "mem_get_info",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
    "max_memory_cached", "memory_stats", "reset_peak_memory_stats", "reset_max_memory_allocated", "empty_cache",
    "ipc_collect", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
    "get_rng_state_all", "set_rng_state", "set_rng_state_all", "is_bf16_supported", "get_arch_list",
    "Stream", "Event", "CUDAGraph", "StreamContext", "stream", "current_stream", "default_stream", "device",
    "device_of", "graph", "is_current_stream_capturing",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


def is_available():
    """False: this package computes on the CPU (NumPy) only."""
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def get_arch_list():
    return []


# what PyTorch raises "Torch not compiled with CUDA enabled" for
init = current_device = get_device_name = get_device_capability = get_device_properties = _no_cuda
synchronize = mem_get_info = ipc_collect = initial_seed = get_rng_state = _no_cuda
current_stream = default_stream = reset_peak_memory_stats = reset_max_memory_allocated = _no_cuda


def set_device(device):
    if isinstance(device, str) and not device.startswith("cuda"):
        raise ValueError(f"Expected a cuda device, but got: {device}")
    if device is None or (isinstance(device, int) and device < 0):
        return  # PyTorch: a negative index or None is a no-op
    raise AssertionError(_NOT_COMPILED)


# memory counters: nothing was ever allocated on a GPU
def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_cached = max_memory_cached = memory_allocated


def memory_stats(device=None):
    return {}


def empty_cache():
    """Nothing is cached: a no-op, as in PyTorch without CUDA."""


# seeding: accepted and dropped, as PyTorch queues it for a CUDA initialization that never happens
def manual_seed(seed):
    int(seed)


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def set_rng_state(new_state, device="cuda"):
    pass


def get_rng_state_all():
    return []


def set_rng_state_all(new_states):
    pass


def is_current_stream_capturing():
    return False


class _Dummy:
    """PyTorch's placeholder for a CUDA class in a build without CUDA: the name exists, instances do not."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")


class Stream:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event(_Dummy):
    pass


class CUDAGraph(_Dummy):
    pass


class graph:
    """torch.cuda.graph(cuda_graph): needs a CUDAGraph, which cannot be made here."""

    def __init__(self, cuda_graph, *args, **kwargs):
        raise AssertionError(_NOT_COMPILED)


class StreamContext:
    """torch.cuda.stream(s): a no-op for s=None, as in PyTorch; any other stream needs CUDA."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            raise AssertionError(_NOT_COMPILED)
        return self

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class device:
    """torch.cuda.device(idx): a no-op for None or a negative index; selecting a GPU needs CUDA."""

    def __init__(self, device):
        self.idx = device if device is None or isinstance(device, int) else getattr(device, "index", device)

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            raise AssertionError(_NOT_COMPILED)
        return self

    def __exit__(self, *exc):
        return False


class device_of(device):
    """torch.cuda.device_of(tensor): the tensor's device, a no-op for CPU tensors."""

    def __init__(self, obj):
        super().__init__(-1)
