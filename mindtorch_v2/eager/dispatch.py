"""The bind hook: how a primitive runs when Tensors are among its arguments.

`core.bind` sees a value whose type defines `__mt_bind__` and hands the call
here. We unwrap each Tensor to its current core value, bind the primitive on
the values (which may be tracers inside `torch.func` transforms), wrap the
outputs as new Tensors, and, when grad mode is on and an input requires grad,
record one autograd Node holding what the primitive's VJP rules read.
"""
from ..core import array as _array
from ..core import dtypes as _dt
from .autograd.graph import Node, Saved
from .grad_mode import _state


def _grad_enabled():
    return getattr(_state, "enabled", True)


def tensor_bind(prim, args, params):
    from .tensor import Tensor
    vals = []
    record = False
    for a in args:
        if isinstance(a, Tensor):
            vals.append(a._value())
            if a._rg:
                record = True
        else:
            vals.append(a)
    out = prim.bind(*vals, **params)
    if record and prim.vjp is not None and _grad_enabled():
        return record_node(prim, params, args, vals, out)
    if prim.multiple_results:
        return tuple(Tensor._from_value(o) for o in out)
    return Tensor._from_value(out)


def aval_of(v):
    """A bufferless stand-in with v's shape, dtype and device, for rules that read only avals."""
    return _array.make(None, v.shape, v.dtype, v.device)


def edge_of(t):
    """The (node, output_nr) a gradient for tensor t flows into, or (None, 0)."""
    if not t._rg:
        return (None, 0)
    return t._edge()


def record_node(prim, params, args, vals, out):
    """Record prim(args) -> out on the tape; return the output Tensors with this node as grad_fn."""
    from .tensor import Tensor
    edges = []
    for a in args:
        edges.append(edge_of(a) if isinstance(a, Tensor) else (None, 0))
    reads = prim.vjp_reads
    if prim.vjp_reads_by_input is not None:  # only what the rules of inputs needing a gradient read
        reads = set()
        for e, r in zip(edges, prim.vjp_reads_by_input):
            if e[0] is not None:
                reads.update(r)
    saved = {}
    avals = []
    for i, (a, v) in enumerate(zip(args, vals)):
        if i in reads:
            if isinstance(a, Tensor):
                saved[i] = Saved(v, a._storage.version, a._storage.version.value, edges[i], a._rg, a._desc())
            else:
                saved[i] = Saved(v, None, 0, (None, 0), False, "")
            avals.append(None)
        else:
            avals.append(aval_of(v))
    outs = out if prim.multiple_results else (out,)
    node = Node(prim, params, tuple(edges), saved, avals, tuple(aval_of(o) for o in outs))
    results = []
    for k, o in enumerate(outs):
        t = Tensor._from_value(o)
        if o.dtype.category == _dt.FLOAT:
            t._grad_fn = node
            t._output_nr = k
            t._rg = True
        results.append(t)
    if "out" in reads:
        node.out_saved = [Saved(o, t._storage.version, 0, (node, k), True, t._desc())
                          for k, (o, t) in enumerate(zip(outs, results))]
    return tuple(results) if prim.multiple_results else results[0]
