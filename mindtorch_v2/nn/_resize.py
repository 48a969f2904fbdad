"""Resizing and rearranging in torch.nn.functional (re-exported there): interpolate, unfold / fold,
pixel_shuffle / pixel_unshuffle.

interpolate builds one constant (out, in) matrix per resized axis (or an index gather for the nearest
modes), so its gradient is the transposed matrix product; fold is unfold's adjoint (windows_transpose).
"""
import math
import warnings

from ..core import int64, pad
from ..core import windows, windows_transpose
from ..eager.creation import tensor
from ._conv import _adaptive_avg_pool
from ._utils import along, ntuple


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C * kH * kW, L) sliding blocks."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    batched = input.ndim == 4
    x = input if batched else input.unsqueeze(0)
    kernel = ntuple(kernel_size, 2, "kernel_size")
    padding = ntuple(padding, 2, "padding")
    x = pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding), value=0.0)
    cols = windows(x, kernel, ntuple(stride, 2, "stride"), ntuple(dilation, 2, "dilation"))
    n, c, oh, ow = cols.shape[:4]
    out = cols.permute(0, 1, 4, 5, 2, 3).reshape(n, c * kernel[0] * kernel[1], oh * ow)
    return out if batched else out.squeeze(0)


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = input.shape
    out = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    out = out.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return out.reshape(*lead, c // (r * r), h * r, w * r)


def _linear_weights(in_size, out_size, scale, align_corners):
    """(out, in) linear interpolation matrix with torch's source index rule."""
    rows = []
    for j in range(out_size):
        if align_corners:
            src = j * ((in_size - 1) / (out_size - 1)) if out_size > 1 else 0.0
        else:
            src = max((j + 0.5) * scale - 0.5, 0.0)
        i0 = min(int(math.floor(src)), in_size - 1)
        i1 = min(i0 + 1, in_size - 1)
        lam = src - i0
        row = [0.0] * in_size
        row[i0] += 1.0 - lam
        row[i1] += lam
        rows.append(row)
    return rows


def _cubic(x, a):
    """The cubic convolution kernel with parameter a (Keys; torch uses a = -0.75, and -0.5 with antialias)."""
    x = abs(x)
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _cubic_weights(in_size, out_size, scale, align_corners):
    """(out, in) bicubic interpolation matrix: 4 taps around floor(src), indices clamped to the edges."""
    rows = []
    for j in range(out_size):
        src = j * scale if align_corners else (j + 0.5) * scale - 0.5  # no clamping at 0 for cubic
        i0 = int(math.floor(src))
        t = src - i0
        coeffs = (_cubic(t + 1.0, -0.75), _cubic(t, -0.75), _cubic(1.0 - t, -0.75), _cubic(2.0 - t, -0.75))
        row = [0.0] * in_size
        for tap, c in enumerate(coeffs):
            row[min(max(i0 - 1 + tap, 0), in_size - 1)] += c
        rows.append(row)
    return rows


def _antialias_weights(in_size, out_size, scale, cubic):
    """(out, in) matrix of torch's antialiased resampling (PIL's): the triangle or cubic (a = -0.5) filter
    stretched by the scale when downsampling, cut at the edges and normalized."""
    support = (2.0 if cubic else 1.0) * (scale if scale >= 1.0 else 1.0)
    invscale = 1.0 / scale if scale >= 1.0 else 1.0

    def filt(x):
        return _cubic(x, -0.5) if cubic else max(0.0, 1.0 - abs(x))
    rows = []
    for i in range(out_size):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size)
        w = [filt((j - center + 0.5) * invscale) for j in range(xmin, xmax)]
        total = sum(w)
        row = [0.0] * in_size
        for j, v in zip(range(xmin, xmax), w):
            row[j] = v / total if total != 0.0 else v
        rows.append(row)
    return rows


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resize the spatial dims (after N, C): modes nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
    area; antialias=True for bilinear / bicubic.

    Source index of output j: nearest floor(j * s), nearest-exact floor((j + 0.5) * s), linear
    (j + 0.5) * s - 0.5 clamped at 0 (or j * (in - 1) / (out - 1) with align_corners), s = in / out or
    1 / scale_factor, as in torch. Each axis is a gather or a constant interpolation matrix; 'area' is
    adaptive average pooling.
    """
    linear_modes = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
    if mode not in ("nearest", "nearest-exact", "area") and mode not in linear_modes:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    k = input.ndim - 2
    if mode in linear_modes and linear_modes[mode] != k:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {linear_modes[mode] + 2}D input")
    if mode not in linear_modes and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor "
                         "as input")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = input.shape[2:]
    if size is not None:
        sizes = ntuple(size, k, "size")
        scales = [s_in / s_out for s_in, s_out in zip(spatial, sizes)]
    else:
        factors = (scale_factor,) * k if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        sizes = tuple(int(math.floor(s * f)) for s, f in zip(spatial, factors))
        scales = [s_in / s_out for s_in, s_out in zip(spatial, sizes)] if recompute_scale_factor \
            else [1.0 / f for f in factors]
    if mode == "area":
        return _adaptive_avg_pool("interpolate", k, input, sizes)
    out = input
    for i, (s_in, s_out, sc) in enumerate(zip(spatial, sizes, scales)):
        if mode in linear_modes:
            if align_corners:
                sc = (s_in - 1) / (s_out - 1) if s_out > 1 else 0.0
            if antialias:
                rows = _antialias_weights(s_in, s_out, sc, mode == "bicubic")
            elif mode == "bicubic":
                rows = _cubic_weights(s_in, s_out, sc, bool(align_corners))
            else:
                rows = _linear_weights(s_in, s_out, sc, bool(align_corners))
            out = along(out, 2 + i, tensor(rows, dtype=input.dtype, device=input.device))
            continue
        offset = 0.5 if mode == "nearest-exact" else 0.0
        idx = [min(int(math.floor((j + offset) * sc)), s_in - 1) for j in range(s_out)]
        out = out.index_select(2 + i, tensor(idx, dtype=int64, device=input.device))
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, the adjoint of unfold: (N, C * kH * kW, L) blocks summed back into (N, C, *output_size)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got "
                           f"{input.ndim}D)")
    batched = input.ndim == 3
    x = input if batched else input.unsqueeze(0)
    size = ntuple(output_size, 2, "output_size")
    kernel = ntuple(kernel_size, 2, "kernel_size")
    dilation = ntuple(dilation, 2, "dilation")
    padding = ntuple(padding, 2, "padding")
    stride = ntuple(stride, 2, "stride")
    blocks = [(o + 2 * p - d * (k - 1) - 1) // s + 1 for o, p, d, k, s in zip(size, padding, dilation, kernel, stride)]
    n, ck, length = x.shape
    if ck % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ck} and kernel_size={kernel}")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                           f"stride={stride}, expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={length}.")
    c = ck // (kernel[0] * kernel[1])
    cols = x.reshape(n, c, kernel[0], kernel[1], blocks[0], blocks[1]).permute(0, 1, 4, 5, 2, 3)
    covered = tuple((b - 1) * s + d * (k - 1) + 1 for b, s, d, k in zip(blocks, stride, dilation, kernel))
    out = windows_transpose(cols, covered, kernel, stride, dilation)
    rest = tuple(o + 2 * p - cv for o, p, cv in zip(size, padding, covered))
    if any(rest):
        out = pad(out, ((0, 0), (0, 0)) + tuple((0, r) for r in rest), value=0.0)
    for i, (p, o) in enumerate(zip(padding, size)):
        if p:
            out = out.narrow(2 + i, p, o)
    return out if batched else out.squeeze(0)


def pixel_unshuffle(input, downscale_factor):
    """The inverse of pixel_shuffle: (*, C, H * r, W * r) -> (*, C * r * r, H, W)."""
    r = downscale_factor
    *lead, c, hr, wr = input.shape
    if hr % r or wr % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but "
                           f"input.size(-2)={hr} and input.size(-1)={wr} are not divisible by {r}")
    n = len(lead)
    out = input.reshape(*lead, c, hr // r, r, wr // r, r)
    out = out.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return out.reshape(*lead, c * r * r, hr // r, wr // r)
