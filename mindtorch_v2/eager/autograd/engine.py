"""The backward engine: runs recorded nodes' VJP rules (the primitives' own rules,
the same ones `core.vjp` uses) in reverse creation order.

    x (leaf) --mul--> y --exp--> z;  z.backward()
    seq order: mul(n1) < exp(n2).  Heap pops n2: g_y = exp's rule(g=1) = 1 * out
    then n1: g_x = mul's rule(g_y) = g_y * w  -> AccumulateGrad(x): x.grad += g_x

Without create_graph the rules run on plain core values (fast, nothing recorded);
with create_graph=True they run on Tensors with recording on, so the gradient
has its own history and can be differentiated again. A node of another type
(a custom autograd.Function's) runs itself: `node.apply(grads, create_graph)`
returns one gradient per edge, `node.release_variables()` frees what it saved.
"""
import heapq
import threading

from ... import core
from . import graph
from .. import grad_mode
from .. import profiler_hooks as _profiler_hooks
from ..tensor import Tensor
from ..writeback import write

_COMPLEX = core.dtypes.COMPLEX

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
    "a second time or if you need to access saved tensors after calling backward.")


def _check_saved(node, saved, own_output=False):
    if saved.counter is not None and saved.counter.value != saved.version:
        producer, nr = saved.edge
        if own_output:  # a saved output of node itself (its edge names no node, to keep the graph acyclic)
            producer = node
        origin = (f", which is output {nr} of {producer.name()}," if producer is not None
                  and type(producer) is not graph.AccumulateGrad else "")
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{saved.desc}]{origin} is at version {saved.counter.value}; expected version "
            f"{saved.version} instead. Hint: the backward of {node.name()} needs it; avoid modifying it in "
            "place before calling backward.")


def _rule_args(node, create_graph, Tensor):
    """(out, primals) for the node's rules: saved values (Tensors with history under create_graph), and
    bufferless avals for the inputs the rules read only the shape and dtype of."""
    if node.freed and (node.prim.vjp_reads or node.out_saved is not None):
        raise RuntimeError(FREED_MSG)
    primals = []
    for spec in node.in_specs:
        primals.append(None if spec is None else _aval(spec[0], spec[1], spec[2]))
    for i, s in node.saved.items():
        counter = s.counter
        if counter is not None and counter.value != s.version:
            _check_saved(node, s)
        primals[i] = Tensor._snapshot(s.value, s.edge, s.requires_grad) if create_graph else s.value
    out = None
    if node.out_saved is not None:
        outs = []
        for k, s in enumerate(node.out_saved):
            counter = s.counter
            if counter is not None and counter.value != s.version:
                _check_saved(node, s, own_output=True)
            outs.append(Tensor._snapshot(s.value, (node, k), True) if create_graph else s.value)
        out = tuple(outs) if node.prim.multiple_results else outs[0]
    return out, primals


_aval = core.aval


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b if not _is_core(a) else core.add(a, b)


def _is_core(x):
    return not hasattr(type(x), "__mt_bind__")


def conj_boundary(g):
    """A gradient crossing between the tape and the user: conjugated when complex. The VJP rules are the
    core's (JAX's convention: the transpose, so grad |z|^2 = 2 conj z); PyTorch's gradients are their
    conjugates (z.grad = 2 z). Seeds given by the user, hooks, .grad and autograd.grad results cross here,
    and nowhere else; for real dtypes it is the identity."""
    if g is None or g.dtype.category != _COMPLEX:
        return g
    return core.conj(g)


class _Backward(threading.local):
    partial = 0  # > 0 while a backward restricted to `inputs` runs (autograd.grad, backward(inputs=))
    runs = 0     # backwards on this thread that accumulate into leaves (torch.compile: did the code run one)


_backward = _Backward()


def backward_runs():
    """How many backwards that accumulate into leaves this thread has run."""
    return _backward.runs


def is_checkpoint_valid():
    """False inside a backward restricted to given inputs, which a reentrant checkpoint cannot serve (its
    inner backward would accumulate into every leaf rather than return the requested gradients)."""
    return _backward.partial == 0


def run_backward(roots, grads, *, retain_graph, create_graph, inputs=None, accumulate=True):
    """Propagate `grads` from root edges. With `inputs` (edges), return their gradients."""
    if inputs is None:
        _backward.runs += accumulate
        return _run_backward(roots, grads, retain_graph, create_graph, None, accumulate)
    _backward.partial += 1
    try:
        return _run_backward(roots, grads, retain_graph, create_graph, inputs, accumulate)
    finally:
        _backward.partial -= 1


def _run_backward(roots, grads, retain_graph, create_graph, inputs, accumulate):
    captured = {}
    targets = None
    if inputs is not None:
        targets = {}
        for i, (node, nr) in enumerate(inputs):
            targets.setdefault((id(node), nr), []).append(i)
    ct = {}
    nodes = {}
    heap = []

    def push(edge, g):
        node, nr = edge
        if node is None or g is None:
            return
        key = id(node)
        if key not in nodes:
            nodes[key] = node
            ct[key] = [None] * node.n_outputs
            heapq.heappush(heap, (-node.seq, key))
        slot = ct[key]
        prev = slot[nr]
        slot[nr] = g if prev is None else _add(prev, g)

    for edge, g in zip(roots, grads):
        push(edge, g)

    AccumulateGrad, Node = graph.AccumulateGrad, graph.Node
    with grad_mode.set_grad_enabled(create_graph):
        while heap:
            _, key = heapq.heappop(heap)
            node = nodes.pop(key)
            gs = ct.pop(key)
            if node.pre_hooks:
                for nr, hooks in node.pre_hooks.items():
                    for hook in list(hooks):
                        if gs[nr] is None:
                            continue
                        res = conj_boundary(hook(_as_tensor(conj_boundary(gs[nr]), Tensor)))
                        if res is not None:
                            gs[nr] = res if create_graph else _as_value(res)
            if targets is not None:
                for nr, g in enumerate(gs):
                    for i in targets.get((key, nr), ()):
                        captured[i] = g
            if type(node) is AccumulateGrad:
                variable = node.variable
                if accumulate and gs[0] is not None and variable is not None:
                    accumulate_grad(variable, gs[0], create_graph)
                continue
            if type(node) is Node:
                _run_node(node, gs, push, create_graph, retain_graph, Tensor)
            else:
                _run_custom(node, gs, push, create_graph, retain_graph)
    if inputs is not None:
        return [captured.get(i) for i in range(len(inputs))]
    return None


