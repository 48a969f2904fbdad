"""torch.func: functional transforms over eager Tensors, run by the core's transforms.

Each transform converts Tensor arguments to core values, runs the core transform
on a function that wraps the (traced) values back into fresh Tensors for the
user's code, and converts the results back to Tensors. So there is one
implementation of every transform; the eager tape is not used (the Tensors made
inside require no grad) and the caller's Tensors are never written.

Called on tensors that require grad with grad mode on (arguments, or what the function captures: a module's
parameters), a transform's results are differentiable by the eager tape (_outer_autograd): the transform runs
under core.vjp over those tensors' values, as PyTorch's transforms compose with autograd, to any order.

A custom torch.autograd.Function called inside is one primitive whose rules are the Function's own backward,
jvp and vmap staticmethods (eager/autograd/function.py), as PyTorch's torch.func uses them.

In-place ops inside a transformed function just work: a Tensor's storage may
hold a traced value, and the in-place writeback (as_strided_scatter) is itself
a primitive the transforms understand.
"""
import functools
import itertools

from . import core
from .core import dtypes as _dt
from .core.pytree import tree_flatten, tree_map
from .eager import grad_mode
from ._compile_guards import _Found
from .eager.autograd.api import grad as _autograd_grad
from .eager.autograd.function import Function
from .eager.storage import Storage
from .eager import random_ops as _random_ops
from .eager.random_ops import vmap_randomness
from .eager.ops import stack
from .eager.shape_ops import cat
from .eager.tensor import Size, Tensor
from .utils import _pytree

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "functionalize", "replace_all_batch_norm_modules_"]


def _to_value(x):
    if isinstance(x, Tensor):
        return x._value()
    return x


def _to_tensor(x):
    if isinstance(x, (core.Array, core.Tracer)):
        return Tensor._from_value(x)
    return x


def _values(tree):
    return tree_map(_to_value, tree)


def _tensors(tree):
    return tree_map(_to_tensor, tree)


# torch.func keeps dicts in insertion order (torch's pytrees); the core's pytrees sort dict keys, as JAX's
# do. So the results are put back in torch's order: `_skeleton` records a tree's dict key orders (leaves
# None), `_in_order` rebuilds a result's dicts in the order of such a skeleton.


def _skeleton(tree):
    if isinstance(tree, dict):
        return {k: _skeleton(v) for k, v in tree.items()}
    if type(tree) in (list, tuple):
        return type(tree)(_skeleton(v) for v in tree)
    return None


def _in_order(tree, like):
    if isinstance(tree, dict) and isinstance(like, dict) and tree.keys() == like.keys():
        return type(tree)((k, _in_order(tree[k], like[k])) for k in like)
    if type(tree) in (list, tuple) and type(like) in (list, tuple) and len(tree) == len(like):
        return type(tree)(_in_order(t, k) for t, k in zip(tree, like))
    return tree


def _graft(like, leaf_like):
    """The skeleton of `like` with each leaf replaced by `leaf_like` (a Jacobian's layout)."""
    if isinstance(like, dict):
        return {k: _graft(v, leaf_like) for k, v in like.items()}
    if type(like) in (list, tuple):
        return type(like)(_graft(v, leaf_like) for v in like)
    return leaf_like


def _arg_skeleton(args, argnums):
    if isinstance(argnums, int):
        return _skeleton(args[argnums])
    return tuple(_skeleton(args[i]) for i in argnums)


