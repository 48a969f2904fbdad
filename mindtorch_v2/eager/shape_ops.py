"""Torch names for the shape, creation and search ops of core's layout and search families (and
indexing's writing forms): torch's dims, argument spellings, errors and return types over the core
composites. Splits and atleast_nd return views, as in PyTorch; the rest return new tensors.
"""
import warnings

import numpy as np

from .. import core
from ..core import dtypes as _dt
from .declare import torch_op
from .ops import _t, _w, cat, vstack
from .tensor import Tensor, _dim
from .views import narrow, reshape

__all__ = [
    "meshgrid", "rot90", "diff", "repeat_interleave", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag",
    "cartesian_prod", "combinations", "tril_indices", "triu_indices", "logspace", "column_stack", "dstack",
    "row_stack", "hsplit", "vsplit", "dsplit", "tensor_split", "searchsorted", "bucketize", "isin", "unique",
    "unique_consecutive", "index_put", "masked_scatter", "diag_embed", "diagonal_scatter", "select_scatter",
    "slice_scatter",
]


def _tensor_list(tensors, name):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return [_t(x) for x in tensors]


def _concrete(x):
    """The numpy value of a tensor whose values decide a shape (not on meta, not under a transform)."""
    if x.device.type == "meta":
        raise NotImplementedError("this op has a data-dependent output shape and cannot run on meta tensors")
    v = x._value()
    if not isinstance(v, core.Array):
        raise RuntimeError("this op has a data-dependent output shape: its values are not known under a "
                           "transform")
    return np.asarray(v)


# ---------------------------------------------------------------------------
# grids, rotations, differences, repeats


