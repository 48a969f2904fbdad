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

from . import array as _array
from . import dtypes as _dt
from .array import Array
from .devices import meta as _meta
from .primitive import Trace, Tracer, new_main
from .pytree import tree_flatten, tree_unflatten

# core ops the interpreters need (accumulating cotangents); installed by ops/__init__.py so
# that this module never imports an op family.
_ops = {}


def install_ops(**ops):
    _ops.update(ops)


def _is_float(x):
    return x.dtype.category == _dt.FLOAT


def zeros_like_aval(x):
    """Zeros with x's shape/dtype/device: a constant made by core ops (a broadcast 0)."""
    return _ops["zeros_like"](x)


def ones_like_aval(x):
    if x.device is _meta:
        return _array.make(None, x.shape, x.dtype, _meta)
    return _array.make(np.ones(x.shape, x.dtype.np), x.shape, x.dtype, x.device)


def _add_ct(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return _ops["add"](a, b)


# ---------------------------------------------------------------------------
# forward mode

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, main, primal, tangent):
        self._main = main
        self.primal = primal
        self.tangent = tangent

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)
    device = property(lambda self: self.primal.device)


class JVPTrace(Trace):
    __slots__ = ()

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

    def pullback_in_u(u):
        res = []
        for i in idx:
            r = prim.vjp[i](u, out, *primals, **params)
            res.append(zeros_like_aval(primals[i]) if r is None else r)
        return res

    if prim.multiple_results:
        u0 = tuple(zeros_like_aval(o) for o in out)
    else:
        u0 = zeros_like_aval(out)
    _, pull = vjp(pullback_in_u, u0)
    (t_out,) = pull([tangents[i] for i in idx])
    return t_out


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


class VJPTracer(Tracer):
    __slots__ = ("primal", "node", "index")

    def __init__(self, main, primal, node, index=-1):
        self._main = main
        self.primal = primal
        self.node = node    # a Node, or an int: the position among the transform's inputs
        self.index = index  # which output of a multiple-results node

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)
    device = property(lambda self: self.primal.device)


class VJPTrace(Trace):
    __slots__ = ()

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
        if not active or prim.vjp is None:
            return out
        node = Node(prim, params, args, primals, out)
        if prim.multiple_results:
            return tuple(VJPTracer(main, o, node, i) if _is_float(o) else o for i, o in enumerate(out))
        if not _is_float(out):
            return out
        return VJPTracer(main, out, node)


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
    add = _ops["add"]
    heappop, heappush = heapq.heappop, heapq.heappush
    while pending:
        seq = -heappop(pending)
        node = nodes.pop(seq)
        g = ct.pop(seq)
        prim = node.prim
        if prim.multiple_results:
            g = tuple(zeros_like_aval(o) if x is None else x for x, o in zip(g, node.out))
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
        grads[node] = g if grads[node] is None else _ops["add"](grads[node], g)
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
        cur[t.index] = _add_ct(cur[t.index], g)
    else:
        ct[seq] = _ops["add"](ct[seq], g)


# ---------------------------------------------------------------------------
# the transforms


