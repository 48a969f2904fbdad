"""The recorder behind torch.profiler and torch.autograd.profiler: per-thread sessions of timed ranges.

While a session records on a thread, every eager op (one primitive bound through `tensor_bind`), every
backward node the engine runs, and every `record_function` block on that thread is one range with
`perf_counter_ns` start and end. Ranges nest through the session's stack of open ranges, so each knows its
parent exactly and self time = total - children:

    with record_function("fwd"):        fwd            [0 ............... 90]  self 90 - 30 - 40
        y = x @ w                        aten::matmul    [5 ... 35]
        z = y.exp()                      aten::exp               [45 ... 85]

Backward nodes are two nested ranges as in PyTorch: "autograd::engine::evaluate_function: MulBackward0"
around "MulBackward0" (scope BACKWARD_FUNCTION); the node's rules run on plain core values, so their
primitives appear as children only with create_graph=True (where they are eager ops).

The state is per thread, as PyTorch's profiler is: ops of a thread without a session of its own are not
recorded. The eager hooks (eager/profiler_hooks.py) are installed while any thread records, so eager pays
one `is not None` test per op when nothing is profiled.
"""
import functools
import itertools
import os
import sys
import threading
from time import perf_counter_ns

import numpy as np

from ..eager import profiler_hooks
from ..eager.autograd.graph import Node
from ..eager.tensor import Tensor
from ._events import EventList, FunctionEvent
from ._names import event_name

_FUNCTION, _BACKWARD_FUNCTION, _USER_SCOPE = 0, 1, 7
_EVALUATE = "autograd::engine::evaluate_function: "

_thread_ids = itertools.count(1)
_lock = threading.Lock()
_recording = 0  # sessions recording on any thread; the eager hooks are installed while > 0


class _ThreadState(threading.local):
    session = None  # the session recording on this thread (the innermost, when profilers nest)
    thread_id = 0   # PyTorch's small sequential thread ids (1 for the first thread that records)


_tls = _ThreadState()


def _thread_id():
    tid = _tls.thread_id
    if tid == 0:
        tid = _tls.thread_id = next(_thread_ids)
    return tid


class _Range:
    """One open or closed range while recording; turned into a FunctionEvent when the session stops."""

    __slots__ = ("name", "parent", "scope", "start", "end", "shapes", "dtypes", "memory", "flops", "seq",
                 "stack", "index")

    def __init__(self, name, parent, scope, index):
        self.name = name
        self.parent = parent
        self.scope = scope
        self.index = index
        self.start = self.end = 0
        self.shapes = self.dtypes = self.stack = None
        self.memory = 0
        self.flops = None
        self.seq = -1


