"""torch.backends.cudnn: settable flags with PyTorch's defaults; cuDNN itself is absent."""
import contextlib
import sys

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "benchmark_limit", "deterministic",
           "allow_tf32"]

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    """None: no cuDNN library is loaded."""
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags for the block, then restore them."""
    module = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {n: getattr(module, n) for n in names}
    for n, v in zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)):
        setattr(module, n, v)
    try:
        yield
    finally:
        for n, v in saved.items():
            setattr(module, n, v)
