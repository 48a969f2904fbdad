"""vmap: the batching interpreter over `bind`.

A BatchTracer carries a value with one extra axis (`bdim`, or None when the
value does not vary over the batch). Each primitive's batching rule
`rule(args, bdims, **params) -> (out, out_bdim)` runs the primitive once on
the whole batch; families get their rules from the family builders, others
declare theirs beside their VJP. There is no fallback loop: a primitive
without a rule raises.

    vmap(f)(xs):  xs (B, 3) -> tracer(val=xs, bdim=0)
    f does sin(x) @ w:  sin's rule maps over val; matmul's rule sees (B, 3) @ (3, 4)
    -> (B, 4) with bdim 0, which vmap returns moved to out_axes.
"""
from .primitive import _STACK, Trace, Tracer

class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, main, val, bdim):
        self._main = main
        self.val = val
        self.bdim = bdim

    @property
    def shape(self):
        s = self.val.shape
        if self.bdim is None:
            return s
        return s[:self.bdim] + s[self.bdim + 1:]

    dtype = property(lambda self: self.val.dtype)
    device = property(lambda self: self.val.device)


class BatchTrace(Trace):
    # axis_name: the name vmap(axis_name=...) gives the mapped axis, for the collectives (ops/collective.py)
    __slots__ = ("axis_name", "axis_size")
    transform = "vmap"

    def __init__(self, main):
        Trace.__init__(self, main)
        self.axis_name = None
        self.axis_size = None

    def process(self, prim, args, params):
        if "axis_name" in params and prim.batch is None:
            # a collective: its rule handles its own axis (even on unbatched values) and any other one
            return prim.collective_batch(self, args, params)
        main = self.main
        vals, bdims = [], []
        batched = False
        for a in args:
            if type(a) is BatchTracer and a._main is main:
                vals.append(a.val)
                bdims.append(a.bdim)
                batched = batched or a.bdim is not None
            else:
                vals.append(a)
                bdims.append(None)
        if not batched:
            return prim.bind(*vals, **params)
        rule = prim.batch
        if rule is None:
            raise NotImplementedError(f"vmap: primitive '{prim.name}' has no batching rule")
        out, out_bdim = rule(vals, bdims, **params)
        if prim.multiple_results:
            if not isinstance(out_bdim, (tuple, list)):
                out_bdim = (out_bdim,) * len(out)
            return tuple(BatchTracer(main, o, d) for o, d in zip(out, out_bdim))
        return BatchTracer(main, out, out_bdim)


def axis_main(name):
    """The innermost active vmap whose axis is called `name`, or None."""
    for main in reversed(_STACK.mains):
        trace = main.trace
        if type(trace) is BatchTrace and trace.axis_name == name:
            return main
    return None
