"""Linear layers, convolutions (and their transposes) and pooling in torch.nn.functional (re-exported there).

Convolution, transposed convolution and max / average pooling are core's conv / conv_transpose / pool
functions (conv_transpose is the very function conv's input-gradient is); this file adds torch's argument
checks and messages. Adaptive pooling is an ordinary average pool when the sizes divide and a constant
averaging matrix over core's adaptive bins otherwise.
"""
import numbers

from ..core import bool_
from ..core import (adaptive_pool_bins, avg_pool, conv, conv_transpose, conv_transpose_sizes, linear_p, max_pool,
                    max_pool_indices)
from ..eager.autocast_state import lower_precision
from ..eager.creation import arange, tensor, zeros
from ..eager.ops import cat, einsum, matmul, relu
from ..eager.memory_format import channels_last, channels_last_3d, has_layout, storage_order, to_format
from ..eager.tensor import _named, as_result, tensor_bind
from ._utils import along, ntuple


def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    input, weight, bias = lower_precision(input, weight, bias)
    if input.ndim and weight.ndim == 2 and input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    if bias is not None and input.dtype is weight.dtype and bias.dtype is not weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {bias.dtype.scalar_name} and "
                           f"{weight.dtype.scalar_name}")
    if bias is not None and bias.ndim <= 1 and weight.ndim == 2 and bias.numel() not in (1, weight.shape[0]):
        rows = input.numel() // input.shape[-1] if input.ndim and input.shape[-1] else 0
        raise RuntimeError(f"The expanded size of the tensor ({weight.shape[0]}) must match the existing size "
                           f"({bias.numel()}) at non-singleton dimension 1.  Target sizes: [{rows}, "
                           f"{weight.shape[0]}].  Tensor sizes: [{bias.numel()}]")
    if (input.ndim >= 2 and weight.ndim == 2 and input.dtype is weight.dtype and input.dtype is not bool_
            and (bias is None or tuple(bias.shape) == (weight.shape[0],))):
        # one op and one backward node (core's linear primitive), as torch's addmm / mm
        out = as_result(tensor_bind(linear_p, (input, weight) if bias is None else (input, weight, bias), {}))
        if bias is None:
            return _named(out, "MmBackward0" if input.ndim == 2 else "UnsafeViewBackward0", input, weight)
    else:
        out = matmul(input, weight.t())
        if bias is None:
            return out
        out = out + bias
    # torch's nodes: addmm for a matrix input, a view of it for the others
    return _named(out, "AddmmBackward0" if input.ndim == 2 else "ViewBackward0", input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1 . W_k x2 + b_k over the last dims."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match "
                           f"weight of size {list(weight.shape)}")
    out = einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


def _check_ranks(name, k, input, weight):
    """torch's errors for a conv input that is not (N, C, *spatial) or (C, *spatial), or a weight not k + 2-D."""
    if input.ndim not in (k + 1, k + 2):
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    if weight.ndim != k + 2:
        raise RuntimeError(f"{name}: expected weight to be {k + 2}-dimensional, but got weight of size "
                           f"{list(weight.shape)}")


def _check_dtypes(input, weight, bias):
    """torch's errors for a weight or bias whose dtype is not the input's."""
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.scalar_name.lower()}) and bias type "
                           f"({bias.dtype.scalar_name.lower()}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found {weight.dtype.scalar_name}")


