"""Dropout in torch.nn.functional (re-exported there): elementwise, per channel, and alpha dropout for SELU
networks. As ATen's _dropout_impl: a mask in the input's dtype from bernoulli_(1 - p) on the global generator
(so the mask is PyTorch's), divided by 1 - p, times the input."""
import math
import warnings

import numpy as np

from ..eager.creation import empty
from ._utils import inplace_result


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, mask_shape):
    """ATen's dropout noise: empty(mask_shape).bernoulli_(1 - p) in input's dtype."""
    return empty(tuple(mask_shape), dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)


def _dropout_with_mask(input, p, mask_shape, inplace):
    if p == 1.0 or input.numel() == 0:
        return inplace_result(input, input * 0.0, inplace) if p == 1.0 else input
    out = input * (_noise(input, p, mask_shape) * _inverse_keep(input.dtype, p))
    return inplace_result(input, out, inplace)


def _inverse_keep(dtype, p):
    """1 / (1 - p) as ATen's noise.div_(1 - p) rounds it: in float64 for double, else a float32 division (then
    rounded to half or bfloat16); the mask is 0 or 1, so noise * this equals that division exactly."""
    if dtype.itemsize == 8:
        return 1.0 / (1.0 - p)
    return float(np.asarray(np.float32(1) / np.float32(1.0 - p), dtype=dtype.np))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (identity when not training)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _dropout_with_mask(input, p, tuple(input.shape), inplace)


def _feature_dropout(input, p, training, inplace, k, name):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}: Expected {k + 1}D or {k + 2}D input, but received a {input.ndim}D input")
    lead = input.ndim - k
    return _dropout_with_mask(input, p, tuple(input.shape[:lead]) + (1,) * k, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def _channel_dropout(input, p, training, inplace, k, name):
    """torch's dropout2d / dropout3d: other ranks than k + 1 and k + 2 only warn. dropout3d reads anything but a
    5-D input as one sample (one mask entry per dim-0 slice); dropout2d always reads dims 0 and 1 as (N, C)."""
    _check_p(p)
    if input.ndim not in (k + 1, k + 2):
        warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated and will result in "
                      f"an error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with {k} "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. {k + 1}D or "
                      f"{k + 2}D inputs).", stacklevel=3)
    if not training or p == 0.0:
        return input
    lead = 2 if (k == 2 or input.ndim == k + 2) else 1
    mask_shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    return _dropout_with_mask(input, p, mask_shape, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: input (N, C, H, W) or (C, H, W); a 3-D input is read as (N, C, L), as torch does."""
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, inplace, 3, "dropout3d")


def _alpha_dropout(input, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return inplace_result(input, input * 0.0, inplace)
    alpha = 1.7580993408473766
    noise = _noise(input, p, mask_shape)
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = (noise - 1) * (alpha * a) + alpha * a * p  # dropped entries: the SELU saturation value, rescaled
    out = input * (noise * a) + b
    return inplace_result(input, out, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance: dropped entries become the negative saturation value,
    then everything is rescaled and shifted."""
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape))


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout with one mask entry per (sample, channel)."""
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape[:2]) + (1,) * (input.ndim - 2))


