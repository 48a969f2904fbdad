"""Collectives over a named axis: psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute,
axis_index.

A named axis is either a vmap's (vmap(f, axis_name="i"): N virtual ranks in one process; the rules below
compute the collective on the whole batch) or the processes of an MPI job (core.distributed.spmd(f,
axis_name="i"): the cpu lowering calls the MPI helpers of core/distributed.py). The same f gives the same
numbers either way, derivatives included:

    psum^T = psum      all_gather^T = psum_scatter      psum_scatter^T = all_gather
    ppermute(perm)^T = ppermute(inverse perm)           all_to_all(split, concat)^T = all_to_all(concat, split)

(gradients are of the sum of every rank's output, as in JAX). The axis size is a static param, so the meta
rule knows output shapes. These primitives are kept out of the registry the property suite walks
(registered=False): bound bare, outside any named axis, they have nothing to run on; tests/test_core_collectives.py
checks their rules (meta, VJP against finite differences, JVP, vmap == MPI ranks).
"""
import numpy as np

from .. import distributed as _procs
from .. import dtypes as dt
from ..batching import BatchTracer, axis_main
from ..devices import cpu as _cpu
from ..primitive import Primitive, Tracer
from ._family import broadcast_batch
from .creation import arange, asarray, zeros_like
from .elementwise import cast, eq, mul, where
from .indexing import take
from .shape import expand_dims, squeeze
from .reduction import max as _max, min as _min, sum as _sum
from .shape import moveaxis, reshape

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "psum_scatter_p", "all_to_all_p", "ppermute_p",
           "axis_index_p", "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute",
           "axis_index"]


class Collective(Primitive):
    """A primitive over a named axis. bind: inside vmap(axis_name=name), values that do not vary over that
    axis enter it unbatched, so the vmap's rule (not the lowering) runs the collective."""

    __slots__ = ("axis_rule",)

    def __init__(self, name, meta, axis_rule, **kw):
        Primitive.__init__(self, name, meta, registered=False, **kw)
        self.axis_rule = axis_rule  # rule(x_with_leading_axis_of_size_n, **params) -> (out, out_bdim 0 or None)

    def bind(self, *args, **params):
        main = axis_main(params["axis_name"])
        if main is not None and not any(isinstance(a, Tracer) and a._main.level >= main.level for a in args):
            args = tuple(BatchTracer(main, a, None) for a in args)
        return Primitive.bind(self, *args, **params)

    def collective_batch(self, trace, args, params):
        main = trace.main
        vals, bdims = [], []
        for a in args:
            if type(a) is BatchTracer and a._main is main:
                vals.append(a.val)
                bdims.append(a.bdim)
            else:
                vals.append(a)
                bdims.append(None)
        x, bdim = vals[0], bdims[0]
        if params["axis_name"] == trace.axis_name:
            self.meta(*args, **params)  # the per-rank shapes' checks and errors (args carry per-rank avals)
            out, out_bdim = self.axis_rule(broadcast_batch(x, bdim, trace.axis_size), **params)
        elif bdim is None:
            return self.bind(x, **params)
        else:  # another axis's collective: this vmap's axis is one more data axis, in front
            out = self.bind(moveaxis(x, bdim, 0), **_shift(params))
            out_bdim = 0
        return out if out_bdim is None else BatchTracer(main, out, out_bdim)


_AXIS_PARAMS = ("axis", "scatter_dimension", "split_axis", "concat_axis")


def _shift(params):
    return {k: v + 1 if k in _AXIS_PARAMS else v for k, v in params.items()}


def _comm(name, op):
    comm = _procs.process_axis(name)
    if comm is None:
        raise NameError(f"{op}: unbound axis name: {name!r} (use it inside vmap(f, axis_name={name!r}) or "
                        f"core.distributed.spmd(f, axis_name={name!r}))")
    return comm


def _resolve(name, op):
    """The size of axis `name` (a vmap's, else the process world bound by spmd); NameError if unbound."""
    main = axis_main(name)
    if main is not None:
        return main.trace.axis_size
    return _comm(name, op).Get_size()


# ---------------------------------------------------------------------------
# psum, pmax, pmin: elementwise over the axis; every rank gets the same value


def _same_meta(x, *, axis_name, axis_size):
    return x.shape, x.dtype


