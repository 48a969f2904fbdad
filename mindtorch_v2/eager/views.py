"""View ops: new geometry over the same Storage (no data copied).

Each view computes (shape, strides, offset) over the storage and names the core
op that produces the same value from its input, so autograd records that op's
node (transpose, reshape, slice, ...) and a view's gradient is the op's own VJP.
"""
import numpy as np

from .complex_ops import view_as_dtype
from .. import core
from ..core import reshape_p
from .declare import tensor_method, torch_op
from .memory_format import contiguous_format, to_format
from . import grad_mode
from .tensor import Tensor, _dim, _index_arg, _int_sizes, _named, contiguous_strides
from .writeback import with_history

__all__ = [
    "reshape", "transpose", "permute", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select",
    "split", "chunk", "unbind", "diagonal", "movedim", "t", "swapaxes", "swapdims", "moveaxis",
    "as_strided",
]


def _view(self, shape, strides, offset, record):
    """A view of self; `record(t)` is the core op giving the same value, replayed on the tape for autograd."""
    return self._view_of(shape, strides, offset, lambda t: _recorded(record, t))


def _recorded(record, t):
    out = record(t)
    if out is t:  # an op that changes nothing still gets its own node, so the view is not mistaken for a leaf
        out = reshape_p.bind(t, shape=tuple(t.shape))
    return out


def _same(t):
    return t


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _int_shape(shape, op="view", what="size"):
    return _int_sizes((shape,), op, what)


