"""The bind hook: how a primitive runs when Tensors are among its arguments.

`core.bind` sees a value whose type defines `__mt_bind__` and hands the call
here. We unwrap each Tensor to its current core value, bind the primitive on
the values (which may be tracers inside `torch.func` transforms), wrap the
outputs as new Tensors, and, when grad mode is on and an input requires grad,
record one autograd Node holding what the primitive's VJP rules read.
"""
from ..core import aval, dtypes as _dt
from .autograd.graph import Node, Saved
from .grad_mode import _state


def _grad_enabled():
    return _state.enabled


Tensor = None  # eager/tensor.py sets this once the class exists (no per-call import)


class UnsupportedDTypeError(NotImplementedError, TypeError):
    """A dtype an op does not support: torch raises NotImplementedError (a RuntimeError) there,
    the core a TypeError; this is both, so either `except` clause catches it."""


def tensor_bind(prim, args, params):
    vals = []
    record = False
    for a in args:
        if isinstance(a, Tensor):
            vals.append(a._value())
            if a._rg:
                record = True
        else:
            vals.append(a)
    try:
        out = prim.bind(*vals, **params)
    except (ValueError, ZeroDivisionError) as e:  # shape errors, integer division by zero: RuntimeError in torch
        raise RuntimeError(str(e)) from None
    except TypeError as e:  # the core's dtype checks: NotImplementedError ("not implemented for 'Bool'") in torch
        raise UnsupportedDTypeError(str(e)) from None
    if record and prim.vjp is not None and _state.enabled:
        return record_node(prim, params, args, vals, out)
    if prim.multiple_results:
        return tuple(Tensor._from_value(o) for o in out)
    return Tensor._from_value(out)


def aval_of(v):
    """A bufferless stand-in with v's shape, dtype and device, for rules that read only avals."""
    return aval(v.shape, v.dtype, v.device)


def edge_of(t):
    """The (node, output_nr) a gradient for tensor t flows into, or (None, 0)."""
    if not t._rg:
        return (None, 0)
    return t._edge()


_NO_EDGE = (None, 0)


def record_node(prim, params, args, vals, out):
    """Record prim(args) -> out on the tape; return the output Tensors with this node as grad_fn."""
    edges = tuple([a._edge() if isinstance(a, Tensor) and a._rg else _NO_EDGE for a in args])
    reads = prim.vjp_reads
    if prim.vjp_reads_by_input is not None:  # only what the rules of inputs needing a gradient read
        reads = set()
        for e, r in zip(edges, prim.vjp_reads_by_input):
            if e[0] is not None:
                reads.update(r)
    saved = {}
    specs = []
    if reads:
        for i, v in enumerate(vals):
            if i in reads:
                a = args[i]
                if isinstance(a, Tensor):
                    counter = a._storage.version
                    saved[i] = Saved(v, counter, counter.value, edges[i], a._rg)
                else:
                    saved[i] = Saved(v, None, 0, _NO_EDGE, False)
                specs.append(None)
            else:
                specs.append((v.shape, v.dtype, v.device))
    else:
        specs = [(v.shape, v.dtype, v.device) for v in vals]
    if not prim.multiple_results:
        node = Node(prim, params, edges, saved, specs, ((out.shape, out.dtype, out.device),))
        t = Tensor._from_value(out)
        if out.dtype.category == _FLOAT:
            t._grad_fn = node
            t._rg = True
        if "out" in reads:
            node.out_saved = [Saved(out, t._storage.version, 0, (node, 0), True)]
        return t
    node = Node(prim, params, edges, saved, specs, tuple((o.shape, o.dtype, o.device) for o in out))
    results = []
    for k, o in enumerate(out):
        t = Tensor._from_value(o)
        if o.dtype.category == _FLOAT:
            t._grad_fn = node
            t._output_nr = k
            t._rg = True
        results.append(t)
    if "out" in reads:
        node.out_saved = [Saved(o, t._storage.version, 0, (node, k), True) for k, (o, t) in enumerate(zip(out, results))]
    return tuple(results)


_FLOAT = _dt.FLOAT
