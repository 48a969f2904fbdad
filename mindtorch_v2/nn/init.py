"""torch.nn.init: in-place initializers (run under no_grad, drawing from torch's global generator).

Bounds follow PyTorch: xavier std = gain * sqrt(2 / (fan_in + fan_out)); kaiming std = gain / sqrt(fan)
with gain = calculate_gain(nonlinearity, a); a uniform with standard deviation std spans +-sqrt(3) std.
"""
import math
import warnings

import numpy as np

from ..eager.creation import empty_like, eye as _eye, from_numpy
from ..eager.ops import where
from ..eager.random_ops import randperm
from ..eager.grad_mode import no_grad


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _no_grad(fn):
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@_no_grad
def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    return tensor.uniform_(a, b, generator=generator)


@_no_grad
def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2)."""
    return tensor.normal_(mean, std, generator=generator)


@_no_grad
def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) conditioned on [a, b], drawing as PyTorch 2.13 does: when [a, b] holds more
    than 30% of the mass, normal draws with the ones outside redrawn; else uniform candidates on [a, b]
    accepted with probability pdf / peak (log of a uniform against the log-density)."""
    if tensor.device.type == "meta":
        return tensor

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
        lo, hi = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()  # the bounds in the tensor's dtype
        result = tensor.normal_(mean, std, generator=generator)
        while True:
            mask = (result < lo) | (result > hi)
            if not bool(mask.any()):
                break
            result = where(mask, empty_like(result).normal_(mean, std, generator=generator), result)
        if result is not tensor:
            tensor.copy_(result)
        return tensor
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    candidates, accept = empty_like(tensor), empty_like(tensor)
    tensor.uniform_(a, b, generator=generator)
    candidates.copy_(tensor)
    candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
    pending = accept.uniform_(generator=generator).log_().gt(candidates)
    if bool(pending.any()):
        result = tensor
        while True:
            candidates.uniform_(a, b, generator=generator)
            result = where(pending, candidates, result)
            candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            pending = where(pending, accept.uniform_(generator=generator).log_().gt(candidates), pending)
            if not bool(pending.any()):
                break
        tensor.copy_(result)
    return tensor


@_no_grad
def constant_(tensor, val):
    return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


@_no_grad
def eye_(tensor):
    """Fill a 2-D tensor with the identity (ones on the main diagonal)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return tensor.copy_(_eye(*tensor.shape, dtype=tensor.dtype))


@_no_grad
def dirac_(tensor, groups=1):
    """Fill a {3,4,5}-D conv weight with the Dirac delta (identity convolution per group)."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    value = np.zeros(tuple(sizes), dtype=tensor.dtype.np)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            value[(g * out_per_group + d, d) + centre] = 1
    return tensor.copy_(from_numpy(value))


@_no_grad
def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return tensor.uniform_(-a, a, generator=generator)


@_no_grad
def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.normal_(0.0, std, generator=generator)


def _zero_element(tensor):
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


@_no_grad
def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a)."""
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return tensor.uniform_(-bound, bound, generator=generator)


@_no_grad
def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan)."""
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return tensor.normal_(0.0, std, generator=generator)


@_no_grad
def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (of the tensor flattened to (rows, -1)), scaled by gain.

    The QR factorization of the random draw runs in numpy: this is initialization, not a differentiable path.
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = np.asarray(tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator), dtype=np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    tensor.copy_(from_numpy(np.ascontiguousarray(q)).reshape(tuple(tensor.shape)) * gain)
    return tensor


@_no_grad
def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor with N(0, std^2) entries and ceil(sparsity * rows) zeros per column."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    tensor.normal_(0, std, generator=generator)
    for col in range(cols):
        idx = randperm(rows)[:num_zeros]  # PyTorch draws these from the global generator, not `generator`
        tensor[idx, col] = 0
    return tensor


# the deprecated spellings without the trailing underscore
uniform = uniform_
normal = normal_
constant = constant_
eye = eye_
dirac = dirac_
xavier_uniform = xavier_uniform_
xavier_normal = xavier_normal_
kaiming_uniform = kaiming_uniform_
kaiming_normal = kaiming_normal_
orthogonal = orthogonal_
sparse = sparse_
