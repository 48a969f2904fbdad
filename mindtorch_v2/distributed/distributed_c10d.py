"""torch.distributed's process groups and collectives, on MPI through mpi4py.

Every collective reads its tensors as contiguous numpy buffers, runs one buffer-protocol mpi4py call
(core/distributed.py holds the shared lowering), and writes results back through the eager write point
(eager/writeback.write): views see the new data and the storage's version counter is bumped once per
written tensor, so autograd's saved-tensor checks notice the write. Collectives are not recorded on the
autograd tape, as in PyTorch.

A rank that raises an uncaught exception after init_process_group aborts the whole MPI job
(MPI_Abort from sys.excepthook), so the other ranks do not hang in their next collective.
"""
import datetime
import enum
import os
import pickle
import sys
import threading
import time
import traceback

import numpy as np

from .. import core
from ..core import distributed as _world
from ..eager.tensor import Tensor
from ..eager.writeback import write

__all__ = ["Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "P2POp", "group", "is_available",
           "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_initialized", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend", "get_process_group_ranks",
           "get_global_rank", "get_group_rank", "new_group", "new_subgroups", "all_reduce", "broadcast",
           "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter", "reduce_scatter",
           "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
           "batch_isend_irecv", "barrier", "monitored_barrier", "broadcast_object_list", "all_gather_object",
           "gather_object", "scatter_object_list", "DistBackendError", "DistError"]

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


class DistError(RuntimeError):
    """torch.distributed.DistError: an error in the distributed library."""


class DistBackendError(DistError):
    """torch.distributed.DistBackendError: the communication back end failed (here also: a timeout)."""


def is_available():
    """True when mpi4py (and so an MPI library) can be imported."""
    return _world.is_available()


def is_mpi_available():
    return is_available()


def is_gloo_available():
    return is_available()  # "gloo" names the CPU back end in scripts; it runs on MPI here


def is_nccl_available():
    return False


class Backend(str):
    """A back-end name: Backend("GLOO") == "gloo"; the known names as class attributes."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)} {name}")
        return str.__new__(cls, name.lower())


class ReduceOp:
    """The reductions of the collectives: ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR."""

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

        def __str__(self):
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


_MPI_NAMES = {ReduceOp.SUM: "sum", ReduceOp.AVG: "sum", ReduceOp.PRODUCT: "prod", ReduceOp.MIN: "min",
              ReduceOp.MAX: "max", ReduceOp.BAND: "band", ReduceOp.BOR: "bor", ReduceOp.BXOR: "bxor"}


class ProcessGroup:
    """A set of ranks with its own communicator. `rank()` and `size()` are this process's place in it."""

    def __init__(self, comm, ranks, backend, timeout):
        self._comm = comm
        self._ranks = tuple(ranks)  # the global ranks of the members, in group-rank order
        self._backend = backend
        self._timeout = timeout

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return self._backend

    def __repr__(self):
        return f"ProcessGroup(backend={self._backend}, rank={self.rank()}, size={self.size()})"


