"""torch.npu: Ascend devices, present only where the Ascend runtime is installed."""
from .core.backends import npu as _npu


def is_available():
    """True only where the Ascend runtime and its lowerings are present (never on plain CPU machines)."""
    return _npu.is_available()


def device_count():
    return 1 if is_available() else 0
