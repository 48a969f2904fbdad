"""torch.backends.cuda: PyTorch's flags with their defaults; is_built() False."""
import contextlib
import warnings

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled",
           "enable_cudnn_sdp", "sdp_kernel", "preferred_linalg_library"]


def is_built():
    """False: this package was not built with CUDA."""
    return False


class _Matmul:
    """torch.backends.cuda.matmul: settable flags (no cuBLAS reads them here)."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "none"


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled():
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    return _sdp["math"]


def enable_math_sdp(enabled):
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated in PyTorch for torch.nn.attention.sdpa_kernel; sets the flags for the block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature", FutureWarning)
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """Which GPU linear-algebra library to use: there is none here; returns "default"."""
    return "default"
