"""Backends: cpu (numpy) always; npu only where the Ascend runtime imports."""
from . import cpu  # noqa: F401
from . import npu  # noqa: F401
