"""Memory formats: the order in which a tensor's elements are laid out in its storage.

A tensor's geometry (shape, strides, offset over its storage) can describe any layout. A channels_last
tensor of shape (N, C, H, W) keeps a storage of (N, H, W, C) elements, so its strides are
(H*W*C, 1, W*C, C):

    x = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    x.shape, x.stride()  ->  (2, 3, 4, 5), (60, 1, 15, 3)

Converting builds the permuted copy (with autograd history) and returns a view of it with the
permuted-back geometry (PyTorch's result is not a view; here `_base` is the permuted copy, which keeps
in-place writes with history consistent). `preserve_format` (the default of
clone and the *_like factories) keeps a dense layout as it is, as PyTorch does.
"""
from .. import core as _core
from .declare import NamedConstant, tensor_method
from .tensor import contiguous_strides

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


class memory_format(NamedConstant):
    """torch.memory_format: one of torch.contiguous_format, channels_last, channels_last_3d, preserve_format."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_RANK = {channels_last: 4, channels_last_3d: 5}


def storage_order(fmt, ndim):
    """The dims from outermost to innermost in storage: (0, 2, 3, 1) for channels_last, ..."""
    if fmt is None or fmt is contiguous_format:
        return tuple(range(ndim))
    rank = _RANK.get(fmt)
    if rank is None:
        if isinstance(fmt, memory_format):
            raise RuntimeError(f"{fmt} has no fixed layout here; expected contiguous_format, channels_last or "
                               "channels_last_3d")
        raise TypeError(f"memory_format must be a torch.memory_format, not {type(fmt).__name__}")
    if ndim != rank:
        which = "channels_last" if rank == 4 else "channels_last_3d"
        raise RuntimeError(f"required rank {rank} tensor to use {which} format")
    return (0,) + tuple(range(2, rank)) + (1,)


def _strides_in(shape, order):
    """The strides of a dense tensor of `shape` whose dims are laid out outermost-first in `order`."""
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def has_layout(t, order):
    """Whether t is dense in `order` (size-1 dims are ignored, as PyTorch's contiguity checks do)."""
    shape, strides, _ = t._geometry()
    if 0 in shape:
        return True
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


@tensor_method
def is_contiguous(self, memory_format=contiguous_format):
    """Whether the elements are laid out densely in `memory_format`'s order (row-major by default)."""
    if memory_format is preserve_format:  # as torch: asks for the row-major layout
        memory_format = contiguous_format
    if _RANK.get(memory_format, self.ndim) != self.ndim:  # a 2-d tensor is not channels_last (no error)
        return False
    return has_layout(self, storage_order(memory_format, self.ndim))


def dense_order(t):
    """The storage order of t's layout when it is dense and non-overlapping (strides decreasing along the
    order), else None."""
    shape, strides, _ = t._geometry()
    order = tuple(sorted(range(len(shape)), key=lambda d: (-strides[d], d)))
    return order if has_layout(t, order) else None


def in_order(t, order):
    """A copy of t laid out in `order` (autograd flows through the permuted copy)."""
    if order == tuple(range(t.ndim)):
        return t.clone(memory_format=contiguous_format)
    inverse = tuple(sorted(range(len(order)), key=lambda i: order[i]))
    dense = t.permute(*order).clone(memory_format=contiguous_format)
    strides = _strides_in(tuple(t.shape), order)
    # a view of the dense copy: the tape's rule is that a tensor not covering its storage in row-major
    # order has a base holding the storage's history (PyTorch's result is no view: `_base` differs)
    return dense._view_of(tuple(t.shape), strides, 0, record=lambda d: d.permute(*inverse))


def to_format(t, fmt):
    """t in memory format `fmt` (t itself when it already is): Tensor.contiguous(memory_format=fmt)."""
    if fmt is preserve_format:  # torch: fine for a row-major tensor, refused otherwise
        if has_layout(t, tuple(range(t.ndim))):
            return t
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    order = storage_order(fmt, t.ndim)
    return t if has_layout(t, order) else in_order(t, order)


def clone_order(t, fmt):
    """The storage order clone(memory_format=fmt) gives: preserve keeps a dense layout, else contiguous."""
    if fmt is None or fmt is preserve_format:
        if t._strides is None:
            return None
        order = dense_order(t)
        return None if order is None or order == tuple(range(t.ndim)) else order
    order = storage_order(fmt, t.ndim)
    return None if order == tuple(range(t.ndim)) else order


def like(t, fmt, make):
    """A factory's result (`make(shape)` gives a contiguous Tensor) in the layout `fmt` asks for relative to
    input t: preserve keeps t's dense layout, a named format sets it."""
    order = clone_order(t, fmt)
    out = make(tuple(t.shape))
    return out if order is None else _relaid(out, order)


def empty_in(shape, fmt, make):
    """make(shape) laid out in memory format `fmt` (torch.empty(..., memory_format=fmt))."""
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the empty operator")
    out = make(tuple(shape))
    order = storage_order(fmt, len(shape))
    return out if order == tuple(range(len(shape))) else _relaid(out, order)


def keep_layout(out, *operands):
    """out (a fresh elementwise result) laid out as PyTorch's TensorIterator lays it out: in the storage
    order of the first operand of out's shape when that one is dense in a permuted order (a channels_last
    or transposed input gives a channels_last or transposed result), else row-major as it is. The values
    and autograd history stay out's own: only its storage is permuted, in place, before anyone sees out."""
    if out.ndim < 2 or out._strides is not None:
        return out
    for a in operands:
        if getattr(a, "_shape", None) == out._shape:
            if a._strides is None or a._storage is out._storage:
                return out
            order = dense_order(a)
            if order is None or order == tuple(range(out.ndim)):
                return out
            st = out._storage
            st.value = _core.transpose(st.value, order)
            out._strides = _strides_in(out._shape, order)
            out._full = False
            return out
    return out


def _relaid(fresh, order):
    """A fresh contiguous factory result (no history) given the layout `order` (same values)."""
    out = in_order(fresh.detach(), order)
    out._rg = fresh._rg
    return out
