"""Jacobians and Hessians built on vjp / jvp (one pullback or pushforward per basis vector)."""
from . import ops
from .autodiff import _argnums_tuple, _check_float_inputs, _tree_as_arrays, jvp, vjp
from .pytree import tree_flatten, tree_unflatten


def _basis(x):
    """The standard basis of x's space, one array per element (shape x.shape each)."""
    n = 1
    for d in x.shape:
        n *= d
    eye = ops.eye(n, dtype=x.dtype, device=x.device)
    return [ops.reshape(eye[i], x.shape) for i in range(n)]


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
            rows = []
            for e in _basis(o):
                ct = [ops.zeros_like(x) if j != k else e for j, x in enumerate(out_leaves)]
                rows.append(tree_flatten(pull(tree_unflatten(out_tree, ct)))[0])
            jac = [_assemble(o.shape, x.shape, [r[i] for r in rows]) for i, x in enumerate(in_leaves)]
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        result = tree_unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result
    return jac_f


def _assemble(out_shape, in_shape, rows):
    if not rows:
        return ops.zeros(tuple(out_shape) + tuple(in_shape))
    return ops.reshape(ops.stack(rows, 0), tuple(out_shape) + tuple(in_shape))


def jacfwd(f, argnums=0, has_aux=False):
    """Jacobian of f by forward mode: shape out.shape + in.shape per (output, input) leaf pair."""
    def jac_f(*args):
        single, diff, g = _split_args(f, args, argnums, "jacfwd")
        in_leaves, in_tree = tree_flatten(diff)
        cols = [[] for _ in in_leaves]  # per input leaf: list of output-leaf tangents
        out = aux = None
        for i, x in enumerate(in_leaves):
            for e in _basis(x):
                tangents = [e if j == i else ops.zeros_like(y) for j, y in enumerate(in_leaves)]
                res = jvp(g, diff, tree_unflatten(in_tree, tangents), has_aux=has_aux)
                out, t_out = res[0], res[1]
                if has_aux:
                    aux = res[2]
                cols[i].append(tree_flatten(t_out)[0])
        if out is None:  # no input elements: evaluate once for the output structure
            out = g(*diff)
            if has_aux:
                out, aux = out
        out_leaves, out_tree = tree_flatten(out)
        per_out = []
        for k, o in enumerate(out_leaves):
            jac = []
            for i, x in enumerate(in_leaves):
                c = [col[k] for col in cols[i]]
                if not c:
                    jac.append(ops.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype))
                    continue
                stacked = ops.stack(c, -1)
                jac.append(ops.reshape(stacked, tuple(o.shape) + tuple(x.shape)))
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        result = tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result
    return jac_f


def hessian(f, argnums=0, has_aux=False):
    """Hessian of scalar f: jacfwd of jacrev."""
    return jacfwd(jacrev(f, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
