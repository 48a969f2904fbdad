"""torch.distributed.tensor.DTensor: a local tensor, a DeviceMesh and one placement per mesh dimension.

What it does: from_local / distribute_tensor build one, to_local gives this rank's shard, full_tensor
all-gathers the sharded dims and reduces the Partial ones, redistribute moves between Shard, Replicate
and Partial layouts on the mesh. What it does not: arithmetic. A DTensor is not a Tensor subclass and
torch ops do not dispatch on it: `dt + 1`, `torch.matmul(dt, w)` raise a TypeError naming DTensor
(work on `dt.to_local()` or `dt.full_tensor()`). Autograd reaches a DTensor only through its local
tensor: to_local() returns the very tensor from_local() was given.

redistribute, for each mesh dim from last to first, undoes the source placement (all-gather along the
mesh dim's group for Shard and _StridedShard, all-reduce for Partial), then applies the target placements
first to last (take this rank's chunk for Shard). A mesh dim whose source and target are the same Partial
is left as it is. Redistributing *to* Partial from anything else raises, as PyTorch does (it is internal
there).
"""
import math

import numpy as np

from ...eager.creation import from_numpy
from ...eager.tensor import Size, Tensor
from .. import distributed_c10d as c10d
from ..device_mesh import DeviceMesh
from ._utils import _local_shape_and_offset
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard

__all__ = ["DTensor", "distribute_tensor"]

_REDUCE = {"sum": c10d.ReduceOp.SUM, "avg": c10d.ReduceOp.AVG, "max": c10d.ReduceOp.MAX,
           "min": c10d.ReduceOp.MIN, "product": c10d.ReduceOp.PRODUCT}


class _NoTorchOps(TypeError, AttributeError):
    """Raised for a Tensor attribute or operator a DTensor lacks: a TypeError (torch ops on a DTensor are
    not supported) that hasattr() still reads as a missing attribute."""


def _unsupported(what):
    return _NoTorchOps(f"{what}: DTensor does not support torch operations or arithmetic here; use "
                       ".to_local() (this rank's shard) or .full_tensor() (the whole tensor) first")


def _norm_placements(placements, mesh, ndim, op):
    if placements is None:
        return tuple(Replicate() for _ in range(mesh.ndim))
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements length: "
                         f"{len(placements)}, and device_mesh.ndim: {mesh.ndim}.")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"{op}: placements must be Placement objects, got {type(p).__name__}")
        if isinstance(p, (Shard, _StridedShard)):
            if not -ndim <= p.dim < ndim:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but "
                                 f"got {p.dim})")
            if p.dim < 0:
                p = Shard(p.dim + ndim) if isinstance(p, Shard) else _StridedShard(p.dim + ndim, p.split_factor)
        out.append(p)
    partial_ops = {p.reduce_op for p in out if isinstance(p, Partial)}
    if len(partial_ops) > 1:
        raise ValueError(f"{op}: mixed Partial reduce types {sorted(partial_ops)} are not supported")
    return tuple(out)


def _default_mesh(mesh, op):
    if mesh is None:
        raise RuntimeError(f"{op}: No device mesh is currently active!")
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"{op}: device_mesh must be a DeviceMesh, got {type(mesh).__name__}")
    return mesh


def _contiguous_stride(shape):
    stride, acc = [], 1
    for s in reversed(shape):
        stride.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(stride))


def _read(t):
    return c10d._read(t)


def _group(mesh, mesh_dim):
    return c10d._group(mesh.get_group(mesh_dim))


def _broadcast(arr, mesh, mesh_dim, src):
    """arr of the rank at coordinate `src` along mesh_dim, on every rank of that dim's group."""
    pg = _group(mesh, mesh_dim)
    send, back = c10d._world._wire(arr, "bcast")
    send = np.array(send, copy=True)  # a writable buffer: the tensors' values are read-only
    pg._comm.Bcast(send, root=src)
    return c10d._world._back(send, back)


