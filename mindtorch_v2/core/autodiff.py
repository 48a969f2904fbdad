"""Forward- and reverse-mode interpreters over `bind`, and the transforms built on them.

Both interpreters only ever *call* a primitive's rules; the rules themselves are
core ops, so running a VJP under an outer transform differentiates it again.
That is what makes `grad(grad(f))`, `jvp(grad(f))` and friends work to any order.

Levels keep nested transforms apart (no perturbation confusion): every
transform pushes a MainTrace; `bind` hands an op to the highest level among its
arguments; values from lower levels are constants at this level.

Reverse mode is a tape. Each bind at this level with at least one tracer
argument records a Node (primitive, params, argument values, output). The
pullback walks nodes in reverse creation order:

    y = x * w; z = exp(y)          # nodes: n1 = mul(x, w), n2 = exp(y)
    pullback(1.0): ct[n2] = 1 -> exp's rule gives g * out -> ct[n1]
                   -> mul's rules give ct_x = g * w, ct_w = g * x
"""
import heapq
import itertools

import numpy as np

from . import dtypes as _dt
from .array import Array
from .primitive import _STACK, Primitive, Trace, Tracer, new_main, zeros_like

# ---------------------------------------------------------------------------
# the sum of two cotangents: owned here (JAX's ad_util.add_jaxvals), so the interpreters need no op family.
# Same dtypes, numpy broadcasting; its batching rule is the elementwise one (attached in ops/_family.py).


def _add_any_meta(x, y):
    if x.dtype is not y.dtype:
        raise TypeError(f"add_any: cotangents of different dtypes {x.dtype.name} and {y.dtype.name}")
    if x.shape == y.shape:
        return x.shape, x.dtype
    return tuple(np.broadcast_shapes(x.shape, y.shape)), x.dtype


add_any_p = Primitive("add_any", _add_any_meta, linear=True,
                      vjp=(lambda g, out, x, y: g, lambda g, out, x, y: g))
add_any_p.def_impl("cpu")(np.add)


def add_any(x, y):
    """x + y for cotangents (None is a zero)."""
    if x is None:
        return y
    if y is None:
        return x
    return add_any_p.bind(x, y)


def _is_float(x):  # the dtypes that carry derivatives: floating and complex
    return x.dtype.category >= _dt.FLOAT


# ---------------------------------------------------------------------------
# forward mode

class _PrimalTracer(Tracer):
    """A tracer of forward or reverse mode: its aval, and its concrete value (a Python conversion's), are those of
    its `primal` (concrete unless an inner transform traces it)."""

    __slots__ = ()

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)
    device = property(lambda self: self.primal.device)

    def concrete(self, what):
        p = self.primal
        return p if type(p) is Array else p.concrete(what)


class JVPTracer(_PrimalTracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, main, primal, tangent):
        self._main = main
        self.primal = primal
        self.tangent = tangent



class JVPTrace(Trace):
    __slots__ = ()
    transform = "jvp"

    def process(self, prim, args, params):
        main = self.main
        primals = []
        tangents = []
        active = False
        for a in args:
            if type(a) is JVPTracer and a._main is main:
                primals.append(a.primal)
                tangents.append(a.tangent)
                active = active or a.tangent is not None
            else:
                primals.append(a)
                tangents.append(None)
        out = prim.bind(*primals, **params)
        if not active or prim.vjp is None:
            return out
        if prim.jvp is not None:
            t_out = prim.jvp(tangents, out, *primals, **params)
        else:
            t_out = jvp_from_vjp(prim, tangents, out, primals, params)
        if prim.multiple_results:
            return tuple(JVPTracer(main, o, t) if t is not None and _is_float(o) else o
                         for o, t in zip(out, t_out))
        if t_out is None or not _is_float(out):
            return out
        return JVPTracer(main, out, t_out)


def jvp_from_vjp(prim, tangents, out, primals, params):
    """J t for a primitive with only VJP rules: the rules are linear in the cotangent
    u, so the VJP of (u -> J^T u) applied to t is J t (transpose of the transpose)."""
    idx = [i for i, t in enumerate(tangents) if t is not None and prim.vjp[i] is not None]

    multiple = prim.multiple_results

    def pullback_in_u(us):
        u = tuple(us) if multiple else us[0]
        res = []
        for i in idx:
            r = prim.vjp[i](u, out, *primals, **params)
            res.append(zeros_like(primals[i]) if r is None else r)
        return res

    u0 = [zeros_like(o) for o in out] if multiple else [zeros_like(out)]
    _, pull = vjp_flat(pullback_in_u, u0)
    t_out = [zeros_like(u) if t is None else t for t, u in zip(pull([tangents[i] for i in idx]), u0)]
    return tuple(t_out) if multiple else t_out[0]


# ---------------------------------------------------------------------------
# reverse mode

_node_ids = itertools.count()


class Node:
    """One recorded bind: what its VJP rules need, and where cotangents go."""

    __slots__ = ("prim", "params", "args", "primals", "out", "seq")

    def __init__(self, prim, params, args, primals, out):
        self.prim = prim
        self.params = params
        self.args = args        # the original arguments (tracers of this level mark the parents)
        self.primals = primals  # their values one level down
        self.out = out
        self.seq = next(_node_ids)


