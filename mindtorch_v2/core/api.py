"""The transforms: grad, value_and_grad, vjp, jvp, vmap, jacrev, jacfwd, hessian.

This is the face of the core: it takes and returns pytrees, checks arguments, and
runs the interpreters of autodiff.py (reverse and forward mode) and batching.py
(vmap) over the user's function. Jacobians are one vjp (or jvp) vmapped over the
standard basis:

jacrev(f)(x): out, pull = vjp(f, x); J = vmap(pull)(eye(out.size)) reshaped to out.shape + x.shape.
jacfwd(f)(x): J = vmap(lambda e: jvp(f, x, e))(eye(x.size)), the basis axis moved last.
"""
import math

import numpy as np

from . import dtypes as _dt
from .array import Array
from .autodiff import JVPTrace, JVPTracer, unwrap, vjp_flat
from .batching import BatchTrace, BatchTracer
from .ops._family import broadcast_batch
from .ops.creation import asarray, eye, ones_like, zeros, zeros_like
from .ops.elementwise import cast
from .ops.shape import moveaxis, reshape, transpose
from .primitive import Tracer, new_main, zeros_like as zeros_aval
from .pytree import node_children, tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "vmap", "jacrev", "jacfwd", "hessian"]


def _is_float(x):  # the dtypes that carry derivatives: floating and complex
    return x.dtype.category >= _dt.FLOAT


# ---------------------------------------------------------------------------
# reverse and forward mode


def _as_array(x, what):
    if isinstance(x, (Array, Tracer)):
        return x
    if hasattr(type(x), "__mt_bind__"):
        return x
    try:
        return asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: expected arrays (or python/numpy numbers), got {type(x).__name__}") from None


def vjp(f, *primals, has_aux=False):
    """Return (f(*primals), pullback) [+ aux]; pullback(cotangent) gives a tuple of input cotangents."""
    flat, in_tree = tree_flatten(primals)
    flat = [_as_array(x, "vjp") for x in flat]
    trees = []

    def flat_f(tracers):  # the outputs' leaves, then aux's (unwrapped alike; no cotangent reaches them)
        out = f(*tree_unflatten(in_tree, tracers))
        aux = None
        if has_aux:
            out, aux = _split_aux(out)
        out_flat, out_tree = tree_flatten(out)
        aux_flat, aux_tree = tree_flatten(aux)
        trees.extend((out_tree, len(out_flat), aux_tree))
        return [_as_array(o, "vjp output") for o in out_flat] + aux_flat

    res_flat, pull_flat = vjp_flat(flat_f, flat)
    out_tree, n_out, aux_tree = trees
    out_primals = res_flat[:n_out]

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
                c = cast(c, o.dtype)
            cts.append(c)
        grads = [zeros_aval(x) if g is None else g for g, x in zip(pull_flat(cts), flat)]
        return tree_unflatten(in_tree, grads)

    res = (tree_unflatten(out_tree, out_primals), pullback)
    return res + (tree_unflatten(aux_tree, res_flat[n_out:]),) if has_aux else res