def _wrap_fn(func, seen=None, args_like=None, reverse=True, written=None, check=None):
    """func on Tensors -> a function on core values (inputs and outputs converted); the inputs' dicts are put
    in the order of `args_like` (the caller's arguments' skeleton), the skeleton of each output is appended
    to `seen` when given. It runs in a transform region (grad_mode.transform_region: the eager tape off; grad
    mode on for a reverse-mode transform, else as it was).

    written: (positions, changed): the function then returns (its result, the values of the Tensor arguments
    at those positions after it ran), and adds to the set `changed` the positions it wrote into in place (for
    vmap to write them back into the caller's tensors). check(output): PyTorch's check of what the function
    returned (grad's: a scalar)."""
    @functools.wraps(func)
    def on_values(*vals, **kwargs):
        region = grad_mode.transform_region(reverse)
        with region:
            ins = _in_order(_tensors(vals), args_like)
            out = func(*ins, **kwargs)
            if check is not None:
                check(out)
            if seen is not None:
                seen.append(_skeleton(out))
            res = _values(out)
            if written is not None:
                positions, changed = written
                now = tuple(ins[i]._value() for i in positions)
                changed.update(i for i, v in zip(positions, now) if v is not vals[i])
                res = (res, now)
            del out, ins  # (the function's own tensors go: what the region wrote into and is alive is captured)
        region.check()
        return res
    return on_values


def _aux_skeleton(seen, has_aux):
    return seen[-1][1] if has_aux and seen and type(seen[-1]) in (list, tuple) else None


# PyTorch's checks of the torch.func API (core's own, JAX's, raise other types: TypeError, ValueError)