def meshgrid(*tensors, indexing=None):
    """Coordinate tensors (expanded views) of 0-D or 1-D inputs; indexing 'ij' (the default, with torch's
    warning when omitted) or 'xy'."""
    tensors = _tensor_list(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {x}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if x.device is not tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    sizes = [x.numel() for x in tensors]
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    grid = [sizes[i] for i in order]
    out = []
    for i, x in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[order.index(i)] = sizes[i]
        out.append(reshape(x, tuple(shape)).expand(tuple(grid)))
    return tuple(out)


@torch_op
def rot90(input, k=1, dims=(0, 1)):
    x = _t(input)
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    a, b = _dim(dims[0], x.ndim), _dim(dims[1], x.ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    if k % 4 == 0:
        return x.clone()
    return _w(core.rot90(x, k, (a, b)))


@torch_op(out=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    x = _t(input)
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dim(dim, x.ndim)
    for name, extra in (("prepend", prepend), ("append", append)):
        if isinstance(extra, Tensor) and extra.ndim and extra.ndim != x.ndim:
            raise RuntimeError(f"diff expects {name} or append to be the same dimension as input")
    out = core.diff(x, n, d, _extra(prepend), _extra(append))
    return _w(out) if out is not x else x.clone()


def _extra(v):
    return v if v is None or isinstance(v, Tensor) else core.asarray(v)


@torch_op
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each entry (slice along `dim`; of the flattened input when None) repeated; the one-argument form
    torch.repeat_interleave(repeats) gives arange(len(repeats)) repeated by them."""
    if repeats is None:  # torch.repeat_interleave(repeats)
        reps = _t(input)
        if reps.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        input = _w(core.arange(reps.shape[0], device=reps.device))
        repeats, dim = reps, 0
    x = _t(input)
    if dim is not None:
        dim = _dim(dim, x.ndim)
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(_concrete(repeats)) if output_size is None else repeats.reshape(1)
    if isinstance(repeats, Tensor):
        if repeats.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats.dtype.category != _dt.INT:
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for {repeats.dtype.scalar_name!r}')
        size = x.numel() if dim is None else x.shape[dim]
        if repeats.shape[0] not in (1, size):
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0]} and input.size({0 if dim is None else dim}) = {size}")
        if output_size is None:
            counts = _concrete(repeats)
            if (counts < 0).any():
                raise RuntimeError("repeats can not be negative")
            return _w(core.repeat(x, counts, dim))
        return _w(core.repeat(x, repeats, dim, total_repeat_length=int(output_size)))
    if int(repeats) < 0:
        raise RuntimeError("Repeats must be non-negative")
    return _w(core.repeat(x, int(repeats), dim))


# ---------------------------------------------------------------------------
# at least n dimensions (views)


def _atleast(tensors, shape_of):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    out = tuple(x if shape_of(tuple(x.shape)) == tuple(x.shape) else reshape(x, shape_of(tuple(x.shape)))
                for x in _tensor_list(tensors, "atleast"))  # as torch: enough dims -> the input itself
    return out[0] if single else out


def atleast_1d(*tensors):
    return _atleast(tensors, lambda s: s or (1,))


def atleast_2d(*tensors):
    return _atleast(tensors, lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s)


def atleast_3d(*tensors):
    return _atleast(tensors, lambda s: {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s))


# ---------------------------------------------------------------------------
# building and joining


def block_diag(*tensors):
    tensors = [_t(x) for x in tensors]
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{x.ndim} dimensions")
    return _w(core.block_diag(*tensors))


def _vectors(tensors, same_dtype):
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
        if same_dtype and x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")


def cartesian_prod(*tensors):
    tensors = [_t(x) for x in tensors]
    _vectors(tensors, True)
    if len(tensors) == 1:
        return tensors[0]
    return _w(core.cartesian_prod(*tensors))


def combinations(input, r=2, with_replacement=False):
    x = _t(input)
    _vectors([x], False)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    return _w(core.combinations(x, r, with_replacement))


def _tri_indices(fn, row, col, offset, dtype, device):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = dtype or _dt.int64
    if dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"\"tril_indices\" not implemented for '{dtype.scalar_name}'")
    rows, cols = fn(row, offset, col, device=device)
    return _w(core.cast(core.stack([rows, cols]), dtype))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix (on and below `offset`)."""
    return _tri_indices(core.tril_indices, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix (on and above `offset`)."""
    return _tri_indices(core.triu_indices, row, col, offset, dtype, device)


@torch_op(method=False, out=True)
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """`steps` values from base ** start to base ** end, evenly spaced in the exponent."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = (float(_concrete(v)) if isinstance(v, Tensor) else v for v in (start, end))
    dtype = dtype or _dt.default_float
    out = core.logspace(start, end, int(steps), base=base, dtype=_dt.float64, device=device)
    if dtype.category == _dt.INT:  # torch casts a rounded power, not a truncated float64
        out = core.round(out)
    out = Tensor._from_value(core.cast(out, dtype))
    return out.requires_grad_() if requires_grad else out


def _nonempty(tensors, name):
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@torch_op(method=False, out=True)
def column_stack(tensors):
    tensors = _nonempty(tensors, "column_stack")
    return cat([x.reshape(-1, 1) if x.ndim < 2 else x for x in tensors], 1)


@torch_op(method=False, out=True)
def dstack(tensors):
    tensors = _nonempty(tensors, "dstack")
    return cat(list(atleast_3d(tensors)), 2)


@torch_op(method=False, out=True)
def row_stack(tensors):
    return vstack(_nonempty(tensors, "row_stack"))


# ---------------------------------------------------------------------------
# splitting (views)


@torch_op
def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """input split along `dim` into n nearly equal views (the first size % n one longer) or at the
    given indices (a list, or a 0-D / 1-D integer tensor)."""
    x = _t(input)
    spec = next(s for s in (indices_or_sections, sections, indices, tensor_indices_or_sections, 1) if s is not None)
    if x.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _dim(dim, x.ndim)
    if isinstance(spec, Tensor):
        if spec.dtype is not _dt.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{spec.dtype.scalar_name}")
        if spec.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {spec.ndim} dims")
        spec = int(_concrete(spec)) if spec.ndim == 0 else [int(i) for i in _concrete(spec)]
    n = x.shape[d]
    if isinstance(spec, (int, np.integer)):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(n, int(spec))
        bounds = [0]
        for i in range(int(spec)):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [min(max(int(i) + n if i < 0 else int(i), 0), n) for i in spec] + [n]
    return tuple(narrow(x, d, a, max(b - a, 0)) for a, b in zip(bounds[:-1], bounds[1:]))


def _directional_split(name, x, spec, dim, min_dims):
    x = _t(x)
    if x.ndim < min_dims:
        need = "at least 1 dimension" if min_dims == 1 else f"at least {min_dims} dimension"
        raise RuntimeError(f"torch.{name} requires a tensor with {need}, but got a tensor with {x.ndim} dimensions!")
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        size = x.shape[dim]
        if spec == 0 or size % spec:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {spec}!")
    return tensor_split(x, spec, dim)


@torch_op
def hsplit(input, indices_or_sections):
    x = _t(input)
    return _directional_split("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0, 1)


@torch_op
def vsplit(input, indices_or_sections):
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


@torch_op
def dsplit(input, indices_or_sections):
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


# ---------------------------------------------------------------------------
# search


def _search_operand(v, like):
    if isinstance(v, Tensor):
        return v, False
    return _w(core.asarray(v, device=like.device)), True


def _searchsorted(name, boundaries, values, side, out_int32, sorter=None):
    b = _t(boundaries)
    v, scalar = _search_operand(values, b)
    if b.ndim == 0:
        raise RuntimeError(f"{name}: boundaries tensor should have positive dimension, but got 0 dimension")
    if b.ndim > 1 and (v.ndim != b.ndim or tuple(v.shape[:-1]) != tuple(b.shape[:-1])):
        raise RuntimeError(f"{name}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                           f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(b.shape)} and input value tensor {list(v.shape)}")
    if sorter is not None and tuple(sorter.shape) != tuple(b.shape):
        raise RuntimeError(f"{name}: boundary and sorter must have the same size, but got boundary tensor "
                           f"{list(b.shape)}and got sorter tensor {list(sorter.shape)}")
    dtype = _dt.int32 if out_int32 else _dt.int64
    out = core.searchsorted(b.detach(), v.detach(), side, None if sorter is None else sorter.detach(), dtype=dtype)
    return _w(out)


@torch_op(method=False, out=True)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices where input's entries would go in sorted_sequence (sorted along its last dim)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
    side = side or ("right" if right else "left")
    return _searchsorted("torch.searchsorted()", sorted_sequence, input, side, out_int32, sorter)


@torch_op(method=False, out=True)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each entry of input: boundaries[i-1] < x <= boundaries[i] (right=False)."""
    b = _t(boundaries)
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return _searchsorted("torch.bucketize()", b, input, "right" if right else "left", out_int32)


@torch_op(method=False, out=True)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}), but expected one of: (Tensor elements, Tensor "
                        "test_elements), (Scalar element, Tensor test_elements), (Tensor elements, Scalar "
                        "test_element)")
    like = elements if isinstance(elements, Tensor) else test_elements
    x, _ = _search_operand(elements, like)
    t, _ = _search_operand(test_elements, like)
    return _w(core.isin(x.detach(), t.detach(), assume_unique, invert))


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = (_w(values),)
    if return_inverse:
        out += (_w(inverse),)
    if return_counts:
        out += (_w(counts),)
    return out[0] if len(out) == 1 else out


def _unique_input(input, dim):
    x = _t(input)
    d = None if dim is None else _dim(dim, x.ndim)
    if x.device.type == "meta":
        raise NotImplementedError("unique has a data-dependent output shape and cannot run on meta tensors")
    return x.detach(), d


@torch_op
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The sorted unique entries (slices along `dim`), with optionally the inverse indices and counts."""
    x, d = _unique_input(input, dim)
    values, inverse, counts = core.unique(x, return_inverse=True, return_counts=True, axis=d)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


@torch_op
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """input with runs of equal consecutive entries (slices along `dim`) collapsed to one."""
    x, d = _unique_input(input, dim)
    values, inverse, counts = core.unique_consecutive(x, True, True, axis=d)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


# ---------------------------------------------------------------------------
# writing forms of indexing and of views


@torch_op(inplace=True)
def index_put(input, indices, values, accumulate=False):
    """input with input[indices] = values (or += with accumulate, duplicates summed)."""
    x = _t(input)
    keys = []
    for k in indices:
        k = _t(k)
        if k.dtype is _dt.uint8:
            k = k.to(_dt.bool_)
        if k.dtype is not _dt.bool_ and k.dtype.category != _dt.INT:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        keys.append(k._value())
    used = sum(max(len(k.shape), 1) if k.dtype is _dt.bool_ else 1 for k in keys)
    if used > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {used})")
    v = _t(values) if not isinstance(values, (int, float, bool)) else _w(core.asarray(values, dtype=x.dtype))
    if v.dtype is not x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{x.dtype.scalar_name} for the destination and {v.dtype.scalar_name} for the source.")
    try:
        return _w(core.index_put(x, tuple(keys), v, accumulate))
    except ValueError as e:
        raise RuntimeError(str(e).replace("index_put: ", "")) from None


@torch_op(inplace=True)
def masked_scatter(input, mask, source):
    """input with the entries where mask holds replaced by source's first entries, in order."""
    x, m, src = _t(input), _t(mask), _t(source)
    if m.dtype is not _dt.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{m.dtype.scalar_name}")
    if src.dtype is not x.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{x.dtype.scalar_name} and {src.dtype.scalar_name}")
    shape = core.broadcast_shapes(tuple(x.shape), tuple(m.shape))
    if isinstance(m._value(), core.Array) and m.device.type != "meta":
        ones = int(np.count_nonzero(np.broadcast_to(np.asarray(m._value()), shape)))
        if ones > src.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
    if shape != tuple(x.shape):
        x = x.expand(tuple(shape))
    return _w(core.masked_scatter(x, m.detach(), src))


@torch_op
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    x = _t(input)
    a, b = _dim(dim1, x.ndim + 1), _dim(dim2, x.ndim + 1)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _w(core.diag_embed(x, offset, a, b))


def _src_size_error(src, want):
    raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                       f"slice size = {list(want)}")


@torch_op
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    x, src = _t(input), _t(src)
    a, b = _dim(dim1, x.ndim), _dim(dim2, x.ndim)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    want = x.diagonal(offset, a, b).shape
    if tuple(src.shape) != tuple(want):
        _src_size_error(src, want)
    return _w(core.diagonal_scatter(x, src, offset, a, b))


@torch_op
def select_scatter(input, src, dim, index):
    x, src = _t(input), _t(src)
    d = _dim(dim, x.ndim)
    n = x.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x.shape)} at dimension {d}")
    want = tuple(x.shape[:d]) + tuple(x.shape[d + 1:])
    if tuple(src.shape) != want:
        _src_size_error(src, want)
    return _w(core.select_scatter(x, src, d, index))


@torch_op(out=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    x, src = _t(input), _t(src)
    d = _dim(dim, x.ndim)
    if step is not None and step <= 0:
        raise RuntimeError("slice step must be positive")
    a, b, c = slice(start, end, step).indices(x.shape[d])
    want = tuple(x.shape[:d]) + (len(range(a, b, c)),) + tuple(x.shape[d + 1:])
    if tuple(src.shape) != want:
        _src_size_error(src, want)
    return _w(core.slice_scatter(x, src, d, start, end, step))

