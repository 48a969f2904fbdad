"""Jacobians and Hessians: one vjp (or jvp) vmapped over the standard basis.

jacrev(f)(x): out, pull = vjp(f, x); J = vmap(pull)(eye(out.size)) reshaped to out.shape + x.shape.
jacfwd(f)(x): J = vmap(lambda e: jvp(f, x, e))(eye(x.size)), the basis axis moved last.
"""
import math

from . import ops
from .autodiff import _argnums_tuple, _check_float_inputs, _tree_as_arrays, jvp, vjp
from .batching import vmap
from .pytree import tree_flatten, tree_unflatten


def _size(shape):
    return math.prod(shape)


def _basis(x):
    """The standard basis of x's space as one array of shape (x.size, *x.shape)."""
    n = _size(x.shape)
    return ops.reshape(ops.eye(n, dtype=x.dtype, device=x.device), (n,) + tuple(x.shape))


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
                ct = [e if j == k else ops.zeros_like(y) for j, y in enumerate(out_leaves)]
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
        return ops.zeros(shape, dtype=like.dtype, device=like.device)
    return ops.reshape(rows, shape)


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
                tangents = [e if j == i else ops.zeros_like(y) for j, y in enumerate(in_leaves)]
                t_out = jvp(g, diff, tree_unflatten(in_tree, tangents), has_aux=has_aux)[1]
                return tree_flatten(t_out)[0]
            cols.append(_rows(push_i, _basis(x)))
        per_out = []
        for k, o in enumerate(out_leaves):
            jac = []
            for i, x in enumerate(in_leaves):
                if cols[i] is None:
                    jac.append(ops.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device))
                    continue
                c = ops.moveaxis(cols[i][k], 0, -1)  # (*out.shape, x.size)
                jac.append(ops.reshape(c, tuple(o.shape) + tuple(x.shape)))
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        result = tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result
    return jac_f


def hessian(f, argnums=0, has_aux=False):
    """Hessian of scalar f: jacfwd of jacrev."""
    return jacfwd(jacrev(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