def _check_argnums(argnums, args, forward=False):
    """argnums as PyTorch checks it (RuntimeError), and the inputs it picks: floating point (RuntimeError
    under reverse mode, ValueError under jacfwd)."""
    picked = argnums if isinstance(argnums, tuple) else (argnums,)
    if not all(type(a) is int for a in picked):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not picked:
        raise RuntimeError("argnums must be non-empty")
    if len(set(a % max(len(args), 1) for a in picked)) != len(picked):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    for a in picked:
        if not -len(args) <= a < len(args):
            raise RuntimeError(f"Got argnum={a}, but only {len(args)} positional inputs")
        for leaf in tree_flatten(args[a])[0]:
            if isinstance(leaf, Tensor) and leaf.dtype.category < _dt.FLOAT:
                if forward:
                    raise ValueError(f"Expected primal to be floating point or complex, but got: {leaf.dtype}")
                raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _scalar_output(has_aux):
    """The check of a function's output under grad: a real scalar Tensor (with aux: a pair), as PyTorch's."""
    def check(out):
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out = out[0]
        if not isinstance(out, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
        if out.ndim != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        if out.dtype.category == _dt.COMPLEX:
            raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
    return check


# ---------------------------------------------------------------------------
# outer autograd: a transform's results are differentiable by the eager tape w.r.t. its Tensor arguments that
# require grad (MAML's inner-loop gradient, a per-sample gradient penalty), as PyTorch's transforms compose
# with autograd. The transform runs inside core.vjp over those arguments' values, and its results get one
# node whose backward is that VJP.


def _outer_autograd(transformed, func):
    """transformed (a transform's wrapper of func, over Tensors), its results recorded on the eager tape when
    grad mode records and an argument, or a tensor func or an argument reaches (a closed-over weight, a
    module's parameters: `vmap(model)(x)`, a tied weight's view), requires grad. Those tensors' values are
    lifted into the core.vjp, as torch.compile lifts storages: a reached tensor reads the traced value while
    the transform runs."""
    @functools.wraps(transformed)
    def call(*args, **kwargs):
        if not grad_mode.tape_enabled():
            return transformed(*args, **kwargs)
        flat, spec = _pytree.tree_flatten((args, kwargs))  # (torch's pytrees: dicts keep their key order)
        diff = [i for i, a in enumerate(flat) if isinstance(a, Tensor) and a._rg and a.dtype.category >= _dt.FLOAT]
        captured = _captured(func, flat)
        if not diff and not captured:
            return transformed(*args, **kwargs)
        out_spec = []

        def on_values(*vals):
            leaves = list(flat)
            for i, v in zip(diff, vals):
                leaves[i] = Tensor._from_value(v)  # (requires no grad: the transform inside runs as plain)
            a, k = _pytree.tree_unflatten(leaves, spec)
            # each captured storage's readers read a storage of their own holding the traced value (not the
            # storage's value changed: a detached alias, `p.detach()` passed to functional_call, must not read it)
            lifted = [Tensor._from_value(v)._storage for v in vals[len(diff):]]
            swapped = [(t, t._storage, st) for (_, readers), st in zip(captured, lifted) for t in readers]
            try:
                for t, _, st in swapped:
                    t._storage = st
                out_leaves, s = _pytree.tree_flatten(transformed(*a, **k))
            finally:
                for t, st, _ in swapped:
                    t._storage = st
            if any(st.version.value for st in lifted):
                raise RuntimeError("During a torch.func transform, the function provided wrote in place into a "
                                   "captured Tensor that requires grad. We don't support this: pass the tensor as "
                                   "an input of the function, or write into a clone of it.")
            # an argument vmap wrote into: its new value is one more result, copied into the caller's tensor
            # below on the tape (a leaf that requires grad may not be written, as anywhere)
            written = [i for i in diff if leaves[i]._version]
            if any(flat[i].is_leaf for i in written):
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            values = [o._value() for o in out_leaves if isinstance(o, Tensor)]
            # (which results depend on the lifted tensors, traced by this VJP: the others require no grad, as in
            # PyTorch; a tracer of an outer trace, torch.compile's, is no dependence)
            mains = {id(v._main) for v in vals}
            out_spec.append((s, [None if isinstance(o, Tensor) else o for o in out_leaves],
                             [isinstance(v, core.Tracer) and id(v._main) in mains for v in values]
                             + [True] * len(written), written))
            return values + [leaves[i]._value() for i in written]

        outs = _TransformResults.apply(on_values, out_spec, *[flat[i] for i in diff],
                                       *[owner for owner, _ in captured])
        s, consts, _, written = out_spec[-1]
        for i, new in zip(written, outs[len(outs) - len(written):]):
            flat[i].copy_(new)
        it = iter(outs)
        return _pytree.tree_unflatten([next(it) if c is None else c for c in consts], s)
    return call


def _captured(func, flat):
    """(owner, readers) per storage of a tensor requiring grad that func or a non-tensor argument (a module)
    reaches (closure cells, globals its code names, a module's parameters): the tensor that is the whole of
    the storage (a parameter, a weight made outside), and the tensors read through it (itself, a view such
    as a tied decoder's `weight.t()`). An argument the function also captures is lifted twice: its gradient
    is the sum. What PyTorch's outer autograd also differentiates through a transform."""
    found = _Found()
    found.walk(func)
    found.walk([a for a in flat if not isinstance(a, Tensor)])
    groups = {}
    for t in found.tensors:
        if not t._rg or t.dtype.category < _dt.FLOAT:
            continue
        owner = t if t._base is None else t._base
        if owner._rg and owner._full and type(owner._storage) is Storage and t._storage is owner._storage:
            readers = groups.setdefault(id(owner), (owner, [owner]))[1]
            if t is not owner:
                readers.append(t)
    return list(groups.values())


class _TransformResults(Function):
    """The eager node of a transform's results (_outer_autograd): forward runs it under core.vjp, backward
    pulls the output gradients back to the arguments. Under create_graph the pullback is itself such a node,
    a function of the arguments and the output gradients (core's transforms nest), so the gradients are
    differentiable to any order (a gradient penalty on vmap(model))."""

    @staticmethod
    def forward(ctx, on_values, out_spec, *tensors):
        outs, ctx.pull = core.vjp(on_values, *[t._value() for t in tensors])
        ctx.on_values, ctx.inputs = on_values, tensors
        results = tuple(Tensor._from_value(o) for o in outs)
        ctx.mark_non_differentiable(*[t for t, depends in zip(results, out_spec[-1][2]) if not depends])
        return results

    @staticmethod
    def backward(ctx, *gs):
        if grad_mode.tape_enabled():  # create_graph: the pullback recorded as a node of its own
            n, on_values, spec = len(ctx.inputs), ctx.on_values, []

            def pullback(*vals):
                _, pull = core.vjp(on_values, *vals[:n])
                grads = list(_conj_complex(pull(_conj_complex(list(vals[n:])))))
                mains = {id(v._main) for v in vals if isinstance(v, core.Tracer)}
                spec.append((None, None, [isinstance(g, core.Tracer) and id(g._main) in mains for g in grads], []))
                return grads
            return (None, None, *_TransformResults.apply(pullback, spec, *ctx.inputs, *gs))
        grads = _conj_complex(ctx.pull(_conj_complex([g._value() for g in gs])))  # (a Function speaks torch's)
        return (None, None, *(Tensor._from_value(g) for g in grads))


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar func w.r.t. args[argnums] (torch.func.grad)."""
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, args)
        seen = []
        on_values = _bind_kwargs(_wrap_fn(func, seen, _skeleton(args), check=_scalar_output(has_aux)), kwargs)
        res = core.grad(on_values, argnums, has_aux)(*_values(args))
        res = (_conj_complex(res[0]), res[1]) if has_aux else _conj_complex(res)
        if has_aux:
            return _in_order(_tensors(res), (_arg_skeleton(args, argnums), _aux_skeleton(seen, True)))
        return _in_order(_tensors(res), _arg_skeleton(args, argnums))
    return _outer_autograd(wrapper, func)


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient, value) of func (torch.func.grad_and_value; with aux: (grad, (value, aux)))."""
    def wrapper(*args, **kwargs):
        _check_argnums(argnums, args)
        seen = []
        value, g = core.value_and_grad(_bind_kwargs(_wrap_fn(func, seen, _skeleton(args),
                                                             check=_scalar_output(has_aux)), kwargs),
                                       argnums, has_aux)(*_values(args))
        value = _in_order(_tensors(value), seen[-1] if seen else None)
        return _in_order(_tensors(_conj_complex(g)), _arg_skeleton(args, argnums)), value
    return _outer_autograd(wrapper, func)


def _bind_kwargs(fn, kwargs):
    if not kwargs:
        return fn
    return lambda *a: fn(*a, **kwargs)


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) [+ aux]; vjp_fn(cotangents) returns a tuple of Tensors.

    Called where the eager tape records on primals (or captured tensors) that require grad, it is the tape's
    own VJP (_tape_vjp): the output and vjp_fn's results stay differentiable by ordinary autograd, to any
    order, as PyTorch's. (Their graph is the tape's: a backward that frees it leaves vjp_fn nothing to run,
    where PyTorch's keeps a graph of its own.)"""
    flat = _pytree.tree_flatten(primals)[0]
    if grad_mode.tape_enabled() and all(not isinstance(p, Tensor) or p.dtype.category >= _dt.FLOAT for p in flat) \
            and (any(isinstance(p, Tensor) and p._rg for p in flat) or _captured(func, flat)):
        return _tape_vjp(func, primals, has_aux)
    seen = []
    res = core.vjp(_wrap_fn(func, seen, _skeleton(primals)), *_values(primals), has_aux=has_aux)
    out, pull = res[0], res[1]
    out_like = seen[-1][0] if has_aux and seen else (seen[-1] if seen else None)
    primals_like = _skeleton(tuple(primals))

    def vjp_fn(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        _check_cotangents(tree_flatten(out)[0], tree_flatten(_values(ct))[0])
        return _in_order(_tensors(_conj_complex(tuple(pull(_conj_complex(_values(ct)))))), primals_like)

    vjp_fn = _outer_autograd(vjp_fn, None)  # (a cotangent that requires grad: the result is linear in it)
    if has_aux:
        return _in_order(_tensors(out), out_like), vjp_fn, _in_order(_tensors(res[2]), _aux_skeleton(seen, True))
    return _in_order(_tensors(out), out_like), vjp_fn


def _check_cotangents(outs, cts):
    """PyTorch's error for a cotangent whose shape is not its output's."""
    for i, (o, c) in enumerate(zip(outs, cts)):
        if tuple(getattr(c, "shape", ())) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(c.shape)} and "
                               f"output[{i}] has a shape of {Size(o.shape)}.")