def _infer_view_shape(shape, numel, op):
    shape = _int_shape(shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _view_strides(shape, old_shape, old_strides):
    """Strides viewing (old_shape, old_strides) as `shape` with no copy, or None (PyTorch's computeStride)."""
    numel = 1
    for x in old_shape:
        numel *= x
    if numel == 0 or not old_shape:
        return contiguous_strides(shape)
    new_strides = [0] * len(shape)
    view_d = len(shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        # a chunk of old dims ends where the next one is not laid out right after it
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1
                             and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


@tensor_method
def view(self, *shape, dtype=None):
    """The same data with a new shape; raises when the strides do not allow it (use reshape)."""
    if dtype is not None and not shape:  # view(dtype=torch.int32)
        return view_as_dtype(self, dtype)
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
        return view_as_dtype(self, shape[0])  # view(dtype): the same bits read as another dtype
    shape = _infer_view_shape(_int_sizes(shape, "view"), self.numel(), "view")
    old_shape, old_strides, offset = self._geometry()
    strides = _view_strides(shape, old_shape, old_strides)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _named(_view(self, shape, strides, offset, lambda t: core.reshape(t, shape)), "ViewBackward0", self)


@torch_op
def reshape(self, *shape):
    """A view when the strides allow it, else a copy."""
    shape = _infer_view_shape(_int_sizes(shape, "reshape", "shape"), self.numel(), "reshape")
    old_shape, old_strides, offset = self._geometry()
    strides = _view_strides(shape, old_shape, old_strides)
    if strides is None:
        return Tensor._wrap(core.reshape(self, shape))
    return _named(_view(self, shape, strides, offset, lambda t: core.reshape(t, shape)), "ViewBackward0", self)


@tensor_method
def view_as(self, other):
    return view(self, other.shape)


@tensor_method
def reshape_as(self, other):
    return reshape(self, other.shape)


@torch_op
def permute(self, *dims):
    dims = _shape_args(dims)
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {self.ndim} is not "
                           f"equal to len(dims) = {len(dims)}")
    perm = tuple(_dim(d, self.ndim) for d in dims)
    if len(set(perm)) != len(perm):
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got {dims}")
    shape, strides, offset = self._geometry()
    return _named(_view(self, tuple(shape[p] for p in perm), tuple(strides[p] for p in perm), offset,
                        lambda t: core.transpose(t, perm)), "PermuteBackward0", self)


@torch_op(aliases=("swapaxes", "swapdims"))
def transpose(self, dim0, dim1):
    a, b = _dim(dim0, self.ndim), _dim(dim1, self.ndim)
    if self.ndim == 0:
        return _view(self, (), (), self._offset, _same)
    perm = list(range(self.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return _named(permute(self, *perm), "TransposeBackward0", self)


@torch_op
def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _named(transpose(self, 0, 1) if self.ndim == 2 else _view(self, *self._geometry(), _same), "TBackward0",
                  self)


@tensor_method
def expand(self, *sizes):
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    sizes = _int_sizes(sizes, "expand")
    if len(sizes) < self.ndim:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({self.ndim})")
    shape, strides, offset = self._geometry()
    lead = len(sizes) - len(shape)
    new_shape, new_strides = [], []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension {i}")
            new_shape.append(s)
            new_strides.append(0)
            continue
        old, st = shape[i - lead], strides[i - lead]
        if s == -1 or s == old:
            new_shape.append(old)
            new_strides.append(st)
        elif old == 1:
            new_shape.append(s)
            new_strides.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({old}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
    target = tuple(new_shape)
    return _named(_view(self, target, tuple(new_strides), offset, lambda x: core.broadcast_to(x, target)),
                  "ExpandBackward0", self)


@tensor_method
def expand_as(self, other):
    return expand(self, other.shape)


@torch_op
def squeeze(self, dim=None):
    shape, strides, offset = self._geometry()
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(sorted({_dim(d, self.ndim) for d in dims}))  # (0 and -1 are valid dims of a 0-d tensor)
        axes = tuple(a for a in axes if self.ndim and shape[a] == 1)  # torch ignores non-size-1 dims
    if not axes:
        return _view(self, shape, strides, offset, _same)
    keep = [i for i in range(len(shape)) if i not in axes]
    return _named(_view(self, tuple(shape[i] for i in keep), tuple(strides[i] for i in keep), offset,
                        lambda x: core.squeeze(x, axes)),
                  "SqueezeBackward0" if dim is None else f"SqueezeBackward{2 if isinstance(dim, (tuple, list)) else 1}",
                  self)


@torch_op
def unsqueeze(self, dim):
    d = _dim(dim, self.ndim + 1)
    shape, strides, offset = self._geometry()
    new_stride = strides[d] * shape[d] if d < len(shape) else 1
    return _named(_view(self, shape[:d] + (1,) + shape[d:], strides[:d] + (new_stride,) + strides[d:], offset,
                        lambda x: core.expand_dims(x, d)), "UnsqueezeBackward0", self)


@torch_op
def narrow(self, dim, start, length):
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _dim(dim, self.ndim)
    size = self._shape[d]
    start = int(start)
    if start < 0:
        start += size
    if not 0 <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice_view(self, d, start, start + length, 1)


def _slice_view(self, d, start, stop, step):
    shape, strides, offset = self._geometry()
    n = len(range(start, stop, step))
    new_shape = shape[:d] + (n,) + shape[d + 1:]
    new_strides = strides[:d] + (strides[d] * step,) + strides[d + 1:]
    key = tuple(slice(start, stop, step) if i == d else slice(None) for i in range(len(shape)))
    return _view(self, new_shape, new_strides, offset + start * strides[d], lambda x: core.static_slice(x, key))


@torch_op
def select(self, dim, index):
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, self.ndim)
    size = self._shape[d]
    i = int(index)
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
    i %= size
    shape, strides, offset = self._geometry()
    key = (slice(None),) * d + (i,)
    return _named(_view(self, shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:], offset + i * strides[d],
                        lambda x: core.getitem(x, key)), "SelectBackward0", self)


@torch_op
def diagonal(self, offset=0, dim1=0, dim2=1):
    d1, d2 = _dim(dim1, self.ndim), _dim(dim2, self.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, strides, off = self._geometry()
    if offset >= 0:
        n = max(min(shape[d1], shape[d2] - offset), 0)
        start = off + offset * strides[d2]
    else:
        n = max(min(shape[d1] + offset, shape[d2]), 0)
        start = off - offset * strides[d1]
    keep = [i for i in range(len(shape)) if i not in (d1, d2)]
    new_shape = tuple(shape[i] for i in keep) + (n,)
    new_strides = tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],)
    if n == 0:
        start = off

    def record(x):
        # the diagonal as a gather from the flattened (d1, d2) plane: an as_strided of x itself
        xs, xst, xo = _contiguous_geometry(x)
        st = tuple(xst[i] for i in keep) + (xst[d1] + xst[d2],)
        o = (offset * xst[d2] if offset >= 0 else -offset * xst[d1]) if n else 0
        return core.as_strided(x, new_shape, st, o)
    return _view(self, new_shape, new_strides, start, record)


def _contiguous_geometry(x):
    shape = tuple(x.shape)
    return shape, contiguous_strides(shape), 0


@tensor_method
def unfold(self, dimension, size, step):
    d = _dim(dimension, max(self.ndim, 1)) if self.ndim else 0
    shape, strides, offset = self._geometry()
    length = shape[d] if self.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    n = (length - size) // step + 1
    new_shape = shape[:d] + (n,) + shape[d + 1:] + (size,)
    st = strides[d] if self.ndim else 1
    new_strides = strides[:d] + (st * step,) + strides[d + 1:] + (st,)

    def record(x):
        _, xst, _ = _contiguous_geometry(x)
        xs = xst[d] if x.ndim else 1
        return core.as_strided(x, new_shape, xst[:d] + (xs * step,) + xst[d + 1:] + (xs,), 0)
    return _view(self, new_shape, new_strides, offset, record)


@torch_op
def split(self, split_size_or_sections, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, int) and split_size_or_sections < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size_or_sections}")
    d = _dim(dim, self.ndim)
    size = self._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sections = ([min(step, size - i) for i in range(0, size, step)] if step else []) or [0]
    else:
        sections = [int(s) for s in split_size_or_sections]
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sections}")
    out, start = [], 0
    for s in sections:
        out.append(_named(_slice_view(self, d, start, start + s, 1), "SplitBackward0", self))
        start += s
    return tuple(out)


