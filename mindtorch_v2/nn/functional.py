"""torch.nn.functional: layers, activations and losses as functions of tensors. Activations, padding,
normalization and embeddings are defined here; dropout lives in _dropout.py, linear layers, convolutions and
pooling in _conv.py, losses in _losses.py, attention in _attention.py, resizing in _resize.py, all re-exported
here by name (`__all__` lists the public API). Shared helpers are in _utils.py, which imports no other nn module.

Every function here is a composite of torch tensor ops (and core's conv / pool
primitives), so its gradient comes from those ops' own rules: nothing in this
package defines a derivative. Where an op's naive form has a non-finite branch
that `where` would mask (exp overflow in elu / softplus), the branch's input is
clamped first so the masked branch's gradient stays finite (no 0 * inf).
"""
import math
import numbers
import warnings

import numpy as np

from ..core import int32, int64, layer_norm_p, pad as _pad_constant
from ..eager.creation import arange, full_like, ones_like, tensor, zeros, zeros_like
from ..eager.random_ops import rand
from ..eager.grad_mode import no_grad
from ..eager.pointwise_ops import hardshrink, prelu
from ..eager.statistics_ops import pdist
from ..eager.ops import checked_index, erf, exp, expm1, log, log1p, rsqrt, sigmoid, sqrt, stack, tanh, where
from ..eager.tensor import Tensor, UnsupportedDTypeError, _int_sizes, _named, as_result
from ._attention import multi_head_attention_forward, scaled_dot_product_attention
from ._conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
                    adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, bilinear,
                    channel_shuffle, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,
                    linear, lp_pool1d, lp_pool2d, lp_pool3d, max_pool1d, max_pool2d, max_pool3d, max_unpool1d,
                    max_unpool2d, max_unpool3d, native_channel_shuffle)
from ._dropout import (alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout)
from ._losses import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                      cross_entropy, ctc_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
                      margin_ranking_loss, mse_loss, multi_margin_loss, multilabel_margin_loss,
                      multilabel_soft_margin_loss, nll_loss, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
                      triplet_margin_loss, triplet_margin_with_distance_loss)
from ._resize import (fold, interpolate, pixel_shuffle, pixel_unshuffle, unfold, upsample, upsample_bilinear,
                      upsample_nearest)
from ._utils import concrete, inplace_result, inplace_source