def _as_array(x, what):
    if isinstance(x, (Array, Tracer)):
        return x
    if hasattr(type(x), "__mt_bind__"):
        return x
    conv = _ops.get("asarray")
    try:
        return conv(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: expected arrays (or python/numpy numbers), got {type(x).__name__}") from None


def _unwrap_level(x, main, cls):
    if type(x) is cls and x._main is main:
        return x.primal
    return x


def vjp(f, *primals, has_aux=False):
    """Return (f(*primals), pullback) [+ aux]; pullback(cotangent) gives a tuple of input cotangents."""
    flat, in_tree = tree_flatten(primals)
    flat = [_as_array(x, "vjp") for x in flat]
    with new_main(VJPTrace) as main:
        tracers = [VJPTracer(main, x, i) for i, x in enumerate(flat)]
        out = f(*tree_unflatten(in_tree, tracers))
        if has_aux:
            out, aux = _split_aux(out)
        out_flat, out_tree = tree_flatten(out)
        out_primals = [_unwrap_level(_as_array(o, "vjp output"), main, VJPTracer) for o in out_flat]
        if has_aux:
            aux = tree_unflatten(*_unwrap_tree(aux, main, VJPTracer))

    def pullback(cotangent):
        ct_flat, ct_tree = tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise ValueError(f"vjp: cotangent structure {ct_tree} does not match the output structure {out_tree}")
        cts = []
        for c, o in zip(ct_flat, out_primals):
            c = _as_array(c, "vjp cotangent")
            if c.shape != o.shape:
                raise ValueError(f"vjp: cotangent shape {c.shape} does not match the output shape {o.shape}")
            if _is_float(o) and c.dtype is not o.dtype:
                c = _ops["cast"](c, o.dtype)
            cts.append(c)
        grads = backpropagate(main, out_flat, cts, len(flat))
        grads = [zeros_like_aval(x) if g is None else g for g, x in zip(grads, flat)]
        return tree_unflatten(in_tree, grads)

    res = (tree_unflatten(out_tree, out_primals), pullback)
    return res + (aux,) if has_aux else res


def _split_aux(out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("has_aux=True needs the function to return a pair (output, aux)")
    return out[0], out[1]


def _unwrap_tree(tree, main, cls):
    leaves, td = tree_flatten(tree)
    return td, [_unwrap_level(x, main, cls) for x in leaves]


def jvp(f, primals, tangents, has_aux=False):
    """Return (f(*primals), J tangents) [+ aux]; primals and tangents are matching tuples/lists."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments")
    flat, in_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if t_tree != in_tree:
        raise ValueError(f"jvp: tangent structure {t_tree} does not match primal structure {in_tree}")
    flat = [_as_array(x, "jvp") for x in flat]
    t_flat = [_as_array(t, "jvp tangent") for t in t_flat]
    for x, t in zip(flat, t_flat):
        if x.shape != t.shape:
            raise ValueError(f"jvp: tangent shape {t.shape} does not match primal shape {x.shape}")
        if _is_float(x) and t.dtype is not x.dtype:
            raise TypeError(f"jvp: tangent dtype {t.dtype.name} does not match primal dtype {x.dtype.name}")
    with new_main(JVPTrace) as main:
        tracers = [JVPTracer(main, x, t if _is_float(x) else None) for x, t in zip(flat, t_flat)]
        out = f(*tree_unflatten(in_tree, tracers))
        if has_aux:
            out, aux = _split_aux(out)
            aux = tree_unflatten(*_unwrap_tree(aux, main, JVPTracer))
        out_flat, out_tree = tree_flatten(out)
        primals_out, tangents_out = [], []
        for o in out_flat:
            o = _as_array(o, "jvp output")
            if type(o) is JVPTracer and o._main is main:
                primals_out.append(o.primal)
                tangents_out.append(o.tangent)
            else:
                primals_out.append(o)
                tangents_out.append(zeros_like_aval(o))
    res = (tree_unflatten(out_tree, primals_out), tree_unflatten(out_tree, tangents_out))
    return res + (aux,) if has_aux else res


def _argnums_tuple(argnums, nargs, what):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int) or not -nargs <= a < nargs:
            raise ValueError(f"{what}: argnums {argnums!r} out of range for {nargs} positional arguments")
    return single, tuple(a % nargs for a in nums)


def _check_float_inputs(tree, what, argnum):
    for leaf in tree_flatten(tree)[0]:
        if not _is_float(leaf):
            raise TypeError(f"{what} requires floating-point inputs; argument {argnum} has dtype {leaf.dtype.name}")


def value_and_grad(f, argnums=0, has_aux=False):
    """Return a function giving (f(*args), gradient w.r.t. args[argnums]) [with aux: ((value, aux), grad)]."""
    def value_and_grad_f(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), "grad")
        args = list(args)
        diff = []
        for n in nums:
            args[n] = tree_unflatten(*_tree_as_arrays(args[n], "grad"))
            _check_float_inputs(args[n], "grad", n)
            diff.append(args[n])

        def g(*dargs):
            full = list(args)
            for n, d in zip(nums, dargs):
                full[n] = d
            return f(*full, **kwargs)

        res = vjp(g, *diff, has_aux=has_aux)
        out, pull = res[0], res[1]
        if not (isinstance(out, (Array, Tracer)) or hasattr(type(out), "__mt_bind__")) or out.shape != ():
            shape = getattr(out, "shape", type(out).__name__)
            raise TypeError(f"grad requires a scalar output, got {shape}")
        if not _is_float(out):
            raise TypeError(f"grad requires a floating-point output, got {out.dtype.name}")
        grads = pull(ones_like_aval(out))
        grads = grads[0] if single else tuple(grads)
        if has_aux:
            return (out, res[2]), grads
        return out, grads

    return value_and_grad_f


def _tree_as_arrays(tree, what):
    leaves, td = tree_flatten(tree)
    return td, [_as_array(x, what) for x in leaves]


def grad(f, argnums=0, has_aux=False):
    """Return a function giving the gradient of scalar-valued f w.r.t. args[argnums] [and aux]."""
    vg = value_and_grad(f, argnums, has_aux)

    def grad_f(*args, **kwargs):
        (v, g) = vg(*args, **kwargs)
        if has_aux:
            return g, v[1]
        return g

    return grad_f