def _or_zeros(g, like):
    return g if g is not None else like.new_zeros(like.shape)


def _tape_vjp(func, primals, has_aux):
    """vjp on the eager tape: func runs recording (a primal that requires no grad stands in as a fresh leaf),
    vjp_fn is autograd.grad of the outputs with create_graph, the graph kept for further calls."""
    flat, spec = _pytree.tree_flatten(primals)
    ins = [p.detach().requires_grad_() if isinstance(p, Tensor) and not p._rg else p for p in flat]
    res = func(*_pytree.tree_unflatten(ins, spec))
    out, aux = res if has_aux else (res, None)
    out_flat = [o for o in _pytree.tree_flatten(out)[0] if isinstance(o, Tensor)]
    wrt = [t for t in ins if isinstance(t, Tensor)]

    def vjp_fn(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        cts = _pytree.tree_flatten(ct)[0]
        _check_cotangents(out_flat, cts)
        live = [(o, c) for o, c in zip(out_flat, cts) if o.requires_grad]
        grads = iter(_autograd_grad([o for o, _ in live], wrt, grad_outputs=[c for _, c in live],
                                    retain_graph=True, create_graph=True, allow_unused=True) if live else
                     [None] * len(wrt))
        leaves = [t if not isinstance(t, Tensor) else _or_zeros(next(grads), t) for t in ins]
        return tuple(_pytree.tree_unflatten(leaves, spec))

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents) [+ aux] (torch.func.jvp). strict: an output independent of the primals
    raises, as PyTorch's."""
    return _outer_autograd(functools.partial(_jvp, func), func)(primals, tangents, strict=strict, has_aux=has_aux)