class VJPTracer(_PrimalTracer):
    __slots__ = ("primal", "node", "index")

    def __init__(self, main, primal, node, index=-1):
        self._main = main
        self.primal = primal
        self.node = node    # a Node, or an int: the position among the transform's inputs
        self.index = index  # which output of a multiple-results node



class VJPTrace(Trace):
    __slots__ = ("paused",)
    transform = "vjp (grad)"

    def __init__(self, main):
        Trace.__init__(self, main)
        self.paused = False  # set by pause_reverse: binds give constants (values of the level below)

    def process(self, prim, args, params):
        main = self.main
        primals = []
        active = False
        concrete = True  # every primal a plain Array: evaluate directly, no second dispatch
        for a in args:
            if type(a) is VJPTracer and a._main is main:
                a = a.primal
                active = True
            primals.append(a)
            if type(a) is not Array:
                concrete = False
        out = prim.eval(primals, params) if concrete else prim.bind(*primals, **params)
        if not active or prim.vjp is None or self.paused:
            return out
        node = Node(prim, params, args, primals, out)
        if prim.multiple_results:
            return tuple(VJPTracer(main, o, node, i) if _is_float(o) else o for i, o in enumerate(out))
        if not _is_float(out):
            return out
        return VJPTracer(main, out, node)


def reverse_traced(x):
    """Whether a reverse-mode transform (grad, vjp) now differentiates x: x, or what it wraps (a batched or
    forward-mode tracer's value), is that transform's tracer and the transform is not paused."""
    while isinstance(x, Tracer):
        if type(x) is VJPTracer:
            return not x._main.trace.paused
        x = x.primal if isinstance(x, _PrimalTracer) else getattr(x, "val", None)
    return False


def pause_reverse(paused):
    """Pause (or resume) every reverse-mode transform now active on this thread: while paused, what is computed
    is a constant to them (no derivative flows through it). The torch face maps its grad mode onto this:
    torch.no_grad inside torch.func.grad stops the gradient of what it computes, as functorch's (forward mode
    is not paused: torch.func.jvp ignores grad mode, as PyTorch's)."""
    for main in _STACK.mains:
        if type(main.trace) is VJPTrace:
            main.trace.paused = paused


def backpropagate(main, out_tracers, cts, n_inputs):
    """Run the tape of `main` backwards from (tracer, cotangent) pairs; return input cotangents.

    Nodes are visited in decreasing creation order (a topological order of the tape),
    each once all the cotangents flowing into it have been summed.
    """
    grads = [None] * n_inputs
    ct = {}       # node seq -> summed cotangent (a list for multiple-results nodes)
    pending = []  # heap of -seq of nodes holding a cotangent
    nodes = {}
    for t, g in zip(out_tracers, cts):
        if g is not None and type(t) is VJPTracer and t._main is main:
            _accumulate(t, g, ct, grads, nodes, pending)
    add = add_any_p.bind
    heappop, heappush = heapq.heappop, heapq.heappush
    while pending:
        seq = -heappop(pending)
        node = nodes.pop(seq)
        g = ct.pop(seq)
        prim = node.prim
        if prim.multiple_results:
            g = tuple(zeros_like(o) if x is None else x for x, o in zip(g, node.out))
        rules = prim.vjp
        for i, a in enumerate(node.args):
            if type(a) is VJPTracer and a._main is main:
                rule = rules[i]
                if rule is None:
                    continue
                gi = rule(g, node.out, *node.primals, **node.params)
                if gi is None:
                    continue
                parent = a.node
                if type(parent) is Node and not parent.prim.multiple_results:  # the common case, inlined
                    pseq = parent.seq
                    cur = ct.get(pseq)
                    if cur is None:
                        ct[pseq] = gi
                        nodes[pseq] = parent
                        heappush(pending, -pseq)
                    else:
                        ct[pseq] = add(cur, gi)
                else:
                    _accumulate(a, gi, ct, grads, nodes, pending)
    return grads


def _accumulate(t, g, ct, grads, nodes, pending):
    node = t.node
    if type(node) is int:
        grads[node] = add_any(grads[node], g)
        return
    seq = node.seq
    if seq not in nodes:
        nodes[seq] = node
        heapq.heappush(pending, -seq)
        if node.prim.multiple_results:
            ct[seq] = [None] * len(node.out)
        else:
            ct[seq] = g
            return
    if node.prim.multiple_results:
        cur = ct[seq]
        cur[t.index] = add_any(cur[t.index], g)
    else:
        ct[seq] = add_any_p.bind(ct[seq], g)


# ---------------------------------------------------------------------------
# flat entry points for the transforms (core/api.py adds pytrees, argnums and argument checks)


def vjp_flat(f, flat):
    """Run f (list of arrays -> list of arrays) under a reverse-mode trace. Returns (outputs, pullback):
    pullback(cotangents) gives one cotangent per input (None: no path); cotangents may be fewer than the
    outputs (the rest, e.g. auxiliary values, get none)."""
    with new_main(VJPTrace) as main:
        out = f([VJPTracer(main, x, i) for i, x in enumerate(flat)])
        out_primals = [unwrap(o, main) for o in out]

    def pullback(cts):
        return backpropagate(main, out, cts, len(flat))

    return out_primals, pullback


def unwrap(x, main):
    """x's value one level below `main` (x itself when it is not one of main's tracers)."""
    if isinstance(x, (VJPTracer, JVPTracer)) and x._main is main:
        return x.primal
    return x
