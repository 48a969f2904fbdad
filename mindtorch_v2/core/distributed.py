"""The process world: the ranks of an MPI job, through mpi4py (loaded on first use, never at import).

    core.distributed.initialize()                 # MPI_Init (mpiexec's environment gives rank and size)
    core.distributed.process_index(), process_count()
    f = core.distributed.spmd(g, axis_name="i")   # g's collectives over "i" run across the processes
    f(x_of_this_rank)                             # the same g that vmap(g, axis_name="i") runs in one process

The buffer helpers at the bottom (reduce, allgather, ...) are the one MPI lowering: the core collectives'
cpu lowering and torch.distributed both call them, with buffer-protocol (uppercase) mpi4py calls on
contiguous numpy arrays. NumPy dtypes MPI has no type for (float16, bfloat16, float8, bool) travel as a
type MPI knows and are converted back.
"""
import contextlib
import threading

import numpy as np

__all__ = ["initialize", "is_initialized", "process_index", "process_count", "spmd", "shutdown"]

_STATE = {"comm": None}


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("core.distributed needs mpi4py and an MPI library: pip install 'mindtorch_v2[distributed]' "
                           f"(mpi4py and the mpich wheel), or mpi4py built against the site's MPI ({e})") from None
    return MPI


def is_available():
    """Whether mpi4py can be imported (MPI itself is initialized only by initialize())."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def initialize():
    """Join the process world (MPI_COMM_WORLD); idempotent. Returns (process_index, process_count)."""
    if _STATE["comm"] is None:
        _STATE["comm"] = _mpi().COMM_WORLD
    c = _STATE["comm"]
    return c.Get_rank(), c.Get_size()


def is_initialized():
    return _STATE["comm"] is not None


def _world():
    c = _STATE["comm"]
    if c is None:
        raise RuntimeError("core.distributed: the process world is not initialized; call "
                           "core.distributed.initialize() first (under mpiexec or the launcher)")
    return c


def process_index():
    """This process's rank in the world (0 before initialize())."""
    c = _STATE["comm"]
    return 0 if c is None else c.Get_rank()


def process_count():
    """The number of processes in the world (1 before initialize())."""
    c = _STATE["comm"]
    return 1 if c is None else c.Get_size()


def shutdown():
    """Forget the world (MPI itself is finalized by mpi4py at exit)."""
    _STATE["comm"] = None


# ---------------------------------------------------------------------------
# axis names bound to the processes (spmd); vmap binds its names in batching.py


class _ProcessAxes(threading.local):
    def __init__(self):
        self.names = {}


_AXES = _ProcessAxes()


def process_axis(name):
    """The communicator bound to axis `name` by an enclosing spmd call, or None."""
    return _AXES.names.get(name)


@contextlib.contextmanager
def _bind_axis(name, comm):
    old = _AXES.names.get(name)
    _AXES.names[name] = comm
    try:
        yield
    finally:
        if old is None:
            del _AXES.names[name]
        else:
            _AXES.names[name] = old


def spmd(f, axis_name):
    """f with collectives over `axis_name` running across the processes of the world (one rank = one
    index of that axis), the multi-process twin of vmap(f, axis_name=axis_name)."""
    def run(*args, **kwargs):
        with _bind_axis(axis_name, _world()):
            return f(*args, **kwargs)
    return run


# ---------------------------------------------------------------------------
# the MPI lowering on numpy buffers



def _wire(buf, op_name):
    """(contiguous sendable buffer, dtype to convert the result back to or None)."""
    dt = buf.dtype
    if dt.kind == "b":
        return np.ascontiguousarray(buf, dtype=np.uint8), dt
    if dt.kind == "f" and dt.itemsize < 4 or dt.kind not in "iufc":
        return np.ascontiguousarray(buf, dtype=np.float32), dt
    return np.ascontiguousarray(buf), None


_OPS = {}


def mpi_op(op_name):
    """The MPI.Op for a reduction name: sum, prod, max, min, band, bor, bxor."""
    op = _OPS.get(op_name)
    if op is None:
        MPI = _mpi()
        table = {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN, "band": MPI.BAND,
                 "bor": MPI.BOR, "bxor": MPI.BXOR}
        op = _OPS[op_name] = table[op_name]
    return op


def _back(out, dt):
    return out if dt is None else out.astype(dt)


def allreduce(comm, buf, op_name):
    """The elementwise reduction of `buf` over the ranks of comm (a new array)."""
    send, dt = _wire(buf, op_name)
    out = np.empty_like(send)
    comm.Allreduce(send, out, op=mpi_op(op_name))
    return _back(out, dt)


def allgather(comm, buf):
    """The ranks' buffers stacked on a new leading axis (every rank gets all)."""
    send, dt = _wire(buf, "gather")
    out = np.empty((comm.Get_size(),) + send.shape, send.dtype)
    comm.Allgather(send, out)
    return _back(out, dt)


def reduce_scatter(comm, buf, op_name):
    """buf (leading axis = world size) reduced over ranks; this rank keeps block [rank]."""
    send, dt = _wire(buf, op_name)
    out = np.empty(send.shape[1:], send.dtype)
    comm.Reduce_scatter_block(send, out, op=mpi_op(op_name))
    return _back(out, dt)


def alltoall(comm, buf):
    """buf (leading axis = world size): block j goes to rank j; the result's block i came from rank i."""
    send, dt = _wire(buf, "alltoall")
    out = np.empty_like(send)
    comm.Alltoall(send, out)
    return _back(out, dt)


def permute(comm, buf, perm):
    """ppermute: for each (src, dst) pair, src's buffer goes to dst; ranks nobody sends to get zeros."""
    rank = comm.Get_rank()
    send, dt = _wire(buf, "permute")
    out = np.zeros_like(send)
    reqs = []
    for src, dst in perm:
        if src == rank:
            reqs.append(comm.Isend(send, dest=dst, tag=7001))
        if dst == rank:
            reqs.append(comm.Irecv(out, source=src, tag=7001))
    _mpi().Request.Waitall(reqs)
    return _back(out, dt)
