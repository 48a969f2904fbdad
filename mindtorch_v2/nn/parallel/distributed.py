"""torch.nn.parallel.DistributedDataParallel on the MPI process group.

Construction broadcasts rank 0's parameters and buffers. Parameters that need a gradient are split into
buckets (reverse registration order, about bucket_cap_mb each), the order in which backward produces them.
A hook on each parameter's gradient edge takes its gradient (plus what no_sync steps accumulated into .grad)
into its bucket and lets zeros through to .grad; a full bucket starts its non-blocking allreduce at once,
buckets always in index order on every rank (so ranks issue the same collectives in the same order), and
backward goes on while it flies. When the last bucket has started, all are waited for and each
parameter's .grad becomes its slice of the averaged bucket:

    params a, b, c (c's grad arrives first), one bucket [c, b, a]:
    hook(c): slot c = g_c (+ .grad); hook(b): ...; hook(a): bucket full -> Iallreduce -> wait ->
    a.grad, b.grad, c.grad = bucket / world_size       (a's own accumulate then adds the zeros it got)
"""
import contextlib

import numpy as np

from ...core import distributed as _world
from ...core import zeros_like
from ...distributed import distributed_c10d as dist
from ...eager import grad_mode
from ...eager.creation import from_numpy
from ...eager.tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class _GradBucket:
    """torch.distributed.GradBucket: what a comm hook receives (a flat buffer of the bucket's gradients)."""

    def __init__(self, index, buffer, params, is_last):
        self._index, self._buffer, self._params, self._last = index, buffer, params, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def is_last(self):
        return self._last

    def parameters(self):
        return list(self._params)

    def gradients(self):
        out, off = [], 0
        for p in self._params:
            n = p.numel()
            out.append(self._buffer[off:off + n].view(p.shape))
            off += n
        return out


class _Bucket:
    __slots__ = ("index", "params", "offsets", "numel", "slots", "pending", "dtype")

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.offsets = {}
        off = 0
        for p in params:
            self.offsets[id(p)] = (off, p.numel())
            off += p.numel()
        self.numel = off
        self.dtype = params[0].dtype
        self.slots = {}       # id(param) -> its contribution (numpy) this iteration
        self.pending = None   # the in-flight reduction: a callable giving the averaged flat numpy buffer