class Session:
    """What one profiler records on one thread between start() and stop()."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False):
        self.record_shapes = record_shapes or with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.ranges = []
        self.open = []
        self.thread = _thread_id()
        self.outer = None
        self.start_ns = self.end_ns = 0
        self.running = False
        self.paused = False  # toggle_collection_dynamic(False): this thread records into the outer session

    def push(self, name, scope):
        r = _Range(name, self.open[-1] if self.open else None, scope, len(self.ranges))
        self.ranges.append(r)
        self.open.append(r)
        return r

    def pop(self, r):
        if self.open and self.open[-1] is r:
            self.open.pop()
        elif r in self.open:  # ranges closed out of order (a record_function exited late): drop it alone
            self.open.remove(r)

    def start(self):
        global _recording
        if self.running:
            raise RuntimeError("Profiler is already running on this thread")
        self.outer = _tls.session
        with _lock:
            _recording += 1
            profiler_hooks.install(_op_hook, _node_hook)
        self.running = True
        _tls.session = self
        self.start_ns = perf_counter_ns()

    def stop(self):
        global _recording
        self.end_ns = perf_counter_ns()
        for r in self.open:  # ranges still open when recording stops end with it
            r.end = self.end_ns
        self.open = []
        if _tls.session is self:
            _tls.session = self.outer
        self.outer = None
        self.running = False
        with _lock:
            _recording -= 1
            if _recording == 0:
                profiler_hooks.uninstall()

    def events(self, use_device=None):
        """The recorded ranges as an EventList of FunctionEvents, parents and children linked."""
        t0 = self.start_ns
        events = []
        for k, r in enumerate(self.ranges):
            name = trace_name = r.name
            if name.startswith("ProfilerStep#"):
                name = "ProfilerStep*"
            evt = FunctionEvent(
                id=k + 1, name=name, overload_name="", trace_name=trace_name, thread=self.thread,
                start_us=(r.start - t0) / 1000.0, end_us=((r.end or self.end_ns) - t0) / 1000.0,
                fwd_thread=self.thread if r.seq >= 0 else None, input_shapes=r.shapes, input_dtypes=r.dtypes,
                stack=r.stack, scope=r.scope, use_device=use_device, cpu_memory_usage=r.memory,
                sequence_nr=r.seq, flops=r.flops if r.flops is not None else 0,
                is_user_annotation=r.scope == _USER_SCOPE)
            events.append(evt)
            if r.parent is not None:
                parent = events[r.parent.index]
                parent.append_cpu_child(evt)
                evt.set_cpu_parent(parent)
        for evt in reversed(events):  # a range's memory: its own outputs plus everything allocated inside it
            if evt.cpu_parent is not None:
                evt.cpu_parent.cpu_memory_usage += evt.cpu_memory_usage
        return EventList(events, use_device=use_device, profile_memory=self.profile_memory,
                         with_flops=self.with_flops)


def current_session():
    """The session recording on this thread, or None."""
    return _tls.session


# ---------------------------------------------------------------- eager hooks

def _op_hook(bind, prim, args, params):
    s = _tls.session
    if s is None:  # another thread records, this one does not
        return bind(prim, args, params, True)
    r = s.push(event_name(prim, params), _FUNCTION)
    if s.record_shapes:
        r.shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args]
        r.dtypes = [_dtype_name(a) for a in args]
    if s.with_stack:
        r.stack = _python_stack()
    r.start = perf_counter_ns()
    try:
        out = bind(prim, args, params, True)
    finally:
        r.end = perf_counter_ns()
        s.pop(r)
    first = out[0] if type(out) is tuple else out
    node = first._grad_fn if isinstance(first, Tensor) else None
    if type(node) is Node:
        r.seq = node.seq
    if s.profile_memory:
        r.memory = _allocated_bytes(args, out)
    if s.with_flops:
        r.flops = _flops(prim.name, args, out)
    return out


def _node_hook(run, name, args):
    s = _tls.session
    if s is None:
        return run(*args, _timed=True)
    outer = s.push(_EVALUATE + name, _FUNCTION)
    inner = s.push(name, _BACKWARD_FUNCTION)
    outer.seq = inner.seq = getattr(args[0], "seq", -1)
    if s.record_shapes:  # the incoming gradients, as PyTorch records a backward node's inputs
        grads = args[1] if isinstance(args[1], (list, tuple)) else (args[1],)
        inner.shapes = [list(g.shape) if g is not None else [] for g in grads]
    if s.with_stack:
        outer.stack = inner.stack = _python_stack()
    outer.start = perf_counter_ns()
    inner.start = perf_counter_ns()
    try:
        return run(*args, _timed=True)
    finally:
        inner.end = perf_counter_ns()
        s.pop(inner)
        outer.end = perf_counter_ns()
        s.pop(outer)


def _dtype_name(a):
    if isinstance(a, Tensor):
        return str(a.dtype).replace("torch.", "")
    return type(a).__name__


def _buffer(t):
    v = t._value()
    return getattr(v, "_buf", None), v


def _allocated_bytes(args, out):
    """Bytes of the op's outputs that are new memory (a view of an input allocates nothing)."""
    outs = out if type(out) is tuple else (out,)
    ins = [_buffer(a)[0] for a in args if isinstance(a, Tensor)]
    total = 0
    for t in outs:
        buf, v = _buffer(t)
        if buf is not None and any(b is not None and np.may_share_memory(buf, b) for b in ins):
            continue
        n = 1
        for d in v.shape:
            n *= d
        total += n * v.dtype.itemsize
    return total


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _flops(prim_name, args, out):
    """PyTorch's FLOP formulas: 2*M*N*K for a matrix product, 2 * output elements * (C_in/groups *
    kernel) for a convolution, one per output element for mul and add; None for other ops."""
    if prim_name == "matmul":
        a = args[0]
        k = a.shape[-1] if len(a.shape) else 1
        return 2 * _numel(out.shape) * k
    if prim_name == "conv":
        return 2 * _numel(out.shape) * _numel(args[1].shape[1:])
    if prim_name in ("mul", "add"):
        return _numel(out.shape)
    return None


_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the mindtorch_v2 package


def _python_stack():
    """'file(line): function' entries of the user's frames, innermost first (the library's own frames
    left out, as PyTorch leaves out its internals)."""
    entries = []
    f = sys._getframe(2)
    while f is not None:
        filename = f.f_code.co_filename
        if not filename.startswith(_HERE):
            entries.append(f"{filename}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return entries


# ---------------------------------------------------------------- record_function

class record_function:
    """A labelled range in the profile, as context manager or decorator; does nothing when no profiler
    records on this thread."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._range = None
        self._session = None

    def __enter__(self):
        s = _tls.session
        if s is not None:
            r = s.push(self.name, _USER_SCOPE)
            if s.with_stack:
                r.stack = _python_stack()
            self._range, self._session = r, s
            r.start = perf_counter_ns()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        r = self._range
        if r is not None and self.run_callbacks_on_exit:
            r.end = perf_counter_ns()
            self._session.pop(r)
            self._range = self._session = None
        return False

    def __call__(self, fn):
        name, args = self.name, self.args

        @functools.wraps(fn)
        def wrapped(*a, **kw):
            with record_function(name, args):  # a fresh range per call: recursion nests correctly
                return fn(*a, **kw)
        return wrapped

    def _call_end_callbacks_on_future(self, fut):
        """Close the range when `fut` completes (here futures complete eagerly: close it now)."""
        if not self.run_callbacks_on_exit:
            raise RuntimeError("_call_end_callbacks_on_future can only be called once.")
        self.__exit__(None, None, None)
        self.run_callbacks_on_exit = False
        return fut