def _conv(name, k, input, weight, bias, stride, padding, dilation, groups):
    input, weight, bias = lower_precision(input, weight, bias)
    _check_ranks(name, k, input, weight)
    channels = input.shape[0 if input.ndim == k + 1 else 1]
    if weight.shape[1] * groups != channels:
        shape = list(input.shape) if input.ndim == k + 2 else [1] + list(input.shape)
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{shape} to "
                           f"have {weight.shape[1] * groups} channels, but got {channels} channels instead")
    _check_dtypes(input, weight, bias)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in ntuple(stride, k, "stride")):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    else:
        padding = ntuple(padding, k, "padding")
    out = conv(input, weight, ntuple(stride, k, "stride"), padding, ntuple(dilation, k, "dilation"),
                    int(groups))
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * k)
    if k > 1 and input.ndim == k + 2:
        # torch's suggested layout: a channels-last input or weight (one not also row-major) gives a
        # channels-last output
        fmt = channels_last if k == 2 else channels_last_3d
        order = storage_order(fmt, k + 2)
        if any(has_layout(t, order) and not has_layout(t, tuple(range(k + 2))) for t in (input, weight)):
            out = to_format(out, fmt)
    return out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of input (N, C_in, H, W) with weight (C_out, C_in / groups, kH, kW)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name, k, input, weight, bias, stride, padding, output_padding, groups, dilation):
    """The adjoint of _conv with respect to its input: core's conv_transpose, which conv's input-gradient is."""
    input, weight, bias = lower_precision(input, weight, bias)
    _check_ranks(name, k, input, weight)
    _check_dtypes(input, weight, bias)
    groups = int(groups)
    stride = ntuple(stride, k, "stride")
    padding = ntuple(padding, k, "padding")
    output_padding = ntuple(output_padding, k, "output_padding")
    dilation = ntuple(dilation, k, "dilation")
    shape = list(input.shape) if input.ndim == k + 2 else [1] + list(input.shape)
    c_in = shape[1]
    if weight.shape[0] != c_in or c_in % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{shape} to have {weight.shape[0]} channels, but got {c_in} channels instead")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
    spatial = tuple(shape[2:])
    out_sp = conv_transpose_sizes(spatial, tuple(weight.shape[2:]), stride, tuple((p, p) for p in padding), dilation,
                                  output_padding)
    if any(o <= 0 for o in out_sp):
        raise RuntimeError(f"{name}: the output size {list(out_sp)} (input {list(spatial)}) is too small")
    out = conv_transpose(input, weight, stride, padding, dilation, groups, output_padding)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * k)
    return out


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
    kernel = ntuple(kernel_size, k, "kernel_size")
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else ntuple(stride, k, "stride")
    padding = ntuple(padding, k, "padding")
    dilation = ntuple(dilation, k, "dilation")
    for p, kk, d in zip(padding, kernel, dilation):
        if p > (d * (kk - 1) + 1) // 2 or p > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={kk} and dilation={d}")
    return kernel, stride, padding, dilation


def _max_pool(name, k, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel, stride, padding, dilation = _pool_args(name, k, input, kernel_size, stride, padding, dilation)
    out = max_pool(input, kernel, stride, padding, dilation, ceil_mode)
    if return_indices:
        return out, max_pool_indices(input.detach(), kernel, stride, padding, dilation, ceil_mode)
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
    out = avg_pool(input, kernel, stride, padding, ceil_mode, count_include_pad)
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
    rows = [[1.0 / (end - start) if start <= j < end else 0.0 for j in range(in_size)]
            for start, end in adaptive_pool_bins(in_size, out_size)]
    return tensor(rows, dtype=dtype, device=device)


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
            out = avg_pool(out, window, window, 0)
            continue
        out = along(out, axis, _adaptive_matrix(s, o, input.dtype, input.device))
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
    index = arange(n, device=input.device).reshape(spatial).expand(*input.shape) if return_indices else None
    for i in reversed(range(k)):
        s, o = spatial[i], sizes[i]
        axis = input.ndim - k + i
        values, indices = [], []
        for start, end in adaptive_pool_bins(s, o):
            v, at = out.narrow(axis, start, end - start).max(axis, keepdim=True)
            values.append(v)
            if index is not None:
                indices.append(index.narrow(axis, start, end - start).gather(axis, at))
        out = cat(values, axis)
        index = cat(indices, axis) if index is not None else None
    return (out, index) if return_indices else out


def _max_unpool(k, input, indices, kernel_size, stride, padding, output_size):
    """The inverse of max_pool with return_indices: each value scattered to its flat spatial index, zeros elsewhere."""
    kernel = ntuple(kernel_size, k, "kernel_size")
    stride = kernel if stride is None else ntuple(stride, k, "stride")
    padding = ntuple(padding, k, "padding")
    spatial = tuple(input.shape[input.ndim - k:])
    default = conv_transpose_sizes(spatial, kernel, stride, tuple((p, p) for p in padding), (1,) * k, (0,) * k)
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
    flat = zeros(lead + (n,), dtype=input.dtype, device=input.device)
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
    kernel = ntuple(kernel_size, k, "kernel_size")
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[k - 1]
    out = avg(input.pow(norm_type), kernel, stride if stride is not None else kernel, 0, ceil_mode)
    n = 1
    for kk in kernel:
        n *= kk
    return (out.sign() * relu(out.abs())).mul(n).pow(1.0 / norm_type)


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
