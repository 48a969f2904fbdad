"""torch.nn.attention: choosing scaled_dot_product_attention's kernel.

`sdpa_kernel(backends)` enables only the listed kernels for a block (the same flags torch.backends.cuda's
*_sdp_enabled() report). On the CPU, as in PyTorch, MATH and FLASH_ATTENTION are the kernels that exist (here
both compute softmax(q k^T * scale + mask) v exactly); with only EFFICIENT_ATTENTION or CUDNN_ATTENTION
enabled, scaled_dot_product_attention finds no viable kernel and raises PyTorch's RuntimeError.
"""
import contextlib
import enum
import warnings

from ...backends import cuda as _cuda
from . import bias  # noqa: F401

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "SDPAParams", "can_use_flash_attention",
           "can_use_efficient_attention", "bias"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The scaled_dot_product_attention kernels (PyTorch's values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash", SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
         SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.OVERRIDEABLE: "overrideable"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends` (one SDPBackend or a list)."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple, set)) or not all(isinstance(b, SDPBackend) for b in backends):
        got = type(backends).__name__ if not isinstance(backends, (list, tuple, set)) else "a list with " + ", ".join(
            type(b).__name__ for b in backends if not isinstance(b, SDPBackend))
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got {got}")
    saved = dict(_cuda._sdp)
    wanted = {_FLAG[b] for b in backends if b in _FLAG}
    _cuda._sdp.update({name: name in wanted for name in _cuda._sdp})
    try:
        yield {}
    finally:
        _cuda._sdp.update(saved)


class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, as the can_use_* checks take them."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa=False):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


def _cuda_only(name):
    def check(params, debug=False):
        if debug:
            warnings.warn(f"{name} requires a CUDA device; none is available")
        return False
    check.__name__ = f"can_use_{name}"
    check.__doc__ = f"Whether the CUDA {name} kernel could run these params: never, with no CUDA here."
    return check


can_use_flash_attention = _cuda_only("flash_attention")
can_use_efficient_attention = _cuda_only("efficient_attention")


def check_viable_kernel(query):
    """Raise PyTorch's error when no enabled kernel can run on the CPU (math, or flash for 4-D inputs)."""
    sdp = _cuda._sdp
    if sdp["math"] or (sdp["flash"] and query.ndim == 4):
        return
    raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to turning "
                       "off both the math kernel and the fused kernels.")
