"""Linear layers, convolutions (and their transposes) and pooling in torch.nn.functional (re-exported there).

Convolution and max / average pooling bind core's conv / pool primitives; transposed convolution is built
like conv's own input-gradient (w^T columns overlap-added by windows_transpose); adaptive pooling is an
ordinary average pool when the sizes divide and a constant averaging matrix otherwise.
"""
import math
import numbers

import mindtorch_v2 as torch

from .. import core
from ._losses import _type_word
from .functional import _along, _pair_like, relu


def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    if input.ndim and weight.ndim == 2 and input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    out = torch.matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1 . W_k x2 + b_k over the last dims."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match "
                           f"weight of size {list(weight.shape)}")
    out = torch.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


def _conv(name, k, input, weight, bias, stride, padding, dilation, groups):
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    if weight.ndim != k + 2:
        raise RuntimeError(f"{name}: expected weight to be {k + 2}-dimensional, but got weight of size "
                           f"{list(weight.shape)}")
    channels = input.shape[0 if input.ndim == k + 1 else 1]
    if weight.shape[1] * groups != channels:
        shape = list(input.shape) if input.ndim == k + 2 else [1] + list(input.shape)
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{shape} to "
                           f"have {weight.shape[1] * groups} channels, but got {channels} channels instead")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_type_word(input.dtype).lower()}) and bias type "
                           f"({_type_word(bias.dtype).lower()}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(input.dtype)} but found {_type_word(weight.dtype)}")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in _pair_like(stride, k, "stride")):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    else:
        padding = _pair_like(padding, k, "padding")
    out = core.conv(input, weight, _pair_like(stride, k, "stride"), padding, _pair_like(dilation, k, "dilation"),
                    int(groups))
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * k)
    return out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of input (N, C_in, H, W) with weight (C_out, C_in / groups, kH, kW)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name, k, input, weight, bias, stride, padding, output_padding, groups, dilation):
    """The adjoint of _conv with respect to its input, built the way conv's own input-gradient is:
    columns w^T @ x per group, overlap-added back by windows_transpose, then the padding cropped."""
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    if weight.ndim != k + 2:
        raise RuntimeError(f"{name}: expected weight to be {k + 2}-dimensional, but got weight of size "
                           f"{list(weight.shape)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_type_word(input.dtype).lower()}) and bias type "
                           f"({_type_word(bias.dtype).lower()}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(input.dtype)} but found {_type_word(weight.dtype)}")
    unbatched = input.ndim == k + 1
    x = input.unsqueeze(0) if unbatched else input
    groups = int(groups)
    stride = _pair_like(stride, k, "stride")
    padding = _pair_like(padding, k, "padding")
    output_padding = _pair_like(output_padding, k, "output_padding")
    dilation = _pair_like(dilation, k, "dilation")
    n, c_in = x.shape[0], x.shape[1]
    if weight.shape[0] != c_in or c_in % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[0]} channels, but got {c_in} channels instead")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
    kernel = tuple(weight.shape[2:])
    spatial = tuple(x.shape[2:])
    out_sp = tuple((li - 1) * s - 2 * p + d * (kk - 1) + op + 1
                   for li, s, p, d, kk, op in zip(spatial, stride, padding, dilation, kernel, output_padding))
    if any(o <= 0 for o in out_sp):
        raise RuntimeError(f"{name}: the output size {list(out_sp)} (input {list(spatial)}) is too small")
    c_out = weight.shape[1] * groups
    positions = 1
    for li in spatial:
        positions *= li
    xm = x.reshape(n, groups, c_in // groups, positions)
    wm = weight.reshape(groups, c_in // groups, -1)  # (G, Cin/G, Cout/G * K)
    cols = torch.matmul(wm.transpose(-1, -2), xm)  # (N, G, Cout/G * K, P)
    cols = cols.reshape((n, c_out) + kernel + spatial)
    cols = cols.permute((0, 1) + tuple(range(2 + k, 2 + 2 * k)) + tuple(range(2, 2 + k)))
    covered = tuple((li - 1) * s + d * (kk - 1) + 1 for li, s, d, kk in zip(spatial, stride, dilation, kernel))
    out = core.windows_transpose(cols, covered, kernel, stride, dilation)
    # the output is covered[p : p + size] per dim; output_padding beyond the last window is zeros
    extra = tuple(max(0, p + o - c) for p, o, c in zip(padding, out_sp, covered))
    if any(extra):
        out = core.pad(out, ((0, 0), (0, 0)) + tuple((0, e) for e in extra), value=0.0)
    for i, (p, o, c) in enumerate(zip(padding, out_sp, covered)):
        if p or o != c + extra[i]:
            out = out.narrow(2 + i, p, o)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * k)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose (input-gradient) of conv2d: input (N, C_in, H, W), weight (C_in, C_out / groups, kH, kW)."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def _pool_args(name, k, input, kernel_size, stride, padding, dilation):
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}: Expected {k + 1}D or {k + 2}D (batch mode) tensor for input, but got: "
                           f"{list(input.shape)}")
    kernel = _pair_like(kernel_size, k, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair_like(stride, k, "stride")
    padding = _pair_like(padding, k, "padding")
    dilation = _pair_like(dilation, k, "dilation")
    for p, kk, d in zip(padding, kernel, dilation):
        if p > (d * (kk - 1) + 1) // 2 or p > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={kk} and dilation={d}")
    return kernel, stride, padding, dilation


def _pool_out_size(size, k, s, p, d, ceil_mode):
    extent = d * (k - 1) + 1
    total = size + 2 * p
    if ceil_mode:
        out = -(-(total - extent) // s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
    else:
        out = (total - extent) // s + 1
    return out, max(0, (out - 1) * s + extent - total)


def _max_pool_indices(input, kernel, stride, padding, dilation, ceil_mode):
    """The flat spatial index of each window's (first) maximum, as torch's return_indices gives."""
    k = len(kernel)
    spatial = input.shape[input.ndim - k:]
    pads = []
    for size, kk, s, p, d in zip(spatial, kernel, stride, padding, dilation):
        _, extra = _pool_out_size(size, kk, s, p, d, ceil_mode)
        pads.append((p, p + extra))
    lead = ((0, 0),) * (input.ndim - k)
    n = 1
    for s in spatial:
        n *= s
    positions = torch.arange(n, device=input.device).reshape(spatial).expand(*input.shape)
    x = core.pad(input.detach(), lead + tuple(pads), value=-math.inf)
    pos = core.pad(positions, lead + tuple(pads), value=-1)
    xw = core.windows(x, kernel, stride, dilation)
    pw = core.windows(pos, kernel, stride, dilation)
    flat = xw.reshape(tuple(xw.shape[:xw.ndim - k]) + (-1,))
    arg = flat.argmax(-1, keepdim=True)
    return pw.reshape(tuple(pw.shape[:pw.ndim - k]) + (-1,)).gather(-1, arg).squeeze(-1)


def _max_pool(name, k, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel, stride, padding, dilation = _pool_args(name, k, input, kernel_size, stride, padding, dilation)
    out = core.max_pool(input, kernel, stride, padding, dilation, ceil_mode)
    if return_indices:
        return out, _max_pool_indices(input, kernel, stride, padding, dilation, ceil_mode)
    return out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over kernel_size windows of (N, C, H, W) (stride defaults to kernel_size; -inf padding)."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(name, k, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    kernel, stride, padding, _ = _pool_args(name, k, input, kernel_size, stride, padding, 1)
    out = core.avg_pool(input, kernel, stride, padding, ceil_mode, count_include_pad)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        n = 1
        for kk in kernel:
            n *= kk
        out = out * (n / divisor_override)
    return out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_matrix(in_size, out_size, dtype, device):
    """(out_size, in_size) averaging matrix: row i averages input [floor(i*in/out), ceil((i+1)*in/out))."""
    rows = []
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -(-((i + 1) * in_size) // out_size)
        rows.append([1.0 / (end - start) if start <= j < end else 0.0 for j in range(in_size)])
    return torch.tensor(rows, dtype=dtype, device=device)


def _adaptive_avg_pool(name, k, input, output_size):
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got {list(input.shape)}")
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * k
    spatial = input.shape[input.ndim - k:]
    sizes = tuple(s if o is None else int(o) for s, o in zip(spatial, output_size))
    out = input
    for i, (s, o) in enumerate(zip(spatial, sizes)):
        axis = input.ndim - k + i
        if s == o:
            continue
        if s % o == 0:
            window = tuple(s // o if j == i else 1 for j in range(k))
            out = core.avg_pool(out, window, window, 0)
            continue
        out = _along(out, axis, _adaptive_matrix(s, o, input.dtype, input.device))
    return out


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_avg_pool("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (oH, oW): bin i covers [floor(i*H/oH), ceil((i+1)*H/oH))."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", 2, input, output_size)


def _adaptive_max_pool(name, k, input, output_size, return_indices):
    """The maximum of each adaptive bin, reduced one axis at a time from the last, so that a tie goes to the
    first maximum in row-major order (where torch sends the gradient and its index points)."""
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got {list(input.shape)}")
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * k
    spatial = tuple(input.shape[input.ndim - k:])
    sizes = tuple(s if o is None else int(o) for s, o in zip(spatial, output_size))
    n = 1
    for s in spatial:
        n *= s
    out = input
    index = torch.arange(n, device=input.device).reshape(spatial).expand(*input.shape) if return_indices else None
    for i in reversed(range(k)):
        s, o = spatial[i], sizes[i]
        axis = input.ndim - k + i
        values, indices = [], []
        for j in range(o):
            start, end = (j * s) // o, -(-((j + 1) * s) // o)
            v, at = out.narrow(axis, start, end - start).max(axis, keepdim=True)
            values.append(v)
            if index is not None:
                indices.append(index.narrow(axis, start, end - start).gather(axis, at))
        out = torch.cat(values, axis)
        index = torch.cat(indices, axis) if index is not None else None
    return (out, index) if return_indices else out


def _max_unpool(k, input, indices, kernel_size, stride, padding, output_size):
    """The inverse of max_pool with return_indices: each value scattered to its flat spatial index, zeros elsewhere."""
    kernel = _pair_like(kernel_size, k, "kernel_size")
    stride = kernel if stride is None else _pair_like(stride, k, "stride")
    padding = _pair_like(padding, k, "padding")
    spatial = tuple(input.shape[input.ndim - k:])
    default = [(n - 1) * s + kk - 2 * p for n, s, kk, p in zip(spatial, stride, kernel, padding)]
    if output_size is None:
        size = default
    else:
        size = [int(o) for o in output_size]
        if len(size) == k + 2:
            size = size[2:]
        if len(size) != k:
            raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a "
                             f"length of '{len(size)}'")
        for d in range(k):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    lead = tuple(input.shape[:input.ndim - k])
    n = 1
    for s in size:
        n *= s
    flat = torch.zeros(lead + (n,), dtype=input.dtype, device=input.device)
    out = flat.scatter(-1, indices.reshape(lead + (-1,)), input.reshape(lead + (-1,)))
    return out.reshape(lead + tuple(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Place max_pool2d's outputs back at the positions its indices name (N, C, H, W)."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max_pool("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_pool("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


def _lp_pool(k, input, norm_type, kernel_size, stride, ceil_mode):
    kernel = _pair_like(kernel_size, k, "kernel_size")
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[k - 1]
    out = avg(input.pow(norm_type), kernel, stride if stride is not None else kernel, 0, ceil_mode)
    n = 1
    for kk in kernel:
        n *= kk
    return (torch.sign(out) * relu(torch.abs(out))).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def channel_shuffle(input, groups):
    """Interleave the channels of `groups` groups: (N, g * c, *) viewed as (N, g, c, *) -> (N, c, g, *)."""
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle
