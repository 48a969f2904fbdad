"""Autocast state (torch.autocast's table, per thread) and the input cast of PyTorch's CPU lower-precision
op list (matmul, mm, bmm, addmm, baddbmm, addbmm, linear, convolutions): inside `autocast("cpu",
dtype=torch.bfloat16)` their floating inputs, except float64 ones, are cast to the autocast dtype, as
PyTorch's cached_cast does, so the kernels run (and their results come out) in bfloat16."""
import threading

from ..core import dtypes as _dt

# PyTorch's defaults: float16 on accelerators, bfloat16 on cpu
DEFAULT_DTYPE = {"cpu": _dt.bfloat16, "cuda": _dt.float16, "mps": _dt.float16, "xpu": _dt.bfloat16}
_state = threading.local()


def table():
    """{device type: [enabled, dtype]} of this thread."""
    t = getattr(_state, "table", None)
    if t is None:
        t = _state.table = {d: [False, dtype] for d, dtype in DEFAULT_DTYPE.items()}
    return t


def lower_precision(*tensors):
    """The tensors, cast to the cpu autocast dtype when a cpu autocast region is on (else unchanged)."""
    t = getattr(_state, "table", None)
    if t is None or not t["cpu"][0]:
        return tensors
    dtype = t["cpu"][1]
    return _cast(tensors, dtype, lambda d: d is not _dt.float64 and d is not dtype)


def full_precision(*tensors):
    """The tensors, their lower-precision floating ones cast to float32 when a cpu autocast region is on: the
    fp32 policy of PyTorch's CPU autocast list (nll_loss, cross_entropy_loss, ...), whose ops run in float32."""
    t = getattr(_state, "table", None)
    if t is None or not t["cpu"][0]:
        return tensors
    return _cast(tensors, _dt.float32, lambda d: d.itemsize < 4)


def _cast(tensors, dtype, takes):
    """The tensors, each floating one whose dtype `takes` cast to dtype."""
    return tuple(x.to(dtype) if x is not None and hasattr(x, "dtype") and x.dtype.category == _dt.FLOAT
                 and takes(x.dtype) else x for x in tensors)