def _reduction(name, mpi_name, reduce_rule, vjp, vjp_reads, linear):
    prim = Collective(name, _same_meta, lambda x, **p: (reduce_rule(x, axis=0), None), vjp=vjp,
                      vjp_reads=vjp_reads, linear=linear)
    prim.def_impl("cpu")(lambda x, *, axis_name, axis_size: _procs.allreduce(_comm(axis_name, name), x, mpi_name))
    return prim


psum_p = _reduction("psum", "sum", _sum, (lambda g, out, x, **p: psum_p.bind(g, **p),), (), True)


def _extremum_vjp(g, out, x, **p):  # the ranks holding the extremum share the summed cotangent
    return mul(psum_p.bind(g, **p), cast(eq(x, out), g.dtype))


pmax_p = _reduction("pmax", "max", _max, (_extremum_vjp,), (0, "out"), False)
pmin_p = _reduction("pmin", "min", _min, (_extremum_vjp,), (0, "out"), False)


# ---------------------------------------------------------------------------
# all_gather <-> psum_scatter


def _gather_meta(x, *, axis_name, axis_size, axis, tiled):
    if not 0 <= axis <= len(x.shape) - (1 if tiled else 0):
        raise ValueError(f"all_gather: axis {axis} is out of range for shape {x.shape}")
    s = list(x.shape)
    if tiled:
        s[axis] *= axis_size
    else:
        s.insert(axis, axis_size)
    return tuple(s), x.dtype


def _gather_np(xs, axis, tiled):  # xs: (n, *s) -> every rank's gathered value
    out = np.moveaxis(xs, 0, axis)
    if tiled:
        s = out.shape
        out = out.reshape(s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])
    return out


def _gather_rule(x, *, axis_name, axis_size, axis, tiled):
    out = moveaxis(x, 0, axis)
    if tiled:
        s = tuple(out.shape)
        out = reshape(out, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])
    return out, None


all_gather_p = Collective("all_gather", _gather_meta, _gather_rule, linear=True, vjp=(
    lambda g, out, x, *, axis_name, axis_size, axis, tiled: psum_scatter_p.bind(
        g, axis_name=axis_name, axis_size=axis_size, scatter_dimension=axis, tiled=tiled),))


@all_gather_p.def_impl("cpu")
def _all_gather_cpu(x, *, axis_name, axis_size, axis, tiled):
    return _gather_np(_procs.allgather(_comm(axis_name, "all_gather"), x), axis, tiled)


def _scatter_meta(x, *, axis_name, axis_size, scatter_dimension, tiled):
    d = scatter_dimension
    if not 0 <= d < len(x.shape):
        raise ValueError(f"psum_scatter: scatter_dimension {d} is out of range for shape {x.shape}")
    s = list(x.shape)
    if tiled:
        if s[d] % axis_size:
            raise ValueError(f"psum_scatter: dimension {d} of shape {x.shape} is not divisible by the axis size "
                             f"{axis_size}")
        s[d] //= axis_size
    else:
        if s[d] != axis_size:
            raise ValueError(f"psum_scatter: dimension {d} of shape {x.shape} must equal the axis size {axis_size} "
                             "(or use tiled=True)")
        del s[d]
    return tuple(s), x.dtype


