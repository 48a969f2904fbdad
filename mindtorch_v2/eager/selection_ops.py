"""Torch names that read or rewrite parts of a tensor: flips (fliplr, flipud), ravel, msort, diagflat,
argwhere, split_with_sizes, narrow_copy, sum_to_size, index_copy, fill_diagonal_, and the questions asked
of a tensor (is_nonzero, is_same_size, is_signed, get_device, Tensor.is_cpu). Built from eager ops, so
gradients come from those ops' rules.
"""
import builtins

import numpy as np

from .. import core
from ..core import dtypes as _dt
from .declare import tensor_method, torch_op
from .inplace import check_scalar_fits
from .ops import _t, _w, diag, flip, nonzero, sort, sum, where
from .shape_ops import index_put
from .tensor import Tensor, _dim, _int_sizes
from .views import narrow, reshape, split
from .writeback import apply, original

__all__ = [
    "fliplr", "flipud", "ravel", "msort", "diagflat", "argwhere", "split_with_sizes", "narrow_copy", "index_copy",
    "is_nonzero", "is_same_size", "is_signed", "get_device",
]


@torch_op
def fliplr(input):
    """input with dim 1 reversed (at least 2-D)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@torch_op
def flipud(input):
    """input with dim 0 reversed (at least 1-D)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@torch_op
def ravel(input):
    """The flattened input: a view when the strides allow it."""
    return reshape(input, (-1,))


@torch_op(out=True)
def msort(input):
    """input sorted along dim 0."""
    return sort(input, 0).values


@torch_op
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal `offset`."""
    return diag(reshape(input, (-1,)), offset)


@torch_op
def argwhere(input):
    """The indices of the nonzero elements, one row per element (torch.nonzero)."""
    return nonzero(input)


@torch_op
def split_with_sizes(input, split_sizes, dim=0):
    """Views of input cut along dim into pieces of split_sizes (which must sum to its size)."""
    sizes = [int(s) for s in split_sizes]
    d = _dim(dim, input.ndim)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if builtins.sum(sizes) != input.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {input.shape[d]} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return split(input, sizes, d)


@torch_op(out=True)
def narrow_copy(input, dim, start, length):
    """A copy of input.narrow(dim, start, length)."""
    return narrow(input, dim, start, length).clone()


@tensor_method
def sum_to_size(self, *size):
    """self summed down to `size`, which must broadcast to self's shape (the reverse of expand)."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = tuple(_int_sizes(size, "sum_to_size", "size"))
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self
    if lead:
        out = sum(out, tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    return sum(out, dims, keepdim=True) if dims else out


@torch_op(inplace=True)
def index_copy(input, dim, index, source):
    """input with the slices at `index` along dim replaced by source's slices, in order."""
    x = _t(input)
    d = _dim(dim, x.ndim) if x.ndim else _dim(dim, 1)
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {getattr(index, 'ndim', 0)})")
    if index.dtype is not _dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {index.dtype.scalar_name}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{x.dtype.scalar_name} and (source) {source.dtype.scalar_name}")
    n_source = source.shape[d] if source.ndim else 1
    if index.numel() != n_source:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({n_source})")
    for i in range(max(x.ndim, source.ndim)):
        if i != d and (x.shape[i] if i < x.ndim else 1) != (source.shape[i] if i < source.ndim else 1):
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. "
                               f"Destination slice shape: {x.shape[i] if i < x.ndim else 1} at dimension {i} "
                               f"and source slice shape: {source.shape[i] if i < source.ndim else 1} at "
                               f"dimension {d if i == 0 else 0}.")
    size = x.shape[d] if x.ndim else 1
    idx = reshape(index, (-1,))
    if idx.numel() and idx.device.type != "meta" and isinstance(idx._value(), core.Array):
        values = np.asarray(idx._value())
        bad = values[(values < 0) | (values >= size)]
        if bad.size:
            raise IndexError(f"index_copy_(): index {int(bad[0])} is out of bounds for dimension {d} with size "
                             f"{size}")
    if not x.ndim:  # (its one slice: as a 1-element vector)
        return index_put(x.reshape(1), (idx,), source.reshape(1)).reshape(())
    # the slices written as one index_put along dim (a copy: duplicates leave the last one's values, -0.0 kept)
    src = source.reshape(tuple(x.shape[:d]) + (1,) + tuple(x.shape[d + 1:])) if not source.ndim else source
    return index_put(x.movedim(d, 0), (idx,), src.movedim(d, 0)).movedim(0, d)


@tensor_method
def fill_diagonal_(self, fill_value, wrap=False):
    """self with its main diagonal (all indices equal) set to fill_value; for a tall matrix, wrap=True
    starts the diagonal again after every N + 1 rows, as numpy.fill_diagonal."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.ndim > 2 and any(s != shape[0] for s in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    check_scalar_fits(fill_value, self.dtype)
    mask = np.zeros(shape, np.bool_)
    if self.ndim == 2 and wrap:
        np.fill_diagonal(mask, True, wrap=True)
    else:
        k = np.arange(min(shape))
        mask[(k,) * len(shape)] = True
    fill = core.full((), fill_value, dtype=self.dtype, device=self.device)

    def compute():
        return where(_w(core.asarray(mask, device=self.device)), _w(fill), original(self))
    return apply(self, compute, "fill_diagonal_")


@torch_op
def is_nonzero(input):
    """Whether the one value of a one-element tensor is nonzero."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@torch_op
def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


@torch_op
def is_signed(input):
    """Whether input's dtype holds negative values (bool and the unsigned integers do not)."""
    return bool(input.dtype.is_signed)


@torch_op
def get_device(input):
    """The device index: -1 on cpu (and meta), the ordinal on an accelerator."""
    dev = input.device
    return -1 if dev.type in ("cpu", "meta") else (dev.index or 0)


@tensor_method("is_cpu")
@property
def _is_cpu(self):
    """Whether the tensor lives on the cpu."""
    return self.device.type == "cpu"