def _gather_shards(arr, mesh, mesh_dim, placement, size_before):
    """Undo a Shard/_StridedShard on mesh_dim: every member's piece, put back at its indices along the dim
    (pieces of uneven shards are padded to the largest for the all-gather, then trimmed)."""
    pg = _group(mesh, mesh_dim)
    n, d = pg.size(), placement.dim
    if isinstance(placement, _StridedShard):
        indices = [placement._indices(size_before, n, r) for r in range(n)]
    else:
        indices = []
        for r in range(n):
            size, start = Shard.local_shard_size_and_offset(size_before, n, r)
            indices.append(list(range(start, start + size)))
    longest = max(len(i) for i in indices)
    pad = [(0, 0)] * arr.ndim
    pad[d] = (0, longest - arr.shape[d])
    gathered = c10d._world.allgather(pg._comm, np.pad(arr, pad))
    pieces = [np.take(gathered[r], np.arange(len(indices[r])), axis=d) for r in range(n)]
    order = np.argsort(np.concatenate([np.asarray(i, dtype=np.int64) for i in indices]), kind="stable")
    return np.take(np.concatenate(pieces, axis=d), order, axis=d)


def _reduce(arr, mesh, mesh_dim, placement):
    """Undo a Partial on mesh_dim: the reduction of every member's value."""
    op = _REDUCE.get(placement.reduce_op)
    if op is None:
        raise RuntimeError(f"Partial({placement.reduce_op}): unsupported reduce op for a reduction")
    return c10d._reduce_buf(np.ascontiguousarray(arr), c10d._MPI_NAMES[op], op, _group(mesh, mesh_dim))


def _redistribute(arr, mesh, src, dst, global_shape):
    """This rank's numpy local for placements dst, from its local arr for placements src."""
    coordinate = mesh.get_coordinate()
    keep = [isinstance(s, Partial) and s == t for s, t in zip(src, dst)]
    for i in reversed(range(mesh.ndim)):
        p = src[i]
        if isinstance(p, (Shard, _StridedShard)):
            before, _ = _local_shape_and_offset(global_shape, mesh.shape, coordinate, src[:i], skip_offset=True)
            arr = _gather_shards(arr, mesh, i, p, before[p.dim])
        elif isinstance(p, Partial) and not keep[i]:
            arr = _reduce(arr, mesh, i, p)
    for i, p in enumerate(dst):
        if isinstance(p, (Shard, _StridedShard)):
            arr = p._split(arr, mesh.size(i))[coordinate[i]]
    return np.ascontiguousarray(arr)