def _split_aux(out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("has_aux=True needs the function to return a pair (output, aux)")
    return out[0], out[1]


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
            aux = tree_map(lambda x: unwrap(x, main), aux)
        out_flat, out_tree = tree_flatten(out)
        primals_out, tangents_out = [], []
        for o in out_flat:
            o = _as_array(o, "jvp output")
            if type(o) is JVPTracer and o._main is main:
                primals_out.append(o.primal)
                tangents_out.append(o.tangent)
            else:
                primals_out.append(o)
                tangents_out.append(zeros_aval(o))
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
            raise TypeError(f"{what} requires floating-point or complex inputs; argument {argnum} has dtype {leaf.dtype.name}")


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
        if out.dtype.category != _dt.FLOAT:  # JAX: grad of a complex output needs holomorphic=True
            raise TypeError(f"grad requires a real floating-point output, got {out.dtype.name}")
        grads = pull(ones_like(out))
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


# ---------------------------------------------------------------------------
# vmap


def _prefix_axes(axes, tree, where, what):
    """Per-leaf (axis, where) pairs for `tree`, with `axes` a prefix of it: an int or None stands for
    every leaf below it; tuples, lists and dicts must match the tree's containers."""
    if axes is None or isinstance(axes, int):
        if type(tree) is dict:
            return [s for k in sorted(tree) for s in _prefix_axes(axes, tree[k], f"{where}[{k!r}]", what)]
        children = node_children(tree)  # tuples, lists, namedtuples, registered nodes; None for a leaf
        if children is None:
            return [(axes, where)]
        return [s for i, t in enumerate(children) for s in _prefix_axes(axes, t, f"{where}[{i}]", what)]
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
        return asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: arguments must be arrays (or numbers), got {type(x).__name__}") from None


def vmap(f, in_axes=0, out_axes=0, axis_size=None, axis_name=None):
    """Vectorize f over a batch axis of its arguments (JAX semantics: in_axes/out_axes pytrees, None = unbatched).
    axis_name names the mapped axis for the collectives (psum(x, axis_name), ...): f then runs as on that many
    virtual ranks."""
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
            main.trace.axis_name = axis_name
            main.trace.axis_size = size
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
        # (NumPy's AxisError: a ValueError as JAX raises, an IndexError as PyTorch's; axis and ndim for callers)
        raise np.exceptions.AxisError(out_axis, nd, f"vmap: out_axes={out_axis} for an output of rank {nd - 1}")
    out_axis %= nd
    if out_axis != bdim:
        perm = [i for i in range(nd) if i != bdim]
        perm.insert(out_axis, bdim)
        val = transpose(val, tuple(perm))
    return val


# ---------------------------------------------------------------------------
# Jacobians and Hessians


def _size(shape):
    return math.prod(shape)


def _basis(x):
    """The standard basis of x's space as one array of shape (x.size, *x.shape)."""
    n = _size(x.shape)
    return reshape(eye(n, dtype=x.dtype, device=x.device), (n,) + tuple(x.shape))


def _split_args(f, args, argnums, what):
    single, nums = _argnums_tuple(argnums, len(args), what)
    args = list(args)
    for n in nums:
        args[n] = tree_unflatten(*_tree_as_arrays(args[n], what))
        _check_float_inputs(args[n], what, n)
    diff = tuple(args[n] for n in nums)

    def g(*dargs):
        full = list(args)
        for n, d in zip(nums, dargs):
            full[n] = d
        return f(*full)

    return single, diff, g


def _rows(fn, basis):
    """fn mapped over the rows of basis (an empty basis gives no rows: nothing to map)."""
    if basis.shape[0] == 0:
        return None
    return vmap(fn)(basis)


def jacrev(f, argnums=0, has_aux=False):
    """Jacobian of f by reverse mode: shape out.shape + in.shape per (output, input) leaf pair."""
    def jac_f(*args):
        single, diff, g = _split_args(f, args, argnums, "jacrev")
        res = vjp(g, *diff, has_aux=has_aux)
        out, pull = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        in_leaves, in_tree = tree_flatten(diff)
        per_out = []
        for k, o in enumerate(out_leaves):
            def pull_k(e, k=k):
                ct = [e if j == k else zeros_like(y) for j, y in enumerate(out_leaves)]
                return tree_flatten(pull(tree_unflatten(out_tree, ct)))[0]
            rows = _rows(pull_k, _basis(o))
            jac = [_assemble(o.shape, x.shape, None if rows is None else rows[i], x)
                   for i, x in enumerate(in_leaves)]
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        result = tree_unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result
    return jac_f


def _assemble(out_shape, in_shape, rows, like):
    shape = tuple(out_shape) + tuple(in_shape)
    if rows is None:
        return zeros(shape, dtype=like.dtype, device=like.device)
    return reshape(rows, shape)


def jacfwd(f, argnums=0, has_aux=False):
    """Jacobian of f by forward mode: shape out.shape + in.shape per (output, input) leaf pair."""
    def jac_f(*args):
        single, diff, g = _split_args(f, args, argnums, "jacfwd")
        in_leaves, in_tree = tree_flatten(diff)
        res = g(*diff)
        out, aux = (res if has_aux else (res, None))
        out_leaves, out_tree = tree_flatten(out)
        cols = []  # per input leaf: per output leaf, tangents stacked on a leading basis axis
        for i, x in enumerate(in_leaves):
            def push_i(e, i=i):
                tangents = [e if j == i else zeros_like(y) for j, y in enumerate(in_leaves)]
                t_out = jvp(g, diff, tree_unflatten(in_tree, tangents), has_aux=has_aux)[1]
                return tree_flatten(t_out)[0]
            cols.append(_rows(push_i, _basis(x)))
        per_out = []
        for k, o in enumerate(out_leaves):
            jac = []
            for i, x in enumerate(in_leaves):
                if cols[i] is None:
                    jac.append(zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device))
                    continue
                c = moveaxis(cols[i][k], 0, -1)  # (*out.shape, x.size)
                jac.append(reshape(c, tuple(o.shape) + tuple(x.shape)))
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        result = tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result
    return jac_f


def hessian(f, argnums=0, has_aux=False):
    """Hessian of scalar f: jacfwd of jacrev."""
    return jacfwd(jacrev(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
