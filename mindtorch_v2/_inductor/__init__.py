"""torch._inductor: the settings of torch.compile's code generation that this package honours (config)."""
from . import config  # noqa: F401

__all__ = ["config"]