class DTensor:
    """A tensor laid out over a DeviceMesh (see the module doc): no arithmetic, no torch ops."""

    __slots__ = ("_local_tensor", "_mesh", "_placements", "_shape", "_stride")

    def __init__(self, local_tensor, device_mesh, placements, *, shape, stride):
        self._local_tensor = local_tensor
        self._mesh = device_mesh
        self._placements = tuple(placements)
        self._shape = Size(int(s) for s in shape)
        self._stride = tuple(int(s) for s in stride)

    # --- construction

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None,
                   grad_placements=None):
        """A DTensor whose shard on this rank is local_tensor. Without `shape`, the global shape assumes
        even sharding (local size times the mesh dim's size for each Shard); run_check broadcasts the
        local tensor of the first rank along each Replicate mesh dim."""
        if not isinstance(local_tensor, Tensor):
            raise TypeError(f"from_local: local_tensor must be a Tensor, got {type(local_tensor).__name__}")
        mesh = _default_mesh(device_mesh, "from_local")
        placements = _norm_placements(placements, mesh, local_tensor.dim(), "from_local")
        if run_check:
            arr = _read(local_tensor)
            changed = False
            for i, p in enumerate(placements):
                if isinstance(p, Replicate):
                    arr, changed = _broadcast(arr, mesh, i, 0), True
            if changed:
                local_tensor = from_numpy(np.ascontiguousarray(arr)).requires_grad_(local_tensor.requires_grad)
        if shape is None:
            shape = list(local_tensor.shape)
            for i, p in enumerate(placements):
                if isinstance(p, (Shard, _StridedShard)):
                    shape[p.dim] *= mesh.size(i)
        if stride is None:
            stride = _contiguous_stride(shape)
        return DTensor(local_tensor, mesh, placements, shape=shape, stride=stride)

    # --- the layout

    @property
    def placements(self):
        return self._placements

    @property
    def device_mesh(self):
        return self._mesh

    @property
    def shape(self):
        return self._shape

    def size(self, dim=None):
        return self._shape if dim is None else self._shape[dim]

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[dim]

    def dim(self):
        return len(self._shape)

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        return math.prod(self._shape)

    @property
    def dtype(self):
        return self._local_tensor.dtype

    @property
    def device(self):
        return self._local_tensor.device

    @property
    def requires_grad(self):
        return self._local_tensor.requires_grad

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    # --- data

    def to_local(self, *, grad_placements=None):
        """This rank's shard: the local tensor itself (autograd flows through it)."""
        return self._local_tensor

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False, forward_dtype=None,
                     backward_dtype=None):
        """The same tensor laid out by `placements` on the mesh (collective over the mesh)."""
        mesh = self._mesh if device_mesh is None else device_mesh
        if mesh != self._mesh:
            raise NotImplementedError(f"Cross device mesh comm not supported yet! ({self._mesh} -> {mesh})")
        dst = self._placements if placements is None else _norm_placements(placements, mesh, self.ndim,
                                                                           "redistribute")
        for s, t in zip(self._placements, dst):
            if isinstance(t, Partial) and s != t:
                raise RuntimeError(f"Can not redistribute from {s} to {t}, redistributing to Partial is for "
                                   "internal use only!")
        local = self._local_tensor
        if forward_dtype is not None and forward_dtype != local.dtype:
            local = local.to(forward_dtype)
        if dst == self._placements:
            return DTensor(local, mesh, dst, shape=self._shape, stride=self._stride)
        arr = _redistribute(_read(local), mesh, self._placements, dst, tuple(self._shape))
        return DTensor(from_numpy(arr), mesh, dst, shape=self._shape, stride=self._stride)

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor on every rank: sharded dims all-gathered, Partial dims reduced."""
        arr = _redistribute(_read(self._local_tensor), self._mesh, self._placements,
                            tuple(Replicate() for _ in self._placements), tuple(self._shape))
        return from_numpy(arr)

    def __repr__(self):
        return (f"DTensor(local_tensor={self._local_tensor}, device_mesh={self._mesh}, "
                f"placements={self._placements})")

    # --- what a DTensor is not

    def __getattr__(self, name):
        raise _unsupported(f"'DTensor' object has no attribute '{name}'")

    def __array__(self, *args, **kwargs):
        raise _unsupported("DTensor.__array__")

    def __bool__(self):
        raise _unsupported("bool(DTensor)")

    def __iter__(self):
        raise _unsupported("iter(DTensor)")

    def __getitem__(self, index):
        raise _unsupported("DTensor indexing")

    def _refuse(self, *args):
        raise _unsupported("a torch operator on a DTensor")

    __add__ = __radd__ = __iadd__ = __sub__ = __rsub__ = __isub__ = __mul__ = __rmul__ = __imul__ = _refuse
    __matmul__ = __rmatmul__ = __truediv__ = __rtruediv__ = __itruediv__ = __floordiv__ = __rfloordiv__ = _refuse
    __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __invert__ = _refuse
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __setitem__ = __float__ = __int__ = __index__ = _refuse


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """A DTensor of `tensor` laid out by placements: along each mesh dim the data of the rank at
    coordinate src_data_rank is broadcast (src_data_rank=None: every rank uses its own), then Shard keeps
    this rank's chunk and Partial this rank's part (sum: tensor / n)."""
    mesh = _default_mesh(device_mesh, "distribute_tensor")
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh {tensor.device_mesh} to a different "
                             f"device mesh {mesh}.")
        if tensor.placements != tuple(placements or ()):
            raise ValueError(f"Cannot distribute a DTensor with placements {tensor.placements} to a different "
                             f"placements {placements}. do you want to call `redistribute` instead?")
        return tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"distribute_tensor: tensor must be a Tensor, got {type(tensor).__name__}")
    placements = _norm_placements(placements, mesh, tensor.dim(), "distribute_tensor")
    arr = _read(tensor)
    coordinate = mesh.get_coordinate()
    for i, p in enumerate(placements):
        if src_data_rank is not None:
            arr = _broadcast(arr, mesh, i, src_data_rank)
        if isinstance(p, (Shard, _StridedShard)):
            arr = p._split(arr, mesh.size(i))[coordinate[i]]
        elif isinstance(p, Partial):
            arr = p._partition(arr, mesh.size(i))
    local = from_numpy(np.ascontiguousarray(arr)).requires_grad_(tensor.requires_grad)
    return DTensor(local, mesh, placements, shape=tuple(tensor.shape), stride=_contiguous_stride(tensor.shape))