@torch_op
def chunk(self, chunks, dim=0):
    if self.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dim(dim, self.ndim)
    size = self._shape[d]
    if not size:  # torch: `chunks` empty pieces
        return tuple(_slice_view(self, d, 0, 0, 1) for _ in range(chunks))
    return split(self, -(-size // chunks), d)


@torch_op
def unbind(self, dim=0):
    d = _dim(dim, self.ndim)
    return tuple(select(self, d, i) for i in range(self._shape[d]))


@torch_op
def flatten(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        return reshape(self, (1,))
    s, e = _dim(start_dim, self.ndim), _dim(end_dim, self.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = self._shape
    n = 1
    for x in shape[s:e + 1]:
        n *= x
    return reshape(self, shape[:s] + (n,) + shape[e + 1:])


@torch_op
def unflatten(self, dim, sizes):
    """dim split into `sizes` (one of them may be -1): a view when the strides allow it."""
    if self.ndim == 0:
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no "
                           "dimensions")
    d = _dim(dim, self.ndim)
    sizes = _int_shape(sizes, "unflatten", "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = self._shape[d] if self.ndim else 1
    if sum(1 for s in sizes if s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if -1 in sizes:
        if known == 0 or n % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                               f"({n}) in the input tensor")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} ({n}) "
                           "in the input tensor")
    return reshape(self, self._shape[:d] + tuple(sizes) + self._shape[d + 1:])


@torch_op(aliases=("moveaxis",))
def movedim(self, source, destination):
    """source dims moved to destination positions (ints or equal-length sequences), the rest in order."""
    src = [_dim(s, self.ndim) for s in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [_dim(s, self.ndim) for s in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
                           f"contain the same number of dims as destination ({list(destination)} dims)")
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if self.ndim == 0:
        return _view(self, (), (), self._offset, _same)
    order = [i for i in range(self.ndim) if i not in src]
    perm = [None] * self.ndim
    for s, d_ in zip(src, dst):
        perm[d_] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(self, *perm)


@tensor_method
def contiguous(self, memory_format=contiguous_format):
    """self when already laid out in `memory_format` (default: row-major), else a copy that is."""
    if memory_format is contiguous_format:
        return self if self.is_contiguous() else self.clone(memory_format=contiguous_format)
    return to_format(self, memory_format)


def _getitem_is_basic(key):
    keys = key if isinstance(key, tuple) else (key,)
    for k in keys:
        if k is None or k is Ellipsis or isinstance(k, (slice, bool, int, np.integer, np.bool_)):
            continue
        return False
    return True


def getitem(self, key):
    """Basic indexing (ints, slices, None, ...) gives a view; tensors, lists and masks give a copy."""
    if _getitem_is_basic(key):
        return _named(_basic_view(self, key), _basic_node_name(key), self)
    return _named(_advanced_getitem(self, index_key(self, key)), "IndexBackward0", self)


def _basic_node_name(key):
    """torch's node for basic indexing: that of the last index it applies (an int selects, None unsqueezes,
    a slice slices)."""
    for k in reversed(key if isinstance(key, tuple) else (key,)):
        if k is None:
            return "UnsqueezeBackward0"
        if isinstance(k, slice):
            return "SliceBackward0"
        if k is not Ellipsis and not isinstance(k, (bool, np.bool_)):
            return "SelectBackward0"
    return "AliasBackward0"


def _sequence_as_tuple(key):
    """torch (after old NumPy): a short list holding sequences, tensors, slices, None or ... is a tuple of
    indices, so x[[[0, 1], [2, 0]]] is x[[0, 1], [2, 0]]."""
    return len(key) < 32 and any(k is None or k is Ellipsis or
                                 isinstance(k, (list, tuple, range, slice, Tensor, np.ndarray)) for k in key)


def _is_mask(k):
    if isinstance(k, Tensor):
        return k.dtype is core.bool_
    return isinstance(k, (list, np.ndarray)) and len(k) > 0 and np.asarray(k).dtype == np.bool_


def index_key(self, key):
    """An advanced index key as torch reads it: lists per `_sequence_as_tuple`, uint8 index tensors as masks;
    float index tensors and masks whose shape differs from the dims they cover are IndexErrors. A Python
    range is the list of its indices, as torch reads any sequence."""
    if isinstance(key, range):
        key = list(key)
    if isinstance(key, list) and _sequence_as_tuple(key):
        key = tuple(key)
    keys = list(key) if isinstance(key, tuple) else [key]
    for i, k in enumerate(keys):
        if isinstance(k, str):  # torch tries to build an index tensor from it
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(k, (float, np.floating)):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(k).__name__})")
        if isinstance(k, range):
            keys[i] = k = list(k)
        if isinstance(k, Tensor):
            if k.dtype is core.uint8:
                keys[i] = k = k.to(core.bool_)
            elif k.dtype.category == core.dtypes.FLOAT:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    counts = [0 if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)) else
              (len(k.shape) if isinstance(k, Tensor) else np.ndim(k)) if _is_mask(k) else 1 for k in keys]
    dim = 0
    for k, n in zip(keys, counts):
        if k is Ellipsis:
            dim += self.ndim - sum(counts)
        elif _is_mask(k) and n:
            mshape = tuple(k.shape) if isinstance(k, Tensor) else np.shape(k)
            for j, m in enumerate(mshape):
                if dim + j < self.ndim and m != self._shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(mshape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(self._shape)} at index {dim + j}")
        dim += n
    return tuple(keys) if isinstance(key, tuple) else keys[0]