__all__ = [
    # activations (defined here; prelu and hardshrink, torch functions too, in eager/pointwise_ops.py)
    "relu", "relu_", "hardtanh", "hardtanh_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "gelu", "silu", "softplus", "mish", "prelu", "rrelu", "rrelu_", "sigmoid", "tanh", "logsigmoid",
    "hardsigmoid", "hardswish", "softsign", "tanhshrink", "softshrink", "hardshrink", "threshold", "threshold_", "glu",
    "softmax", "softmin", "log_softmax", "gumbel_softmax",
    # distances, one_hot, padding, normalization, embeddings (defined here; pdist in eager/statistics_ops.py)
    "normalize", "cosine_similarity", "pairwise_distance", "pdist", "one_hot", "pad", "batch_norm", "instance_norm",
    "layer_norm", "rms_norm", "group_norm", "local_response_norm", "embedding", "embedding_bag",
    # dropout (_dropout.py)
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    # linear layers, convolutions, pooling (_conv.py)
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "channel_shuffle",
    "native_channel_shuffle",
    # losses (_losses.py)
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy", "ctc_loss",
    "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss",
    "mse_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss",
    "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    # attention (_attention.py), resizing (_resize.py)
    "scaled_dot_product_attention", "multi_head_attention_forward", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle",
]


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clamped to [min_val, max_val]; the gradient passes only strictly inside (as torch).

    The bounds are constant branches of `where`, so the one rule (where's) gives 0 at and beyond either bound
    in eager backward and every transform alike; clamp would pass it at the bounds, as torch.clamp does.
    NaN fails both tests and stays NaN."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    x = inplace_source(input, inplace)
    out = where(x <= min_val, min_val, where(x >= max_val, max_val, x))
    return inplace_result(input, out, inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    x = inplace_source(input, inplace)
    out = where(x > 0, x, x * negative_slope)
    return inplace_result(input, out, inplace)


def elu(input, alpha=1.0, inplace=False):
    x = inplace_source(input, inplace)
    out = where(x > 0, x, expm1(x.clamp(max=0)) * alpha)
    return inplace_result(input, out, inplace)


def selu(input, inplace=False):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    x = inplace_source(input, inplace)
    out = where(x > 0, x, expm1(x.clamp(max=0)) * alpha) * scale
    return inplace_result(input, out, inplace)


def celu(input, alpha=1.0, inplace=False):
    x = inplace_source(input, inplace)
    out = where(x > 0, x, expm1((x / alpha).clamp(max=0)) * alpha)
    return inplace_result(input, out, inplace)


def gelu(input, approximate="none"):
    """x * Phi(x); approximate='tanh' uses 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate == "none":
        return _named(input * 0.5 * (1.0 + erf(input * (1.0 / math.sqrt(2.0)))), "GeluBackward0", input)
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return _named(input * 0.5 * (1.0 + tanh(inner)), "GeluBackward0", input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input, inplace=False):
    x = inplace_source(input, inplace)
    return inplace_result(input, x * sigmoid(x), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    scaled = input * beta
    soft = log1p(exp(scaled.clamp(max=threshold))) / beta
    return where(scaled > threshold, input, soft)


def mish(input, inplace=False):
    x = inplace_source(input, inplace)
    return inplace_result(input, x * tanh(softplus(x)), inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if training:
        slope = rand(input.shape, dtype=input.dtype) * (upper - lower) + lower
    else:
        slope = (lower + upper) / 2
    x = inplace_source(input, inplace)
    return inplace_result(input, where(x > 0, x, x * slope), inplace)  # torch: the slope's side at 0


def logsigmoid(input):
    return -softplus(-input)


def hardsigmoid(input, inplace=False):
    """(x + 3) / 6 limited to [0, 1] (torch's kernel); the gradient 1/6 only strictly inside (-3, 3)."""
    x = inplace_source(input, inplace)
    out = where(x <= -3.0, 0.0, where(x >= 3.0, 1.0, (x + 3.0) / 6.0))
    return inplace_result(input, out, inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6; the gradient is 0 for x <= -3 and 1 for x >= 3 (torch's sides at the kinks)."""
    x = inplace_source(input, inplace)
    out = where((x > -3.0) & (x < 3.0), x * (x + 3.0) / 6.0, where(x >= 3.0, x, x * 0.0))
    return inplace_result(input, out, inplace)


def softsign(input):
    return input / (1.0 + input.abs())


def tanhshrink(input):
    return input - tanh(input)


def softshrink(input, lambd=0.5):
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, input * 0))


def threshold(input, threshold, value, inplace=False):
    x = inplace_source(input, inplace)
    out = where(x > threshold, x, full_like(x, value))
    return inplace_result(input, out, inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * sigmoid(b)


def _softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return input.softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return (-input).softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return input.log_softmax(dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    u = rand(logits.shape, dtype=logits.dtype)
    gumbels = -log(-log(u.clamp(min=1e-20)).clamp(min=1e-20))
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    w12 = (x1 * x2).sum(dim)
    w1 = (x1 * x1).sum(dim)
    w2 = (x2 * x2).sum(dim)
    return w12 / sqrt((w1 * w2).clamp_min(eps * eps))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape (*tensor.shape, num_classes) with a 1 at each class index."""
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    values = concrete(tensor)
    if values is not None and values.size:
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = int(values.max())
        if num_classes == -1:
            num_classes = top + 1
        elif top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if values is None and num_classes != -1:  # (traced: the program checks them)
        tensor = checked_index(tensor, num_classes, "RuntimeError", "Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


# ---------------------------------------------------------------------------
# padding


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims: pad = (left_last, right_last, left_prev, right_prev, ...)."""
    pad = _int_sizes((pad,), "pad", "pad", position=2)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode != "constant" and (not pad or input.ndim not in (len(pad) // 2 + 1, len(pad) // 2 + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length too large")
    pairs = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        pairs[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        return _pad_constant(input, tuple(pairs), value=0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unsupported padding mode: {mode}")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    out = input
    for axis, (lo, hi) in enumerate(pairs):
        if not lo and not hi:
            continue
        n = out.shape[axis]
        if lo < 0:
            out, n, lo = out.narrow(axis, -lo, n + lo), n + lo, 0
        if hi < 0:
            out, n, hi = out.narrow(axis, 0, n + hi), n + hi, 0
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {axis} of input "
                                   f"{list(input.shape)}")
            idx = list(range(lo, 0, -1)) + list(range(n)) + list(range(n - 2, n - 2 - hi, -1))
        elif mode == "replicate":
            idx = [0] * lo + list(range(n)) + [n - 1] * hi
        else:
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            idx = list(range(n - lo, n)) + list(range(n)) + list(range(hi))
        out = out.index_select(axis, tensor(idx, dtype=int64, device=input.device))
    return out


# ---------------------------------------------------------------------------
# normalization


def _affine(out, weight, bias, shape):
    """out * weight + bias, each (when given) viewed as `shape` (per channel: (1, C, 1, ...))."""
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalize over every dim but 1 with batch statistics (training; updates the running stats in place,
    the variance unbiased) or the running statistics (eval)."""
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined in "
                           "evaluation mode")
    if input.ndim < 2:  # torch's own errors: its batch-size check reads size[0], then the kernel dim 1
        if input.ndim == 0 and training:
            raise IndexError("tuple index out of range")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    shape = (1, c) + (1,) * (input.ndim - 2)
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        dims = (0,) + tuple(range(2, input.ndim))
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.reshape(c) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(var.reshape(c) * (momentum * n / (n - 1)))
        out = centered * rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        out = (input - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    return _affine(out, weight, bias, shape)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each (sample, channel) over its spatial dims."""
    dims = tuple(range(2, input.ndim))
    c = input.shape[1]
    shape = (1, c) + (1,) * (input.ndim - 2)
    if use_input_stats:
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        if running_mean is not None:
            n = 1
            for d in dims:
                n *= input.shape[d]
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.mean(0).reshape(c) * momentum)
                running_var.mul_(1 - momentum).add_(var.mean(0).reshape(c) * (momentum * n / max(n - 1, 1)))
        out = centered * rsqrt(var + eps)
    else:
        out = (input - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    return _affine(out, weight, bias, shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing len(normalized_shape) dims (biased variance), then scale and shift."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if not k:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(normalized_shape)}")
    if not input.dtype.is_floating_point:
        raise UnsupportedDTypeError(f'"LayerNormKernelImpl" not implemented for {input.dtype.scalar_name!r}')
    out = as_result(layer_norm_p.bind(input, k=k, eps=float(eps)))  # (core/ops/layer_norm.py)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return _named(out, "NativeLayerNormBackward0", input)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if eps is None:
        eps = float(np.finfo(input.dtype.np).eps)
    out = input * rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * weight


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of C / num_groups channels (with all spatial positions) per sample."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(-1, keepdim=True)
    out = (centered * rsqrt(var + eps)).reshape(input.shape)
    shape = (1, c) + (1,) * (input.ndim - 2)
    return _affine(out, weight, bias, shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    sq = (input * input).unsqueeze(1)
    if input.ndim == 3:
        sq = pad(sq, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(sq, (size, 1), stride=1).squeeze(1)
    else:
        shape = input.shape
        sq = sq.reshape(shape[0], 1, shape[1], shape[2], -1)
        sq = pad(sq, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(sq, (size, 1, 1), stride=1).squeeze(1).reshape(shape)
    return input / (div * alpha + k) ** beta


# ---------------------------------------------------------------------------
# embedding


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """weight rows at the indices in `input`: shape (*input.shape, embedding_dim).

    The row at padding_idx gets no gradient; max_norm renormalizes the looked-up rows in place first.
    """
    if not isinstance(input, Tensor) or input.dtype not in (int64, int32):
        got = input.type() if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += num
        elif padding_idx >= num:
            raise AssertionError("Padding_idx must be within num_embeddings")
    # (checked now, or, traced, when the program runs: a negative one would wrap to the last rows)
    input = checked_index(input, num, "IndexError", "index out of range in self")
    flat = input.reshape(-1).long()
    if max_norm is not None:
        with no_grad():
            rows = weight.index_select(0, flat)
            norms = rows.norm(norm_type, 1, keepdim=True)
            scale = where(norms > max_norm, max_norm / (norms + 1e-7), ones_like(norms))
            weight[flat] = rows * scale
    out = weight.index_select(0, flat)
    if padding_idx is not None:
        out = where((flat == padding_idx).unsqueeze(-1), out.detach(), out)
    if scale_grad_by_freq and out.requires_grad:
        # the gradient of each row is divided by how often its index occurs in this input; the value is unchanged
        values = concrete(flat)
        if values is not None:
            _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
            scale = tensor((1.0 / counts)[inverse.reshape(-1)], dtype=out.dtype, device=out.device)
        else:
            scale = 1.0 / (flat.unsqueeze(0) == flat.unsqueeze(1)).sum(1).to(out.dtype)
        scale = scale.unsqueeze(-1)
        out = out * scale + (out * (1.0 - scale)).detach()
    return out.reshape(tuple(input.shape) + (weight.shape[1],))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums / means / maxima of bags of embedding rows: the rows of a 2-D input, or the runs of a 1-D input
    that start at `offsets`. Entries equal to padding_idx take no part (an empty bag gives zeros)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({list(input.shape)})")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences.")
        groups = [(0, input.shape[1])] * input.shape[0]
        flat = input.reshape(-1)
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        bounds = [int(o) for o in offsets.tolist()]
        if not include_last_offset:
            bounds.append(input.shape[0])
        groups = None
        flat, psw = input, per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq)
    if psw is not None:
        rows = rows * psw.unsqueeze(-1)
    keep = None if padding_idx is None else (flat != padding_idx).unsqueeze(-1)
    if groups is not None:  # a 2-D input: every bag has the same length, one reduction over dim 1
        rows = rows.reshape(input.shape[0], input.shape[1], -1)
        keep = keep.reshape(input.shape[0], input.shape[1], 1) if keep is not None else None
        return _reduce_bag(rows, keep, mode, 1)
    bags = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b <= a:
            bags.append(zeros(weight.shape[1], dtype=weight.dtype, device=weight.device))
        else:
            bags.append(_reduce_bag(rows[a:b], keep[a:b] if keep is not None else None, mode, 0))
    return stack(bags)


def _reduce_bag(rows, keep, mode, dim):
    """The mode-reduction of rows over dim, with the entries where keep is False left out."""
    if keep is None:
        return {"sum": rows.sum, "mean": rows.mean, "max": rows.amax}[mode](dim)
    count = keep.sum(dim)
    if mode == "max":
        best = where(keep, rows, -math.inf).amax(dim)
        return where(count > 0, best, 0.0)
    total = where(keep, rows, 0.0).sum(dim)
    if mode == "sum":
        return total
    return total / count.clamp(min=1).to(rows.dtype)