def _jvp(func, primals, tangents, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tuple(tangents) if isinstance(tangents, (tuple, list)) else tangents)
    if spec_p != spec_t:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {spec_p} and tangents with structure {spec_t}")
    for p_, t_ in zip(flat_p, flat_t):
        if isinstance(p_, Tensor) and isinstance(t_, Tensor) and tuple(p_.shape) != tuple(t_.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p_.shape)} while "
                               f"the given forward gradient is of size {list(t_.shape)}.")
    seen = []
    on_values = _wrap_fn(func, seen, _skeleton(tuple(primals)), reverse=False)
    independent = []
    if strict:
        def on_values(*vals, _f=on_values):  # (which outputs the primals reach: traced values)
            out = _f(*vals)
            independent.extend(not isinstance(v, core.Tracer) for v in tree_flatten(out[0] if has_aux else out)[0])
            return out
    res = core.jvp(on_values, tuple(_values(tuple(primals))), tuple(_values(tuple(tangents))), has_aux=has_aux)
    if any(independent):
        raise RuntimeError("jvp(f, primals, tangents): The output of the function is independent of the inputs. "
                           "This is not allowed with strict=True.")
    out_like = seen[-1][0] if has_aux and seen else (seen[-1] if seen else None)
    likes = (out_like, out_like, _aux_skeleton(seen, has_aux))
    return tuple(_in_order(_tensors(r), like) for r, like in zip(res, likes))