def _blocks_front(summed, d, n, tiled, move, split):
    """summed's scatter dimension as a leading axis of n blocks."""
    if tiled:
        s = tuple(summed.shape)
        summed = split(summed, s[:d] + (n, s[d] // n) + s[d + 1:])
    return move(summed, d, 0)


def _scatter_rule(x, *, axis_name, axis_size, scatter_dimension, tiled):
    return _blocks_front(_sum(x, axis=0), scatter_dimension, axis_size, tiled, moveaxis, reshape), 0


psum_scatter_p = Collective("psum_scatter", _scatter_meta, _scatter_rule, linear=True, vjp=(
    lambda g, out, x, *, axis_name, axis_size, scatter_dimension, tiled: all_gather_p.bind(
        g, axis_name=axis_name, axis_size=axis_size, axis=scatter_dimension, tiled=tiled),))


@psum_scatter_p.def_impl("cpu")
def _psum_scatter_cpu(x, *, axis_name, axis_size, scatter_dimension, tiled):
    blocks = _blocks_front(x, scatter_dimension, axis_size, tiled, np.moveaxis, np.reshape)
    return _procs.reduce_scatter(_comm(axis_name, "psum_scatter"), np.ascontiguousarray(blocks), "sum")


# ---------------------------------------------------------------------------
# all_to_all: chunk j of split_axis goes to rank j; received chunks join along concat_axis (sender order)


def _a2a_meta(x, *, axis_name, axis_size, split_axis, concat_axis, tiled):
    s = list(x.shape)
    for a, what in ((split_axis, "split_axis"), (concat_axis, "concat_axis")):
        if not 0 <= a < len(s):
            raise ValueError(f"all_to_all: {what} {a} is out of range for shape {x.shape}")
    if not tiled:
        raise ValueError("all_to_all: only tiled=True is supported (chunks of split_axis, joined on concat_axis)")
    if s[split_axis] % axis_size:
        raise ValueError(f"all_to_all: dimension {split_axis} of shape {x.shape} is not divisible by the axis size "
                         f"{axis_size}")
    s[split_axis] //= axis_size
    s[concat_axis] *= axis_size
    return tuple(s), x.dtype


def _chunks_front(x, split_axis, n, move, split):  # x's split axis -> a leading axis of n chunks
    s = tuple(x.shape)
    return move(split(x, s[:split_axis] + (n, s[split_axis] // n) + s[split_axis + 1:]), split_axis, 0)


def _join(received, concat_axis, move, split):  # received: (n senders, *chunk) -> joined on concat_axis
    out = move(received, 0, concat_axis)
    s = tuple(out.shape)
    return split(out, s[:concat_axis] + (s[concat_axis] * s[concat_axis + 1],) + s[concat_axis + 2:])


def _a2a_rule(x, *, axis_name, axis_size, split_axis, concat_axis, tiled):
    # x: (sender, *s) -> (sender, receiver, *chunk) -> per receiver: joined over senders
    chunks = moveaxis(_chunks_front(moveaxis(x, 0, -1), split_axis, axis_size, moveaxis, reshape), -1, 0)
    recv = moveaxis(chunks, 1, 0)  # (receiver, sender, *chunk)
    out = _join(moveaxis(recv, 0, -1), concat_axis, moveaxis, reshape)
    return moveaxis(out, -1, 0), 0


all_to_all_p = Collective("all_to_all", _a2a_meta, _a2a_rule, linear=True, vjp=(
    lambda g, out, x, *, axis_name, axis_size, split_axis, concat_axis, tiled: all_to_all_p.bind(
        g, axis_name=axis_name, axis_size=axis_size, split_axis=concat_axis, concat_axis=split_axis, tiled=tiled),))


@all_to_all_p.def_impl("cpu")
def _all_to_all_cpu(x, *, axis_name, axis_size, split_axis, concat_axis, tiled):
    send = np.ascontiguousarray(_chunks_front(x, split_axis, axis_size, np.moveaxis, np.reshape))
    received = _procs.alltoall(_comm(axis_name, "all_to_all"), send)
    return _join(received, concat_axis, np.moveaxis, np.reshape)


# ---------------------------------------------------------------------------
# ppermute and axis_index


def _ppermute_meta(x, *, axis_name, axis_size, perm):
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts) or not all(
            0 <= i < axis_size for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {perm} must be (source, destination) pairs of distinct indices in "
                         f"[0, {axis_size})")
    return x.shape, x.dtype


def _ppermute_rule(x, *, axis_name, axis_size, perm):
    src = dict((d, s) for s, d in perm)
    idx = np.array([src.get(j, 0) for j in range(axis_size)], np.int64)
    moved = take(x, _const(idx, x.device), axis=0)
    keep = np.array([j in src for j in range(axis_size)]).reshape((axis_size,) + (1,) * (len(x.shape) - 1))
    return where(_const(keep, x.device), moved, zeros_like(moved)), 0


def _const(a, device):
    return asarray(a, device=device)


ppermute_p = Collective("ppermute", _ppermute_meta, _ppermute_rule, linear=True, vjp=(
    lambda g, out, x, *, axis_name, axis_size, perm: ppermute_p.bind(
        g, axis_name=axis_name, axis_size=axis_size, perm=tuple((d, s) for s, d in perm)),))


@ppermute_p.def_impl("cpu")
def _ppermute_cpu(x, *, axis_name, axis_size, perm):
    return _procs.permute(_comm(axis_name, "ppermute"), x, perm)


def _index_meta(*, axis_name, axis_size, device):
    return (), dt.int32


axis_index_p = Collective("axis_index", _index_meta, None)


@axis_index_p.def_impl("cpu")
def _axis_index_cpu(*, axis_name, axis_size, device):
    return np.array(_comm(axis_name, "axis_index").Get_rank(), np.int32)


# ---------------------------------------------------------------------------
# the functions


def psum(x, axis_name):
    """The sum of x over the ranks of axis `axis_name` (every rank gets it)."""
    return psum_p.bind(x, axis_name=axis_name, axis_size=_resolve(axis_name, "psum"))


def pmean(x, axis_name):
    """The mean of x over the ranks of axis `axis_name`."""
    n = _resolve(axis_name, "pmean")
    return psum_p.bind(x, axis_name=axis_name, axis_size=n) / n


def pmax(x, axis_name):
    """The elementwise maximum of x over the ranks of axis `axis_name`."""
    return pmax_p.bind(x, axis_name=axis_name, axis_size=_resolve(axis_name, "pmax"))


def pmin(x, axis_name):
    """The elementwise minimum of x over the ranks of axis `axis_name`."""
    return pmin_p.bind(x, axis_name=axis_name, axis_size=_resolve(axis_name, "pmin"))


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every rank's x, stacked on a new axis `axis` (tiled: concatenated along `axis`)."""
    return all_gather_p.bind(x, axis_name=axis_name, axis_size=_resolve(axis_name, "all_gather"), axis=axis,
                             tiled=tiled)


def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False):
    """psum(x), of which rank k keeps block k of scatter_dimension (tiled: blocks of size/n; else the
    dimension has size n and is removed)."""
    return psum_scatter_p.bind(x, axis_name=axis_name, axis_size=_resolve(axis_name, "psum_scatter"),
                               scatter_dimension=scatter_dimension, tiled=tiled)


def all_to_all(x, axis_name, split_axis, concat_axis, *, tiled=False):
    """Chunk j of x's split_axis goes to rank j; the chunks received join along concat_axis, in rank order.

    tiled=False (JAX's default): split_axis has exactly one entry per rank and is removed; the received
    entries form a new axis at position concat_axis of the result. tiled=True: split_axis is cut into
    equal chunks and the chunks are concatenated along concat_axis (no axis added or removed)."""
    n = _resolve(axis_name, "all_to_all")
    if not tiled:
        x = x if hasattr(x, "shape") else asarray(x)
        if not (0 <= split_axis < len(x.shape)) or x.shape[split_axis] != n:
            raise ValueError(f"all_to_all: with tiled=False, split_axis {split_axis} of shape {tuple(x.shape)} must "
                             f"have the axis size {n}")
        if not 0 <= concat_axis < len(x.shape):
            raise ValueError(f"all_to_all: concat_axis {concat_axis} is out of range for the result's "
                             f"{len(x.shape)} dimensions")
        if split_axis < concat_axis:  # concat_axis names a position once split_axis is gone
            concat_axis += 1
            x = expand_dims(x, concat_axis)
        elif concat_axis < split_axis:
            x = expand_dims(x, concat_axis)
            split_axis += 1
    out = all_to_all_p.bind(x, axis_name=axis_name, axis_size=n, split_axis=split_axis, concat_axis=concat_axis,
                            tiled=True)
    if not tiled and split_axis != concat_axis:
        out = squeeze(out, split_axis)
    return out


def ppermute(x, axis_name, perm):
    """Send x along the (source, destination) pairs of perm; ranks nobody sends to get zeros."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    return ppermute_p.bind(x, axis_name=axis_name, axis_size=_resolve(axis_name, "ppermute"), perm=perm)


def axis_index(axis_name):
    """This rank's index along axis `axis_name` (an int32 scalar)."""
    n = _resolve(axis_name, "axis_index")
    main = axis_main(axis_name)
    if main is not None:
        return BatchTracer(main, arange(n, dtype=dt.int32), 0)
    return axis_index_p.bind(axis_name=axis_name, axis_size=n, device=_cpu)