class DistributedDataParallel(Module):
    """Data-parallel training: the wrapped module runs on every rank's batch; backward averages gradients."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        pg = dist._group(process_group)
        params = [p for p in module.parameters()]
        if not any(p.requires_grad for p in params):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if device_ids is not None and any(str(d) not in ("cpu",) for d in device_ids):
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters "
                             f"{ {p.device for p in params} }.")
        self.module = module
        self.process_group = pg
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._comm_hook = None
        self._comm_state = None
        self._prepared = False
        self._hooked = False
        with grad_mode.no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t, src=pg._ranks[0], group=pg)
        self._build_buckets([p for p in params if p.requires_grad])
        self._handles = [p.register_hook(self._make_hook(p)) for b in self._buckets for p in b.params]

    # -- buckets ---------------------------------------------------------------------------------------

    def _build_buckets(self, params):
        buckets, cur, size = [], [], 0
        for p in reversed(params):  # backward produces the last layers' gradients first
            nbytes = p.numel() * p.element_size()
            if cur and (size + nbytes > self.bucket_bytes_cap or p.dtype is not cur[0].dtype):
                buckets.append(cur)
                cur, size = [], 0
            cur.append(p)
            size += nbytes
        if cur:
            buckets.append(cur)
        self._buckets = [_Bucket(i, b) for i, b in enumerate(buckets)]
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}

    def _make_hook(self, p):
        def hook(g):
            if not self._prepared:
                return None  # no_sync, or backward of an output not made by this forward: plain accumulation
            b = self._bucket_of[id(p)]
            if id(p) in b.slots:
                raise RuntimeError(
                    "Expected to mark a variable ready only once. This error is caused by one of the following "
                    "reasons: 1) Use of a module parameter outside the `forward` function. 2) Reused parameters "
                    f"in multiple reentrant backward passes. (parameter of shape {tuple(p.shape)}, rank "
                    f"{self.process_group.rank()} of world size {self.process_group.size()})")
            contrib = g.detach().numpy()
            if p.grad is not None:
                contrib = contrib + p.grad.detach().numpy()
            b.slots[id(p)] = contrib
            self._hooked = True
            self._launch_ready()
            return Tensor._from_value(_zeros_value(g))
        return hook

    def _launch_ready(self):
        while self._next < len(self._buckets):
            b = self._buckets[self._next]
            if len(b.slots) < len(b.params):
                return
            self._launch(b)
            self._next += 1
        self._finish()

    def _launch(self, b):
        flat = np.empty(b.numel, dtype=np.asarray(b.params[0].detach().numpy()).dtype)
        for p in b.params:
            off, n = b.offsets[id(p)]
            c = b.slots.get(id(p))
            flat[off:off + n] = 0 if c is None else np.asarray(c).reshape(-1)
        pg = self.process_group
        if self._comm_hook is None:
            out = np.empty_like(flat)
            req = pg._comm.Iallreduce(flat, out, op=_world.mpi_op("sum"))

            def result(out=out, req=req, n=pg.size()):
                req.Wait()
                return out / n
            b.pending = result
        else:
            bucket = _GradBucket(b.index, from_numpy(flat), b.params, b.index == len(self._buckets) - 1)
            fut = self._comm_hook(self._comm_state, bucket)
            b.pending = lambda: np.asarray(fut.wait().detach().numpy()).reshape(-1)

    def _finish(self):
        self._prepared = False
        for b in self._buckets:
            flat = b.pending()
            b.pending = None
            for p in b.params:
                off, n = b.offsets[id(p)]
                if id(p) in self._unused_everywhere:
                    continue
                p.grad = from_numpy(flat[off:off + n].reshape(tuple(p.shape)).copy())
            b.slots = {}

    # -- forward ---------------------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        # a forward without backward (evaluation under grad mode) is fine; a backward that reached some
        # parameters but not all is what PyTorch reports
        if self._prepared and self._hooked:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                f"participate in calculating loss. (rank {self.process_group.rank()} of world size "
                f"{self.process_group.size()})")
        if self.broadcast_buffers:
            with grad_mode.no_grad():
                for t in self.module.buffers():
                    dist.broadcast(t, src=self.process_group._ranks[0], group=self.process_group)
        out = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare(out)
        return out

    def _prepare(self, out):
        for b in self._buckets:
            b.slots = {}
            b.pending = None
        self._next = 0
        self._hooked = False
        self._unused_everywhere = set()
        if self.find_unused_parameters:
            used = _reached_leaves(out)
            params = [p for b in self._buckets for p in b.params]
            flags = np.array([id(p) in used for p in params], dtype=np.int32)
            anywhere = _world.allreduce(self.process_group._comm, flags, "max")
            for p, f, a in zip(params, flags, anywhere):
                if not a:
                    self._unused_everywhere.add(id(p))
                if not f:
                    b = self._bucket_of[id(p)]
                    b.slots[id(p)] = None  # ready with a zero contribution
        self._prepared = True
        if self.find_unused_parameters:
            self._launch_ready()  # buckets of unused parameters only start now, still in index order

    # -- torch API -------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, backward accumulates local gradients without communication; the first
        backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """hook(state, bucket) -> Future of the bucket's reduced flat gradient tensor, used instead of the
        built-in averaging allreduce (e.g. default_hooks.fp16_compress_hook). Call once, before training."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = hook
        self._comm_state = state

    def _set_static_graph(self):
        self.static_graph = True

    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel is not picklable; save model.module instead")


def _zeros_value(g):
    return zeros_like(g.detach()._value())


def _reached_leaves(out):
    """ids of the leaf tensors whose AccumulateGrad the autograd graph of `out` reaches."""
    stack, seen, leaves = [], set(), set()

    def add_outputs(o):
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
            elif o.requires_grad:
                leaves.add(id(o))
        elif isinstance(o, dict):
            for v in o.values():
                add_outputs(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                add_outputs(v)
    add_outputs(out)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for edge in getattr(node, "next_functions", ()) or ():
            if edge is not None and edge[0] is not None:
                stack.append(edge[0])
    return leaves
