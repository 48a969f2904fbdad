"""torch.distributed._functional_collectives: collectives that return a new tensor instead of writing in place.

The group may be a ProcessGroup, a 1-d DeviceMesh, a (DeviceMesh, mesh_dim) pair, or a list of all the
world's ranks. The MPI collectives complete before they return, so wait_tensor has nothing left to wait for
and returns its argument. all_to_all_single_autograd, all_gather_tensor_autograd and
reduce_scatter_tensor_autograd are differentiable: their backward is the transposed collective
(the reverse all_to_all; reduce_scatter(sum) of an all_gather; all_gather of a reduce_scatter).
"""
import numpy as np

from ..autograd.function import Function
from ..eager.creation import from_numpy
from . import distributed_c10d as c10d

__all__ = ["all_reduce", "all_gather_tensor", "reduce_scatter_tensor", "all_to_all_single",
           "all_to_all_single_autograd", "all_gather_tensor_autograd", "reduce_scatter_tensor_autograd",
           "wait_tensor", "broadcast"]

_OPS = {"sum": c10d.ReduceOp.SUM, "avg": c10d.ReduceOp.AVG, "product": c10d.ReduceOp.PRODUCT,
        "min": c10d.ReduceOp.MIN, "max": c10d.ReduceOp.MAX, "band": c10d.ReduceOp.BAND,
        "bor": c10d.ReduceOp.BOR, "bxor": c10d.ReduceOp.BXOR}


def _resolve_group(group, op):
    """The ProcessGroup that `group` names."""
    from .device_mesh import DeviceMesh
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return c10d._group(group[0].get_group(group[1]))
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(f"{op}: only a 1-d DeviceMesh names a group; pass (mesh, mesh_dim) for a "
                             f"{group.ndim}-d mesh")
        return c10d._group(group.get_group(0))
    if isinstance(group, list):
        world = c10d._default()
        if sorted(int(r) for r in group) != list(world._ranks):
            raise ValueError(f"{op}: a list of ranks must name the whole world here ({list(world._ranks)}); "
                             "make a subgroup with new_group and pass it instead")
        return world
    return c10d._group(group)


def _reduce_op(reduceOp, op):
    name = getattr(reduceOp, "name", reduceOp)
    key = str(name).lower()
    if key not in _OPS:
        raise ValueError(f"{op}: unrecognized reduce op {reduceOp!r} (one of {sorted(_OPS)})")
    return _OPS[key]


def _out(arr):
    return from_numpy(np.ascontiguousarray(arr))


def all_reduce(self, reduceOp, group, tag=""):
    """A new tensor: `self` reduced over the group with reduceOp ("sum", "avg", "max", ...)."""
    pg = _resolve_group(group, "all_reduce")
    c10d._check_tensor(self, "all_reduce", pg)
    op = _reduce_op(reduceOp, "all_reduce")
    name = c10d._check_op(op, "all_reduce", pg, self)
    return _out(c10d._reduce_buf(c10d._read(self), name, op, pg))


def all_gather_tensor(self, gather_dim, group, tag=""):
    """A new tensor: every rank's `self` concatenated along gather_dim, in group-rank order."""
    pg = _resolve_group(group, "all_gather_tensor")
    c10d._check_tensor(self, "all_gather_tensor", pg)
    gathered = c10d._world.allgather(pg._comm, c10d._read(self))
    return _out(np.concatenate(list(gathered), axis=gather_dim % max(self.dim(), 1)))


def reduce_scatter_tensor(self, reduceOp, scatter_dim, group, tag=""):
    """A new tensor: `self` reduced over the group, then split evenly along scatter_dim; rank i keeps
    piece i."""
    pg = _resolve_group(group, "reduce_scatter_tensor")
    c10d._check_tensor(self, "reduce_scatter_tensor", pg)
    op = _reduce_op(reduceOp, "reduce_scatter_tensor")
    name = c10d._check_op(op, "reduce_scatter_tensor", pg, self)
    n, dim = pg.size(), scatter_dim % self.dim()
    if self.shape[dim] % n:
        raise ValueError(f"{c10d._where('reduce_scatter_tensor', pg)}: input dimension {dim} ({self.shape[dim]}) "
                         f"must be a multiple of the group size {n}")
    blocks = np.stack(np.split(c10d._read(self), n, axis=dim))
    return _out(c10d._reduce_scatter_buf(blocks, name, op, pg))


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    """A new tensor: `self` split on dim 0 (evenly, or by input_split_sizes), piece j sent to rank j, the
    received pieces concatenated in rank order."""
    pg = _resolve_group(group, "all_to_all_single")
    c10d._check_tensor(self, "all_to_all_single", pg)
    rows = sum(output_split_sizes) if output_split_sizes is not None else self.shape[0]
    out = _out(np.empty((int(rows),) + tuple(self.shape[1:]), c10d._read(self).dtype))
    c10d.all_to_all_single(out, self.contiguous(), output_split_sizes=output_split_sizes,
                           input_split_sizes=input_split_sizes, group=pg)
    return out


def broadcast(self, src, group, tag=""):
    """A new tensor: rank src's `self` (src a global rank) on every rank of the group."""
    pg = _resolve_group(group, "broadcast")
    out = self.detach().clone()
    c10d.broadcast(out, src=src, group=pg)
    return out


def wait_tensor(tensor):
    """The tensor of a completed functional collective (MPI collectives here complete before returning)."""
    return tensor


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, group):
        ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
        return all_to_all_single(x, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx, g):
        out_sizes, in_sizes = ctx.splits
        return all_to_all_single(g.contiguous(), in_sizes, out_sizes, ctx.group), None, None, None


class _AllGather(Function):
    @staticmethod
    def forward(ctx, x, gather_dim, group):
        ctx.dim, ctx.group = gather_dim, group
        return all_gather_tensor(x, gather_dim, group)

    @staticmethod
    def backward(ctx, g):
        return reduce_scatter_tensor(g.contiguous(), "sum", ctx.dim, ctx.group), None, None


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, x, reduce_op, scatter_dim, group):
        if str(getattr(reduce_op, "name", reduce_op)).lower() != "sum":
            raise RuntimeError(f"reduce_scatter_tensor_autograd: only the sum reduction has a gradient, got "
                               f"{reduce_op!r}")
        ctx.dim, ctx.group = scatter_dim, group
        return reduce_scatter_tensor(x, reduce_op, scatter_dim, group)

    @staticmethod
    def backward(ctx, g):
        return all_gather_tensor(g.contiguous(), ctx.dim, ctx.group), None, None, None


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=""):
    """all_to_all_single whose backward sends the gradient back (the reverse all_to_all)."""
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes, group)


def all_gather_tensor_autograd(self, gather_dim, group, tag=""):
    """all_gather_tensor whose backward is reduce_scatter_tensor(sum) of the gradient."""
    return _AllGather.apply(self, gather_dim, group)


def reduce_scatter_tensor_autograd(self, reduceOp, scatter_dim, group, tag=""):
    """reduce_scatter_tensor (sum) whose backward all-gathers the gradient."""
    return _ReduceScatter.apply(self, reduceOp, scatter_dim, group)