def linearize(func, *primals):
    """(func(*primals), jvp_fn), jvp_fn(*tangents) giving J tangents at the primals (torch.func.linearize).

    The linear part is staged once, on jvp_fn's first call: core.jit traces the jvp over the tangents alone,
    so the primal computation runs then on the primals' concrete values (jit the partial evaluator, as in
    JAX's linearize) and later calls run only the tangent arithmetic, its primal-side factors constants."""
    output = func(*primals)
    flat_p, spec_p = tree_flatten(primals)
    meta = [(p.shape, p.device, p.dtype) for p in flat_p]
    seen = []
    on_values = _wrap_fn(func, seen, _skeleton(primals), reverse=False)
    values = tuple(_values(primals))
    linear = core.jit(lambda *tangents: core.jvp(on_values, values, tangents)[1])

    def jvp_fn(*tangents):
        flat_t, spec_t = tree_flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(f"Expected the tangents {spec_t} to have the same argspec as the primals {spec_p}")
        for i, (t, (shape, device, dtype)) in enumerate(zip(flat_t, meta)):
            for what, have, want in (("shape", t.shape, shape), ("device", t.device, device),
                                     ("dtype", t.dtype, dtype)):
                if have != want:
                    raise RuntimeError(f"tangent:{i} with {what} {have} in flattened pytree doesn't match the "
                                       f"{what} {want} of the corresponding primal.")
        out = linear(*_values(tangents))
        return _in_order(_tensors(out), seen[-1])

    return output, jvp_fn


