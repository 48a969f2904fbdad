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
from .array import Array
from .primitive import Trace, Tracer, new_main
from .pytree import tree_flatten, tree_unflatten

# core ops the interpreter needs; installed by ops/__init__.py (this module never imports a family)
_ops = {}


def install_ops(**ops):
    _ops.update(ops)


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
    __slots__ = ()

    def process(self, prim, args, params):
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


# ---------------------------------------------------------------------------
# helpers for rules


def move_to_front(x, bdim):
    """x with its batch axis first (a no-op when it already is)."""
    if bdim is None or bdim == 0:
        return x
    perm = (bdim,) + tuple(i for i in range(len(x.shape)) if i != bdim)
    return _ops["transpose"](x, perm)


def bdim_size(vals, bdims):
    for v, d in zip(vals, bdims):
        if d is not None:
            return v.shape[d]
    raise ValueError("no batched argument")


def broadcast_batch(x, bdim, size):
    """x with a leading batch axis of `size` (broadcast when x is unbatched)."""
    if bdim is None:
        return _ops["broadcast_to"](_ops["expand_dims"](x, 0), (size,) + tuple(x.shape))
    return move_to_front(x, bdim)


def all_front(vals, bdims):
    """Every argument with a leading batch axis (unbatched ones broadcast)."""
    n = bdim_size(vals, bdims)
    return [broadcast_batch(v, d, n) for v, d in zip(vals, bdims)], n


def elementwise_rule(prim):
    """Batching for broadcasting elementwise primitives: batch axes first, logical ranks aligned."""
    def rule(vals, bdims, **params):
        ranks = [len(v.shape) - (0 if d is None else 1) for v, d in zip(vals, bdims)]
        rank = max(ranks)
        args = []
        for v, d, r in zip(vals, bdims, ranks):
            if d is None:
                args.append(v)
                continue
            v = move_to_front(v, d)
            if r < rank:
                v = _ops["reshape"](v, (v.shape[0],) + (1,) * (rank - r) + tuple(v.shape[1:]))
            args.append(v)
        return prim.bind(*args, **params), 0
    return rule


def unary_rule(prim):
    def rule(vals, bdims, **params):
        return prim.bind(vals[0], **params), bdims[0]
    return rule


def shift_axes(axes, by=1):
    return tuple(a + by for a in axes)


# ---------------------------------------------------------------------------
# the transform


def _prefix_axes(axes, tree, where, what):
    """Per-leaf (axis, where) pairs for `tree`, with `axes` a prefix of it: an int or None stands for
    every leaf below it; tuples, lists and dicts must match the tree's containers."""
    if axes is None or isinstance(axes, int):
        if type(tree) in (tuple, list):
            return [s for i, t in enumerate(tree) for s in _prefix_axes(axes, t, f"{where}[{i}]", what)]
        if type(tree) is dict:
            return [s for k in sorted(tree) for s in _prefix_axes(axes, tree[k], f"{where}[{k!r}]", what)]
        return [] if tree is None else [(axes, where)]
    kind = type(axes)
    if kind in (tuple, list):
        if not isinstance(tree, (tuple, list)) or len(tree) != len(axes):
            raise ValueError(f"{what} {axes!r} for {where} does not match its structure "
                             f"{tree_flatten(tree)[1]}")
        out = []
        for i, (a, t) in enumerate(zip(axes, tree)):
            out += _prefix_axes(a, t, f"{where}[{i}]", what)
        return out
    if kind is dict:
        if type(tree) is not dict or set(tree) != set(axes):
            raise ValueError(f"{what} {axes!r} for {where} does not match its structure "
                             f"{tree_flatten(tree)[1]}")
        out = []
        for k in sorted(tree):
            out += _prefix_axes(axes[k], tree[k], f"{where}[{k!r}]", what)
        return out
    raise ValueError(f"{what} must be ints, None, or tuples/lists/dicts of them, got {axes!r}")


def _flat_axes(in_axes, args, what):
    """Leaves of args, their treedef, and per leaf (axis, description of where it is)."""
    leaves, treedef = tree_flatten(args)
    if in_axes is None or isinstance(in_axes, int):
        specs = []
        for i, a in enumerate(args):
            specs += _prefix_axes(in_axes, a, f"argument {i}", what + " in_axes")
        return leaves, treedef, specs
    if not isinstance(in_axes, (tuple, list)) or len(in_axes) != len(args):
        raise ValueError(f"{what}: in_axes {in_axes!r} must be an int, None, or a tuple with one entry per "
                         f"positional argument ({len(args)} given)")
    specs = []
    for i, (ax, arg) in enumerate(zip(in_axes, args)):
        specs += _prefix_axes(ax, arg, f"argument {i}", what + " in_axes")
    return leaves, treedef, specs


def _as_value(x, what):
    if isinstance(x, (Array, Tracer)) or hasattr(type(x), "__mt_bind__"):
        return x
    try:
        return _ops["asarray"](x)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: arguments must be arrays (or numbers), got {type(x).__name__}") from None


def vmap(f, in_axes=0, out_axes=0, axis_size=None):
    """Vectorize f over a batch axis of its arguments (JAX semantics: in_axes/out_axes pytrees, None = unbatched)."""
    def vmapped(*args):
        leaves, treedef, specs = _flat_axes(in_axes, args, "vmap")
        leaves = [_as_value(x, "vmap") if ax is not None else x for x, (ax, _) in zip(leaves, specs)]
        size = axis_size
        norm_axes = []
        for x, (ax, where) in zip(leaves, specs):
            if ax is None:
                norm_axes.append(None)
                continue
            nd = len(x.shape)
            if not -nd <= ax < nd:
                raise ValueError(f"vmap: in_axes={ax} is out of range for {where} with shape {tuple(x.shape)}")
            ax %= nd
            n = x.shape[ax]
            if size is None:
                size = n
            elif n != size:
                raise ValueError(f"vmap got inconsistent sizes for the mapped axis: {where} has size {n} along "
                                 f"axis {ax}, expected {size}")
            norm_axes.append(ax)
        if size is None:
            raise ValueError("vmap: at least one argument must be mapped (or give axis_size)")
        with new_main(BatchTrace) as main:
            tracers = [x if ax is None else BatchTracer(main, x, ax) for x, ax in zip(leaves, norm_axes)]
            out = f(*tree_unflatten(treedef, tracers))
            out_leaves, out_tree = tree_flatten(out)
            o_specs = _prefix_axes(out_axes, out, "the output", "vmap out_axes")
            results = [_finish(o, main, ax, size) for o, (ax, _) in zip(out_leaves, o_specs)]
        return tree_unflatten(out_tree, results)
    return vmapped


def _finish(o, main, out_axis, size):
    if type(o) is BatchTracer and o._main is main:
        val, bdim = o.val, o.bdim
    else:
        val, bdim = _as_value(o, "vmap output"), None
    if out_axis is None:
        if bdim is not None:
            raise ValueError("vmap: out_axes=None for an output that varies over the batch")
        return val
    if bdim is None:
        val = broadcast_batch(val, None, size)
        bdim = 0
    nd = len(val.shape)
    if not -nd <= out_axis < nd:
        raise ValueError(f"vmap: out_axes={out_axis} is out of range for an output of rank {nd - 1}")
    out_axis %= nd
    if out_axis != bdim:
        perm = [i for i in range(nd) if i != bdim]
        perm.insert(out_axis, bdim)
        val = _ops["transpose"](val, tuple(perm))
    return val