def _as_tensor(g, Tensor):
    return g if isinstance(g, Tensor) else Tensor._from_value(g)


def _as_value(t):
    return t._value() if hasattr(type(t), "__mt_bind__") else t


def _run_node(node, gs, push, create_graph, retain_graph, Tensor, _timed=False):
    if _profiler_hooks.node is not None and not _timed:  # a profiler records: time this node as an event
        return _profiler_hooks.node(_run_node, node.name(), (node, gs, push, create_graph, retain_graph, Tensor))
    prim = node.prim
    out, primals = _rule_args(node, create_graph, Tensor)
    if prim.multiple_results:
        g = tuple(core.zeros_like(a) if x is None else x for x, a in zip(gs, node.out_avals))
        if create_graph:
            g = tuple(x if isinstance(x, Tensor) else Tensor._from_value(x) for x in g)
    else:
        g = gs[0]
        if g is None:
            return
    if create_graph and not isinstance(g, (Tensor, tuple)):
        g = Tensor._from_value(g)
    rules = prim.vjp
    params = node.params
    if node.hooks:  # post hooks see every input gradient before any is sent on
        grads_in = []
        for i, edge in enumerate(node.next_functions):
            rule = None if edge[0] is None else rules[i]
            grads_in.append(None if rule is None else rule(g, out, *primals, **params))
        _propagate(node, grads_in, gs, push)
    else:  # (what _propagate does without hooks: each input gradient along its edge)
        for i, edge in enumerate(node.next_functions):
            if edge[0] is not None:
                rule = rules[i]
                if rule is not None:
                    gi = rule(g, out, *primals, **params) if params else rule(g, out, *primals)
                    if gi is not None:
                        push(edge, gi)
    if not retain_graph:
        node.freed = True
        node.saved = {}
        node.out_saved = None


def _run_custom(node, gs, push, create_graph, retain_graph, _timed=False):
    """A node that runs itself (autograd.Function): apply(grads, create_graph) -> one grad per edge."""
    if _profiler_hooks.node is not None and not _timed:
        return _profiler_hooks.node(_run_custom, node.name(), (node, gs, push, create_graph, retain_graph))
    user = node.apply([conj_boundary(g) for g in gs], create_graph)  # autograd.Function speaks torch's convention
    _propagate(node, [conj_boundary(g) for g in user], gs, push)
    if not retain_graph:
        node.release_variables()


def _propagate(node, grads_in, gs, push):
    """Run the node's post hooks, then send each input gradient along its edge."""
    if node.hooks:
        for hook in node.hooks:
            hook(tuple(conj_boundary(g) for g in grads_in), tuple(conj_boundary(g) for g in gs))
    for edge, gi in zip(node.next_functions, grads_in):
        if gi is not None:
            push(edge, gi)


_grad_lock = threading.RLock()


def accumulate_grad(self, g, create_graph, _timed=False):
    """Add gradient g (the tape's convention; see conj_boundary) into leaf tensor self's .grad (into the
    existing grad tensor, as PyTorch does)."""
    if _profiler_hooks.node is not None and not _timed:
        return _profiler_hooks.node(accumulate_grad, "torch::autograd::AccumulateGrad", (self, g, create_graph))
    g = conj_boundary(g)
    with _grad_lock:  # read-add-write of .grad is one step: concurrent backward passes lose no update
        old = self._grad
        if old is not None and not create_graph:
            # into the existing grad tensor, as PyTorch does (`g = p.grad` stays current): the sum's value
            # written in place, with no history to record
            write(old, core.add(old._value(), _row_major(self, g._value() if isinstance(g, Tensor) else g)),
                  record=False)
            return
        if not isinstance(g, Tensor):
            g = Tensor._from_value(_row_major(self, g) if old is None else g)
        elif not create_graph:
            g = g.detach()
            if old is None:
                value = _row_major(self, g._value())
                g = g if value is g._value() else Tensor._from_value(value)
        self._grad = g if old is None else old + g


def _row_major(leaf, value):
    """value laid out row-major where the leaf is (PyTorch's layout contract: a .grad is laid out as its
    parameter, not as whatever view the backward made: x @ W.T's weight grad is a transposed product, copied by
    tiles here). An optimizer's `p.add_(grad)` then runs over two C-ordered arrays (2 ms against 0.1 ms at
    (512, 784) float32), and so does the sum that accumulates a grad. (The buffer is looked at first: the
    leaf's layout only where it is not row-major.)"""
    if (type(value) is core.Array and value._buf is not None and not value._buf.flags.c_contiguous
            and leaf.is_contiguous()):
        return core.copy(value)
    return value