def functionalize(func, *, remove="mutations"):
    """func with its mutations of intermediate tensors removed (torch.func.functionalize): the same results,
    and the same writes into its tensor arguments. Every in-place op here already is functional (a new value
    of its base written back, core's as_strided_scatter: DESIGN.md), so the transform is func itself."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized




def _conj_complex(tree):
    """Complex gradients in PyTorch's convention: the conjugates of the core's (JAX's), as the eager tape's
    cross at engine.conj_boundary; real ones as they are."""
    return tree_map(lambda v: core.conj(v) if getattr(getattr(v, "dtype", None), "category", None) == _dt.COMPLEX
                    else v, tree)


def _jacobian(transform, func, argnums, has_aux, args, order=1, reverse=True):
    _check_argnums(argnums, args, forward=not reverse)
    diff = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)
    for i, leaf in enumerate(tree_flatten(diff)[0]):  # (PyTorch's jacobians take real inputs only)
        if isinstance(leaf, Tensor) and leaf.dtype.category == _dt.COMPLEX:
            name = "jacrev" if reverse and order == 1 else "jacfwd"
            raise RuntimeError(f"{name}: Expected all inputs to be real but received complex tensor at flattened "
                               f"input idx: {i}")
    seen = []
    res = transform(_wrap_fn(func, seen, _skeleton(args), reverse))(*_values(args))
    out_like = seen[-1][0] if has_aux and seen else (seen[-1] if seen else None)
    arg_like = _arg_skeleton(args, argnums)
    like = arg_like
    for _ in range(order - 1):  # a Hessian's blocks: input layout inside input layout
        like = _graft(arg_like, like)
    like = _graft(out_like, like)
    if has_aux:
        return _in_order(_tensors(res), (like, _aux_skeleton(seen, True)))
    return _in_order(_tensors(res), like)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian by reverse mode (torch.func.jacrev). chunk_size bounds how many rows PyTorch computes per
    vmapped VJP, a memory knob: here the rows come from one batched VJP whatever it is (the same result)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args):
        return _jacobian(lambda f: core.jacrev(f, argnums, has_aux), func, argnums, has_aux, args)
    return _outer_autograd(wrapper, func)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode (torch.func.jacfwd), its columns one vmapped JVP: randomness as vmap's
    ("error": a random op inside raises; "same": one draw for every column). "different" (a draw per column)
    is refused: the columns' vmap is the core's, with no key of its own to split."""
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if randomness == "different":
        raise NotImplementedError("jacfwd(randomness='different') is not supported: use 'same', or draw the "
                                  "randomness outside the function")

    def wrapper(*args):
        key = None if randomness == "error" else _random_ops.default_generator.next_key()
        with vmap_randomness(randomness, key):
            return _jacobian(lambda f: core.jacfwd(f, argnums, has_aux), func, argnums, has_aux, args,
                             reverse=False)
    return _outer_autograd(wrapper, func)


def hessian(func, argnums=0):
    def wrapper(*args):
        return _jacobian(lambda f: core.hessian(f, argnums), func, argnums, False, args, order=2)
    return _outer_autograd(wrapper, func)


# ---------------------------------------------------------------------------
# vmap with torch's randomness modes


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize func over a dimension of its Tensor arguments (torch.func.vmap).

    randomness: "error" (random ops inside raise), "same" (one draw shared by the batch) or
    "different" (each batch element gets its own key split from the global generator).
    """
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (type(chunk_size) is not int or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    in_axes = in_dims if not isinstance(in_dims, list) else tuple(in_dims)

    def wrapper(*args, **kwargs):
        vals = _values(args)
        if randomness == "error":
            key, key_axis = None, None
        else:
            key = _random_ops.default_generator.next_key()
            key_axis = None
            if randomness == "different":
                size = _batch_size(vals, in_axes)
                key, key_axis = core.random.split(key, size), 0
        chunks = _chunks(args, vals, in_axes, out_dims, chunk_size)
        if chunks is None:
            return run(args, vals, kwargs, key, key_axis)
        parts = [run(part, _values(part), kwargs, key if key_axis is None else key[start:stop], key_axis)
                 for start, stop, part in chunks]
        return tree_map(lambda *xs: cat(xs, out_dims) if isinstance(xs[0], Tensor) else xs[0], *parts)

    def run(args, vals, kwargs, key, key_axis):
        seen = []
        # an in-place write into a Tensor argument reaches the caller's tensor, as in PyTorch: each one comes
        # back out at its own batch axis, and those written are copied into the caller's
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        changed = set()

        def on_values(key, *vals):
            with vmap_randomness(randomness, key):
                return _wrap_fn(func, seen, _skeleton(args), reverse=False,
                                written=(positions, changed))(*vals, **kwargs)

        axes = (key_axis,) + (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(vals))
        try:
            out, now = core.vmap(on_values, in_axes=axes,
                                 out_axes=(out_dims, tuple(axes[1 + i] for i in positions)))(key, *vals)
        except ValueError as exc:
            if isinstance(exc, IndexError) and getattr(exc, "ndim", None) is not None:  # (an out_dims past the rank)
                raise IndexError(f"Dimension out of range (expected to be in range of [{-exc.ndim}, {exc.ndim - 1}], "
                                 f"but got {exc.axis})") from None
            if any(axes[1 + i] is None for i in changed):
                raise RuntimeError("vmap: an in-place operation wrote a batched value into a Tensor that is not "
                                   "batched (in_dims None for it): it has one value for the whole batch. Write "
                                   "into a batched tensor, or return the result instead.") from exc
            raise
        for i, v in zip(positions, now):
            if i in changed:
                args[i].copy_(Tensor._from_value(v))
        return _in_order(_tensors(out), seen[-1] if seen else None)
    return _outer_autograd(wrapper, func)


def _chunks(args, vals, in_axes, out_dims, chunk_size):
    """vmap's chunk_size: (start, stop, the arguments narrowed to that part of the batch) per chunk, or None to
    run the whole batch at once: no chunk_size, a batch that fits one chunk, or in_dims / out_dims other than
    one int (or None) per argument / for every output (the results are the same either way; chunks only
    bound the memory one call takes)."""
    if chunk_size is None or not isinstance(out_dims, int):
        return None
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    if not all(a is None or type(a) is int for a in axes):
        return None
    n = _batch_size(vals, in_axes)
    if n <= chunk_size:
        return None
    return [(start, min(start + chunk_size, n),
             tuple(a if ax is None else tree_map(lambda t, ax=ax, start=start: t.narrow(
                 ax, start, min(chunk_size, n - start)) if isinstance(t, Tensor) else t, a)
                   for a, ax in zip(args, axes)))
            for start in range(0, n, chunk_size)]


def _batch_size(vals, in_axes):
    leaves, _ = tree_flatten(vals)
    if isinstance(in_axes, tuple):
        axes = []
        for ax, v in zip(in_axes, vals):
            axes.extend([ax] * len(tree_flatten(v)[0]) if not isinstance(ax, (tuple, list, dict)) else
                        tree_flatten(ax)[0])
    else:
        axes = [in_axes] * len(leaves)
    for v, ax in zip(leaves, axes):
        if ax is not None and hasattr(v, "shape"):
            return v.shape[ax]
    raise ValueError("vmap: at least one argument must be mapped")


# ---------------------------------------------------------------------------
# modules as functions


def _get_path(module, name):
    *path, last = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, last


def _slot_dict(owner, attr):
    for store in ("_parameters", "_buffers"):
        d = getattr(owner, store, None)
        if d is not None and attr in d:
            return d
    return None


def _tied(module, given):
    """`given` with each value also under the other names of a tensor the module holds under several (tied
    weights: an LM head sharing the embedding's), as torch.func.functional_call(tie_weights=True) does;
    ValueError where two of those names are given different values."""
    names = {}
    for name, t in itertools.chain(module.named_parameters(remove_duplicate=False),
                                   module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), []).append(name)
    out = dict(given)
    for group in names.values():
        keys = [n for n in group if n in given]
        if len(group) < 2 or not keys:
            continue
        if any(given[k] is not given[keys[0]] for k in keys):
            raise ValueError(f"functional_call got multiple values for keys {sorted(keys)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in group:
            out.setdefault(n, given[keys[0]])
    return out


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *, tie_weights=True, strict=False):
    """Call module with its parameters and buffers replaced by the given tensors (nothing is written)."""
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        merged = {}
        for d in parameter_and_buffer_dicts:
            twice = sorted(k for k in d if k in merged)
            if twice:
                raise ValueError(f"{twice} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            merged.update(d)
        parameter_and_buffer_dicts = merged
    if tie_weights:
        parameter_and_buffer_dicts = _tied(module, parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing = expected - set(parameter_and_buffer_dicts)
        unexpected = set(parameter_and_buffer_dicts) - expected
        if missing or unexpected:
            raise RuntimeError(f"functional_call got missing keys {sorted(missing)} and unexpected keys "
                               f"{sorted(unexpected)}")
    saved = []
    try:
        for name, value in parameter_and_buffer_dicts.items():
            owner, attr = _get_path(module, name)
            store = _slot_dict(owner, attr)
            if store is not None:
                saved.append((store, attr, store[attr]))
                store[attr] = value
            else:  # (a name the module does not have is set for the call, as PyTorch's reparametrization does)
                saved.append((owner, attr, getattr(owner, attr, _MISSING)))
                object.__setattr__(owner, attr, value)
        return module(*args, **kwargs)
    finally:
        for store, attr, old in reversed(saved):
            if isinstance(store, dict):
                store[attr] = old
            elif old is _MISSING:
                object.__delattr__(store, attr)
            else:
                object.__setattr__(store, attr, old)


_MISSING = object()


def replace_all_batch_norm_modules_(root):
    """root with every BatchNorm module's running statistics dropped (running_mean, running_var and
    num_batches_tracked None, track_running_stats False), in place, so that vmap over it computes batch
    statistics (torch.func.replace_all_batch_norm_modules_)."""
    from .nn.modules.batchnorm import _BatchNorm  # noqa: PLC0415  (nn builds on func's neighbours)
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = m.running_var = m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def stack_module_state(models):
    """(params, buffers): each name maps to the models' tensors stacked on a new leading dim."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if any(m.training != models[0].training for m in models):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    params = {n: stack([dict(m.named_parameters())[n].detach() for m in models]).requires_grad_(p.requires_grad)
              for n, p in models[0].named_parameters()}
    buffers = {n: stack([dict(m.named_buffers())[n] for m in models]) for n, _ in models[0].named_buffers()}
    return params, buffers

