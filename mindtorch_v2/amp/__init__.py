"""torch.amp: autocast regions and the gradient scaler."""
import warnings

from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled, set_autocast_enabled
from .grad_scaler import GradScaler

_autocast_cls, _scaler_cls = autocast, GradScaler

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "GradScaler"]


def deprecated_spellings(device):
    """torch.<device>.amp.autocast and .GradScaler: torch.amp's, for `device`, with PyTorch's FutureWarning."""
    class autocast(_autocast_cls):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            warnings.warn(f"`torch.{device}.amp.autocast(args...)` is deprecated. Please use "
                          f"`torch.amp.autocast('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_scaler_cls):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)
    return autocast, GradScaler