class GroupMember:
    """torch's group sentinels: WORLD is the default group once initialized; NON_GROUP_MEMBER marks a rank
    outside a group made by new_group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None


_STATE = {"pg": None, "backend": None, "hook": None}


def is_initialized():
    """Whether the default process group has been initialized."""
    return _STATE["pg"] is not None


def _default():
    pg = _STATE["pg"]
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return pg


def _group(g):
    if g is None or g is GroupMember.WORLD:
        return _default()
    if g == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    _default()
    return g


def _where(op, pg):
    return f"{op} (rank {pg.rank()} of world size {pg.size()})"


def _env_int(*names):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default process group: all the processes of the MPI job (started by mpiexec or
    `python -m mindtorch_v2.distributed.run`). backend "mpi", or "gloo" (the CPU name scripts use)."""
    if _STATE["pg"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "gloo" if backend is None else str(backend).lower()
    if name in ("cpu:gloo", "cpu:mpi"):
        name = name[4:]
    if name not in ("mpi", "gloo"):
        raise RuntimeError(f"init_process_group: backend '{backend}' is not available here: the CPU back ends "
                           "are 'mpi' and 'gloo' (both run on MPI through mpi4py)")
    if not is_available():
        raise RuntimeError("init_process_group: torch.distributed is not available: mpi4py is not installed "
                           "(pip install 'mindtorch_v2[distributed]')")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    mpi_rank, mpi_size = _world.initialize()
    want_size = world_size if world_size not in (-1, None) else _env_int("WORLD_SIZE")
    want_rank = rank if rank not in (-1, None) else _env_int("RANK")
    if want_size is not None and want_size != mpi_size:
        raise RuntimeError(
            f"init_process_group: world_size {want_size} (from {'the argument' if world_size not in (-1, None) else 'WORLD_SIZE'})"
            f" does not match the MPI job's size {mpi_size}; start the processes with mpiexec -n {want_size} or "
            f"python -m mindtorch_v2.distributed.run --nproc-per-node {want_size}")
    if want_rank is not None and want_rank != mpi_rank:
        raise RuntimeError(f"init_process_group: rank {want_rank} does not match this process's MPI rank {mpi_rank} "
                           f"(world size {mpi_size})")
    comm = _world._world().Dup()
    pg = ProcessGroup(comm, range(mpi_size), name, timeout or _DEFAULT_TIMEOUT)
    _STATE["pg"] = pg
    _STATE["backend"] = name
    GroupMember.WORLD = group.WORLD = pg
    _install_abort_hook()


def destroy_process_group(group=None):
    """Leave the default group (and every group made from it); with a group, free that group."""
    if group is None or group is GroupMember.WORLD:
        pg = _default()
        _free(pg)
        _STATE["pg"] = None
        GroupMember.WORLD = group_ns.WORLD = None
        _uninstall_abort_hook()
    elif group != GroupMember.NON_GROUP_MEMBER:
        _free(group)


group_ns = group


def _free(pg):
    try:
        pg._comm.Free()
    except Exception:  # noqa: BLE001  (an already freed communicator)
        pass


def _install_abort_hook():
    if _STATE["hook"] is not None:
        return
    previous = sys.excepthook

    def abort_on_uncaught(exc_type, exc, tb):
        pg = _STATE["pg"]
        if pg is None or _world.process_count() == 1:
            return previous(exc_type, exc, tb)
        rank, size = _world.process_index(), _world.process_count()
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write("".join(f"[rank{rank}]: {line}\n" for line in text.rstrip("\n").split("\n")))
        sys.stderr.write(f"[rank{rank}]: aborting the job of {size} processes (uncaught exception on rank {rank})\n")
        sys.stderr.flush()
        _world._world().Abort(1)

    _STATE["hook"] = (previous, abort_on_uncaught)
    sys.excepthook = abort_on_uncaught
    threading.excepthook = lambda args: abort_on_uncaught(args.exc_type, args.exc_value, args.exc_traceback)


def _uninstall_abort_hook():
    hook = _STATE["hook"]
    if hook is not None and sys.excepthook is hook[1]:
        sys.excepthook = hook[0]
    threading.excepthook = threading.__excepthook__
    _STATE["hook"] = None


def get_rank(group=None):
    """This process's rank in the group (-1 if it is not a member)."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).rank()


def get_world_size(group=None):
    """The number of ranks in the group (-1 if this process is not a member)."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).size()


def get_backend(group=None):
    """The back-end name of the group: "mpi", or "gloo" when the script asked for gloo."""
    return _group(group)._backend


def get_process_group_ranks(group):
    return list(_group(group)._ranks)


def get_global_rank(group, group_rank):
    pg = _group(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _group(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of the given global ranks (all by default). Every rank of the default group must call it;
    non-members get GroupMember.NON_GROUP_MEMBER."""
    world = _default()
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(int(r) for r in ranks)
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is out of range for world size {n} (rank {world.rank()})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: duplicate ranks in {ranks}")
    me = world.rank()
    color = 0 if me in ranks else _mpi_undefined()
    comm = world._comm.Split(color, ranks.index(me) if me in ranks else 0)
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, ranks, backend or world._backend, timeout or world._timeout)


def _mpi_undefined():
    from mpi4py import MPI
    return MPI.UNDEFINED


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split the world into consecutive subgroups of group_size ranks: (this rank's subgroup, all subgroups)."""
    world = _default()
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                         "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    n = world.size()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > n:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({n})")
    if n % group_size != 0:
        raise ValueError(f"The world size ({n}) must be divisible by 'group_size={group_size}'")
    cur, subgroups = None, []
    for start in range(0, n, group_size):
        g = new_group(range(start, start + group_size), timeout=timeout, backend=backend)
        if g != GroupMember.NON_GROUP_MEMBER:
            cur = g
            subgroups.append(g)
        else:
            subgroups.append(g)
    return cur, subgroups


# ---------------------------------------------------------------------------
# Work and futures


class Future:
    """torch.futures.Future: a value that a Work (or a callback chain) completes."""

    def __init__(self, waiter=None):
        self._waiter = waiter  # called once to complete the future
        self._done = False
        self._value = None
        self._exc = None
        self._callbacks = []

    def done(self):
        return self._done

    def wait(self):
        if not self._done and self._waiter is not None:
            waiter, self._waiter = self._waiter, None
            try:
                self.set_result(waiter())
            except BaseException as e:  # noqa: BLE001
                self.set_exception(e)
        if self._exc is not None:
            raise self._exc
        return self._value

    def value(self):
        return self.wait()

    def set_result(self, result):
        self._value, self._done = result, True
        for cb in self._callbacks:
            cb(self)
        self._callbacks = []

    def set_exception(self, exc):
        self._exc, self._done = exc, True

    def then(self, callback):
        """A future of callback(self), run when this one completes."""
        nxt = Future(lambda: callback(self._wait_self()))
        return nxt

    def _wait_self(self):
        self.wait()
        return self

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)


class Work:
    """The handle of a collective run with async_op=True: wait(timeout), is_completed(), get_future()."""

    def __init__(self, op, pg, requests, finish, result):
        self._op = op
        self._pg = pg
        self._requests = requests  # MPI requests still in flight
        self._finish = finish      # writes the received buffers back into the tensors
        self._result = result      # what the future holds (the output tensors)
        self._done = not requests and finish is None

    def is_completed(self):
        if not self._done and all(r.Test() for r in self._requests):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def _complete(self):
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        self._done = True

    def wait(self, timeout=None):
        """Block until the collective is done; raise DistBackendError after `timeout` (a timedelta)."""
        if self._done:
            return True
        limit = (timeout or self._pg._timeout).total_seconds()
        _poll(self._requests, limit, self._op, self._pg)
        self._complete()
        return True

    def get_future(self):
        fut = Future(lambda: (self.wait(), self._result)[1])
        if self._done:
            fut.wait()
        return fut

    def result(self):
        self.wait()
        return self._result if isinstance(self._result, list) else [self._result]


def _poll(requests, limit, op, pg):
    deadline = time.monotonic() + limit
    pause = 0.0
    while True:
        if all(r.Test() for r in requests):
            return
        if time.monotonic() > deadline:
            raise DistBackendError(f"{_where(op, pg)}: timed out after {limit:g} s waiting for the other ranks")
        time.sleep(pause)
        pause = min(pause * 2 + 1e-5, 1e-3)


def _done_work(op, pg, result, async_op):
    return Work(op, pg, [], None, result) if async_op else None


# ---------------------------------------------------------------------------
# tensors <-> buffers


def _check_tensor(t, op, pg, what="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{_where(op, pg)}: {what} must be a Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise RuntimeError(f"{_where(op, pg)}: {what} is on {t.device}; the MPI back end holds cpu tensors only")


def _read(t):
    v = t.detach()._value()
    if type(v) is not core.Array:
        raise RuntimeError("collectives need concrete tensors; they cannot run inside a function transform "
                           "(use core.psum and friends under vmap/grad)")
    return np.asarray(v)


def _write(t, buf):
    buf = buf.reshape(t.shape)
    if buf.dtype != _read(t).dtype:
        buf = buf.astype(_read(t).dtype)
    write(t, core.asarray(buf), record=False)


def _check_op(op, opname, pg, t):
    if isinstance(op, ReduceOp.RedOpType) and op in _MPI_NAMES:
        name = _MPI_NAMES[op]
    else:
        raise ValueError(f"{_where(opname, pg)}: unsupported reduce op {op!r}")
    if name in ("band", "bor", "bxor") and t.dtype.is_floating_point:
        raise RuntimeError(f"{_where(opname, pg)}: {op} needs an integer or bool tensor, got {t.dtype}")
    return name


def _check_rank(r, what, opname, pg):
    if not isinstance(r, int) or not 0 <= r < pg.size():
        raise RuntimeError(f"{_where(opname, pg)}: invalid {what} rank: {r}")


def _group_rank(pg, global_rank, what, opname):
    """A global rank (as torch's src/dst are) -> rank within pg."""
    if global_rank not in pg._ranks:
        raise RuntimeError(f"{_where(opname, pg)}: invalid {what} rank: {global_rank}")
    return pg._ranks.index(global_rank)


def _reduce_buf(buf, name, op, pg):
    """allreduce of one numpy buffer with torch's op (AVG is SUM then a division)."""
    out = _world.allreduce(pg._comm, buf, name)
    if op is ReduceOp.AVG:
        out = (out / pg.size()).astype(buf.dtype) if buf.dtype.kind in "fc" else out // pg.size()
    return out


# ---------------------------------------------------------------------------
# collectives


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over the group, in place on every rank."""
    pg = _group(group)
    _check_tensor(tensor, "all_reduce", pg)
    name = _check_op(op, "all_reduce", pg, tensor)
    buf = _read(tensor)
    if async_op:
        send, back = _world._wire(buf, name)
        out = np.empty_like(send)
        req = pg._comm.Iallreduce(send, out, op=_world.mpi_op(name))

        def finish():
            r = _world._back(out, back)
            if op is ReduceOp.AVG:
                r = (r / pg.size()) if r.dtype.kind in "fc" else r // pg.size()
            _write(tensor, r)
        return Work("all_reduce", pg, [req], finish, [tensor])
    _write(tensor, _reduce_buf(buf, name, op, pg))
    return None


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy `tensor` from global rank src into every rank's tensor."""
    pg = _group(group)
    _check_tensor(tensor, "broadcast", pg)
    root = group_src if group_src is not None else _group_rank(pg, src, "root", "broadcast")
    _check_rank(root, "root", "broadcast", pg)
    buf = _read(tensor)
    send, back = _world._wire(buf, "bcast")
    send = np.array(send, copy=True)
    if async_op:
        req = pg._comm.Ibcast(send, root=root)
        return Work("broadcast", pg, [req], lambda: pg.rank() != root and _write(tensor, _world._back(send, back)),
                    [tensor])
    pg._comm.Bcast(send, root=root)
    if pg.rank() != root:
        _write(tensor, _world._back(send, back))
    return None


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` over the group into rank dst's tensor (others keep theirs)."""
    pg = _group(group)
    _check_tensor(tensor, "reduce", pg)
    root = group_dst if group_dst is not None else _group_rank(pg, dst, "root", "reduce")
    name = _check_op(op, "reduce", pg, tensor)
    buf = _read(tensor)
    send, back = _world._wire(buf, name)
    out = np.empty_like(send)
    pg._comm.Reduce(send, out, op=_world.mpi_op(name), root=root)
    if pg.rank() == root:
        r = _world._back(out, back)
        if op is ReduceOp.AVG:
            r = r / pg.size() if r.dtype.kind in "fc" else r // pg.size()
        _write(tensor, r)
    return _done_work("reduce", pg, [tensor], async_op)


def _check_list(lst, n, op, pg, what, like=None):
    """lst: a list of n tensors (each of `like`'s shape and dtype, when given)."""
    if not isinstance(lst, (list, tuple)):
        raise TypeError(f"{_where(op, pg)}: {what} must be a list of tensors, got {type(lst).__name__}")
    if len(lst) != n:
        raise RuntimeError(f"{_where(op, pg)}: invalid {what} (expected length {n}, got {len(lst)})")
    for i, t in enumerate(lst):
        _check_tensor(t, op, pg, f"{what}[{i}]")
    if like is not None:
        for i, t in enumerate(lst):
            _same_shape(t, like, op, pg, f"{what}[{i}]")


def _rooted(op, pg, tensor, tensors, rank, group_rank, what, role):
    """The root (group rank) of a gather/scatter; the list is checked there and must be absent elsewhere."""
    _check_tensor(tensor, op, pg)
    root = group_rank if group_rank is not None else _group_rank(pg, 0 if rank is None else rank, "root", op)
    if pg.rank() == root:
        _check_list(tensors, pg.size(), op, pg, what, like=tensor)
    elif tensors:
        raise ValueError(f"{_where(op, pg)}: Argument ``{what}`` must NOT be specified on non-{role} ranks.")
    return root


def _same_shape(t, ref, op, pg, what):
    if tuple(t.shape) != tuple(ref.shape) or t.dtype is not ref.dtype:
        raise RuntimeError(f"{_where(op, pg)}: {what} has shape {tuple(t.shape)} and dtype {t.dtype}, expected "
                           f"{tuple(ref.shape)} and {ref.dtype}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's `tensor` into tensor_list[rank], on every rank."""
    pg = _group(group)
    _check_tensor(tensor, "all_gather", pg)
    _check_list(tensor_list, pg.size(), "all_gather", pg, "output tensor list", like=tensor)
    out = _world.allgather(pg._comm, _read(tensor))
    for t, b in zip(tensor_list, out):
        _write(t, b)
    return _done_work("all_gather", pg, tensor_list, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's input concatenated on dim 0 (or stacked, for an output of shape (world, *input))."""
    pg = _group(group)
    _check_tensor(input_tensor, "all_gather_into_tensor", pg)
    _check_tensor(output_tensor, "all_gather_into_tensor", pg, "output tensor")
    n = pg.size()
    numel = input_tensor.numel()
    if output_tensor.numel() != n * numel or output_tensor.dtype is not input_tensor.dtype:
        raise ValueError(f"{_where('all_gather_into_tensor', pg)}: output tensor size must be equal to world_size "
                         f"times input tensor size (output {tuple(output_tensor.shape)}, input "
                         f"{tuple(input_tensor.shape)}, world size {n})")
    out = _world.allgather(pg._comm, _read(input_tensor))
    _write(output_tensor, out)
    return _done_work("all_gather_into_tensor", pg, output_tensor, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's `tensor` into gather_list on rank dst (other ranks pass no list)."""
    pg = _group(group)
    root = _rooted("gather", pg, tensor, gather_list, dst, group_dst, "gather_list", "destination")
    me = pg.rank()
    send, back = _world._wire(_read(tensor), "gather")
    out = np.empty((pg.size(),) + send.shape, send.dtype) if me == root else None
    pg._comm.Gather(send, out, root=root)
    if me == root:
        for t, b in zip(gather_list, _world._back(out, back)):
            _write(t, b)
    return _done_work("gather", pg, gather_list, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """scatter_list[i] from rank src into rank i's `tensor`."""
    pg = _group(group)
    root = _rooted("scatter", pg, tensor, scatter_list, src, group_src, "scatter_list", "source")
    if pg.rank() == root:
        send, back = _world._wire(np.stack([_read(t) for t in scatter_list]), "scatter")
    else:
        send = None
    recv, back = _world._wire(_read(tensor), "scatter")
    recv = np.empty_like(recv)
    pg._comm.Scatter(send, recv, root=root)
    _write(tensor, _world._back(recv, back))
    return _done_work("scatter", pg, tensor, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """input_list[i] reduced over the ranks into rank i's output."""
    pg = _group(group)
    _check_tensor(output, "reduce_scatter", pg, "output")
    _check_list(input_list, pg.size(), "reduce_scatter", pg, "input_list", like=output)
    name = _check_op(op, "reduce_scatter", pg, output)
    out = _reduce_scatter_buf(np.stack([_read(t) for t in input_list]), name, op, pg)
    _write(output, out)
    return _done_work("reduce_scatter", pg, output, async_op)


def _reduce_scatter_buf(buf, name, op, pg):
    out = _world.reduce_scatter(pg._comm, buf, name)
    if op is ReduceOp.AVG:
        out = out / pg.size() if out.dtype.kind in "fc" else out // pg.size()
    return out


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """input (world_size * output's size, split on dim 0) reduced over ranks; block rank lands in output."""
    pg = _group(group)
    _check_tensor(output, "reduce_scatter_tensor", pg, "output")
    _check_tensor(input, "reduce_scatter_tensor", pg, "input")
    n = pg.size()
    if input.numel() != n * output.numel() or input.dtype is not output.dtype:
        raise ValueError(f"{_where('reduce_scatter_tensor', pg)}: input tensor must be the same size as output size "
                         f"times world size (input {tuple(input.shape)}, output {tuple(output.shape)})")
    name = _check_op(op, "reduce_scatter_tensor", pg, output)
    buf = _read(input).reshape((n,) + tuple(output.shape))
    _write(output, _reduce_scatter_buf(buf, name, op, pg))
    return _done_work("reduce_scatter_tensor", pg, output, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """input_tensor_list[j] goes to rank j, arriving in its output_tensor_list[this rank]."""
    pg = _group(group)
    n = pg.size()
    _check_list(output_tensor_list, n, "all_to_all", pg, "output_tensor_list")
    _check_list(input_tensor_list, n, "all_to_all", pg, "input_tensor_list")
    comm = pg._comm
    sends = [np.ascontiguousarray(_world._wire(_read(t), "a2a")[0]) for t in input_tensor_list]
    recvs = [np.empty_like(_world._wire(_read(t), "a2a")[0]) for t in output_tensor_list]
    reqs = []
    for j in range(n):
        reqs.append(comm.Irecv(recvs[j], source=j, tag=7101))
    for j in range(n):
        reqs.append(comm.Isend(sends[j], dest=j, tag=7101))
    _poll(reqs, pg._timeout.total_seconds(), "all_to_all", pg)
    for t, b in zip(output_tensor_list, recvs):
        _write(t, b)
    return _done_work("all_to_all", pg, output_tensor_list, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """input split on dim 0 (evenly, or by input_split_sizes): piece j to rank j; output receives the
    pieces in rank order."""
    pg = _group(group)
    n = pg.size()
    _check_tensor(output, "all_to_all_single", pg, "output")
    _check_tensor(input, "all_to_all_single", pg, "input")
    ib = _read(input)
    send, back = _world._wire(ib, "a2a")
    recv = np.empty(_read(output).shape, send.dtype)
    if output_split_sizes is None and input_split_sizes is None:
        if ib.shape[0] % n or ib.shape != recv.shape:
            raise RuntimeError(f"{_where('all_to_all_single', pg)}: tensor's dim 0 ({ib.shape[0]}) must be divisible "
                               f"by the world size and input and output must have the same shape")
        pg._comm.Alltoall(send, recv)
    else:
        row = int(np.prod(ib.shape[1:], dtype=np.int64))
        isz = list(input_split_sizes) if input_split_sizes else [ib.shape[0] // n] * n
        osz = list(output_split_sizes) if output_split_sizes else [recv.shape[0] // n] * n
        if len(isz) != n or len(osz) != n or sum(isz) != ib.shape[0] or sum(osz) != recv.shape[0]:
            raise RuntimeError(f"{_where('all_to_all_single', pg)}: split sizes {isz} / {osz} do not match the "
                               f"tensors' dim 0 ({ib.shape[0]} / {recv.shape[0]}) and world size {n}")
        sc = [s * row for s in isz]
        rc = [s * row for s in osz]
        pg._comm.Alltoallv([send, (sc, list(np.cumsum([0] + sc[:-1])))],
                           [recv, (rc, list(np.cumsum([0] + rc[:-1])))])
    _write(output, _world._back(recv, back))
    return _done_work("all_to_all_single", pg, output, async_op)


# ---------------------------------------------------------------------------
# point to point


def _p2p_peer(pg, peer, what, op):
    r = _group_rank(pg, peer, what, op)
    return r


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending `tensor` to global rank dst; returns a Work."""
    pg = _group(group)
    _check_tensor(tensor, "isend", pg)
    peer = group_dst if group_dst is not None else _p2p_peer(pg, dst, "destination", "isend")
    if peer == pg.rank():
        raise ValueError(f"{_where('isend', pg)}: Invalid destination rank: should not be the same as the rank of "
                         "the current process.")
    send = np.array(_world._wire(_read(tensor), "p2p")[0], copy=True)
    return Work("isend", pg, [pg._comm.Isend(send, dest=peer, tag=tag)], None, [tensor])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into `tensor` from global rank src (any rank when src is None); returns a Work."""
    pg = _group(group)
    _check_tensor(tensor, "irecv", pg)
    from mpi4py import MPI
    peer = MPI.ANY_SOURCE if src is None and group_src is None else (
        group_src if group_src is not None else _p2p_peer(pg, src, "source", "irecv"))
    recv, back = _world._wire(_read(tensor), "p2p")
    recv = np.empty_like(recv)
    req = pg._comm.Irecv(recv, source=peer, tag=tag)
    return Work("irecv", pg, [req], lambda: _write(tensor, _world._back(recv, back)), [tensor])


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to global rank dst (blocking)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from global rank src (any when None); returns the sender's rank."""
    pg = _group(group)
    _check_tensor(tensor, "recv", pg)
    from mpi4py import MPI
    peer = MPI.ANY_SOURCE if src is None and group_src is None else (
        group_src if group_src is not None else _p2p_peer(pg, src, "source", "recv"))
    recv_buf, back = _world._wire(_read(tensor), "p2p")
    recv_buf = np.empty_like(recv_buf)
    status = MPI.Status()
    pg._comm.Recv(recv_buf, source=peer, tag=tag, status=status)
    _write(tensor, _world._back(recv_buf, back))
    return pg._ranks[status.Get_source()]


class P2POp:
    """One point-to-point operation for batch_isend_irecv: P2POp(dist.isend or dist.irecv, tensor, peer)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Start every P2POp of the list; returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works


# ---------------------------------------------------------------------------
# barriers and objects


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reaches the barrier."""
    pg = _group(group)
    req = pg._comm.Ibarrier()
    work = Work("barrier", pg, [req], None, [])
    if async_op:
        return work
    work.wait()
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises (DistBackendError, a RuntimeError) when some rank does not arrive within
    `timeout` (a timedelta; the group's timeout by default)."""
    pg = _group(group)
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"monitored_barrier: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    limit = (timeout or pg._timeout).total_seconds()
    req = pg._comm.Ibarrier()
    deadline = time.monotonic() + limit
    while not req.Test():
        if time.monotonic() > deadline:
            raise DistBackendError(f"monitored_barrier (rank {pg.rank()} of world size {pg.size()}): not every rank "
                                   f"reached the barrier within {datetime.timedelta(seconds=limit)}")
        time.sleep(1e-3)


def _dumps(obj):
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace object_list's entries on every rank with those of rank src (pickled)."""
    pg = _group(group)
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src, "root",
                                                               "broadcast_object_list")
    objs = pg._comm.bcast(list(object_list) if pg.rank() == root else None, root=root)
    if len(objs) != len(object_list):
        raise RuntimeError(f"{_where('broadcast_object_list', pg)}: object_list has {len(object_list)} entries, "
                           f"rank {root} sent {len(objs)}")
    object_list[:] = objs


def all_gather_object(object_list, obj, group=None):
    """object_list[i] = rank i's obj (pickled), on every rank."""
    pg = _group(group)
    if len(object_list) != pg.size():
        raise RuntimeError(f"{_where('all_gather_object', pg)}: object_list must have world_size "
                           f"({pg.size()}) entries, got {len(object_list)}")
    object_list[:] = pg._comm.allgather(obj)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank dst's object_gather_list[i] = rank i's obj."""
    pg = _group(group)
    root = group_dst if group_dst is not None else _group_rank(pg, 0 if dst is None else dst, "root", "gather_object")
    res = pg._comm.gather(obj, root=root)
    if pg.rank() == root:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise RuntimeError(f"{_where('gather_object', pg)}: object_gather_list must have world_size entries")
        object_gather_list[:] = res


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """scatter_object_output_list[0] = rank src's scatter_object_input_list[this rank]."""
    pg = _group(group)
    root = group_src if group_src is not None else _group_rank(pg, 0 if src is None else src, "root",
                                                               "scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    scatter_object_output_list[0] = pg._comm.scatter(
        list(scatter_object_input_list) if pg.rank() == root else None, root=root)