def _is_int(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _advanced_getitem(self, key):
    """Tensor / list / mask indices. As in PyTorch, plain ints are applied first as selects (so they do
    not take part in NumPy's advanced-index placement); index tensors enter as plain values."""
    keys = list(key) if isinstance(key, tuple) else [key]
    keys = [k._value() if isinstance(k, Tensor) else k for k in keys]

    def consumed(k):
        if k is None or k is Ellipsis:
            return 0
        dtype = getattr(k, "dtype", None)
        if dtype is core.bool_ or (isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype == np.bool_):
            return max(np.ndim(k) if not hasattr(k, "shape") else len(k.shape), 1)
        return 1

    if any(_is_int(k) for k in keys):
        n_ellipsis = sum(1 for k in keys if k is Ellipsis)
        used = sum(consumed(k) for k in keys)
        dim, selects, rest = 0, [], []
        for k in keys:
            if k is Ellipsis:
                dim += self.ndim - used
                rest.append(k)
            elif _is_int(k):
                selects.append((dim, int(k)))
                dim += 1
            else:
                dim += consumed(k)
                rest.append(k)
        if n_ellipsis > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        view = self
        for d, i in reversed(selects):
            view = select(view, d, i)
        self, keys = view, rest
    return Tensor._wrap(core.getitem(self, tuple(keys)))


def _basic_view(self, key):
    keys = list(key) if isinstance(key, tuple) else [key]
    n_ellipsis = sum(1 for k in keys if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in keys if k is not None and k is not Ellipsis and not isinstance(k, (bool, np.bool_)))
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    if n_ellipsis:
        i = keys.index(Ellipsis)
        keys[i:i + 1] = [slice(None)] * (self.ndim - consumed)
    shape, strides, offset = self._geometry()
    new_shape, new_strides = [], []
    axis = 0
    for k in keys:
        if k is None or isinstance(k, (bool, np.bool_)):  # a bool scalar is a new axis of size 1 (True) or 0
            new_shape.append(1 if k is None or k else 0)
            # torch unsqueezes here: the stride spans the next dim still to index (1 past the last)
            new_strides.append(strides[axis] * shape[axis] if axis < len(shape) else 1)
            continue
        size, st = shape[axis], strides[axis]
        if isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = k.indices(size)
            n = len(range(start, stop, step))
            offset += start * st  # (also for an empty slice, as torch)
            new_shape.append(n)
            new_strides.append(st * step)
        else:
            i = int(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {axis} with size {size}")
            offset += (i % size) * st
        axis += 1
    new_shape.extend(shape[axis:])
    new_strides.extend(strides[axis:])
    if any(isinstance(k, (bool, np.bool_)) for k in keys):
        return _view(self, tuple(new_shape), tuple(new_strides), offset, lambda x: _bool_scalar_getitem(x, key))
    return _view(self, tuple(new_shape), tuple(new_strides), offset, lambda x: core.getitem(x, key))


def _bool_scalar_getitem(x, key):
    """x[key] where key holds bool scalars: each is a new axis (None), of size 0 when False."""
    keys = key if isinstance(key, tuple) else (key,)
    out = core.getitem(x, tuple(None if isinstance(k, (bool, np.bool_)) else k for k in keys))
    empty = [i for i, n in enumerate(_new_axis_positions(keys, x.ndim)) if n is False]
    if empty:
        out = core.static_slice(out, tuple(slice(0, 0) if i in empty else slice(None) for i in range(out.ndim)))
    return out


def _new_axis_positions(keys, ndim):
    """Per output axis of x[keys]: the bool scalar that made it, or None."""
    consumed = sum(1 for k in keys if k is not None and k is not Ellipsis and not isinstance(k, (bool, np.bool_)))
    out = []
    for k in keys:
        if k is Ellipsis:
            out += [None] * (ndim - consumed)
        elif k is None or isinstance(k, (bool, np.bool_)):
            out.append(None if k is None else bool(k))
        elif isinstance(k, slice):
            out.append(None)
    return out


tensor_method(getitem, "__getitem__")


@tensor_method
def __contains__(self, element):
    """`element in t`: True if any entry of t equals element (a scalar or a tensor broadcast against t)."""
    if isinstance(element, (Tensor, int, float, complex, bool, np.number, np.bool_)):
        return bool((self == element).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")
tensor_method(property(lambda self: permute(self, *reversed(range(self.ndim)))), "T")
tensor_method(property(lambda self: transpose(self, -2, -1)), "mT")
swapaxes = swapdims = transpose
moveaxis = movedim


# ---------------------------------------------------------------------------
# in-place view ops: self takes the geometry of one of its views
#
#     x.t_()    # x keeps its storage; its (shape, strides, offset) become those of x.t(); version + 1
#
# All checks (dims, sizes, the leaf and no-grad-view rules) run before anything changes. With grad mode
# on, self's history becomes the view op's node over its previous history (TBackward1, ...); a view stays
# a view of the same base (later writes through it land in the base, CopySlices as for any view).
#
# The design point: a tensor that is no view (`_base is None`) need not cover its storage in row-major
# order any more (`_full` false), yet it stays the base its views rebuild their histories from, as in
# torch (`x._base` is None and `x._is_view()` false after `x.t_()`; views taken before and after share
# it as `_base`). Views' geometries are over the storage, so the history rebuild (Tensor.
# _refresh_view_history) and the write-back of a view into its base (writeback.record_history) go
# through `tensor.storage_history(base)`: the base itself when it covers its storage row-major, else the
# base scattered into the storage value (read back with the base's own geometry after a write). Hidden
# aliases holding the old geometry were the other choice; they would change `_base` and leave existing
# views pointing at a tensor whose geometry moved, so the rebuild would have had to learn geometry anyway.


def _restride_(self, shape, strides, offset, record, name):
    """self takes geometry (shape, strides, offset) over its storage; record(t) is the core op giving the
    new value from t (self's old value), replayed on the tape and named `name`."""
    self._check_inplace()
    out = None
    if self._rg and grad_mode.tape_enabled():
        out = _named(_recorded(record, with_history(self)), name)
    st = self._storage
    base_shape = tuple(st.value.shape)
    self._shape, self._strides, self._offset = tuple(shape), tuple(strides), offset
    self._full = offset == 0 and self._shape == base_shape and self._strides == contiguous_strides(base_shape)
    st.version.value += 1
    if out is not None:
        self._grad_fn, self._output_nr, self._rg = out._grad_fn, out._output_nr, True
    if self._base is not None:
        self._view_version = st.version.value  # its history is the node just recorded, not a rebuild
    return self


@tensor_method
def t_(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    shape, strides, offset = self._geometry()
    if self.ndim < 2:
        return _restride_(self, shape, strides, offset, _same, "TBackward1")
    return _restride_(self, shape[::-1], strides[::-1], offset, lambda x: core.transpose(x, (1, 0)), "TBackward1")


@tensor_method("transpose_", "swapdims_", "swapaxes_")
def transpose_(self, dim0, dim1):
    a, b = _dim(dim0, self.ndim), _dim(dim1, self.ndim)
    shape, strides, offset = self._geometry()
    if self.ndim == 0:
        return _restride_(self, shape, strides, offset, _same, "TransposeBackward1")
    perm = list(range(self.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    perm = tuple(perm)
    return _restride_(self, tuple(shape[p] for p in perm), tuple(strides[p] for p in perm), offset,
                      lambda x: core.transpose(x, perm), "TransposeBackward1")


@tensor_method
def squeeze_(self, dim=None):
    shape, strides, offset = self._geometry()
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        name = "SqueezeBackward3"
    else:
        many = isinstance(dim, (tuple, list))
        dims = dim if many else (dim,)
        axes = tuple(sorted({_dim(d, self.ndim) for d in dims}))
        axes = tuple(a for a in axes if self.ndim and shape[a] == 1)
        name = "SqueezeBackward5" if many else "SqueezeBackward4"
    if not axes:
        return _restride_(self, shape, strides, offset, _same, name)
    keep = [i for i in range(len(shape)) if i not in axes]
    return _restride_(self, tuple(shape[i] for i in keep), tuple(strides[i] for i in keep), offset,
                      lambda x: core.squeeze(x, axes), name)


@tensor_method
def unsqueeze_(self, dim):
    d = _dim(dim, self.ndim + 1)
    shape, strides, offset = self._geometry()
    new_stride = strides[d] * shape[d] if d < len(shape) else 1
    return _restride_(self, shape[:d] + (1,) + shape[d:], strides[:d] + (new_stride,) + strides[d:], offset,
                      lambda x: core.expand_dims(x, d), "UnsqueezeBackward1")


def _strided_geometry(self, size, stride, storage_offset):
    """as_strided's arguments checked as torch checks them against self's storage."""
    size = _int_sizes((size,), "as_strided", "size")
    stride = _int_sizes((stride,), "as_strided", "stride", 2)
    offset = self._offset if storage_offset is None else _index_arg(storage_offset, "storage_offset", "must be int")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item = self.dtype.itemsize
    needed = 0 if 0 in size else (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))) * item
    have = int(np.prod(self._storage.value.shape, dtype=np.int64)) * item
    if needed > have:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {needed} are out of bounds for storage of "
                           f"size {have}")
    return size, stride, offset


def _as_strided_record(self, size, stride, offset):
    """The core op giving as_strided(self's storage, ...) from self's value: as_strided of self's value when
    self covers its storage row-major, else of self scattered into the storage's current value."""
    st = self._storage
    if self._full:
        return lambda x: core.as_strided(x, size, stride, offset)
    shape, strides, off = self._geometry()
    storage = st.value
    return lambda x: core.as_strided(core.as_strided_scatter(storage, x, shape, strides, off), size, stride, offset)


@torch_op
def as_strided(self, size, stride, storage_offset=None):
    """A view of self's storage with this geometry (offset: self's storage offset unless given)."""
    size, stride, offset = _strided_geometry(self, size, stride, storage_offset)
    return _named(self._view_of(size, stride, offset, lambda t: _recorded(_as_strided_record(self, size, stride,
                                                                                           offset), t)),
                  "AsStridedBackward0", self)


@tensor_method
def as_strided_(self, size, stride, storage_offset=None):
    size, stride, offset = _strided_geometry(self, size, stride, storage_offset)
    return _restride_(self, size, stride, offset, _as_strided_record(self, size, stride, offset), "AsStridedBackward1")
