"""torch.amp: autocast regions and the gradient scaler."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled, set_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "GradScaler"]
